"""The journal's exchange format: export, import, verify.

An export is JSONL: a header line ``{"format": "lineage-es-journal", "version": "1.1", ...}``
then one stored event a line, in journal order, with its state as JSON. A 1.1 header names the
journal's last ``position`` and how many ``events`` follow it, so that an import can tell an
export that lost an entry (positions alone cannot: PostgreSQL leaves gaps); a 1.0 header has
neither, and its entries are taken as they come. Import reads the whole file
(:mod:`lineage_es.journal_read`) and checks every event against the domain
(:mod:`lineage_es.journal_checks`) before it writes anything, so a corrupt file changes
nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from uuid import UUID

import orjson
from eventsourcing.persistence import Notification, StoredEvent

from lineage_es.domain.topics import EVENT_CLASSES
from lineage_es.errors import JournalFormatError, LineageError
from lineage_es.journal_checks import check_entries
from lineage_es.journal_read import (
    DEFAULT_MAX_TOTAL_BYTES,
    FORMAT,
    VERSION,
    ExportEntry,
    ImportReport,
    entries_are,
    read_export,
)
from lineage_es.read.decoding import decode, originator_hex, stored_entries
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView, NodeRow
from lineage_es.stores.bulk import insert_in_batches

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

__all__ = [
    "DEFAULT_MAX_TOTAL_BYTES",
    "ExportEntry",
    "ImportReport",
    "VerifyReport",
    "events_to_write",
    "export_journal",
    "import_journal",
    "read_export",
    "rebuild_time_travel",
    "verify_journal",
]


@dataclass
class VerifyReport:
    """What ``verify`` found; ``ok`` only when it found no problem. ``warnings`` are what
    may be harmless (a gap in PostgreSQL's positions, an entry of an unknown type)."""

    events: int = 0
    aggregates: int = 0
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _with_class_version(topic: str, state: dict[str, Any]) -> dict[str, Any]:
    """The state as stored: decoding upcast it to the current version and dropped the
    mark, which must go back or an import would upcast it a second time."""
    version = getattr(EVENT_CLASSES[topic], "class_version", 1)
    return {**state, "class_version": version} if version > 1 else state


def _export_line(notification: Notification) -> dict[str, Any]:
    """An entry as exported; one of a type this version does not know keeps its stored
    state, for a newer version to read (an older one skips it on import)."""
    event = decode(notification) if notification.topic in EVENT_CLASSES else None
    if event is None:
        state = orjson.loads(notification.state)
    else:
        state = _with_class_version(event.topic, event.state)
    return {
        "position": notification.id,
        "originator_id": originator_hex(notification.originator_id),
        "version": notification.originator_version,
        "topic": notification.topic,
        "state": state,
    }


def export_journal(engine: Engine, out: IO[bytes]) -> int:
    """Write the whole journal, up to its position when the export starts, to ``out``;
    returns how many events were written (the count the header gives)."""
    position = engine.position()
    recorder = engine.app.recorder
    events = sum(1 for _ in stored_entries(recorder, stop=position))
    header = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "position": position,
        "events": events,
    }
    out.write(orjson.dumps(header) + b"\n")
    count = 0
    for notification in stored_entries(recorder, stop=position):
        out.write(orjson.dumps(_export_line(notification)) + b"\n")
        count += 1
    if count != events:
        raise LineageError(
            f"the journal lost entries during the export ({events} counted, {count} written); "
            "the export is incomplete"
        )
    return count


def import_journal(
    engine: Engine,
    path: Path,
    *,
    max_total: int = DEFAULT_MAX_TOTAL_BYTES,
    progress: Callable[[int, int], None] | None = None,
) -> ImportReport:
    """Write an export into an empty store and bring its view up to date.

    All or nothing: every entry is decoded into its domain event and checked against the
    domain (:mod:`lineage_es.journal_checks`) before the first is written, and all are
    written in one transaction, in bounded batches (``progress`` is told each batch's size
    and how many events are written in all),
    so a refused or interrupted import leaves the store empty for another try. A skipped
    entry (an unknown type) leaves no gap: the later versions of its aggregate are
    renumbered so that each aggregate's sequence stays contiguous. What was skipped is said
    in the report's ``warnings`` (not as Python warnings: the caller shows them).
    """
    entries, report = read_export(path, max_total=max_total)
    if engine.position() != 0:
        raise JournalFormatError("the target store is not empty; import into a new store")
    lined = events_to_write(entries)
    check_entries(engine.app.mapper, lined)
    events = [stored for _, stored in lined]
    total = len(events)
    insert_in_batches(
        engine.app.recorder,
        events,
        progress=None if progress is None else lambda batch: progress(batch, total),
    )
    report.imported = len(events)
    engine.catch_up()
    return report


def events_to_write(entries: list[ExportEntry]) -> list[tuple[int, StoredEvent]]:
    """Each entry to write with its line, its version renumbered past skipped entries."""
    written: dict[str, int] = {}
    skipped: dict[str, int] = {}
    events: list[tuple[int, StoredEvent]] = []
    for entry in entries:
        aggregate = entry.originator_id
        if entry.skip:
            skipped[aggregate] = skipped.get(aggregate, 0) + 1
            continue
        version = entry.version - skipped.get(aggregate, 0)
        if version != written.get(aggregate, 0) + 1:
            raise JournalFormatError(
                f"aggregate {aggregate} jumps to version {entry.version}", line=entry.line
            )
        written[aggregate] = version
        stored = StoredEvent(
            originator_id=UUID(aggregate),
            originator_version=version,
            topic=entry.topic,
            state=orjson.dumps(entry.state),
        )
        events.append((entry.line, stored))
    return events


def _row_values(row: NodeRow) -> tuple[Any, ...]:
    """Every field of a view row, so a rebuild that differs in any of them is caught."""
    return tuple(getattr(row, field.name) for field in fields(NodeRow))


def verify_journal(engine: Engine, progress: Callable[[int], None] | None = None) -> VerifyReport:
    """Check the journal's positions rise without a gap, each aggregate's versions run from 1
    without a hole, and the view equals a fresh rebuild from the journal.

    A gap in positions is a problem on SQLite and in memory, where only a removed entry
    leaves one (a rolled-back write takes no rowid); on PostgreSQL a rolled-back write uses
    up a sequence value, so there a gap is only a warning. (A removed last entry leaves no
    gap on SQLite, whose next write reuses its rowid; a view past the journal shows it.)
    Entries of a type this version does not know are counted in and warned of.
    """
    report = VerifyReport()
    versions: dict[str, int] = {}
    unknown: dict[str, list[int]] = {}
    gaps: list[tuple[int, int]] = []
    last_position = 0
    for notification in stored_entries(engine.app.recorder):
        report.events += 1
        position = notification.id
        if position <= last_position:
            report.problems.append(f"position {position} is out of order")
        elif position > last_position + 1:
            gaps.append((last_position + 1, position - 1))
        last_position = position
        originator = originator_hex(notification.originator_id)
        expected = versions.get(originator, 0) + 1
        if notification.originator_version != expected:
            report.problems.append(
                f"aggregate {originator}: version {notification.originator_version} follows "
                f"{expected - 1} (a gap)"
            )
        versions[originator] = notification.originator_version
        if notification.topic not in EVENT_CLASSES:
            unknown.setdefault(notification.topic, []).append(position)
        if progress is not None and report.events % 1000 == 0:
            progress(1000)
    report.aggregates = len(versions)
    _report_gaps(report, gaps, on_postgresql=engine.location.kind == "postgresql")
    for topic, positions in unknown.items():
        report.warnings.append(
            f"{entries_are(len(positions))} of unknown type {topic!r} (first at position "
            f"{positions[0]}): written by a newer lineage_es? The view leaves them out"
        )
    with warnings.catch_warnings():
        if unknown:  # said once above; the projector would warn of each again
            warnings.filterwarnings("ignore", "skipping journal entry of unknown type")
        _compare_view(engine, report)
    return report


def _report_gaps(report: VerifyReport, gaps: list[tuple[int, int]], *, on_postgresql: bool) -> None:
    if not gaps:
        return
    if on_postgresql:
        unused = sum(last - first + 1 for first, last in gaps)
        first_gap = _positions_phrase(*gaps[0])
        report.warnings.append(
            f"{unused} position{'s' if unused > 1 else ''} in {len(gaps)} "
            f"gap{'s' if len(gaps) > 1 else ''} hold no entry (the first: {first_gap}):"
            " on PostgreSQL a rolled-back write leaves such a gap, so it is not proof that an"
            " entry was lost"
        )
        return
    for first, last in gaps:
        if first == last:
            report.problems.append(
                f"position {first} is missing: an entry was removed from the journal"
            )
        else:
            report.problems.append(
                f"positions {first} to {last} are missing: {last - first + 1} entries were "
                "removed from the journal"
            )


def _positions_phrase(first: int, last: int) -> str:
    return f"position {first}" if first == last else f"positions {first} to {last}"


def _compare_view(engine: Engine, report: VerifyReport) -> None:
    engine.catch_up()
    rebuilt = MemoryView()
    Projector(engine.app.recorder, rebuilt).catch_up()
    live_rows = {r.nid: _row_values(r) for r in engine.view.all_rows()}
    fresh_rows = {r.nid: _row_values(r) for r in rebuilt.all_rows()}
    if rebuilt.position() != engine.view.position():
        report.problems.append(
            f"view is at position {engine.view.position()}, the journal at {rebuilt.position()}"
        )
    for nid in sorted(set(live_rows) | set(fresh_rows)):
        if live_rows.get(nid) != fresh_rows.get(nid):
            report.problems.append(
                f"view row {nid} differs from a rebuild: {live_rows.get(nid)} != "
                f"{fresh_rows.get(nid)}"
            )


def rebuild_time_travel(engine: Engine) -> tuple[int, int]:
    """Drop the journal's time-travel checkpoints and make them again from the whole journal
    (:mod:`lineage_es.read.checkpoints`; ``lineage journal rebuild``): how many there are now
    and the bytes their rows take."""
    from lineage_es.read.checkpoints import checkpoint_store, rebuild_checkpoints

    count = rebuild_checkpoints(engine.app.recorder, engine.view)
    return count, checkpoint_store(engine.app.recorder, engine.view).size()
