"""Ingest recorded streams into a store: the same rows ``lineage-replay`` reads, kept
(MCP rows journal nothing, so ingest passes over them).

A folder is walked for every file in a form ingest reads (:func:`recordings`); what it passes
over is counted by why. A bad line (not a JSON object, longer than 32 MiB, a payload no host
adapter understands, a row out of its file's form, one a transcript reader refuses, or one
the engine refuses: an id no store can keep) is reported with the file, line and reason and
skipped: every other row of the recording still goes in (a transcript's as if the bad line
were absent), and so do the other recordings. A Claude agent's ``.meta.json`` sidecar that
cannot be read is reported with its file and reason and skipped the same way: the session goes
in, that agent placed as if it had no sidecar.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from lineage_es.engine.engine import Engine
from lineage_es.errors import InputError, InvalidArgument, PayloadError
from lineage_es.facts import Observation
from lineage_es.hosts import adapter
from lineage_es.hosts.detect import opens_a_recording
from lineage_es.lines import MAX_LINE_BYTES, numbered_lines
from lineage_es.replay.inputs import (
    BadRow,
    ObservationRow,
    PayloadRow,
    parse_line,
    read_rows,
    scan_lines,
)

#: Why a file met in a folder walk was passed over.
EMPTY = "empty"
NOT_A_RECORDING = "not a recording"
UNREADABLE = "unreadable"


@dataclass
class IngestReport:
    """What an ingest did: files and rows taken, and how many journal entries were new;
    each bad line (or named file that could not be read), with its place and reason; and
    the files a folder walk passed over, by why."""

    files: int = 0
    #: Rows read and handed to the engine (a row it already had among them).
    rows: int = 0
    #: How many entries the journal grew by while the rows went in: 0 when every fact the
    #: rows hold was journaled already (a second ingest of the same recordings). Counted
    #: from the journal's last position, so a hook journaling at the same moment adds its
    #: own entries.
    new_entries: int = 0
    #: Every bad line and every file that could not be read, each with its place and why.
    failures: list[str] = field(default_factory=list)
    #: How many of ``failures`` are lines, or agent sidecars, skipped (the rest of their
    #: recording went in).
    bad_lines: int = 0
    skipped: Counter[str] = field(default_factory=Counter)


def recordings(paths: Iterable[Path], skipped: Counter[str] | None = None) -> Iterator[Path]:
    """The recordings under ``paths``, in name order: a file named is taken as it is; a
    folder gives every file below it whose first row is in a form ingest reads (a hook
    payload, a recorded row, a Claude transcript or a Codex rollout), whatever its name.

    A Claude agent file (``<session>/subagents/agent-*.jsonl``) whose session file is
    beside the folder is read with its session, never on its own; one whose session file
    is absent is a recording of its own. The other files are passed over and counted in
    ``skipped`` by why (:data:`EMPTY`, :data:`NOT_A_RECORDING`, :data:`UNREADABLE`)."""
    for path in paths:
        if not path.is_dir():
            yield path
            continue
        for found in sorted(p for p in path.rglob("*") if p.is_file()):
            if _read_with_its_session(found):
                continue
            why = _not_a_recording(found)
            if why is None:
                yield found
            elif skipped is not None:
                skipped[why] += 1


def _read_with_its_session(path: Path) -> bool:
    """Whether ``path`` is a Claude agent file or sidecar the reader of its session file
    reads (``<stem>/subagents/agent-<id>.jsonl`` beside ``<stem>.jsonl``)."""
    folder = path.parent
    if folder.name != "subagents" or not path.name.startswith("agent-"):
        return False
    if path.name.endswith(".meta.json"):  # read with its agent file
        agent = folder / (path.name.removesuffix(".meta.json") + ".jsonl")
        return agent.is_file()
    if path.suffix != ".jsonl":
        return False
    session = folder.parent
    return (session.parent / f"{session.name}.jsonl").is_file()


#: How many lines a folder walk looks at for a file's first row: a recording whose first
#: lines are torn is still one (its bad lines are reported when it is read).
LOOK_AHEAD = 8


def _not_a_recording(path: Path) -> str | None:
    """Why ``path`` is not a recording, judged by its first row (the first of its first
    :data:`LOOK_AHEAD` lines that is a JSON object); ``None`` when it is one."""
    first: dict[str, object] | None = None
    seen = 0
    try:
        for number, line in scan_lines(path):
            if not line.strip():
                continue
            seen += 1
            try:
                first = parse_line(path, number, line)
                break
            except InputError:
                if seen >= LOOK_AHEAD:
                    return NOT_A_RECORDING
    except InputError:
        return NOT_A_RECORDING
    except OSError:
        return UNREADABLE
    if first is None:
        return NOT_A_RECORDING if seen else EMPTY
    return None if opens_a_recording(first) else NOT_A_RECORDING


#: How many rows :func:`ingest` hands the engine per transaction.
BATCH = 1000


@dataclass(frozen=True, slots=True)
class _Failed:
    """A failure met reading a recording, in its place among the rows: a bad line skipped
    (``line``), or what ended the file (an unreadable file, one of another host)."""

    message: str
    line: bool = True


@dataclass(frozen=True, slots=True)
class _Read:
    """A row read, at ``place`` (``file:line``), with what it observes (``None`` for a row
    that journals nothing: an MCP call, a transcript row that says nothing of lineage)."""

    place: str
    observation: Observation | None


def ingest(
    engine: Engine,
    paths: Iterable[Path],
    *,
    host: str | None = None,
    on_row: Callable[[], None] | None = None,
) -> IngestReport:
    """Observe every good row of every recording under ``paths`` into ``engine``, up to
    :data:`BATCH` rows per transaction (:meth:`Engine.observe_many`); each bad line is
    reported and skipped, and so is each row the engine refuses (an id no store can keep):
    the rows around it go in all the same."""
    report = IngestReport()
    before = engine.position()
    try:
        for path in recordings(paths, report.skipped):
            report.files += 1
            entries = _entries(path, host, on_row)
            while batch := list(islice(entries, BATCH)):
                _journal(engine, batch, report)
    finally:
        report.new_entries = engine.position() - before
    return report


def _journal(engine: Engine, batch: list[_Failed | _Read], report: IngestReport) -> None:
    """Journal the observations of ``batch`` in one transaction and report its entries in
    order. A row the engine refuses (:class:`PayloadError`, :class:`InvalidArgument`: its
    checks on ids and names) is the last one it was handed: the transaction is lost, so the
    batch is journaled again without that row (a row of it a Cursor row had saved already
    comes again as a duplicate, which changes nothing)."""
    observations = {
        i: entry.observation
        for i, entry in enumerate(batch)
        if isinstance(entry, _Read) and entry.observation is not None
    }
    refused: dict[int, str] = {}
    while observations:
        handed: list[int] = []
        try:
            engine.observe_many(_handing(list(observations.items()), handed), batch=BATCH)
            break
        except (PayloadError, InvalidArgument) as exc:
            if not handed:
                raise
            refused[handed[-1]] = str(exc)
            del observations[handed[-1]]
    for i, entry in enumerate(batch):
        if isinstance(entry, _Failed):
            report.failures.append(entry.message)
            report.bad_lines += entry.line
        elif i in refused:
            report.failures.append(f"{entry.place}: {refused[i]}")
            report.bad_lines += 1
        else:
            report.rows += 1


def _handing(todo: list[tuple[int, Observation]], handed: list[int]) -> Iterator[Observation]:
    """Each observation of ``todo``, its index noted in ``handed`` as it is handed over."""
    for i, observation in todo:
        handed.append(i)
        yield observation


def _entries(
    path: Path, host: str | None, on_row: Callable[[], None] | None
) -> Iterator[_Failed | _Read]:
    """The recording's rows and failures, in order. Each bad line is a failure, and the
    lines after it are read: a transcript's reader, which carries what its earlier rows said,
    reads on as if the bad line were absent. An agent sidecar the transcript reader cannot
    read is a failure alike (a :class:`BadRow` naming no line). Any other failure that names
    no line (an unreadable file, a recording of another host than ``--host``) ends the file.
    A file with lines but none a JSON object has each reported as a bad line, as
    ``lineage-replay`` names its first, never called empty."""
    try:
        rows = read_rows(path, host=host, lenient=True)
    except InputError as exc:
        bad = _only_bad_lines(path)
        yield from (_Failed(message) for message in bad)
        if not bad:
            yield _Failed(str(exc), line=False)
        return
    try:
        for item in rows:
            if isinstance(item, BadRow):
                yield _Failed(str(item.error))
                continue
            observation: Observation | None = None
            if isinstance(item, PayloadRow):
                try:
                    observation = adapter(item.host).observe(item.payload, at=item.at)
                except PayloadError as exc:
                    yield _Failed(f"{path}:{item.row}: {exc}")
                    continue
            elif isinstance(item, ObservationRow):
                observation = item.observation
            yield _Read(f"{path}:{item.row}", observation)
            if on_row is not None:
                on_row()
    except InputError as exc:
        yield _Failed(str(exc), line=False)


def _only_bad_lines(path: Path) -> list[str]:
    """Each line of ``path`` that is not blank, with its place and why it is not a JSON
    object, when none is one (a file its form cannot be told from); nothing when some line
    is one, or every line is blank (the file is empty)."""
    bad: list[tuple[int, str]] = []

    def overlong(error: InputError) -> None:
        bad.append((error.line or 0, str(error)))

    try:
        for number, line in numbered_lines(path, MAX_LINE_BYTES, overlong=overlong):
            if not line.strip():
                continue
            try:
                parse_line(path, number, line)
            except InputError as exc:
                bad.append((number, str(exc)))
                continue
            return []
    except OSError:
        return []
    return [message for _, message in sorted(bad)]
