"""The projection: keeps a tree view current with the journal, applying each event once.

It reads the notification log in pages (:mod:`lineage_es.read.decoding`), applies each event
to the rows of its root (:mod:`lineage_es.read.row_changes`), and writes the changed rows
together with the new position. A write that finds the position moved by another process is
dropped and the page re-read, so every event is applied once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

from eventsourcing.persistence import ApplicationRecorder, Notification

from lineage_es.domain.topics import EVENT_CLASSES
from lineage_es.read.decoding import PAGE_SIZE, JournalEvent, decode
from lineage_es.read.row_changes import AS_OF_HANDLERS, HANDLERS, RootRows
from lineage_es.read.view import MemoryView, NodeRow, ViewStore

#: Roots whose rows a projector keeps between pages (the most recently changed).
WORKING_SET = 256

#: Told how many entries each written page applied.
Progress = Callable[[int], None]
#: Told about every page written: the rows changed, the position expected, the new position.
Listener = Callable[[Sequence[NodeRow], int, int], None]


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
            if self._apply_and_write(page, position):
                applied += len(page)
                if progress is not None:
                    progress(len(page))

    def catch_up_with(self, written: Sequence[Notification]) -> int:
        """Catch up, applying the entries this process has just written (``written``, in
        journal order, as the store gave them back) without reading them back when they
        directly follow the view's position; returns how many entries were applied.

        Nothing can go stale: an entry of another writer before them leaves them to the
        journal read, and one after them is read as ever."""
        position = self.view.position()
        applied = 0
        if (
            written
            and written[0].id == position + 1
            and written[-1].id == position + len(written)
            and self._apply_and_write(written, position)
        ):
            applied = len(written)
        return applied + self.catch_up()

    def _apply_and_write(self, page: Sequence[Notification], position: int) -> bool:
        """Apply ``page`` (the entries after ``position``) and write the rows it changed with
        its last position; ``False`` when the view moved meanwhile (nothing written)."""
        if position != self._trusted:
            self._working.clear()
        changed = self._apply_page(page)
        if not self.view.write(changed, expected=position, position=page[-1].id):
            self._working.clear()
            self._trusted = -1
            return False
        self._trusted = page[-1].id
        if self.listener is not None:
            self.listener(changed, position, page[-1].id)
        while len(self._working) > WORKING_SET:
            self._working.popitem(last=False)
        return True

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
