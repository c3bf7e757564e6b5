"""Time travel: the tree view as it was at a journal position or a time, from a checkpoint.

A full replay up to ``P`` costs a few microseconds per entry before it; here the view starts
from the nearest checkpoint at or before ``P`` (:mod:`lineage_es.read.checkpoints`) and
replays only the entries after it, into an :class:`OverlayView` over the checkpoint's rows
(shared, never changed), so nothing costs as much as the history is long.

``as_of(time=T)`` keeps a full replay's meaning: every entry up to the position whose time
is at or before ``T``, in journal order, with time travel's handlers. A checkpoint stands for
its prefix of that replay when every entry up to it is at or before ``T`` (its ``prefix_max``)
and none is applied otherwise by time travel (``held_free``); after it, a stretch whose
earliest time is after ``T`` holds nothing to apply, and is not read. (Only entries time
travel applies count for those times: a past view's own position, which no answer reads, may
so stop short of a full replay's, at an entry that changed no row.)
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from eventsourcing.persistence import ApplicationRecorder

from lineage_es.read.checkpoint_rows import CheckpointView, nid_of
from lineage_es.read.checkpoints import (
    Checkpoint,
    CheckpointStore,
    base_view,
    checkpoint_store,
    extend,
)
from lineage_es.read.decoding import JournalEvent, read_journal
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView, NodeRow, ReadsOneByOne, ViewStore

#: Checkpoints' views kept read by each engine: their blobs (a few MB at a million events)
#: and the roots decoded so far (the whole view, once every row was asked for).
BASES_KEPT = 2


class OverlayView(ReadsOneByOne):
    """A view made of a checkpoint's rows (``base``, read only) and the rows changed since
    (its own :class:`MemoryView`): what time travel replays the rest of the journal into."""

    def __init__(self, base: CheckpointView) -> None:
        self._base = base
        self._over = MemoryView()
        self._position = base.position()

    def _kept(self, rows: list[NodeRow]) -> list[NodeRow]:
        """``rows`` of the base that no later change replaced."""
        changed = self._over._rows
        return [row for row in rows if row.nid not in changed]

    def position(self) -> int:
        return self._position

    def roots_version(self) -> int:
        return max(self._base.roots_version(), self._over.roots_version())

    def root_version(self, root_id: str) -> int:
        return self._over.root_version(root_id) or self._base.root_version(root_id)

    def root_rows(self, root_id: str) -> list[NodeRow]:
        rows = self._kept(self._base.root_rows(root_id)) + self._over.root_rows(root_id)
        return sorted(rows, key=nid_of)

    def find(self, conversation: str) -> list[NodeRow]:
        return self._kept(self._base.find(conversation)) + self._over.find(conversation)

    def roots(self, host: str | None, *, live_only: bool) -> list[NodeRow]:
        base = self._base.roots(host, live_only=live_only)
        return sorted(self._kept(base) + self._over.roots(host, live_only=live_only), key=nid_of)

    def all_rows(self) -> list[NodeRow]:
        return sorted(self._kept(self._base.all_rows()) + self._over.all_rows(), key=nid_of)

    def pending(self, host: str) -> list[NodeRow]:
        return sorted(self._kept(self._base.pending(host)) + self._over.pending(host), key=nid_of)

    def write(self, rows: Sequence[NodeRow], expected: int, position: int) -> bool:
        if self._position != expected:
            return False
        self._over.apply(rows, position)
        self._position = position
        return True

    def replace(self, rows: Sequence[NodeRow], position: int, *, force: bool = False) -> bool:
        raise NotImplementedError("a view of the past is only ever replayed forward")

    def close(self) -> None:
        """Nothing to release."""


def past_view(
    recorder: ApplicationRecorder,
    view: ViewStore,
    *,
    position: int | None,
    cutoff: str | None,
    end: int,
) -> ViewStore:
    """The view at ``position`` (``None``: the journal's ``end``), of the entries at or
    before ``cutoff`` only when it is given (an ISO time as
    :func:`~lineage_es.read.decoding.iso` writes it)."""
    stop = end if position is None else min(position, end)
    store = checkpoint_store(recorder, view)
    index = extend(recorder, store, stop)
    positions = [c.position for c in index]
    usable = bisect.bisect_right(positions, stop)
    if cutoff is not None:
        usable = min(usable, _before_time(index, cutoff))
    base = CheckpointView([], 0) if usable == 0 else _base(store, index, usable - 1)
    past = OverlayView(base)
    if cutoff is None:
        Projector(recorder, past).catch_up(stop=position)
        return past
    events = _events_before(recorder, index[usable:], base.position(), stop, cutoff)
    Projector(recorder, past).apply_events(
        events, position=events[-1].position if events else base.position()
    )
    return past


def _before_time(index: Sequence[Checkpoint], cutoff: str) -> int:
    """How many checkpoints, from the first, stand for their prefix of a replay up to
    ``cutoff`` (both conditions hold for a first run of checkpoints: they only grow)."""
    count = 0
    for checkpoint in index:
        if checkpoint.prefix_max > cutoff or not checkpoint.held_free:
            break
        count += 1
    return count


def _events_before(
    recorder: ApplicationRecorder,
    after: Sequence[Checkpoint],
    start: int,
    stop: int,
    cutoff: str,
) -> list[JournalEvent]:
    """The entries after ``start`` up to ``stop`` at or before ``cutoff``, in order, leaving
    unread each stretch (between the checkpoints ``after``) whose earliest time is after it."""
    events: list[JournalEvent] = []
    for checkpoint in after:
        if checkpoint.position > stop:
            break
        if checkpoint.stretch_min <= cutoff:
            events.extend(_at_or_before(recorder, start, checkpoint.position, cutoff))
        start = checkpoint.position
    events.extend(_at_or_before(recorder, start, stop, cutoff))
    return events


def _at_or_before(
    recorder: ApplicationRecorder, start: int, stop: int, cutoff: str
) -> list[JournalEvent]:
    if stop <= start:
        return []
    return [e for e in read_journal(recorder, start, stop) if e.timestamp <= cutoff]


def _base(store: CheckpointStore, index: Sequence[Checkpoint], at: int) -> CheckpointView:
    """The view of checkpoint ``index[at]``, read once and kept for the next questions (with
    the roots they decode)."""
    position = index[at].position
    bases = store.bases
    base = bases.get(position)
    if base is None:
        base = bases[position] = base_view(store, index, at)
        while len(bases) > BASES_KEPT:
            bases.popitem(last=False)
    else:
        bases.move_to_end(position)
    return base
