"""How each journaled event changes the tree-view rows of its root.

One handler per event topic takes a decoded event and the rows of its root
(:class:`RootRows`) and returns the rows it changed. :data:`HANDLERS` serve the projection of
the whole journal; :data:`AS_OF_HANDLERS` serve a view replayed up to a past time, where a stop
the journal holds in the past still shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lineage_es.read.decoding import JournalEvent, iso
from lineage_es.read.view import NodeRow


class RootRows:
    """The rows of one root while the projection changes them, indexed by how events name
    nodes: by conversation, or by spawn key while pending."""

    def __init__(self, rows: list[NodeRow]) -> None:
        self.conversations: dict[str, NodeRow] = {}
        self.pending: dict[str, NodeRow] = {}
        self.root: NodeRow | None = None
        #: What a row was before a stop held in the past was applied to it (time travel
        #: only, :func:`_held_as_of`), by the stop's version: the row, its status and stop time.
        self.held: dict[int, tuple[NodeRow, str, str | None]] = {}
        for row in rows:
            self.add(row)

    def add(self, row: NodeRow) -> None:
        if row.conversation is not None:
            self.conversations[row.conversation] = row
        elif row.spawn_key is not None:
            self.pending[row.spawn_key] = row
        if row.is_root:
            self.root = row

    def by_conversation(self, conversation: str | None) -> NodeRow | None:
        return None if conversation is None else self.conversations.get(conversation)

    def by_spawn_key(self, spawn_key: str | None) -> NodeRow | None:
        return None if spawn_key is None else self.pending.get(spawn_key)

    def find(self, conversation: str | None, spawn_key: str | None) -> NodeRow | None:
        return self.by_conversation(conversation) or self.by_spawn_key(spawn_key)

    def bind(self, row: NodeRow, conversation: str) -> None:
        if row.spawn_key is not None:
            self.pending.pop(row.spawn_key, None)
        row.conversation = conversation
        self.conversations[conversation] = row

    def unbind(self, row: NodeRow, spawn_key: str) -> None:
        if row.conversation is not None:
            self.conversations.pop(row.conversation, None)
        row.conversation = None
        row.spawn_key = spawn_key
        self.pending[spawn_key] = row


def _root_created(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    s = event.state
    row = NodeRow(
        nid=event.position,
        root_id=event.originator_id,
        host=s["host"],
        root=s["conversation"],
        conversation=s["conversation"],
        spawn_key=None,
        parent=None,
        depth=0,
        status="live",
        resolution="native",
        started_at=event.timestamp,
        workspace=tuple(s.get("workspace") or ()),
    )
    rows.add(row)
    return [row]


def _child_placed(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    root = rows.root
    if root is None:
        return []
    s = event.state
    row = NodeRow(
        nid=event.position,
        root_id=event.originator_id,
        host=root.host,
        root=root.root,
        conversation=s["conversation"],
        spawn_key=s["spawn_key"],
        parent=s["parent"],
        depth=s["depth"],
        status="live",
        resolution=s["resolution"],
        started_at=event.timestamp,
        ambiguous=s["ambiguous"],
        agent_type=s.get("agent_type"),
        subagent_id=s.get("subagent_id"),
        description=s.get("description"),
        name=s.get("name"),
    )
    rows.add(row)
    return [row]


def _root_redated(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """The root started earlier: its row is re-dated, or, in a view replayed up to a time
    before the event that created the root (time travel), made."""
    row = rows.root
    if row is None:
        return _root_created(event, rows)
    row.started_at = min(row.started_at, event.timestamp)
    return [row]


def _child_redated(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """A child started earlier: its row is re-dated, or, in a view replayed up to a time
    before the event that placed it (time travel), placed from the event alone."""
    s = event.state
    row = rows.find(s["conversation"], s["spawn_key"])
    if row is None:
        return _child_placed(event, rows)
    row.started_at = min(row.started_at, event.timestamp)
    return [row]


def _resumed(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    if event.state.get("restores"):
        return []  # the end of a stop held in the past, which changed no row (:func:`_stopped`)
    # A pending child is named by its spawn key (RootLineage.resume).
    row = rows.find(event.state["conversation"], event.state["conversation"])
    if row is None:
        return []
    row.status = "live"
    row.stopped_at = None
    return [row]


def _child_bound(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    row = rows.by_spawn_key(event.state["spawn_key"])
    if row is None:
        return []
    rows.bind(row, event.state["conversation"])
    row.resolution = event.state["resolution"]
    return [row]


def _binding_undone(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    row = rows.by_conversation(event.state["conversation"])
    if row is None:
        return []
    rows.unbind(row, event.state["spawn_key"])
    row.resolution = event.state["resolution"]
    return [row]


def _subtree_moved(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """The nodes that left this root with a child bound here by order, which proved a root
    of its own: their rows here are done with (marked deleted, ``moved``); the root they
    moved to has new rows for them (:func:`_child_adopted`)."""
    s = event.state
    found = [rows.by_conversation(conversation) for conversation in s["conversations"]]
    found += [rows.by_spawn_key(spawn_key) for spawn_key in s["spawn_keys"]]
    changed = [row for row in found if row is not None]
    for row in changed:
        row.status = "deleted"
        row.delete_reason = "moved"
    return changed


def _child_adopted(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """A node that moved here from another root, as it stood there."""
    root = rows.root
    if root is None:
        return []
    s = event.state
    node = s["node"]
    row = NodeRow(
        nid=event.position,
        root_id=event.originator_id,
        host=root.host,
        root=root.root,
        conversation=s["conversation"],
        spawn_key=s["spawn_key"],
        parent=node["parent"],
        depth=node["depth"],
        status=node["status"],
        resolution=node["resolution"],
        started_at=iso(s["started_at"]),
        ambiguous=node["ambiguous"],
        agent_type=s["agent_type"],
        subagent_id=s["subagent_id"],
        description=s["description"],
        name=s["name"],
        stopped_at=s["stopped_at"],
    )
    rows.add(row)
    return [row]


def _take_spawn_type(state: dict[str, Any], row: NodeRow) -> None:
    """A child moved to another spawn is what that spawn is (or what the fact stated), when
    the event says so (``retyped``; an event upcast from version 1 does not: the child keeps
    its type and description)."""
    if state.get("retyped"):
        row.agent_type = state["agent_type"]
        row.description = state["description"]


def _edge_confirmed(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    row = rows.by_conversation(event.state["conversation"])
    if row is None:
        return []
    row.resolution = event.state["resolution"]
    if event.state.get("spawn_key") is not None:
        row.spawn_key = event.state["spawn_key"]
        _take_spawn_type(event.state, row)
    return [row]


def _edge_corrected(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    s = event.state
    row = rows.by_conversation(s["conversation"])
    if row is None:
        return []
    row.parent = s["parent"]
    row.resolution = s["resolution"]
    row.ambiguous = False
    if s.get("released") is not None and row.spawn_key == s["released"]:
        row.spawn_key = None  # moved off a spawn another node requested
    spawn_key = s["spawn_key"] if s.get("spawn_key") is not None else s.get("claimed")
    if spawn_key is not None:
        row.spawn_key = spawn_key
    _take_spawn_type(s, row)  # with a spawn, or a child settled under its stated parent
    changed = [row]
    for conversation, depth in s["depths"].items():
        moved = rows.by_conversation(conversation)
        if moved is not None:
            moved.depth = depth
            changed.append(moved)
    for pending in rows.pending.values():  # a child started under a moved node, not bound yet
        if pending.parent in s["depths"]:
            pending.depth = s["depths"][pending.parent] + 1
            changed.append(pending)
    return changed


def _stopped(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    if event.state.get("until") is not None:
        # A stop held in the past (a re-dated child held to an end before its act, which
        # resumed it): the node now is as its other events have it. Time travel: _held_as_of.
        return []
    row = rows.find(event.state["conversation"], event.state["spawn_key"])
    if row is None:
        return []
    row.status = "stopped"
    row.stopped_at = event.timestamp
    return [row]


def _held_as_of(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """A stop, in a view replayed up to a time (time travel). A stop held in the past stops a
    live row, which keeps what it was: the resume that ends the stop (:func:`_restored_as_of`),
    journaled just after it, is in the view only when the time is at or after it, and gives
    the row back as the events before had it (what the node did from then on stands)."""
    s = event.state
    if s.get("until") is None:
        return _stopped(event, rows)
    row = rows.find(s["conversation"], s["spawn_key"])
    if row is None or row.status != "live":
        return []
    rows.held[event.version] = (row, row.status, row.stopped_at)
    row.status = "stopped"
    row.stopped_at = event.timestamp
    return [row]


def _restored_as_of(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """A resume, in a view replayed up to a time: the end of a stop held in the past (the
    root's event just before it) gives the row back as it was before that stop, if that stop
    changed it (:func:`_held_as_of`)."""
    if not event.state.get("restores"):
        return _resumed(event, rows)
    kept = rows.held.pop(event.version - 1, None)
    if kept is None:
        return []
    row, status, stopped_at = kept
    row.status = status
    row.stopped_at = stopped_at
    return [row]


def _renamed(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    # A pending child is renamed by its spawn key; its row keeps the name once bound.
    row = rows.find(event.state["conversation"], event.state["spawn_key"])
    if row is None:
        return []
    row.name = event.state["name"]
    return [row]


def _workspace_learned(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    row = rows.root
    if row is None:
        return []
    row.workspace = tuple(event.state["workspace"])
    return [row]


def _deleted(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    row = rows.find(event.state["conversation"], event.state["spawn_key"])
    if row is None:
        return []
    row.status = "deleted"
    row.delete_reason = event.state["reason"]
    return [row]


def _heard(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
    """A fact about a node that changed nothing else in its row (a ``Seen``, an MCP tool
    call): the row, which :func:`_dated` dates."""
    row = rows.find(event.state["conversation"], event.state.get("spawn_key"))
    return [] if row is None else [row]


Handler = Callable[[JournalEvent, RootRows], list[NodeRow]]


def _dated(handler: Handler) -> Handler:
    """``handler``, with each row it changes seen at the event's time (``last_seen``), unless
    the row was seen later (a re-dated start is dated back)."""

    def dated(event: JournalEvent, rows: RootRows) -> list[NodeRow]:
        changed = handler(event, rows)
        for row in changed:
            if row.last_seen is None or event.timestamp > row.last_seen:
                row.last_seen = event.timestamp
        return changed

    return dated


_UNDATED: dict[str, Handler] = {
    "lineage:RootLineage.Started": _root_created,
    "lineage:RootLineage.ChildPlaced": _child_placed,
    "lineage:RootLineage.RootRedated": _root_redated,
    "lineage:RootLineage.ChildRedated": _child_redated,
    "lineage:RootLineage.Resumed": _resumed,
    "lineage:RootLineage.ChildBound": _child_bound,
    "lineage:RootLineage.BindingUndone": _binding_undone,
    "lineage:RootLineage.SubtreeMoved": _subtree_moved,
    "lineage:RootLineage.ChildAdopted": _child_adopted,
    "lineage:RootLineage.EdgeConfirmed": _edge_confirmed,
    "lineage:RootLineage.EdgeCorrected": _edge_corrected,
    "lineage:RootLineage.Stopped": _stopped,
    "lineage:RootLineage.Renamed": _renamed,
    "lineage:RootLineage.Deleted": _deleted,
    "lineage:RootLineage.WorkspaceLearned": _workspace_learned,
    "lineage:RootLineage.Seen": _heard,
    "lineage:RootLineage.ToolCallStarted": _heard,
    "lineage:RootLineage.ToolCallEnded": _heard,
}

HANDLERS: dict[str, Handler] = {topic: _dated(handler) for topic, handler in _UNDATED.items()}

#: The handlers of a view replayed up to a time (:meth:`Projector.apply_events`): a stop held
#: in the past shows there, until the resume that ends it.
AS_OF_HANDLERS: dict[str, Handler] = HANDLERS | {
    "lineage:RootLineage.Stopped": _dated(_held_as_of),
    "lineage:RootLineage.Resumed": _dated(_restored_as_of),
}
