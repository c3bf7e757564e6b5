"""The journal's past, as the engine hands it out: the tree view as it was at a position or a
time (time travel: the journal keeps every step), and the journal's entries, decoded.

Both read the store on their own terms (a past view of its own, entries page by page as the
caller iterates), so the front door (:mod:`lineage_es.engine.engine`) only checks its state and
guards the call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, NoReturn

from lineage_es.engine.guards import require_moment
from lineage_es.engine.journaling import as_utc
from lineage_es.errors import InvalidArgument
from lineage_es.read.decoding import JournalEvent, iso, read_journal
from lineage_es.read.queries import Queries

if TYPE_CHECKING:
    from eventsourcing.persistence import ApplicationRecorder

    from lineage_es.read.answers import TreeReader
    from lineage_es.read.view import ViewStore


def require_past(position: int | None, time: datetime | None) -> None:
    """Refuse, as :class:`InvalidArgument`, a ``position`` that is not an int of 0 or more
    and a ``time`` that is not a datetime (either may be ``None``)."""
    if position is not None and (
        isinstance(position, bool) or not isinstance(position, int) or position < 0
    ):
        raise InvalidArgument(f"position must be an int, 0 or more, not {position!r}")
    require_moment(time, "time")


def past_reader(
    recorder: ApplicationRecorder,
    view: ViewStore,
    end: int,
    *,
    position: int | None,
    time: datetime | None,
) -> TreeReader:
    """An answerer over the tree view as it was at ``position`` (``None``: the journal's
    ``end``), of the entries at or before ``time`` only when it is given: a view of its own,
    made from ``view``'s checkpoints and ``recorder``'s journal, so the current view may move
    meanwhile. Loads the time-travel and answering code on first use only."""
    from lineage_es.read.answers import TreeReader
    from lineage_es.read.time_travel import past_view

    cutoff = None if time is None else iso(as_utc(time))
    past = past_view(recorder, view, position=position, cutoff=cutoff, end=end)
    return TreeReader(Queries(past))


def journal_entries(
    recorder: ApplicationRecorder,
    start: int,
    stop: int | None,
    caught: tuple[type[Exception], ...],
    failed: Callable[[Exception], NoReturn],
) -> Iterator[JournalEvent]:
    """Every journal entry after ``start`` (up to ``stop``), decoded, in order, read page by
    page as the caller iterates: a store failure among ``caught`` on any page goes to
    ``failed``, which raises it named."""
    try:
        yield from read_journal(recorder, start, stop)
    except caught as exc:
        failed(exc)


__all__ = ["journal_entries", "past_reader", "require_past"]
