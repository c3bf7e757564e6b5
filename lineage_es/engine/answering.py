"""The answers the engine builds from the tree view when asked: the lineage of an observation's
sender once it is journaled, and of an MCP tool call's caller from its ``_meta`` (which is
resolved, never journaled)."""

from __future__ import annotations

import dataclasses

from lineage_es.engine.routing import may_start_root
from lineage_es.facts import Claim, Observation, Resolution
from lineage_es.model import AgentLineage
from lineage_es.read.queries import Queries
from lineage_es.read.view import NodeRow


def registry_resolution(resolution: str) -> Resolution:
    """A placement made by earlier events and not contradicted since is ``registry``,
    unless a host fact confirmed or stated it."""
    return "registry" if resolution == "inferred" else resolution  # type: ignore[return-value]


def answer_observation(
    queries: Queries, observation: Observation, placed: list[str]
) -> AgentLineage:
    """The lineage of the observation's requester, just journaled: ``placed`` lists the
    conversations its journaling placed (their resolution is what the events say, not
    ``registry``). The view must be caught up."""
    requester = observation.requester
    assert requester is not None
    row = queries.find(requester, observation.host)
    if row is None and observation.root is None and not may_start_root(observation):
        # A child not bound yet (Cursor quirk 7), never a root: only its depth is known,
        # at least 1; its parent and root are not (root None, not itself).
        return AgentLineage(
            conversation=requester,
            root=None,
            depth=1,
            resolution="inferred",
            host=observation.host,
        )
    if row is None:
        root = observation.root or requester
        return AgentLineage(
            conversation=requester,
            root=root,
            depth=0 if root == requester else 1,
            resolution="native",
            host=observation.host,
        )
    resolution = None if requester in placed else registry_resolution(row.resolution)
    return queries.lineage_of(row, resolution=resolution)


def resolve_claim(queries: Queries, claim: Claim) -> AgentLineage:
    """The lineage of the caller an MCP ``_meta`` claims to be (see ``Engine.resolve``).
    The view must be caught up."""
    known = queries.find(claim.conversation, claim.host)
    if known is not None:
        answer = queries.lineage_of(known, resolution=registry_resolution(known.resolution))
        stated = stated_parent(queries, claim, known)
        if stated is None:
            return answer
        return dataclasses.replace(
            answer,
            parent=stated.conversation,
            depth=stated.depth + 1,
            resolution="native",
        )
    parent = None if claim.parent is None else queries.find(claim.parent, claim.host)
    depth = claim.depth if claim.depth is not None else (1 if claim.parent else 0)
    root = claim.root or claim.conversation
    if parent is not None:  # a known parent gives its depth plus one and its root
        depth, root = parent.depth + 1, parent.root
    return AgentLineage(
        conversation=claim.conversation,
        root=root,
        depth=depth,
        resolution="native",
        parent=claim.parent,
        host=claim.host,
    )


def stated_parent(queries: Queries, claim: Claim, known: NodeRow) -> NodeRow | None:
    """The parent ``_meta`` states for ``known``, when it places ``known`` better than the
    registry does; ``None`` when it agrees, or cannot be followed.

    Only a placement by order alone gives way (LINEAGE.md: a later fact corrects an
    inference, and places a child left ambiguous); a stated, confirmed, transcript or
    spawn-key placement stands, as does one ``_meta`` agrees with. The stated parent must
    be a node of the caller's root, neither deleted nor below the caller (a cycle). A
    ``_meta`` naming another root than the caller's is not followed either.
    """
    parent = claim.parent
    if (
        parent is None
        or known.conversation != claim.conversation
        or known.is_root
        or known.status == "deleted"
        or known.resolution != "inferred"
        or (known.parent == parent and not known.ambiguous)
        or claim.root not in (known.root, claim.conversation)  # unnamed: the thread itself
    ):
        return None
    stated = queries.find(parent, claim.host)
    if (
        stated is None
        or stated.conversation != parent
        or stated.root_id != known.root_id
        or stated.status == "deleted"
        or queries.relation(parent, claim.conversation, claim.host)
        in ("self", "child", "descendant")
    ):
        return None
    return stated
