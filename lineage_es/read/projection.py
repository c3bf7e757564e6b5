"""The projection: turns journaled events into tree-view rows, exactly once.

It reads the notification log in pages, decodes each stored event straight from its JSON
(no domain objects are rebuilt), applies it to the rows of its root, and writes the changed
rows together with the new position. A write that finds the position moved by another
process is dropped and the page re-read, so every event is applied once.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple
from uuid import UUID

import orjson
from eventsourcing.persistence import ApplicationRecorder, Notification

from lineage_es.domain.root import EVENT_CLASSES, upcast
from lineage_es.read.view import MemoryView, NodeRow, ViewStore

#: Event types whose stored state may need upcasting.
VERSIONED = frozenset(t for t, c in EVENT_CLASSES.items() if getattr(c, "class_version", 1) > 1)

PAGE_SIZE = 1000
WORKING_SET = 256

Progress = Callable[[int], None]
#: Told about every page written: the rows changed, the position expected, the new position.
Listener = Callable[[Sequence[NodeRow], int, int], None]


class JournalEvent(NamedTuple):
    """One decoded journal entry: its position, root aggregate, topic and state."""

    position: int
    originator_id: str
    version: int
    topic: str
    state: dict[str, Any]

    @property
    def timestamp(self) -> str:
        return iso(self.state.get("timestamp"))


def iso(value: Any) -> str:
    """A stored timestamp as a fixed-width UTC ISO string, so strings sort as times."""
    if type(value) is dict:
        value = value.get("_data_")
    if type(value) is str and len(value) == 32 and value.endswith("+00:00"):
        return value
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        moment = datetime.fromisoformat(value)
    else:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def decode(notification: Notification) -> JournalEvent | None:
    """The journal entry for a notification, upcast to the current event version; ``None``
    (with a warning) for a topic this version does not know."""
    topic = notification.topic
    if topic not in EVENT_CLASSES:
        warnings.warn(f"skipping journal entry of unknown type {topic!r}", stacklevel=2)
        return None
    state = orjson.loads(notification.state)
    if topic in VERSIONED or "class_version" in state:
        upcast(topic, state)
    originator = notification.originator_id
    return JournalEvent(
        notification.id,
        originator.hex if isinstance(originator, UUID) else str(originator),
        notification.originator_version,
        topic,
        state,
    )


def read_journal(
    recorder: ApplicationRecorder, start: int = 0, stop: int | None = None
) -> Iterator[JournalEvent]:
    """Every journal entry after position ``start`` (up to ``stop``), in pages."""
    position = start
    while True:
        page = recorder.select_notifications(
            start=position, limit=PAGE_SIZE, stop=stop, inclusive_of_start=False
        )
        if not page:
            return
        for notification in page:
            event = decode(notification)
            if event is not None:
                yield event
        position = page[-1].id


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


def _retype(state: dict[str, Any], row: NodeRow) -> None:
    """A child moved to another spawn is what that spawn is (or what the fact stated);
    version-1 events (``retyped`` false) left its type and description alone."""
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
        _retype(event.state, row)
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
        row.spawn_key = None  # moved off a spawn another node requested (version 3)
    spawn_key = s["spawn_key"] if s.get("spawn_key") is not None else s.get("claimed")
    if spawn_key is not None:
        row.spawn_key = spawn_key
    _retype(s, row)  # with a spawn, or a child settled under its stated parent with none
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


Handler = Callable[[JournalEvent, RootRows], list[NodeRow]]

HANDLERS: dict[str, Handler] = {
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
}

#: The handlers of a view replayed up to a time (:meth:`Projector.apply_events`): a stop held
#: in the past shows there, until the resume that ends it.
AS_OF_HANDLERS: dict[str, Handler] = HANDLERS | {
    "lineage:RootLineage.Stopped": _held_as_of,
    "lineage:RootLineage.Resumed": _restored_as_of,
}


class Projector:
    """Keeps a view current with a journal.

    It caches the rows of recently changed roots between pages; the cache is trusted only
    while the view's position is the one this projector last wrote.
    """

    def __init__(
        self, recorder: ApplicationRecorder, view: ViewStore, listener: Listener | None = None
    ) -> None:
        self.recorder = recorder
        self.view = view
        self.listener = listener
        self._working: OrderedDict[str, RootRows] = OrderedDict()
        self._trusted = -1

    def catch_up(self, stop: int | None = None, progress: Progress | None = None) -> int:
        """Apply every journal entry the view has not seen (up to ``stop``); returns how
        many were applied by this call."""
        applied = 0
        while True:
            position = self.view.position()
            if stop is not None and position >= stop:
                return applied
            page = self.recorder.select_notifications(
                start=position, limit=PAGE_SIZE, stop=stop, inclusive_of_start=False
            )
            if not page:
                return applied
            if position != self._trusted:
                self._working.clear()
            changed = self._apply_page(page)
            if self.view.write(changed, expected=position, position=page[-1].id):
                self._trusted = page[-1].id
                if self.listener is not None:
                    self.listener(changed, position, page[-1].id)
                while len(self._working) > WORKING_SET:
                    self._working.popitem(last=False)
                applied += len(page)
                if progress is not None:
                    progress(len(page))
            else:
                self._working.clear()
                self._trusted = -1

    def apply_events(self, events: list[JournalEvent], position: int) -> None:
        """Apply already-decoded entries (time travel filters them first, by their time) to
        the view: a stop held in the past shows unless the resume that ends it is among them
        (:data:`AS_OF_HANDLERS`)."""
        changed: dict[int, NodeRow] = {}
        for event in events:
            handler = AS_OF_HANDLERS.get(event.topic)
            if handler is None:
                continue
            for row in handler(event, self._rows_of(event.originator_id)):
                changed[row.nid] = row
        expected = self.view.position()
        if not self.view.write(list(changed.values()), expected=expected, position=position):
            raise RuntimeError("the view moved while applying a filtered journal")
        self._trusted = position

    def rebuild(self, progress: Progress | None = None) -> int:
        """Replay the whole journal into a fresh view, then put it in place of this one in one
        transaction: other engines on the store answer from the old view until then, never
        from an emptied one, nor from one older than they saw (what writers projected while
        it replayed is replayed too before the swap). Returns how many entries were replayed,
        those journaled while it ran included."""
        fresh = MemoryView()
        replay = Projector(self.recorder, fresh)
        applied = replay.catch_up(progress=progress)
        while not self.view.replace(fresh.all_rows(), fresh.position()):
            # Writers projected newer entries meanwhile: take them too, then swap; a view past
            # every entry of the journal (nothing newer to take) is wrong, and replaced anyway.
            newer = replay.catch_up(progress=progress)
            applied += newer
            if newer == 0:
                self.view.replace(fresh.all_rows(), fresh.position(), force=True)
                break
        self._working.clear()
        self._trusted = -1
        return applied + self.catch_up(progress=progress)

    def _apply_page(self, page: Sequence[Notification]) -> list[NodeRow]:
        changed: dict[int, NodeRow] = {}
        roots: dict[str, RootRows] = {}
        for notification in page:
            handler = HANDLERS.get(notification.topic)
            if handler is None:
                if notification.topic not in EVENT_CLASSES:
                    decode(notification)  # warns about the unknown type
                continue
            event = decode(notification)
            assert event is not None
            rows = roots.get(event.originator_id)
            if rows is None:
                rows = roots[event.originator_id] = self._rows_of(event.originator_id)
            for row in handler(event, rows):
                changed[row.nid] = row
        return list(changed.values())

    def _rows_of(self, root_id: str) -> RootRows:
        rows = self._working.get(root_id)
        if rows is None:
            rows = RootRows([row.copy() for row in self.view.root_rows(root_id)])
            self._working[root_id] = rows
        else:
            self._working.move_to_end(root_id)
        return rows
