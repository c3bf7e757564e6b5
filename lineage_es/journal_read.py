"""Reading an export for an import: its header, its lines, and whether it is complete.

An export is JSONL: a header line ``{"format": "lineage-es-journal", "version": "1.1", ...}``
then one stored event a line, in journal order, with its state as JSON. A 1.1 header names the
journal's last ``position`` and how many ``events`` follow it, so that an import can tell an
export that lost an entry (positions alone cannot: PostgreSQL leaves gaps); a 1.0 header has
neither, and its entries are taken as they come. Each line is checked for its shape here;
:mod:`lineage_es.journal_checks` then checks each event against the domain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson

from lineage_es.domain.topics import EVENT_CLASSES
from lineage_es.errors import JournalFormatError
from lineage_es.lines import MAX_LINE_BYTES, LineTooLong, bounded_lines

FORMAT = "lineage-es-journal"
VERSION = "1.1"
MAJOR = 1
#: How a header writes its version: major and minor, as a string (``"1.1"``).
VERSION_FORM = re.compile(r"[0-9]+\.[0-9]+")
DEFAULT_MAX_TOTAL_BYTES = 64 * 1024 * 1024 * 1024


@dataclass
class ImportReport:
    """What an import did: events written, lines skipped and why.

    ``warnings`` is where an import says what it skipped (a torn final line, an unknown
    event type), one message each; it does not also raise Python warnings."""

    imported: int = 0
    skipped_unknown: list[int] = field(default_factory=list)
    torn_final_line: int | None = None
    warnings: list[str] = field(default_factory=list)


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
    version = header.get("version")
    if type(version) is not str or not VERSION_FORM.fullmatch(version):
        raise JournalFormatError(
            f'unreadable format version {version!r}: a string such as "{VERSION}"',
            line=number,
        )
    major = int(version.split(".", maxsplit=1)[0])
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


def entries_are(count: int) -> str:
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
            f"{entries_are(events - held)} missing"
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
            originator_id=str(UUID(_typed(data, "originator_id", str))),
            version=_typed(data, "version", int),
            topic=_typed(data, "topic", str),
            state=_typed(data, "state", dict),
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


def _typed(data: Any, key: str, kind: type[Any]) -> Any:
    """``data[key]``, refused unless it is exactly of ``kind`` (a bool is no version)."""
    value = data[key]
    if type(value) is not kind:
        raise TypeError(f"{key} {value!r} is not {_KIND_NAMES[kind]}")
    return value


_KIND_NAMES: dict[type[Any], str] = {str: "a string", int: "a whole number", dict: "an object"}


def _whole_position(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"position {value!r} is not a whole number")
    return value
