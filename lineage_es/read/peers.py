"""How a node is seen from elsewhere in its tree: its :class:`~lineage_es.model.Peer`, the
signature telling when a peer must be built anew, and the live roots as every tree lists them
(grouped by workspace, oldest first), each worked out once per change of its row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from lineage_es.model import Peer, Subagent
from lineage_es.read.view import NodeRow


def same_workspace(a: Sequence[str], b: Sequence[str]) -> bool:
    """Whether two lists of workspace roots name the same workspace: the same folders, in
    any order (host adapters normalise what they journal, but a journal may also hold roots
    whose folders are in the order the host sent them)."""
    return a == b or sorted(set(a)) == sorted(set(b))


def workspace_key(workspace: Sequence[str]) -> tuple[str, ...]:
    """One key for a workspace however its folders are ordered or repeated: two lists of
    roots have the same key exactly when :func:`same_workspace` holds for them."""
    return tuple(sorted(set(workspace)))


def oldest_first(row: NodeRow) -> tuple[str, int]:
    return (row.started_at, row.nid)


def subagent_of(row: NodeRow) -> Subagent | None:
    if row.is_root:
        return None
    return Subagent(id=row.subagent_id or row.key, type=row.agent_type)


def peer_of(row: NodeRow) -> Peer:
    """A node as another caller sees it in its tree."""
    return Peer(
        conversation=row.key,
        depth=row.depth,
        started_at=row.started_at,
        resolution=row.resolution,  # type: ignore[arg-type]
        parent=row.parent,
        subagent=subagent_of(row),
        ambiguous=row.ambiguous,
        last_seen=row.last_seen,
    )


def peer_signature(row: NodeRow) -> tuple[object, ...]:
    return (
        row.key,
        row.depth,
        row.started_at,
        row.resolution,
        row.parent,
        row.subagent_id,
        row.agent_type,
        row.ambiguous,
        row.last_seen,
    )


class ListedRoot(NamedTuple):
    """A live root as the lists of live roots hold it, with what was worked out from its row."""

    row: NodeRow
    order: tuple[str, int]
    workspace: tuple[str, ...]
    signature: tuple[object, ...]
    peer: Peer


def listed(row: NodeRow, known: ListedRoot | None) -> ListedRoot:
    """``row`` listed, reusing the peer of ``known`` (its previous listing) when unchanged."""
    signature = peer_signature(row)
    peer = known.peer if known is not None and known.signature == signature else peer_of(row)
    return ListedRoot(row, oldest_first(row), workspace_key(row.workspace), signature, peer)


def listing_order(entry: ListedRoot) -> tuple[str, int]:
    return entry.order
