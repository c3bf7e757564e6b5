"""Checkpoints of the tree view, every :data:`STRETCH` journal positions, for time travel.

A checkpoint at position ``C`` holds the view's rows as a full replay of the journal up to
``C`` leaves them: every row (every :data:`FULL_EVERY`-th checkpoint) or only the rows the
stretch since the previous checkpoint changed (a delta), grouped by root so that a question
about one root decodes only that root's (:mod:`lineage_es.read.checkpoint_rows`). Beside them:
the earliest time of an event of the stretch, the latest time of an event up to ``C``,
whether no event up to ``C`` is a stop held in the past (or the resume ending one), and the
identity of the journal's entry at ``C`` (checked before a checkpoint is trusted: a journal
rebuilt or imported in place has other entries there, and its checkpoints are dropped).

They live in the store (the ``lineage_checkpoints`` table beside the view's, on SQLite and
PostgreSQL) or in the process (``memory://``), are made lazily by the first time travel past
a stretch none covers, or by ``lineage journal rebuild``, never by a hook, and can always be
thrown away: they are a cache of the journal.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from eventsourcing.persistence import ApplicationRecorder, Notification

from lineage_es.read.checkpoint_rows import CheckpointView, encode_rows
from lineage_es.read.decoding import read_journal
from lineage_es.read.projection import Projector
from lineage_es.read.row_changes import AS_OF_HANDLERS
from lineage_es.read.sqlview import SqlView
from lineage_es.read.view import MemoryView, NodeRow, ViewStore

#: Journal positions between checkpoints: time travel replays at most this many entries.
STRETCH = 1000
#: Every this many checkpoints, one holds every row; the others only the stretch's changes.
FULL_EVERY = 32

#: The checkpoints' format, part of each one's identity: a version whose rows or handlers
#: (:mod:`lineage_es.read.row_changes`) differ bumps it, and older checkpoints are made again.
FORMAT = "c2"

#: The earliest time of a stretch with no entry time travel applies: after every time.
NO_TIME = "~"

#: Event types of a stop held in the past and of the resume ending one, which time travel
#: applies otherwise than the projection (:data:`~lineage_es.read.row_changes.AS_OF_HANDLERS`).
_HELD_TOPICS = {"lineage:RootLineage.Stopped": "until", "lineage:RootLineage.Resumed": "restores"}


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One checkpoint's index entry (its rows are read only when it is used)."""

    position: int
    full: bool
    #: The earliest time of an entry of the stretch ending here that time travel applies
    #: (:data:`NO_TIME` when none).
    stretch_min: str
    #: The latest time of an entry up to here that time travel applies.
    prefix_max: str
    #: No entry up to here is a held stop or the resume that ends one.
    held_free: bool
    #: The journal entry at ``position``, as :func:`entry_identity` writes it.
    checked: str


def entry_identity(notification: Notification) -> str:
    """Which entry a journal holds at a position: its root, version, type and a checksum of
    its stored state (ids are derived from conversations, so two journals may share them),
    after the checkpoints' :data:`FORMAT`."""
    n = notification
    crc = zlib.crc32(n.state)
    return f"{FORMAT}:{n.originator_id}:{n.originator_version}:{n.topic}:{crc:08x}"


class CheckpointStore(Protocol):
    """Where a journal's checkpoints are kept, with the views of those time travel used
    lately, read (``bases``: emptied with the checkpoints)."""

    bases: OrderedDict[int, CheckpointView]
    #: Held while checkpoints are made: threads of one engine make each once.
    making: threading.Lock

    def index(self) -> list[Checkpoint]:
        """Every checkpoint, by position."""
        ...

    def chain(self, first: int, last: int) -> list[bytes]:
        """The rows of every checkpoint from position ``first`` to ``last``, in order."""
        ...

    def add(self, checkpoint: Checkpoint, rows: bytes) -> None:
        """Keep a checkpoint (one already kept at its position stays as it is)."""
        ...

    def clear(self) -> None: ...

    def size(self) -> int:
        """The bytes the checkpoints' rows take."""
        ...


class MemoryCheckpoints:
    """Checkpoints of a ``memory://`` journal, held in the process beside it."""

    def __init__(self) -> None:
        self._kept: dict[int, tuple[Checkpoint, bytes]] = {}
        self.bases: OrderedDict[int, CheckpointView] = OrderedDict()
        self.making = threading.Lock()

    def index(self) -> list[Checkpoint]:
        return [self._kept[p][0] for p in sorted(self._kept)]

    def chain(self, first: int, last: int) -> list[bytes]:
        return [self._kept[p][1] for p in sorted(self._kept) if first <= p <= last]

    def add(self, checkpoint: Checkpoint, rows: bytes) -> None:
        self._kept.setdefault(checkpoint.position, (checkpoint, rows))

    def clear(self) -> None:
        self._kept.clear()
        self.bases.clear()

    def size(self) -> int:
        return sum(len(blob) for _, blob in self._kept.values())


_FIELDS = "position, full_rows, stretch_min, prefix_max, held_free, checked"


class SqlCheckpoints:
    """Checkpoints in the ``lineage_checkpoints`` table, beside the view's."""

    def __init__(self, view: SqlView) -> None:
        self._view = view
        self.bases: OrderedDict[int, CheckpointView] = OrderedDict()
        self.making = threading.Lock()

    def index(self) -> list[Checkpoint]:
        found = self._view._query(f"SELECT {_FIELDS} FROM lineage_checkpoints ORDER BY position")
        return [
            Checkpoint(int(p), bool(f), str(lo), str(hi), bool(h), str(c))
            for p, f, lo, hi, h, c in found
        ]

    def chain(self, first: int, last: int) -> list[bytes]:
        found = self._view._query(
            "SELECT rows FROM lineage_checkpoints WHERE position BETWEEN ? AND ? ORDER BY position",
            (first, last),
        )
        return [bytes(blob) for (blob,) in found]

    def add(self, checkpoint: Checkpoint, rows: bytes) -> None:
        c = checkpoint
        values = (c.position, int(c.full), c.stretch_min, c.prefix_max, int(c.held_free))
        with self._view._write_transaction() as cursor:
            cursor.execute(
                f"INSERT INTO lineage_checkpoints ({_FIELDS}, rows) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (position) DO NOTHING",
                (*values, c.checked, rows),
            )

    def clear(self) -> None:
        self.bases.clear()
        with self._view._write_transaction() as cursor:
            cursor.execute("DELETE FROM lineage_checkpoints")

    def size(self) -> int:
        found = self._view._query("SELECT COALESCE(SUM(LENGTH(rows)), 0) FROM lineage_checkpoints")
        return int(found[0][0])


#: The checkpoints of each ``memory://`` journal, by its recorder (they go with it), and of
#: each SQL view (its bases, read, go with the engine).
_STORES: weakref.WeakKeyDictionary[Any, CheckpointStore] = weakref.WeakKeyDictionary()


def checkpoint_store(recorder: ApplicationRecorder, view: ViewStore) -> CheckpointStore:
    """The checkpoints of the journal ``recorder`` keeps, whose view is ``view``."""
    owner: Any = view if isinstance(view, SqlView) else recorder
    kept = _STORES.get(owner)
    if kept is None:  # two threads may both get here: the first one's is kept
        made = SqlCheckpoints(view) if isinstance(view, SqlView) else MemoryCheckpoints()
        kept = _STORES.setdefault(owner, made)
    return kept


def entry_at(recorder: ApplicationRecorder, position: int) -> Notification | None:
    found = recorder.select_notifications(start=position, limit=1, stop=position)
    return found[0] if found else None


def trusted(recorder: ApplicationRecorder, store: CheckpointStore) -> list[Checkpoint]:
    """The store's checkpoints, after checking the newest one against the journal: when the
    journal's entry there is another (the journal was rebuilt or imported in place), or gone,
    every checkpoint is dropped, and none is returned."""
    index = store.index()
    if not index:
        return index
    entry = entry_at(recorder, index[-1].position)
    if entry is None or entry_identity(entry) != index[-1].checked:
        with contextlib.suppress(Exception):  # a store refusing the write: none is used
            store.clear()
        return []
    return index


def base_view(store: CheckpointStore, index: Sequence[Checkpoint], at: int) -> CheckpointView:
    """The view at the checkpoint ``index[at]``: its latest full checkpoint's rows, with the
    deltas since applied (each root's decoded when first asked for)."""
    first = at
    while not index[first].full:
        first -= 1
    position = index[at].position
    return CheckpointView(store.chain(index[first].position, position), position)


def extend(
    recorder: ApplicationRecorder, store: CheckpointStore, upto: int, *, stretch: int = 0
) -> list[Checkpoint]:
    """Make the checkpoints of every whole stretch (``stretch`` positions, 0: :data:`STRETCH`)
    up to ``upto`` that none covers yet; returns every trusted checkpoint. A full replay of
    those stretches, once."""
    stretch = stretch or STRETCH
    with store.making:
        return _extend(recorder, store, upto, stretch)


def _extend(
    recorder: ApplicationRecorder, store: CheckpointStore, upto: int, stretch: int
) -> list[Checkpoint]:
    index = trusted(recorder, store)
    last = index[-1] if index else None
    start = last.position if last else 0
    if (start // stretch + 1) * stretch > upto:
        return index
    view = MemoryView()
    if last is not None:
        view.replace(base_view(store, index, len(index) - 1).all_rows(), start)
    changed: dict[int, NodeRow] = {}

    def listen(rows: Sequence[NodeRow], expected: int, position: int) -> None:
        for row in rows:  # the projector's own rows, which later pages change
            changed[row.nid] = row.copy()

    projector = Projector(recorder, view, listen)
    prefix_max = last.prefix_max if last else ""
    held_free = last.held_free if last else True
    count = len(index)
    boundary = (start // stretch + 1) * stretch
    while boundary <= upto:
        # Only entries time travel applies count for times: the index's, journaled after
        # the events of their root with those events' times, change no row.
        stretch_min, read = NO_TIME, False
        for event in read_journal(recorder, view.position(), boundary):
            read = True
            if event.topic in AS_OF_HANDLERS:
                stamp = event.timestamp
                stretch_min, prefix_max = min(stretch_min, stamp), max(prefix_max, stamp)
            flag = _HELD_TOPICS.get(event.topic)
            if flag is not None and event.state.get(flag):
                held_free = False
        projector.catch_up(stop=boundary)
        position = view.position()
        entry = entry_at(recorder, position) if read else None
        if entry is not None:
            full = count % FULL_EVERY == 0
            rows = view.all_rows() if full else [changed[n] for n in sorted(changed)]
            checkpoint = Checkpoint(
                position, full, stretch_min, prefix_max, held_free, entry_identity(entry)
            )
            blob = encode_rows(rows, full=full)
            try:
                store.add(checkpoint, blob)
            except Exception:  # any driver's refusal to write
                # A store that refuses the write (read-only, locked past its wait) leaves
                # time travel to replay from the last checkpoint kept: slower, never wrong.
                return index
            index.append(checkpoint)
            changed.clear()
            count += 1
        boundary += stretch
    return index


def rebuild_checkpoints(recorder: ApplicationRecorder, view: ViewStore, *, stretch: int = 0) -> int:
    """Drop a journal's checkpoints and make them again for its whole length (``lineage
    journal rebuild``); returns how many there are."""
    store = checkpoint_store(recorder, view)
    store.clear()
    return len(extend(recorder, store, recorder.max_notification_id() or 0, stretch=stretch))
