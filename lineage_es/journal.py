"""The journal's exchange format: export, import, verify.

An export is JSONL: a header line ``{"format": "lineage-es-journal", "version": "1.0", ...}``
then one stored event a line, in journal order, with its state as JSON. Import validates the
whole file before it writes anything, so a corrupt file changes nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from uuid import UUID

import orjson
from eventsourcing.persistence import StoredEvent

from lineage_es.domain import EVENT_CLASSES
from lineage_es.errors import JournalFormatError
from lineage_es.lines import MAX_LINE_BYTES, LineTooLong, bounded_lines
from lineage_es.projection import Projector, read_journal
from lineage_es.view import MemoryView, NodeRow

FORMAT = "lineage-es-journal"
VERSION = "1.0"
MAJOR = 1
DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024 * 1024
BATCH = 1000

if TYPE_CHECKING:
    from lineage_es.engine import Engine


@dataclass
class ImportReport:
    """What an import did: events written, lines skipped and why."""

    imported: int = 0
    skipped_unknown: list[int] = field(default_factory=list)
    torn_final_line: int | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class VerifyReport:
    """What ``verify`` found; ``ok`` only when there is nothing to report."""

    events: int = 0
    aggregates: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _with_class_version(topic: str, state: dict[str, Any]) -> dict[str, Any]:
    """The state as stored: decoding upcast it to the current version and dropped the
    mark, which must go back or an import would upcast it a second time."""
    version = getattr(EVENT_CLASSES[topic], "class_version", 1)
    return {**state, "class_version": version} if version > 1 else state


def export_journal(engine: Engine, out: IO[bytes]) -> int:
    """Write the whole journal to ``out``; returns how many events were written."""
    header = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": datetime.now(UTC).isoformat(),
        "position": engine.position(),
    }
    out.write(orjson.dumps(header) + b"\n")
    count = 0
    for event in read_journal(engine.app.recorder):
        line = {
            "position": event.position,
            "originator_id": event.originator_id,
            "version": event.version,
            "topic": event.topic,
            "state": _with_class_version(event.topic, event.state),
        }
        out.write(orjson.dumps(line) + b"\n")
        count += 1
    return count


@dataclass(frozen=True)
class _Entry:
    line: int
    originator_id: str
    version: int
    topic: str
    state: dict[str, Any]
    skip: bool = False


def _lines(path: Path, max_total: int) -> Iterator[tuple[int, bytes, bool]]:
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
                    raise _too_large(max_total, number)
                yield number, raw, complete
        except LineTooLong as exc:
            number += 1
            if total + exc.limit + 1 > max_total:
                raise _too_large(max_total, number) from None
            raise JournalFormatError(str(exc), line=number) from None


def _too_large(max_total: int, number: int) -> JournalFormatError:
    return JournalFormatError(
        f"the file is larger than the configured bound of {max_total} bytes", line=number
    )


def _check_header(number: int, raw: bytes) -> None:
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


def read_export(
    path: Path, *, max_total: int = DEFAULT_MAX_TOTAL_BYTES
) -> tuple[list[_Entry], ImportReport]:
    """Parse and validate a whole export; raises on the first unusable line. Entries of
    unknown types come back flagged ``skip`` so their aggregates can be renumbered."""
    report = ImportReport()
    entries: list[_Entry] = []
    lines = _lines(path, max_total)
    first = next(lines, None)
    if first is None:
        raise JournalFormatError("the file is empty (no header)", line=1)
    _check_header(first[0], first[1])
    previous: tuple[int, bytes, bool] | None = None
    for item in lines:
        if previous is not None:
            _take(previous, entries, report, final=False)
        previous = item
    if previous is not None:
        _take(previous, entries, report, final=True)
    return entries, report


def _take(
    item: tuple[int, bytes, bool], entries: list[_Entry], report: ImportReport, *, final: bool
) -> None:
    number, raw, complete = item
    if not raw.strip():
        return
    try:
        data = orjson.loads(raw)
        entry = _Entry(
            line=number,
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
        entry = _Entry(entry.line, entry.originator_id, entry.version, entry.topic, {}, skip=True)
    entries.append(entry)


def import_journal(
    engine: Engine, path: Path, *, max_total: int = DEFAULT_MAX_TOTAL_BYTES
) -> ImportReport:
    """Write an export into an empty store and bring its view up to date.

    A skipped entry (an unknown type) leaves no gap: the later versions of its aggregate
    are renumbered so that each aggregate's sequence stays contiguous.
    """
    entries, report = read_export(path, max_total=max_total)
    if engine.position() != 0:
        raise JournalFormatError("the target store is not empty; import into a new store")
    written: dict[str, int] = {}
    skipped: dict[str, int] = {}
    batch: list[StoredEvent] = []
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
        batch.append(
            StoredEvent(
                originator_id=UUID(aggregate),
                originator_version=version,
                topic=entry.topic,
                state=orjson.dumps(entry.state),
            )
        )
        if len(batch) >= BATCH:
            engine.app.recorder.insert_events(batch)
            report.imported += len(batch)
            batch = []
    if batch:
        engine.app.recorder.insert_events(batch)
        report.imported += len(batch)
    for message in report.warnings:
        warnings.warn(message, stacklevel=2)
    engine.catch_up()
    return report


def _row_key(row: NodeRow) -> tuple[Any, ...]:
    return (
        row.root_id,
        row.nid,
        row.key,
        row.parent,
        row.depth,
        row.status,
        row.resolution,
        row.started_at,
        row.stopped_at,
        row.name,
        row.delete_reason,
        row.ambiguous,
    )


def verify_journal(engine: Engine, progress: Callable[[int], None] | None = None) -> VerifyReport:
    """Check every aggregate's sequence is contiguous, every entry decodes, and the view
    equals a fresh rebuild from the journal."""
    report = VerifyReport()
    versions: dict[str, int] = {}
    last_position = 0
    for event in read_journal(engine.app.recorder):
        report.events += 1
        if event.position <= last_position:
            report.problems.append(f"position {event.position} is out of order")
        last_position = event.position
        expected = versions.get(event.originator_id, 0) + 1
        if event.version != expected:
            report.problems.append(
                f"aggregate {event.originator_id}: version {event.version} follows "
                f"{expected - 1} (a gap)"
            )
        versions[event.originator_id] = event.version
        if progress is not None and report.events % 1000 == 0:
            progress(1000)
    report.aggregates = len(versions)
    engine.catch_up()
    rebuilt = MemoryView()
    Projector(engine.app.recorder, rebuilt).catch_up()
    live_rows = {r.nid: _row_key(r) for r in engine.view.all_rows()}
    fresh_rows = {r.nid: _row_key(r) for r in rebuilt.all_rows()}
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
    return report
