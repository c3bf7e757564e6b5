"""The journal's exchange format: export, import, verify.

An export is JSONL: a header line ``{"format": "lineage-es-journal", "version": "1.1", ...}``
then one stored event a line, in journal order, with its state as JSON. A 1.1 header names the
journal's last ``position`` and how many ``events`` follow it, so that an import can tell an
export that lost an entry (positions alone cannot: PostgreSQL leaves gaps); a 1.0 header has
neither, and its entries are taken as they come. Import validates the whole file before it
writes anything, so a corrupt file changes nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from uuid import UUID

import orjson
from eventsourcing.persistence import Notification, StoredEvent

from lineage_es.domain.topics import EVENT_CLASSES
from lineage_es.errors import JournalFormatError, LineageError
from lineage_es.lines import MAX_LINE_BYTES, LineTooLong, bounded_lines
from lineage_es.read.decoding import decode, originator_hex, stored_entries
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView, NodeRow

FORMAT = "lineage-es-journal"
VERSION = "1.1"
MAJOR = 1
DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024 * 1024

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine


@dataclass
class ImportReport:
    """What an import did: events written, lines skipped and why.

    ``warnings`` is where an import says what it skipped (a torn final line, an unknown
    event type), one message each; it does not also raise Python warnings."""

    imported: int = 0
    skipped_unknown: list[int] = field(default_factory=list)
    torn_final_line: int | None = None
    warnings: list[str] = field(default_factory=list)


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


@dataclass(frozen=True)
class ExportEntry:
    """One entry of an export as :func:`read_export` checked it: the line it came from, its
    position (``None`` under a 1.0 header), aggregate, version, topic and state; ``skip``
    when its type is unknown here (its state is then dropped, its version still counted)."""

    line: int
    position: int | None
    originator_id: str
    version: int
    topic: str
    state: dict[str, Any]
    skip: bool = False


def _bounded_file_lines(path: Path, max_total: int) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, bytes, ends with a newline) for each line, bounded by the shared reader.

    The bound on the whole file is the journal's own. It is met first on a line that crosses
    both bounds, an overlong line counting what the reader took of it (the bound and a byte),
    so that a file too large says so whatever its lines hold.
    """
    total = 0
    number = 0
    with path.open("rb") as stream:
        try:
            for number, (raw, size, complete) in enumerate(
                bounded_lines(stream, MAX_LINE_BYTES), 1
            ):
                total += size
                if total > max_total:
                    raise _too_large_error(max_total, number)
                yield number, raw, complete
        except LineTooLong as exc:
            number += 1
            if total + exc.limit + 1 > max_total:
                raise _too_large_error(max_total, number) from None
            raise JournalFormatError(str(exc), line=number) from None


def _too_large_error(max_total: int, number: int) -> JournalFormatError:
    return JournalFormatError(
        f"the file is larger than the configured bound of {max_total} bytes", line=number
    )


@dataclass(frozen=True)
class _Header:
    """What a header promises: how many events follow and the last position (a 1.1 header
    gives both; a 1.0 header neither, ``events`` is then ``None``)."""

    events: int | None = None
    position: int = 0


def _header_count(header: dict[str, Any], key: str, number: int) -> int:
    value = header.get(key)
    if type(value) is not int or value < 0:
        raise JournalFormatError(f"the header's {key} is not a count: {value!r}", line=number)
    return value


def _check_header(number: int, raw: bytes) -> _Header:
    try:
        header = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise JournalFormatError("the header is not JSON", line=number) from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise JournalFormatError(f"not a {FORMAT} file (no header)", line=number)
    version = str(header.get("version", ""))
    try:
        major = int(version.split(".", maxsplit=1)[0])
    except ValueError:
        raise JournalFormatError(f"unreadable format version {version!r}", line=number) from None
    if major > MAJOR:
        raise JournalFormatError(
            f"format version {version} is newer than this lineage_es reads ({VERSION}); "
            "upgrade lineage_es",
            line=number,
        )
    if "events" not in header:
        return _Header()
    return _Header(
        _header_count(header, "events", number), _header_count(header, "position", number)
    )


def read_export(
    path: Path, *, max_total: int = DEFAULT_MAX_TOTAL_BYTES
) -> tuple[list[ExportEntry], ImportReport]:
    """Parse and validate a whole export; raises on the first unusable line, or when the
    header's count (1.1) shows an entry missing. Entries of unknown types come back flagged
    ``skip`` so their aggregates can be renumbered."""
    report = ImportReport()
    entries: list[ExportEntry] = []
    lines = _bounded_file_lines(path, max_total)
    first = next(lines, None)
    if first is None:
        raise JournalFormatError("the file is empty (no header)", line=1)
    header = _check_header(first[0], first[1])
    counted = header.events is not None
    previous: tuple[int, bytes, bool] | None = None
    for item in lines:
        if previous is not None:
            _parse_entry_line(previous, entries, report, final=False, positioned=counted)
        previous = item
    if previous is not None:
        _parse_entry_line(previous, entries, report, final=True, positioned=counted)
    if header.events is not None:
        _check_complete(entries, report, header.events, header.position, first[0])
    return entries, report


def _entries_are(count: int) -> str:
    return "1 entry is" if count == 1 else f"{count} entries are"


def _check_complete(
    entries: list[ExportEntry], report: ImportReport, events: int, position: int, header_line: int
) -> None:
    """Refuse an export that lost an entry: its positions must rise to the header's, and its
    entries number what the header counts. (Positions may skip: PostgreSQL's do.) The one
    exception is the entry of a torn final line, an interrupted append: it is skipped, and
    the report says so."""
    last = 0
    for entry in entries:
        assert entry.position is not None
        if entry.position <= last:
            raise JournalFormatError(
                f"position {entry.position} does not follow position {last}", line=entry.line
            )
        if entry.position > position:
            raise JournalFormatError(
                f"position {entry.position} is past the header's position {position}",
                line=entry.line,
            )
        last = entry.position
    held = len(entries)
    torn = report.torn_final_line
    if torn is not None and held == events - 1:
        return  # only the torn final line is missing: the entries before it are complete
    if held < events:
        raise JournalFormatError(
            f"the header counts {events} events but the file holds {held}: "
            f"{_entries_are(events - held)} missing"
            + (f" (line {torn} is torn)" if torn is not None else ""),
            line=header_line,
        )
    if held > events:
        raise JournalFormatError(
            f"the header counts {events} events but the file holds {held}, "
            f"{held - events} more than its header counts",
            line=header_line,
        )
    if entries and last != position:
        raise JournalFormatError(
            f"the last entry is at position {last}, short of the header's position "
            f"{position}: the final entries are missing",
            line=entries[-1].line,
        )


def _parse_entry_line(
    item: tuple[int, bytes, bool],
    entries: list[ExportEntry],
    report: ImportReport,
    *,
    final: bool,
    positioned: bool,
) -> None:
    number, raw, complete = item
    if not raw.strip():
        return
    try:
        data = orjson.loads(raw)
        entry = ExportEntry(
            line=number,
            position=_whole_position(data["position"]) if positioned else None,
            originator_id=str(UUID(data["originator_id"])),
            version=int(data["version"]),
            topic=str(data["topic"]),
            state=dict(data["state"]),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        if final and not complete:
            report.torn_final_line = number
            report.warnings.append(f"line {number}: torn final line (interrupted append) skipped")
            return
        raise JournalFormatError(f"malformed journal line: {exc}", line=number) from None
    if entry.topic not in EVENT_CLASSES:
        report.skipped_unknown.append(number)
        report.warnings.append(f"line {number}: unknown event type {entry.topic!r} skipped")
        entry = ExportEntry(
            entry.line, entry.position, entry.originator_id, entry.version, entry.topic, {}, True
        )
    entries.append(entry)


def _whole_position(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"position {value!r} is not a whole number")
    return value


def import_journal(
    engine: Engine, path: Path, *, max_total: int = DEFAULT_MAX_TOTAL_BYTES
) -> ImportReport:
    """Write an export into an empty store and bring its view up to date.

    All or nothing: every entry is checked before the first is written, and all are written
    in one transaction, so a refused or interrupted import leaves the store empty for another
    try. A skipped entry (an unknown type) leaves no gap: the later versions of its aggregate
    are renumbered so that each aggregate's sequence stays contiguous. What was skipped is
    said in the report's ``warnings`` (not as Python warnings: the caller shows them).
    """
    entries, report = read_export(path, max_total=max_total)
    if engine.position() != 0:
        raise JournalFormatError("the target store is not empty; import into a new store")
    written: dict[str, int] = {}
    skipped: dict[str, int] = {}
    events: list[StoredEvent] = []
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
        events.append(
            StoredEvent(
                originator_id=UUID(aggregate),
                originator_version=version,
                topic=entry.topic,
                state=orjson.dumps(entry.state),
            )
        )
    if events:
        engine.app.recorder.insert_events(events)
        report.imported = len(events)
    engine.catch_up()
    return report


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
            f"{_entries_are(len(positions))} of unknown type {topic!r} (first at position "
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
