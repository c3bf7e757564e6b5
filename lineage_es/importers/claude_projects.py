"""Import a Claude Code projects folder (``~/.claude/projects``) into the journal.

Layout (HOSTS.md 1.3): ``<project>/<sessionId>.jsonl`` per session; its subagents in
``<sessionId>/subagents/agent-<agentId>.jsonl`` (with optional ``.meta.json`` sidecars) or,
in ~2.0.24 to 2.1.1, as flat ``agent-<agentId>.jsonl`` files beside the session file; 2.0.13
and before kept subagent rows inline in the session file. A session and its agent files are
read together, and their observations are journaled in the host's own time order.

What rows mean is :class:`~lineage_es.hosts.claude_transcript.RowMeaning`'s business, as for
``lineage ingest``; this module decides which rows to look at. Almost every byte of a profile
is prompts, thinking and tool output, and looping over lines in Python costs several times a
search in C, so a file is read in large chunks and only the lines a marker points to are
parsed: ``Agent``/``Task`` calls (``"type":"tool_use"`` with that name), the results of calls
still open (by their ``tool_use_id``), ``<task-notification>`` rows while background agents
run, ``agent_progress`` rows in the versions that wrote them, and in each file its first row
(a root is seen, an agent starts) and its last timed one (it stops). Files written before 2.1
(inline subagents, results without ``agentId``) and any file not in the host's compact JSON
are parsed whole. A line no marker points to is never parsed; one that cannot be a row is
still counted, by its shape (a row is a JSON object on one line: a line that does not begin
with ``{`` and end with ``}`` is parsed to say why, :func:`~.lines.count_bad_lines`). The
type of a row no marker points to is not checked.

Sessions are read apart from each other, so a large import reads them in forked worker
processes (:mod:`~lineage_es.importers.forked`) and takes what they found in order, journaling
one batch while they read the next: the journal is the same as one process makes.

Each file's start and stop come from its first and last rows, and an agent still writing
after something stopped it (its parent's result, the root's last row) acts again at its next
row. An agent's start carries where the transcripts place it (``transcript``): its sidecar,
the result that names it, the one open call its first prompt repeats, or, before agents could
spawn agents, the session its rows name; only an agent none of these places is left to the
engine's ordering (``inferred``). A child no file of its own speaks for starts at its call.

Files are read while Claude Code writes them, and every import leaves the history one import
of the finished files would give, at every moment. A file's last row stopped its conversation
only because the file ended there: when the file goes on, its conversation goes on from that
very moment (a session, with the children that stopped with it), and what would have stopped
it since is observed again after. A file with no complete row yet (empty, its first line
being written) is read from its start next time; what the session says of an agent whose own
file has no row yet waits one import for that row, and a session file with no row yet holds
its agents' files back one import.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import os
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from lineage_es.errors import InputError, PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Observation,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.claude import HOST, is_internal_agent
from lineage_es.hosts.claude_transcript import RowMeaning, agent_start, is_warmup, read_meta
from lineage_es.importers.forked import in_order
from lineage_es.importers.ledger import (
    SILENT,
    Found,
    ImportReport,
    Ledger,
    Progress,
    Timed,
    count_gone,
    feed,
    history_folder,
    reconcile,
    walk,
)
from lineage_es.importers.lines import (
    BAD_SIDECAR,
    MAX_FILE_BYTES,
    NOT_JSON,
    NOT_OBJECT,
    TOO_LARGE,
    UNKNOWN_TYPE,
    UNREADABLE,
    Chunks,
    Region,
    Skips,
    count_bad_lines,
    looks_like_object,
    read_lines,
    why_bad,
)

if TYPE_CHECKING:
    from lineage_es.engine import Engine

DEFAULT_FOLDER = Path("~/.claude/projects")

#: Row types Claude Code writes (2.0 to 2.1.2xx). Others are counted and passed over.
ROW_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "progress",
        "queue-operation",
        "file-history-snapshot",
        "summary",
        "permission-mode",
        "ai-title",
        "custom-title",
        "last-prompt",
        "mode",
        "tag",
        "agent-name",
        "pr-link",
    }
)

#: Journal this many bytes' worth of sessions, then save the ledger: an interrupted import
#: keeps what it finished.
BATCH_BYTES = 256 * 1024 * 1024

#: Read sessions in forked worker processes when an import has at least this many bytes to
#: read (searching the bytes for markers is most of an import's own time, and holds the GIL).
PARALLEL_BYTES = 32 * 1024 * 1024

#: At most this many reading processes.
MAX_WORKERS = 4

#: The first version whose subagents may spawn subagents (HOSTS.md 1.2, Nesting): before it,
#: the session an agent file's rows name is that agent's parent.
NESTING_SINCE = (2, 1, 172)

_AGENT_FILE = re.compile(r"agent-(.+)\.jsonl")
_TAIL_CHECK = 32
_EARLIEST = datetime.min.replace(tzinfo=UTC)

#: The facts a held-back observation may carry, by name (see ``_Session._hold_back``).
_FACTS: dict[str, type[Fact]] = {
    kind.__name__: kind for kind in (Acted, ChildIdentified, ChildStarted, Resumed, Stopped)
}


def import_claude(
    engine: Engine,
    folder: Path | None = None,
    *,
    reconcile_gone: bool = False,
    progress: Progress = SILENT,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ImportReport:
    """Import every session under ``folder`` (default ``~/.claude/projects``) that changed
    since the last import into ``engine``; with ``reconcile_gone``, delete (as ``gc``) the
    conversations whose transcript files are gone."""
    root = history_folder(folder, DEFAULT_FOLDER)
    return _Import(engine, root, progress, max_file_bytes).run(reconcile_gone)


# -- finding sessions ---------------------------------------------------------------------------


@dataclass
class _Group:
    """A session: its main file (absent when only agent files are left) and agent files."""

    key: str
    main: Found | None = None
    agents: list[Found] = field(default_factory=list)


def _nested_session(rel: str) -> str | None:
    """``<project>/<session>`` for ``<project>/<session>/subagents/agent-<id>.jsonl``;
    ``None`` for anything else (workflow agents under ``subagents/workflows/`` included: no
    row names which call ran them)."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[-2] == "subagents" and _AGENT_FILE.fullmatch(parts[-1]):
        return "/".join(parts[:-2])
    return None


class _Import:
    def __init__(self, engine: Engine, folder: Path, progress: Progress, max_bytes: int) -> None:
        self.engine = engine
        self.folder = folder
        self.progress = progress
        self.max_bytes = max_bytes
        self.report = ImportReport(HOST, str(folder))
        self.ledger = Ledger(engine, HOST, folder)
        #: Every agent sidecar's path (found by the walk): an agent without one is not looked
        #: up on disk.
        self.sidecars: set[str] = set()

    def run(self, reconcile_gone: bool) -> ImportReport:
        found = list(
            walk(
                self.folder,
                _is_transcript,
                note=(_is_sidecar, self.sidecars),
                report=self.report,
            )
        )
        self.report.files = len(found)
        present = {f.rel for f in found}
        groups = self._groups(found)
        todo: list[_Group] = []
        sizes: list[int] = []
        for group in groups:
            files = [f for f in [group.main, *group.agents] if f is not None]
            changed = [f for f in files if not self.ledger.unchanged(f)]
            self.report.unchanged += len(files) - len(changed)
            if changed or self.ledger.group(group.key).get("held"):
                todo.append(group)
                sizes.append(sum(f.size - self._offset(f) for f in changed))
        self.progress.begin(sum(sizes))
        timed: list[Timed] = []
        pending = 0
        for outcome in self._read(todo, sizes):
            self._merge(outcome)
            timed.extend(outcome.timed)
            pending += outcome.bytes
            if pending >= BATCH_BYTES:
                self._flush(timed)
                timed, pending = [], 0
        self._flush(timed)
        count_gone(self.ledger, present, self.report)
        if reconcile_gone:
            reconcile(self.engine, self.ledger, present, self.report)
        return self.report

    def _read(self, todo: list[_Group], sizes: list[int]) -> Iterator[_Outcome]:
        """Each session of ``todo`` read, in order: here, or by forked workers while this
        process journals what they read before (the outcomes, and so the journal, are the
        same either way)."""
        workers = _workers(len(todo), sum(sizes))
        if workers < 2:
            for group in todo:
                yield _Session(self, group, self.progress).read()
            return

        def work(task: int) -> _Outcome:
            return _Session(self, todo[task], SILENT).read()

        for outcome in in_order(work, sizes, workers):
            self.progress.advance(outcome.advanced)
            yield outcome

    def _merge(self, outcome: _Outcome) -> None:
        """What one session's reading found goes into the ledger and the report."""
        for rel, entry in outcome.entries.items():
            self.ledger.put(rel, entry)
        self.ledger.put_group(outcome.key, outcome.state)
        found, report = outcome.report, self.report
        report.read += found.read
        report.bytes += found.bytes
        report.partial += found.partial
        report.internal += found.internal
        report.roots |= found.roots
        report.subagents |= found.subagents
        report.skipped.update(found.skipped)

    def _offset(self, found: Found) -> int:
        """Where reading ``found`` will start (for the progress bar's length)."""
        entry = self.ledger.entry(found.rel)
        offset = int(entry.get("offset", 0)) if entry else 0
        return offset if offset <= found.size else 0

    def _flush(self, timed: list[Timed]) -> None:
        feed(self.engine, timed, self.report)
        self.ledger.save()

    def _groups(self, found: list[Found]) -> list[_Group]:
        groups: dict[str, _Group] = {}

        def group(key: str) -> _Group:
            return groups.setdefault(key, _Group(key))

        flat: list[Found] = []
        for item in found:
            nested = _nested_session(item.rel)
            name = item.rel.rsplit("/", 1)[-1]
            if nested is not None:
                group(nested).agents.append(item)
            elif "/subagents/" in f"/{item.rel}":
                continue  # workflow agents and anything else below subagents/
            elif _AGENT_FILE.fullmatch(name):
                flat.append(item)
            else:
                group(item.rel[: -len(".jsonl")]).main = item
        for item in flat:  # flat agent files belong to the session their rows name
            entry = self.ledger.entry(item.rel)
            session = entry.get("session") if entry is not None else _head_session(Path(item.path))
            project = item.rel.rsplit("/", 1)[0] if "/" in item.rel else ""
            key = f"{project}/{session}" if session else f"flat:{item.rel}"
            group(key.lstrip("/")).agents.append(item)
        return [groups[k] for k in sorted(groups)]


def _head_session(path: Path) -> str | None:
    """The ``sessionId`` of the first rows of a file that has one (flat agent files)."""
    try:
        with path.open("rb") as stream:
            for _ in range(8):
                line = stream.readline(1024 * 1024)
                if not line:
                    return None
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(row, dict) and isinstance(row.get("sessionId"), str):
                    session: str = row["sessionId"]
                    return session
    except OSError:
        return None
    return None


# -- reading one session --------------------------------------------------------------------------


@dataclass
class _File:
    """One file of a session while it is read: where this run started and what it emitted."""

    found: Found
    rank: int
    kind: str
    start: int
    agent: str | None = None
    #: The conversation this file's rows speak for (the session, or the agent).
    speaker: str | None = None
    root: str | None = None
    #: The time of the latest row read: rows without one take it.
    at: datetime | None = None
    first_at: datetime | None = None
    last_at: datetime | None = None
    #: The latest time of a row observed in this file in this run.
    latest: datetime | None = None
    needs_head: bool = True
    resume: bool = False
    #: Where a main file's last timed row stopped its root: the file had ended there. When
    #: the file goes on, the root (and what stopped with it) goes on from that very moment.
    stop: datetime | None = None
    legacy: bool = False
    progress_rows: bool = False
    internal: bool = False
    #: Whether this agent's version lets subagents spawn subagents; its first prompt's digest.
    nesting: bool = False
    prompt: bytes | None = None
    #: Observations made at each row (by byte offset): a row's facts share one observation.
    emitted: dict[int, int] = field(default_factory=dict)
    #: Observations made apart from their row's (a stop, a resume, a start at its call).
    extra: list[int] = field(default_factory=list)
    #: Leading rows that carry no time, held until the file's first time is known.
    held: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    owns: set[str] = field(default_factory=set)
    #: Rows of an unknown type parsed in this run (by offset), counted once.
    unknown: set[int] = field(default_factory=set)


@dataclass
class _Outcome:
    """What reading one session gave: its observations, the bytes it read (``advanced`` of
    them in whole regions), its ledger entries and state, and its share of the report."""

    key: str
    timed: list[Timed]
    bytes: int
    advanced: int
    entries: dict[str, dict[str, Any]]
    state: dict[str, Any]
    report: ImportReport


class _Call(NamedTuple):
    """A spawn call: who made it, when, and its prompt's digest (an agent's first prompt
    repeats it)."""

    parent: str
    at: datetime
    prompt: bytes | None


def _workers(sessions: int, total: int) -> int:
    """How many processes should read: one (this one) for a small import, where a single
    core is all there is, where ``fork`` is not the platform's safe default, and where other
    threads run (a forked child would inherit their locks held)."""
    if total < PARALLEL_BYTES or sessions < 2 or not sys.platform.startswith("linux"):
        return 1
    if threading.active_count() > 1:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(cores, MAX_WORKERS, sessions)


class _Session:
    """Reads one session's changed files and makes their observations."""

    def __init__(self, run: _Import, group: _Group, progress: Progress) -> None:
        self.run = run
        self.group = group
        self.ledger = run.ledger
        self.progress = progress
        #: This session's share of the report, and its ledger entries (kept apart, so that a
        #: forked worker can hand them back).
        self.report = ImportReport(HOST, run.report.folder)
        self.skips: Skips = self.report.skipped
        self.entries: dict[str, dict[str, Any]] = {}
        self.bytes = 0
        self.advanced = 0
        state = self.ledger.group(group.key)
        main = group.main
        restart = main is not None and (
            self.ledger.entry(main.rel) is None
            or (not self.ledger.unchanged(main) and self._rewritten(main))
        )
        self.meaning = RowMeaning() if restart else RowMeaning.from_state(state.get("meaning", {}))
        if restart:
            state = {}
        #: Background agents launched and not yet stopped: only then do notices matter.
        self.background: set[str] = set(state.get("background") or ())
        self.timed: list[Timed] = []
        self.files: list[_File] = []
        self.seen: set[str] = set()
        #: The child each spawn key named, so a stop by spawn key finds its agent.
        self.spawned: dict[str, str] = {}
        #: Spawn calls by key: this run's, and those earlier runs read and no child claimed.
        self.calls: dict[str, _Call] = _load_calls(state.get("calls"))
        #: The parent and spawn key a transcript row gave each child (a result, a progress row).
        self.identified: dict[str, tuple[str, str | None]] = {}
        #: Agents started by their first row with no parent named yet: placed after reading.
        self.unplaced: list[tuple[_File, int, ChildStarted]] = []
        #: Children the root's last stop stopped with it (the session file had ended there),
        #: each with what it did after: ``[time, "act" | "stop" | "own"]`` pairs.
        self.ended: dict[str, list[list[str]]] = _load_later(state.get("ended"))
        #: Agents their own file's last row stopped (the file had ended there): when, and what
        #: would have stopped them since had they gone on: ``[time, "stop" | "root"]`` pairs.
        self.own: dict[str, tuple[str, list[list[str]]]] = _load_own(state.get("own"))
        #: Observations (by index in ``timed``) that stop a file at its end: the session's
        #: (``end``), an agent's own (``own``); and a root's stop observed again (``root``).
        self.kinds: dict[int, str] = {}
        #: Facts about agents whose own file had no first row yet, held back by the last run.
        self.held: list[Any] = list(state.get("held") or ())
        #: The observations released from ``held`` in this run (by index in ``timed``).
        self.released: set[int] = set()
        #: The agents that have a file of their own in this session.
        self.agent_ids = {_agent_of(found) for found in group.agents}
        #: Whether the last run held the agent files back for want of the session's first row.
        self.waited = bool(state.get("waited"))

    # -- driving ----------------------------------------------------------------------------

    def read(self) -> _Outcome:
        group = self.group
        session = group.key.rsplit("/", 1)[-1]
        if group.main is not None:
            self._read_file(group.main, 0, "main", session)
        # A session file with no row yet (empty, or its first line still being written)
        # holds its agents' files back one run: they are read with the session's first rows,
        # not before them (the session's root would start at its agents' first rows).
        waiting = self._headless_main() and not self.waited
        for rank, found in enumerate(sorted(group.agents, key=lambda f: f.rel), start=1):
            if waiting:
                break
            kind = "agent" if _nested_session(found.rel) is not None else "flat"
            self._read_file(found, rank, kind, session)
        self._release_held()
        self._place_starts()
        self._acting_after_stops()
        held = self._hold_back()
        open_calls = set(self.meaning.open_spawns()) - set(self.spawned)
        state = {
            "meaning": self.meaning.state(),
            "background": sorted(self.background),
            "calls": {
                key: [call.parent, call.at.isoformat(), call.prompt.hex() if call.prompt else None]
                for key, call in self.calls.items()
                if key in open_calls
            },
            **self._ended(),
            "held": held,
            "waited": waiting,
        }
        timed = [item for item in self.timed if item[3].facts]
        return _Outcome(
            group.key, timed, self.bytes, self.advanced, self.entries, state, self.report
        )

    def _read_file(self, found: Found, rank: int, kind: str, session: str) -> None:
        if self.ledger.unchanged(found):
            return
        if found.size > self.run.max_bytes:
            self.skips[TOO_LARGE] += 1
            return
        entry = dict(self.ledger.entry(found.rel) or {})
        if entry and self._rewritten(found):
            entry = {}
        file = _File(found, rank, kind, int(entry.get("offset", 0)))
        file.root = entry.get("root") or (session if kind == "main" else None)
        file.speaker = entry.get("speaker")
        file.at = parse_time(entry.get("at"))
        file.stop = parse_time(entry.get("stop"))
        # A file read before that gave no row yet (empty, its first line torn, or only rows
        # that name no session) still has its first row to come: it starts, not resumes.
        file.needs_head = file.speaker is None
        file.resume = not file.needs_head
        file.legacy = bool(entry.get("legacy"))
        file.progress_rows = bool(entry.get("progress_rows"))
        file.internal = bool(entry.get("internal"))
        file.owns = set(entry.get("owns") or ())
        if kind != "main":
            file.agent = entry.get("agent") or _agent_of(found)
        if file.internal:
            self._put_entry(file, found.size, b"")
            return
        try:
            with open(found.path, "rb") as stream:
                stream.seek(file.start)
                chunks = Chunks(stream, file.start, self.skips)
                for region in chunks:
                    self._region(file, region)
                    self.advanced += len(region.data)
                    self.progress.advance(len(region.data))
                    if file.internal:
                        break
                end = found.size if file.internal else chunks.end
                if file.held:
                    # No row gave the file a time yet: nothing of it is observed, and the
                    # next run reads these rows again, to time them by the first timed row
                    # as one run reading the finished file does.
                    end, file.held = file.held[0][0], []
                self._last_row(file, chunks)
                check = b""
                if end and not file.internal:
                    stream.seek(end - min(end, _TAIL_CHECK))
                    check = stream.read(min(end, _TAIL_CHECK))
        except OSError:
            self.skips[UNREADABLE] += 1
            return
        self.bytes += end - file.start
        self.report.read += 1
        self.report.bytes += end - file.start
        if chunks.partial and not file.internal:
            self.report.partial += 1
        self.files.append(file)
        self._put_entry(file, end, check)

    def _put_entry(self, file: _File, end: int, check: bytes) -> None:
        found = file.found
        entry: dict[str, Any] = {
            "kind": file.kind,
            "size": found.size,
            "mtime": found.mtime,
            "offset": end,
            "check": check.hex(),
            "root": file.root,
            "speaker": file.speaker,
            "at": file.at.isoformat() if file.at else None,
            "stop": file.stop.isoformat() if file.stop else None,
            "legacy": file.legacy,
            "progress_rows": file.progress_rows,
            "owns": sorted(file.owns),
        }
        if file.kind != "main":
            entry |= {"agent": file.agent, "session": file.root, "internal": file.internal}
        self.entries[found.rel] = entry

    def _rewritten(self, found: Found) -> bool:
        """Whether a file read before was replaced rather than appended to: it shrank, or
        the bytes before the saved offset are not the ones read then."""
        entry = self.ledger.entry(found.rel)
        if entry is None:
            return True
        offset = int(entry.get("offset", 0))
        if found.size < offset:
            return True
        check = bytes.fromhex(entry.get("check") or "")
        if not check:
            return False
        try:
            with open(found.path, "rb") as stream:
                stream.seek(offset - len(check))
                return stream.read(len(check)) != check
        except OSError:
            return False

    # -- which lines to parse -----------------------------------------------------------------

    def _region(self, file: _File, region: Region) -> None:
        self._marked(file, region)
        if not file.internal:
            count_bad_lines(region.data, self.skips)

    def _marked(self, file: _File, region: Region) -> None:
        data, base, pos = region.data, region.offset, 0
        # Until the file's first row is known, and in files parsed whole, every line is read.
        while pos < len(data) and (file.needs_head or file.resume or file.legacy):
            end = data.index(b"\n", pos) + 1
            self._line(file, base + pos, data[pos:end])
            pos = end
            if file.internal:
                return
        if pos >= len(data):
            return
        # Spawn calls matter everywhere; any other marker only while it is watched, so each
        # is searched for one occurrence at a time (a spawn's result is usually a few lines
        # on, and after it nothing is left to look for).
        queue: list[tuple[int, int, bytes]] = [(s, e, b"") for s, e in _spawn_calls(data, pos)]
        heapq.heapify(queue)
        scheduled: dict[bytes, int] = {}

        def look(marker: bytes, after: int) -> None:
            line = _next_marked(data, after, marker)
            if line is not None:
                scheduled[marker] = line[0]
                heapq.heappush(queue, (*line, marker))
            else:
                scheduled.pop(marker, None)

        for marker in self._watch(file):
            look(marker, pos)
        parsed = -1
        while queue:
            start, end, marker = heapq.heappop(queue)
            watched = self._watch(file)
            if marker:
                if marker not in watched:
                    scheduled.pop(marker, None)
                    continue
                look(marker, end)
            if start == parsed:
                continue
            parsed = start
            self._line(file, base + start, data[start:end])
            for new in self._watch(file) - watched:
                if new not in scheduled:
                    look(new, end)

    def _watch(self, file: _File) -> set[bytes]:
        """What else to look for, given what was read so far: the results of open spawn
        calls, notices while background agents run, and 2.1.3x progress rows."""
        markers = {b'"tool_use_id":"' + key.encode() + b'"' for key in self.meaning.open_spawns()}
        if self.background:
            markers.add(b"<task-notification>")
        if file.progress_rows:
            markers.add(b'"agent_progress"')
        return markers

    def _line(self, file: _File, offset: int, raw: bytes) -> None:
        """Parse one line and observe what it means."""
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:
            # Lines without an object's shape are counted with the region's (count_bad_lines).
            if looks_like_object(raw):
                self.skips[why_bad(raw) or NOT_JSON] += 1
            return
        if not isinstance(row, dict):
            return  # counted with the region's lines: it has no object's shape
        if row.get("type") not in ROW_TYPES:
            self.skips[UNKNOWN_TYPE] += 1
            file.unknown.add(offset)
            return
        uuid = row.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen:  # rows repeat (HOSTS.md 1.4, quirk 5)
                return
            self.seen.add(uuid)
        if file.needs_head and isinstance(row.get("version"), str):
            file.legacy = _legacy(row["version"], raw)
            file.progress_rows = _progress_rows(row["version"])
        at = parse_time(row.get("timestamp"))
        if at is None and file.at is None and file.needs_head and len(file.held) < 64:
            file.held.append((offset, row))  # leading rows take the file's first time
            return
        file.at = at or file.at
        self._release(file)
        self._row(file, offset, row)

    def _release(self, file: _File) -> None:
        held, file.held = file.held, []
        for offset, row in held:
            self._row(file, offset, row)

    def _row(self, file: _File, offset: int, row: dict[str, Any]) -> None:
        result = row.get("toolUseResult")
        if isinstance(result, dict) and result.get("status") == "async_launched":
            agent = result.get("agentId")
            if isinstance(agent, str) and not is_internal_agent(agent):
                self.background.add(agent)
        if file.kind == "main":
            self._main_row(file, offset, row)
        else:
            self._agent_row(file, offset, row)

    # -- what rows mean -------------------------------------------------------------------------

    def _main_row(self, file: _File, offset: int, row: dict[str, Any]) -> None:
        session = row.get("sessionId")
        if not isinstance(session, str) or not session:
            return  # it belongs to the next session, which it does not name
        found: list[Fact] = []
        if row.get("forkedFrom"):
            pass  # history copied from the session it was forked from: not this one's doing
        elif row.get("isSidechain") is True and not row.get("agentId"):
            found = self.meaning.inline_child(row, session)
        else:
            found = self.meaning.facts(row, session)
        facts: list[Fact] = []
        if file.speaker is None:
            source = "fork" if row.get("forkedFrom") else "transcript"
            facts.append(RootSeen(session, source=source))
            self.report.roots.add(session)
        elif session != file.speaker:
            # Two sessions in one file (a recorder's concatenation of a /clear).
            ended: list[Fact] = [SessionEnded(file.speaker)]
            self._emit(file, offset, row, file.speaker, file.speaker, ended, key_suffix="end")
            facts.append(RootSeen(session, source="clear"))
            self.report.roots.add(session)
            self.ended.clear()
        elif file.resume:
            if found or row.get("timestamp") is not None:
                self._resume(file, offset, row, session)
            else:
                # A row with no time (a title, a mode) is written again after every turn,
                # so it is no new row to hang the resume on: the next timed row is.
                return
        file.needs_head = file.resume = False
        file.speaker = file.root = session
        file.owns.add(session)
        facts.extend(found)
        self._emit(file, offset, row, session, session, facts)

    def _resume(self, file: _File, offset: int, row: dict[str, Any], session: str) -> None:
        """The session file goes on after the row where the last run stopped its root: the
        file had only ended there. The root goes on from that moment, and so do the children
        that stopped with it alone, so the history reads as if both runs had been one."""
        again: list[Fact] = [Acted(session), *(Resumed(child) for child in sorted(self.ended))]
        at = parse_time(row.get("timestamp"))
        # Never after the row that resumes it (rows are not always in time order).
        when = min(file.stop, at) if file.stop and at else file.stop or at
        suffix = f"resume@{offset}"
        self._emit(file, offset, row, session, session, again, at=when, key_suffix=suffix)
        # What such a child did after the root's stop was journaled while it stood stopped:
        # it is observed again, after the resume, so that it comes out as it happened.
        for child, later in sorted(self.ended.items()):
            for number, (time, kind) in enumerate(later):
                fact = Resumed(child) if kind == "act" else Stopped(conversation=child)
                self._emit(
                    file,
                    offset,
                    row,
                    child,
                    session,
                    [fact],
                    at=parse_time(time),
                    key_suffix=f"again@{offset}:{child}:{number}",
                    tag="own" if kind == "own" else "",
                )
        self.ended = {}
        # The root's stop did not happen after all: it stops no agent that had stopped first.
        for _, later in self.own.values():
            later[:] = [pair for pair in later if pair[1] != "root"]

    def _resume_agent(self, file: _File, offset: int, row: dict[str, Any], agent: str) -> None:
        """The agent's file goes on after the row where an earlier run stopped it: the file
        had only ended there. The agent goes on from that moment; what would have stopped it
        since, had it gone on (its parent's result, a notice, the session's end), is observed
        again after that, so that it comes out as it happened (and the agent acts again at
        its first row after each, :meth:`_acting_after_stops`)."""
        stopped, later = self.own.pop(agent)
        at = parse_time(row.get("timestamp"))
        since = parse_time(stopped)
        when = min(since, at) if since and at else since or at
        again: list[Fact] = [Resumed(agent)]
        self._emit(
            file, offset, row, agent, file.root, again, at=when, key_suffix=f"resume@{offset}"
        )
        for number, (time, kind) in enumerate(later):
            self._emit(
                file,
                offset,
                row,
                agent,
                file.root,
                [Stopped(conversation=agent)],
                at=parse_time(time),
                key_suffix=f"again@{offset}:{number}",
                tag="root" if kind == "root" else "",
            )

    def _agent_row(self, file: _File, offset: int, row: dict[str, Any]) -> None:
        named = row.get("agentId")
        agent = named if isinstance(named, str) and named else file.agent
        if agent is None:
            return
        session = row.get("sessionId")
        root = session if isinstance(session, str) and session else file.root
        facts: list[Fact] = []
        if file.needs_head:
            file.needs_head = False
            if is_internal_agent(agent) or is_warmup(row):
                file.internal = True  # Claude Code's own helpers: never children
                self.report.internal += 1
                return
            file.agent = file.speaker = agent
            file.root = root
            version = row.get("version")
            file.nesting = not isinstance(version, str) or _version(version) >= NESTING_SINCE
            file.prompt = _prompt(row)
            start = self._start(file, agent, root)
            if isinstance(start, ChildStarted):
                self.unplaced.append((file, offset, start))
            facts.append(start)
            self.report.subagents.add(agent)
        elif file.resume:
            if agent in self.own:
                self._resume_agent(file, offset, row, agent)
            facts.append(Acted(agent))
        file.resume = False
        file.owns.add(agent)
        found = self.meaning.facts(row, agent)
        if found and not facts:
            facts.append(Acted(agent))  # acting first places an unknown spawner
        facts.extend(found)
        self._emit(file, offset, row, agent, root, facts)

    def _start(self, file: _File, agent: str, root: str | None) -> Fact:
        meta: Mapping[str, Any] = {}
        path = file.found.path
        if path[: -len(".jsonl")] + ".meta.json" in self.run.sidecars:
            try:
                meta = read_meta(Path(path))
            except InputError:
                self.skips[BAD_SIDECAR] += 1
        return agent_start(meta, agent, root)

    # -- placing agents by what the transcripts state ---------------------------------------

    def _place_starts(self) -> None:
        """Place each agent its sidecar did not, once every file of the session is read, by
        what the transcripts state (:meth:`_placement`): its start carries the placement
        with resolution ``transcript``, rather than leaving the engine to infer it."""
        for file, offset, start in self.unplaced:
            index = file.emitted.get(offset)
            placed = self._placement(file, start)
            if index is None or placed is None:
                continue
            when, rank, place, observation = self.timed[index]
            facts = tuple(placed if fact is start else fact for fact in observation.facts)
            self.timed[index] = (when, rank, place, _replace(observation, facts))
            self._note(file, placed, when)

    def _placement(self, file: _File, start: ChildStarted) -> ChildIdentified | None:
        """Where the transcripts place an agent that its sidecar does not: under the call
        a result or progress row of the session names it for; under the call its sidecar's
        ``toolUseId`` names; under the one open call whose prompt its first prompt repeats;
        before subagents could spawn (2.1.172), under the session its rows name. ``None``
        leaves it to the engine: an agent of a later version, with no sidecar, whose call
        no row names yet (its result is still to come) and whose prompt matches no one call,
        could be any agent's child, and is placed by ordering (``inferred``)."""
        agent = start.child
        assert agent is not None
        parent: str | None = None
        key = start.spawn_key
        named = self.identified.get(agent)
        if named is not None:
            parent, key = named[0], named[1] or key
        elif key is not None and key in self.calls:
            parent = self.calls[key].parent
        else:
            matched = self._prompt_match(agent, file.prompt)
            if matched is not None:
                key, parent = matched, self.calls[matched].parent
            elif not file.nesting:
                parent = file.root
        if parent is None:
            return None
        return ChildIdentified(
            parent=parent,
            child=agent,
            resolution="transcript",
            spawn_key=key,
            agent_type=start.agent_type,
            description=start.description,
        )

    def _prompt_match(self, agent: str, prompt: bytes | None) -> str | None:
        """The one spawn call no other child claimed whose prompt ``prompt`` repeats."""
        if prompt is None:
            return None
        keys = [
            key
            for key, call in self.calls.items()
            if call.prompt == prompt and self.spawned.get(key, agent) == agent
        ]
        return keys[0] if len(keys) == 1 else None

    def _last_row(self, file: _File, chunks: Chunks) -> None:
        """The file's last timestamped row stops its conversation (a grown file's next row
        resumes it); rows after it without a time (titles, modes) say nothing."""
        if file.internal or file.speaker is None:
            return
        for offset, raw in chunks.last_lines():
            if offset < file.start:
                return
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(row, dict):
                continue  # counted with its region's lines
            if row.get("type") not in ROW_TYPES:
                if offset not in file.unknown:  # not counted when a marker found it
                    self.skips[UNKNOWN_TYPE] += 1
                continue
            at = parse_time(row.get("timestamp"))
            if at is None:
                continue
            # Rows are not always in time order (attachments are stamped before the prompt
            # they follow): the file stops no earlier than anything it said.
            at = max(at, file.latest or at)
            session = row.get("sessionId")
            if file.kind == "main" and isinstance(session, str) and session != file.speaker:
                # A second session in the file that no marked row showed (a recorder's
                # concatenation of a /clear): it starts here, at the latest.
                self._main_row(file, offset, row)
            self._stop(file, offset, row, at)
            file.last_at = file.at = at
            if file.kind == "main":
                file.stop = at
            return

    def _stop(self, file: _File, offset: int, row: dict[str, Any], at: datetime) -> None:
        """Stop the file's conversation at its last row, under a key of the row's own plus
        where it stands (a resumed session copies its old rows verbatim, and the copy of a
        row that stopped the file in an earlier run must stop it again): with the row's own
        facts, or apart when the stop comes later than the row (rows out of time order)."""
        assert file.speaker is not None
        stop: list[Fact] = [Stopped(conversation=file.speaker)]
        tag = "end" if file.kind == "main" else "own"
        suffix = f"stop@{offset}"
        index = file.emitted.get(offset)
        if index is not None and self.timed[index][0] != at:
            self._emit(
                file,
                offset,
                row,
                file.speaker,
                file.root,
                stop,
                at=at,
                key_suffix=suffix,
                last=True,
                tag=tag,
            )
            return
        self._emit(file, offset, row, file.speaker, file.root, stop, at=at)
        index = file.emitted.get(offset)
        if index is None:
            return
        when, rank, place, observation = self.timed[index]
        key = f"{observation.key}:{suffix}"
        self.timed[index] = (when, rank, place, _replace(observation, observation.facts, key))
        self.kinds[index] = tag

    # -- observations ---------------------------------------------------------------------------

    def _emit(
        self,
        file: _File,
        offset: int,
        row: dict[str, Any],
        requester: str,
        root: str | None,
        facts: list[Fact],
        *,
        at: datetime | None = None,
        key_suffix: str = "",
        last: bool = False,
        tag: str = "",
    ) -> None:
        """Observe ``facts`` at a row; facts for a row already observed join its
        observation (one row, one idempotency key). With ``key_suffix`` they are observed
        apart, under a key of their own; ``last`` sorts them after everything else observed
        at the row (at ``offset + 1``: no other line starts there); ``tag`` says what kind
        of stop they are (:attr:`_Session.kinds`)."""
        if not facts:
            return
        when = at or parse_time(row.get("timestamp")) or file.at or _mtime(file.found)
        if not key_suffix:
            facts = self._started_at_calls(file, offset, row, requester, root, facts, when)
            if not facts:
                return
        if file.first_at is None:
            file.first_at = when
        if not key_suffix and (file.latest is None or when > file.latest):
            file.latest = when
        for fact in facts:
            self._note(file, fact, when)
        index = file.emitted.get(offset) if not key_suffix else None
        if index is not None:
            when, rank, place, earlier = self.timed[index]
            merged = _merge(earlier.facts, facts)
            self.timed[index] = (when, rank, place, _replace(earlier, merged))
            return
        try:
            key = payload_key(row)
        except PayloadError:
            self.skips[NOT_OBJECT] += 1
            return
        observation = Observation(
            host=HOST,
            requester=requester,
            key=f"{key}:{key_suffix}" if key_suffix else key,
            facts=tuple(facts),
            root=root,
            workspace=(),
            at=when,
        )
        if tag:
            self.kinds[len(self.timed)] = tag
        if key_suffix:
            file.extra.append(len(self.timed))
        else:
            file.emitted[offset] = len(self.timed)
        self.timed.append((when, file.rank, offset + 1 if last else offset, observation))

    def _started_at_calls(
        self,
        file: _File,
        offset: int,
        row: dict[str, Any],
        requester: str,
        root: str | None,
        facts: list[Fact],
        when: datetime,
    ) -> list[Fact]:
        """``facts`` without those naming, for the first time, a child that has no file of
        its own (known only from its call's result): each is observed apart, at its spawn
        call's time, when the child started."""
        early = [
            fact
            for fact in facts
            if isinstance(fact, ChildIdentified)
            and fact.spawn_key in self.calls
            and fact.child not in self.agent_ids
            and fact.child not in self.identified
            and self.calls[fact.spawn_key].at < when
        ]
        for fact in early:
            assert isinstance(fact, ChildIdentified) and fact.spawn_key is not None
            at = self.calls[fact.spawn_key].at
            suffix = f"start:{fact.child}"
            self._emit(file, offset, row, requester, root, [fact], at=at, key_suffix=suffix)
        return [fact for fact in facts if fact not in early] if early else facts

    def _note(self, file: _File | None, fact: Fact, when: datetime) -> None:
        """Remember which conversations this file placed (``--reconcile`` deletes them when
        their file is gone), which spawn calls were made when and by whom, which spawn key
        named which child under which parent, and which background agents stopped."""
        if isinstance(fact, SpawnRequested):
            if fact.spawn_key not in self.calls:
                use = self.meaning.tool_uses.get(fact.spawn_key)
                prompt = use.prompt if use is not None else None
                self.calls[fact.spawn_key] = _Call(fact.parent, when, prompt)
        elif isinstance(fact, ChildIdentified | ChildStarted) and fact.child is not None:
            if fact.spawn_key is not None:
                self.spawned[fact.spawn_key] = fact.child
            if isinstance(fact, ChildIdentified):
                self.identified.setdefault(fact.child, (fact.parent, fact.spawn_key))
            if not is_internal_agent(fact.child):
                self.report.subagents.add(fact.child)
                if file is not None:
                    file.owns.add(fact.child)
        elif isinstance(fact, Stopped) and fact.conversation is not None:
            self.background.discard(fact.conversation)

    # -- what the session's end stopped ------------------------------------------------------

    def _ended(self) -> dict[str, Any]:
        """What stopped only because a file had ended, for the runs that read on.

        ``ended``: the children the root's last stop stopped with it, each with what it did
        after (acted again, stopped); if the session file goes on (the root was not done),
        :meth:`_resume` takes them on with the root and observes their later life again.
        ``own``: the agents their own file's last row stopped, each with what would have
        stopped it since had it gone on; if its file goes on, :meth:`_resume_agent` takes it
        on. Found by going through this run's observations in the order the engine gets
        them, from what the last runs left (everything else they left stopped: a run stops
        every file at its end)."""
        root = self._root()
        ended = {child: list(later) for child, later in self.ended.items()}
        own = {agent: (at, list(later)) for agent, (at, later) in self.own.items()}
        live = {child: bool(later) and later[-1][1] == "act" for child, later in ended.items()}

        def mark(child: str, kind: str, when: datetime) -> None:
            live[child] = kind == "act"
            if child in ended:
                ended[child].append([when.isoformat(), kind])

        for index in sorted(range(len(self.timed)), key=lambda i: self.timed[i][:3]):
            when, _, _, observation = self.timed[index]
            tag = self.kinds.get(index, "")
            for fact in observation.facts:
                if isinstance(fact, Stopped):
                    target = fact.conversation or self.spawned.get(fact.spawn_key or "")
                    if target is None:
                        continue
                    if target == root:
                        for _, later in own.values():
                            later.append([when.isoformat(), "root"])
                        for child in [child for child, on in live.items() if on]:
                            if child in ended:
                                mark(child, "stop", when)
                            else:
                                live[child] = False
                                ended[child] = []
                    elif tag == "own" and target == observation.requester:
                        mark(target, "own", when)
                        own[target] = (when.isoformat(), [])
                    elif tag == "root":  # the session's stop, observed again for an agent
                        live[target] = False
                        ended.setdefault(target, [])
                    else:
                        mark(target, "stop", when)
                        if target in own:
                            own[target][1].append([when.isoformat(), "stop"])
                elif isinstance(fact, SessionEnded):
                    live = dict.fromkeys(live, False)  # a real end: nothing goes on after it
                    ended.clear()
                    own.clear()
                elif isinstance(fact, ChildIdentified | ChildStarted):
                    if fact.child is not None and not is_internal_agent(fact.child):
                        live.setdefault(fact.child, True)
                elif isinstance(fact, Acted | Resumed) and fact.conversation != root:
                    mark(fact.conversation, "act", when)
                    own.pop(fact.conversation, None)
        return {"ended": ended, "own": {agent: [at, later] for agent, (at, later) in own.items()}}

    def _headless_main(self) -> bool:
        """Whether the session's file was read and gave no row (it names no session yet)."""
        main = self.group.main
        entry = self.entries.get(main.rel) or self.ledger.entry(main.rel) if main else None
        return entry is not None and not entry.get("speaker")

    def _root(self) -> str | None:
        """The conversation the session's main file speaks for at its end."""
        main = self.group.main
        if main is None:
            return None
        entry = self.entries.get(main.rel) or self.ledger.entry(main.rel) or {}
        speaker = entry.get("speaker")
        return speaker if isinstance(speaker, str) else None

    # -- agents whose own file has no row yet ---------------------------------------------------

    def _hold_back(self) -> list[dict[str, Any]]:
        """Facts this run found about an agent whose own file is on disk with no complete
        first row yet (its parent's result or a notice, written before the agent's first
        row could be read), taken out of their observations and kept for the next run: there
        they follow the agent's own start, as in one run reading the finished files, rather
        than starting it at its result. The next run observes them whatever it reads."""
        waiting = self._headless()
        if not waiting:
            return []
        held: list[dict[str, Any]] = []
        for index, (when, rank, place, observation) in enumerate(self.timed):
            if index in self.released:
                continue
            about = [(fact, self._about(fact)) for fact in observation.facts]
            kept = tuple(fact for fact, agent in about if agent not in waiting)
            if len(kept) == len(about):
                continue
            whole = not kept
            for agent in sorted({agent for _, agent in about if agent in waiting}):
                facts = [fact for fact, of in about if of == agent]
                held.append(
                    {
                        "key": observation.key if whole else f"{observation.key}:{agent}",
                        "at": when.isoformat(),
                        "rank": rank,
                        "place": place,
                        "requester": observation.requester,
                        "root": observation.root,
                        "facts": [[type(f).__name__, dataclasses.asdict(f)] for f in facts],
                    }
                )
            self.timed[index] = (when, rank, place, _replace(observation, kept))
        return held

    def _headless(self) -> set[str]:
        """The agents of this session whose own file gave no row yet (and is not one of the
        host's own helpers): empty, or its first line still being written."""
        waiting: set[str] = set()
        for found in self.group.agents:
            entry = self.entries.get(found.rel) or self.ledger.entry(found.rel)
            if entry is None or entry.get("speaker") or entry.get("internal"):
                continue
            agent = entry.get("agent")
            if isinstance(agent, str) and not is_internal_agent(agent):
                waiting.add(agent)
        return waiting

    def _about(self, fact: Fact) -> str | None:
        """The child a fact is about, when it is one."""
        if isinstance(fact, ChildIdentified | ChildStarted):
            return fact.child
        if isinstance(fact, Stopped):
            return fact.conversation or self.spawned.get(fact.spawn_key or "")
        if isinstance(fact, Acted | Resumed):
            return fact.conversation
        return None

    def _release_held(self) -> None:
        """Observe what the last run held back (:meth:`_hold_back`), as it was."""
        for item in self.held:
            facts = _facts(item.get("facts"))
            at = parse_time(item.get("at"))
            if not facts or at is None or not isinstance(item.get("key"), str):
                continue
            observation = Observation(
                host=HOST,
                requester=item.get("requester"),
                key=item["key"],
                facts=facts,
                root=item.get("root"),
                workspace=(),
                at=at,
            )
            for fact in facts:
                self._note(None, fact, at)
            self.released.add(len(self.timed))
            rank, place = int(item.get("rank") or 0), int(item.get("place") or 0)
            self.timed.append((at, rank, place, observation))

    # -- agents that go on after something stopped them -----------------------------------------

    def _acting_after_stops(self) -> None:
        """An agent stopped by another file's row (its parent's result or notification, the
        root's last row) that still writes rows later acts again at the first such row."""
        stops: dict[str, list[datetime]] = {}
        root_end: datetime | None = None
        for index, (when, _, _, observation) in enumerate(self.timed):
            tag = self.kinds.get(index, "")
            for fact in observation.facts:
                if not isinstance(fact, Stopped):
                    continue
                target = fact.conversation or self.spawned.get(fact.spawn_key or "")
                if target is None:
                    continue
                if target == observation.requester and tag == "own":
                    continue  # a file's end stops its own agent: it writes no later row
                if target == observation.requester and tag == "end":
                    root_end = when
                else:
                    stops.setdefault(target, []).append(when)
        for file in self.files:
            if file.kind == "main" or file.agent is None or file.last_at is None:
                continue
            first = file.first_at or _EARLIEST
            times = sorted(
                t
                for t in [*stops.get(file.agent, []), *([root_end] if root_end else [])]
                if first <= t < file.last_at
            )
            if times:
                self._act_again(file, times)

    def _act_again(self, file: _File, times: list[datetime]) -> None:
        """Observe the agent acting at its first row after each of ``times``."""
        agent = file.agent
        assert agent is not None
        waiting = list(times)
        try:
            with open(file.found.path, "rb") as stream:
                stream.seek(file.start)
                offset = file.start
                for raw, size, complete in read_lines(stream, Skips()):
                    here, offset = offset, offset + size
                    if not waiting or not complete:
                        return
                    try:
                        row = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        continue
                    at = parse_time(row.get("timestamp")) if isinstance(row, dict) else None
                    if at is None or at <= waiting[0]:
                        continue
                    while waiting and waiting[0] < at:
                        waiting.pop(0)
                    self._emit(file, here, row, agent, file.root, [Acted(agent)])
        except OSError:
            return


def _agent_of(found: Found) -> str | None:
    """The agent an ``agent-<id>.jsonl`` file is named for."""
    match = _AGENT_FILE.fullmatch(found.rel.rsplit("/", 1)[-1])
    return match.group(1) if match else None


def _version(version: str) -> tuple[int, ...]:
    """``2.1.143`` as ``(2, 1, 143)``; as far as it is numbers."""
    parts: list[int] = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def _prompt(row: Mapping[str, Any]) -> bytes | None:
    """The digest of an agent's first prompt, as :class:`RowMeaning` keeps its call's."""
    message = row.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
        content = texts[0] if len(texts) == 1 else None
    if not isinstance(content, str):
        return None
    return hashlib.blake2b(content.encode(), digest_size=16).digest()


def _load_calls(state: Any) -> dict[str, _Call]:
    calls: dict[str, _Call] = {}
    for key, fields in (state if isinstance(state, dict) else {}).items():
        if not isinstance(fields, list) or len(fields) != 3:
            continue
        parent, at, prompt = fields
        when = parse_time(at)
        if isinstance(parent, str) and when is not None:
            digest = bytes.fromhex(prompt) if isinstance(prompt, str) else None
            calls[key] = _Call(parent, when, digest)
    return calls


def _load_later(state: Any) -> dict[str, list[list[str]]]:
    """``{conversation: [[time, kind], ...]}`` as kept in the ledger."""
    found: dict[str, list[list[str]]] = {}
    for conversation, later in (state if isinstance(state, dict) else {}).items():
        if isinstance(later, list):
            found[conversation] = [
                [pair[0], pair[1]]
                for pair in later
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
            ]
    return found


def _load_own(state: Any) -> dict[str, tuple[str, list[list[str]]]]:
    """``{agent: [time, [[time, kind], ...]]}`` as kept in the ledger."""
    found: dict[str, tuple[str, list[list[str]]]] = {}
    for agent, value in (state if isinstance(state, dict) else {}).items():
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
            found[agent] = (value[0], _load_later({agent: value[1]}).get(agent, []))
    return found


def _facts(rows: Any) -> tuple[Fact, ...]:
    """Facts kept as ``[name, fields]`` pairs (:meth:`_Session._hold_back`)."""
    facts: list[Fact] = []
    for pair in rows if isinstance(rows, list) else ():
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], dict):
            continue
        kind = _FACTS.get(pair[0])
        if kind is not None:
            try:
                facts.append(kind(**pair[1]))
            except TypeError:
                continue
    return tuple(facts)


def _is_transcript(name: str) -> bool:
    return name.endswith(".jsonl")


def _is_sidecar(name: str) -> bool:
    return name.endswith(".meta.json")


def _spawn_calls(data: bytes, pos: int) -> list[tuple[int, int]]:
    """Lines holding an ``Agent``/``Task`` call: each ``tool_use`` block's name is checked
    just after it, without searching the rest of the line."""
    found: list[tuple[int, int]] = []
    marker = b'"type":"tool_use"'
    at = data.find(marker, pos)
    while at >= 0:
        name = data.find(b'"name":"', at, at + 400)
        newline = data.find(b"\n", at, name) if name >= 0 else 0
        if name >= 0 and newline < 0 and data.startswith((b'Agent"', b'Task"'), name + 8):
            end = data.index(b"\n", name) + 1
            found.append((data.rfind(b"\n", 0, at) + 1, end))
            at = data.find(marker, end)
        else:
            at = data.find(marker, at + len(marker))
    return found


def _next_marked(data: bytes, pos: int, marker: bytes) -> tuple[int, int] | None:
    """The next line from ``pos`` holding ``marker``, as (start, end) in ``data``."""
    at = data.find(marker, pos)
    if at < 0:
        return None
    return data.rfind(b"\n", 0, at) + 1, data.index(b"\n", at) + 1


def _legacy(version: str, raw: bytes) -> bool:
    """Whether a file must be parsed whole: written before 2.1 (inline subagents, results
    without ``agentId``), or not in the compact JSON the markers look for."""
    return version.startswith(("0.", "1.", "2.0.")) or b'"type":"' not in raw


def _progress_rows(version: str) -> bool:
    """Whether the version may mirror children as ``agent_progress`` rows (seen in 2.1.38
    and 2.1.39, gone by 2.1.101)."""
    parts = version.split(".")
    try:
        return parts[:2] == ["2", "1"] and int(parts[2]) < 101
    except (IndexError, ValueError):
        return False


def _mtime(found: Found) -> datetime:
    return datetime.fromtimestamp(found.mtime / 1e9, tz=UTC)


def _merge(earlier: tuple[Fact, ...], later: list[Fact]) -> tuple[Fact, ...]:
    """Facts of one row gathered in two passes: acting first, stopping last."""
    acts = [f for f in later if isinstance(f, Acted) and f not in earlier]
    rest = [f for f in later if not isinstance(f, Acted) and f not in earlier]
    return (*acts, *earlier, *rest)


def _replace(
    observation: Observation, facts: tuple[Fact, ...], key: str | None = None
) -> Observation:
    return Observation(
        host=observation.host,
        requester=observation.requester,
        key=observation.key if key is None else key,
        facts=facts,
        root=observation.root,
        workspace=observation.workspace,
        at=observation.at,
    )
