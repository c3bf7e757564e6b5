"""What each fact of an observation does to its root aggregate: the decisions the domain is
to own (``RootLineage`` gets them whole in the redesign; this module is the seam)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from lineage_es.domain.root import LIVE, STOPPED, RootLineage
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Deleted,
    Fact,
    Observation,
    Renamed,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)


@dataclass(frozen=True)
class _Unit:
    at: datetime
    key: str
    others: Callable[[str, RootLineage], bool]

    def elsewhere(self, conversation: str, root: RootLineage) -> bool:
        return self.others(conversation, root)


def decide(
    root: RootLineage,
    observation: Observation,
    *,
    at: datetime,
    key: str,
    elsewhere: Callable[[str, RootLineage], bool],
) -> None:
    """Apply every fact of ``observation`` to ``root``; ``elsewhere(c, root)`` says whether
    conversation ``c`` already belongs to another root."""
    unit = _Unit(at, key, elsewhere)
    _learn_workspace(observation, root, unit)
    for fact in observation.facts:
        _apply(fact, observation, root, unit)


def _may_resume(root: RootLineage, conversation: str) -> bool:
    """Whether a fact of ``conversation`` (an act, a start again, a host's resume of it) may
    resume it: the root always (its own act or resume revives it), any other node only while
    its root is live. A root's session end stops its live descendants with it (LINEAGE.md), so
    a descendant's event delivered after it (a background child's late tool call) leaves it
    stopped under its stopped root; once the root is resumed, its descendants act again as
    usual. A root stopped provisionally (an import's stop where its record ended) is left to
    :meth:`RootLineage.resume`, which takes such a stop back when the record goes on."""
    if conversation == root.conversation:
        return True
    node = root.node(root.conversation)
    if node is None or node["status"] == LIVE:
        return True
    return node["status"] == STOPPED and bool(node.get("provisional"))


def _learn_workspace(observation: Observation, root: RootLineage, unit: _Unit) -> None:
    """A root first seen without its workspace learns it from a later payload of its own
    (a Cursor envelope may leave ``workspace_roots`` out); a child's payloads teach its
    root nothing. Once known, a root's workspace is kept
    (:meth:`RootLineage.learn_workspace`)."""
    if observation.workspace and observation.requester == root.conversation:
        root.learn_workspace(observation.workspace, at=unit.at, fact=unit.key)


def _apply(fact: Fact, observation: Observation, root: RootLineage, unit: _Unit) -> None:
    at, key = unit.at, unit.key
    if isinstance(fact, RootSeen):
        if fact.conversation == root.conversation:
            root.see_root(at=at, fact=key)
    elif isinstance(fact, SpawnRequested):
        _ensure_placed(fact.parent, observation, root, unit)
        root.request_spawn(
            fact.parent,
            fact.spawn_key,
            agent_type=fact.agent_type,
            description=fact.description,
            at=at,
            fact=key,
        )
    elif isinstance(fact, ChildStarted):
        _child_started(fact, root, unit)
    elif isinstance(fact, ChildIdentified):
        if not root.knows(fact.child) and unit.elsewhere(fact.child, root):
            return
        root.identify_child(
            fact.parent,
            fact.child,
            resolution=fact.resolution,
            spawn_key=fact.spawn_key,
            depth=fact.depth,
            agent_type=fact.agent_type,
            subagent_id=fact.subagent_id,
            description=fact.description,
            at=at,
            fact=key,
        )
    elif isinstance(fact, Acted):
        _ensure_placed(fact.conversation, observation, root, unit)
    elif isinstance(fact, Resumed):
        if _may_resume(root, fact.conversation):
            root.resume(fact.conversation, at=at, fact=key)
    elif isinstance(fact, Stopped):
        root.stop(
            fact.conversation,
            fact.spawn_key,
            at=at,
            fact=key,
            provisional=fact.provisional,
            reported=observation.requester != fact.conversation,
        )
    elif isinstance(fact, SessionEnded):
        if fact.conversation == root.conversation:
            root.end_session(at=at, fact=key)
        else:
            root.stop(fact.conversation, None, at=at, fact=key)
    elif isinstance(fact, Renamed):
        root.rename(fact.conversation, fact.name, at=at, fact=key)
    elif isinstance(fact, Deleted):
        root.delete(fact.conversation, fact.reason, at=at, fact=key)


def _child_started(fact: ChildStarted, root: RootLineage, unit: _Unit) -> None:
    at, key = unit.at, unit.key
    if fact.child is None:
        if fact.spawn_key is not None and fact.parent is not None:
            root.start_pending(
                fact.spawn_key,
                fact.parent,
                agent_type=fact.agent_type,
                subagent_id=fact.subagent_id,
                description=fact.description,
                at=at,
                fact=key,
                resolution=fact.resolution or "native",
            )
        return
    if not root.knows(fact.child) and unit.elsewhere(fact.child, root):
        return
    parent = fact.parent
    resolution = "native"
    if parent is None and fact.spawn_key is not None and fact.spawn_key in root.spawns:
        parent = root.spawns[fact.spawn_key]["parent"]
        resolution = "registry"
    if parent is None:
        if root.knows(fact.child) and not _may_resume(root, fact.child):
            return  # started again under a root whose session ended: stays stopped
        root.place_unknown_child(
            fact.child,
            agent_type=fact.agent_type,
            subagent_id=fact.subagent_id,
            description=fact.description,
            at=at,
            fact=key,
        )
        return
    root.identify_child(
        parent,
        fact.child,
        resolution=resolution,
        spawn_key=fact.spawn_key,
        depth=None,
        agent_type=fact.agent_type,
        subagent_id=fact.subagent_id,
        description=fact.description,
        at=at,
        fact=key,
    )


def _ensure_placed(
    conversation: str, observation: Observation, root: RootLineage, unit: _Unit
) -> None:
    """A conversation acted: resume it if stopped; place it when the payload names its
    root but the registry has not seen it start."""
    if root.knows(conversation):
        if _may_resume(root, conversation):
            root.resume(conversation, at=unit.at, fact=unit.key)
    elif observation.root is not None and not unit.elsewhere(conversation, root):
        root.place_unknown_child(
            conversation,
            agent_type=None,
            subagent_id=None,
            description=None,
            at=unit.at,
            fact=unit.key,
        )
