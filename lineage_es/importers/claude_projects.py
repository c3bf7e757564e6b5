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
are parsed whole. A line no marker points to is never parsed, so a broken line that carried
nothing needed is not counted either.

Sessions are read apart from each other, so a large import reads them in forked worker
processes (:mod:`~lineage_es.importers.forked`) and takes what they found in order, journaling
one batch while they read the next: the journal is the same as one process makes.

Each file's start and stop come from its first and last rows; a grown file's first new row
resumes its conversation (a resumed or continued session appends to the same file), and an
agent still writing after something stopped it (its parent's result, the root's last row)
acts again at its next row.
"""

from __future__ import annotations

import heapq
import os
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from lineage_es.errors import InputError, PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Observation,
    RootSeen,
    SessionEnded,
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
    read_lines,
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

_AGENT_FILE = re.compile(r"agent-(.+)\.jsonl")
_TAIL_CHECK = 32
_EARLIEST = datetime.min.replace(tzinfo=UTC)


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
        found = list(walk(self.folder, _is_transcript, note=(_is_sidecar, self.sidecars)))
        self.report.files = len(found)
        present = {f.rel for f in found}
        groups = self._groups(found)
        todo: list[_Group] = []
        sizes: list[int] = []
        for group in groups:
            files = [f for f in [group.main, *group.agents] if f is not None]
            changed = [f for f in files if not self.ledger.unchanged(f)]
            self.report.unchanged += len(files) - len(changed)
            if changed:
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
    needs_head: bool = True
    resume: bool = False
    legacy: bool = False
    progress_rows: bool = False
    internal: bool = False
    #: Observations made at each row (by byte offset): a row's facts share one observation.
    emitted: dict[int, int] = field(default_factory=dict)
    #: Leading rows that carry no time, held until the file's first time is known.
    held: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    owns: set[str] = field(default_factory=set)


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
        #: Background agents launched and not yet stopped: only then do notices matter.
        self.background: set[str] = set() if restart else set(state.get("background") or ())
        self.timed: list[Timed] = []
        self.files: list[_File] = []
        self.seen: set[str] = set()
        #: The child each spawn key named, so a stop by spawn key finds its agent.
        self.spawned: dict[str, str] = {}

    # -- driving ----------------------------------------------------------------------------

    def read(self) -> _Outcome:
        group = self.group
        session = group.key.rsplit("/", 1)[-1]
        if group.main is not None:
            self._read_file(group.main, 0, "main", session)
        for rank, found in enumerate(sorted(group.agents, key=lambda f: f.rel), start=1):
            kind = "agent" if _nested_session(found.rel) is not None else "flat"
            self._read_file(found, rank, kind, session)
        self._acting_after_stops()
        state = {"meaning": self.meaning.state(), "background": sorted(self.background)}
        return _Outcome(
            group.key, self.timed, self.bytes, self.advanced, self.entries, state, self.report
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
        file.needs_head = not entry
        file.resume = bool(entry)
        file.legacy = bool(entry.get("legacy"))
        file.progress_rows = bool(entry.get("progress_rows"))
        file.internal = bool(entry.get("internal"))
        file.owns = set(entry.get("owns") or ())
        if kind != "main":
            match = _AGENT_FILE.fullmatch(found.rel.rsplit("/", 1)[-1])
            file.agent = entry.get("agent") or (match.group(1) if match else None)
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
                self._release(file)
                self._last_row(file, chunks)
                end = found.size if file.internal else chunks.end
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
        if not raw.strip():
            return
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.skips[NOT_JSON] += 1
            return
        if not isinstance(row, dict):
            self.skips[NOT_OBJECT] += 1
            return
        if row.get("type") not in ROW_TYPES:
            self.skips[UNKNOWN_TYPE] += 1
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
        elif file.resume:
            facts.append(Acted(session))
        file.needs_head = file.resume = False
        file.speaker = file.root = session
        file.owns.add(session)
        if row.get("forkedFrom"):
            pass  # history copied from the session it was forked from: not this one's doing
        elif row.get("isSidechain") is True and not row.get("agentId"):
            facts.extend(self.meaning.inline_child(row, session))
        else:
            facts.extend(self.meaning.facts(row, session))
        self._emit(file, offset, row, session, session, facts)

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
            facts.append(self._start(file, agent, root))
            self.report.subagents.add(agent)
        elif file.resume:
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
            if not isinstance(row, dict) or row.get("type") not in ROW_TYPES:
                continue
            at = parse_time(row.get("timestamp"))
            if at is None:
                continue
            session = row.get("sessionId")
            if file.kind == "main" and isinstance(session, str) and session != file.speaker:
                # A second session in the file that no marked row showed (a recorder's
                # concatenation of a /clear): it starts here, at the latest.
                self._main_row(file, offset, row)
            stop: list[Fact] = [Stopped(conversation=file.speaker)]
            self._emit(file, offset, row, file.speaker, file.root, stop, at=at)
            file.last_at = at
            return

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
    ) -> None:
        """Observe ``facts`` at a row; facts for a row already observed join its
        observation (one row, one idempotency key)."""
        if not facts:
            return
        when = at or parse_time(row.get("timestamp")) or file.at or _mtime(file.found)
        if file.first_at is None:
            file.first_at = when
        for fact in facts:
            self._note(file, fact)
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
        if not key_suffix:
            file.emitted[offset] = len(self.timed)
        self.timed.append((when, file.rank, offset, observation))

    def _note(self, file: _File, fact: Fact) -> None:
        """Remember which conversations this file placed (``--reconcile`` deletes them when
        their file is gone), which spawn key named which child, and which background agents
        stopped."""
        if isinstance(fact, ChildIdentified | ChildStarted) and fact.child is not None:
            if fact.spawn_key is not None:
                self.spawned[fact.spawn_key] = fact.child
            if not is_internal_agent(fact.child):
                self.report.subagents.add(fact.child)
                file.owns.add(fact.child)
        elif isinstance(fact, Stopped) and fact.conversation is not None:
            self.background.discard(fact.conversation)

    # -- agents that go on after something stopped them -----------------------------------------

    def _acting_after_stops(self) -> None:
        """An agent stopped by another file's row (its parent's result or notification, the
        root's last row) that still writes rows later acts again at the first such row."""
        stops: dict[str, list[datetime]] = {}
        root_end: datetime | None = None
        for file in self.files:
            for index in file.emitted.values():
                when, _, _, observation = self.timed[index]
                for fact in observation.facts:
                    if not isinstance(fact, Stopped):
                        continue
                    target = fact.conversation or self.spawned.get(fact.spawn_key or "")
                    if target is None:
                        continue
                    if file.kind == "main" and target == file.speaker:
                        root_end = when
                    elif target != file.speaker:
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


def _replace(observation: Observation, facts: tuple[Fact, ...]) -> Observation:
    return Observation(
        host=observation.host,
        requester=observation.requester,
        key=observation.key,
        facts=facts,
        root=observation.root,
        workspace=observation.workspace,
        at=observation.at,
    )
