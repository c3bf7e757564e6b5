"""Read one Claude Code session's files and make their observations.

What rows mean is :class:`~lineage_es.hosts.claude_transcript.RowMeaning`'s business, as for
``lineage ingest``; this module decides which rows to look at. Almost every byte of a profile
is prompts, thinking and tool output, and looping over lines in Python costs several times a
search in C, so a file is read in large chunks and only the lines a marker points to are
parsed: ``Agent``/``Task`` calls (``"type":"tool_use"`` with that name), the results of calls
still open (by their ``tool_use_id``), ``<task-notification>`` rows while background agents
run, ``agent_progress`` rows in the versions that wrote them, in each file its first row
(a root is seen, an agent starts) and its last timed one (it stops), and in a session file
the first row of another session (a recorder's concatenation of a ``/clear``, which ends the
first session there). Files written before 2.1 (inline subagents, results without
``agentId``) and any file not in the host's compact JSON are parsed whole. A line no marker
points to is never parsed; one that cannot be a row is still counted, by its shape (a row is
a JSON object on one line: a line that does not begin with ``{`` and end with ``}`` is
parsed to say why, :func:`~.lines.count_bad_lines`). The type of a row no marker points to
is not checked.

Each file's start and stop come from its first and last rows, and an agent still writing
after something stopped it (its parent's result, the root's last row) acts again at its next
row. Where an agent starts is placed by :mod:`.claude_placement`; a child no file of its own
speaks for starts at its call. What an import leaves the next about files still being written
is :mod:`.claude_carryover`'s.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from lineage_es.errors import InputError
from lineage_es.facts import (
    Acted,
    ChildStarted,
    Fact,
    RootSeen,
    SessionEnded,
    Stopped,
)
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude import HOST, is_internal_agent
from lineage_es.hosts.claude_agents import Spawns
from lineage_es.hosts.claude_transcript import RowMeaning, agent_start, is_warmup, read_meta
from lineage_es.importers.claude_carryover import (
    calls_state,
    load_calls,
    load_later,
    load_own,
)
from lineage_es.importers.claude_fileless import Fileless
from lineage_es.importers.claude_layout import agent_of, nested_session
from lineage_es.importers.claude_placement import (
    NESTING_SINCE,
    Placement,
    prompt_digest,
    version_tuple,
)
from lineage_es.importers.claude_session_state import FileState, with_facts
from lineage_es.importers.ledger import Found, ImportReport, Progress, Timed
from lineage_es.importers.lines import (
    BAD_SIDECAR,
    NOT_JSON,
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
    from lineage_es.importers.claude_layout import SessionFiles
    from lineage_es.importers.claude_projects import _Import

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

#: Seconds a session file with no complete row yet holds its agents' files back for,
#: counted from its last write.
HEADLESS_WAIT = 300

_TAIL_CHECK = 32
_SESSION_ID = b'"sessionId":"'
#: The queue entry of a line that may start another session (:func:`_next_session`).
_NEXT_SESSION = b"\0session"
_EARLIEST = datetime.min.replace(tzinfo=UTC)


@dataclass
class SessionOutcome:
    """What reading one session gave: its observations, the bytes it read (``advanced`` of
    them in whole regions), its ledger entries and state, and its share of the report."""

    key: str
    timed: list[Timed]
    bytes: int
    advanced: int
    entries: dict[str, dict[str, Any]]
    state: dict[str, Any]
    report: ImportReport


class SessionReader(Placement, Fileless):
    """Reads one session's changed files and makes their observations (its state is declared
    in :class:`~.claude_session_state.SessionState`)."""

    def __init__(self, run: _Import, group: SessionFiles, progress: Progress) -> None:
        self.run = run
        self.group = group
        self.ledger = run.ledger
        self.progress = progress
        self.report = ImportReport(HOST, run.report.folder)
        self.skips = self.report.skipped
        self.entries = {}
        self.bytes = 0
        self.advanced = 0
        state = self.ledger.group(group.key)
        main = group.main
        # A session file read for the first time starts the session's reading afresh, unless
        # its agents' files were read without it (its root goes on from where they ended).
        fresh = main is not None and self.ledger.entry(main.rel) is None
        restart = main is not None and (
            (fresh and not state.get("fileless"))
            or (not fresh and not self.ledger.unchanged(main) and self._rewritten(main))
        )
        self.meaning = RowMeaning() if restart else RowMeaning.from_state(state.get("meaning", {}))
        if restart:
            state = {}
        self.background = set(state.get("background") or ())
        self.timed = []
        self.files = []
        self.seen = set()
        self.spawns = Spawns(calls=load_calls(state.get("calls")))
        self.unplaced = []
        self.ended = load_later(state.get("ended"))
        self.own = load_own(state.get("own"))
        self.kinds = {}
        self.held = list(state.get("held") or ())
        self.released = set()
        self.agent_ids = {agent_of(found) for found in [*group.agents, *group.strays]}
        self.waited = state.get("waited")
        self.fileless_stop = parse_time(state.get("fileless"))
        self.fileless_on = None
        self.fileless_from = parse_time(state.get("fileless_from"))

    # -- driving ----------------------------------------------------------------------------

    def read(self) -> SessionOutcome:
        group = self.group
        session = group.key.rsplit("/", 1)[-1]
        if group.main is not None:
            self._read_file(group.main, 0, "main", session)
        # A session file with no row yet (empty, or its first line still being written)
        # holds its agents' files back until one of the session's files changes: they are
        # read with the session's first rows, not before them (the session's root would
        # start at its agents' first rows). An import that finds nothing changed holds them
        # back again, as the one before did; once the file has not been written for
        # HEADLESS_WAIT, its first row is not coming and its agents' files speak for the
        # root alone (:mod:`.claude_fileless`).
        files = self._fingerprint()
        waiting = (
            self._headless_main()
            and self._main_written_lately()
            and (not self.waited or self.waited == files)
        )
        if not waiting:
            self._fileless_goes_on()
        for rank, found in enumerate(sorted(group.agents, key=lambda f: f.rel), start=1):
            if waiting:
                break
            kind = "agent" if nested_session(found.rel) is not None else "flat"
            self._read_file(found, rank, kind, session)
        self._release_held()
        self._place_again()
        self._place_starts()
        self._acting_after_stops()
        self._start_fileless()
        self._end_fileless()
        self._hold_fileless_root()
        held = self._hold_back()
        open_calls = set(self.meaning.open_spawns()) - set(self.spawns.spawned)
        state = {
            "meaning": self.meaning.state(),
            "background": sorted(self.background),
            "calls": calls_state(self.spawns.calls, open_calls),
            **self._ended(),
            "held": held,
            "waited": files if waiting else None,
            "fileless": self.fileless_stop.isoformat() if self.fileless_stop else None,
            "fileless_from": self.fileless_from.isoformat() if self.fileless_from else None,
        }
        timed = [item for item in self.timed if item[3].facts]
        return SessionOutcome(
            group.key, timed, self.bytes, self.advanced, self.entries, state, self.report
        )

    def _main_written_lately(self) -> bool:
        """Whether the session file was written within :data:`HEADLESS_WAIT` of now: the
        host writes a session's first row before any agent's, so one still without it
        after that was left unfinished."""
        main = self.group.main
        return main is not None and time.time_ns() - main.mtime < HEADLESS_WAIT * 1e9

    def _fingerprint(self) -> dict[str, list[int]]:
        """The size and time of each of the session's files (what a wait waits to change)."""
        group = self.group
        files = [f for f in [group.main, *group.agents] if f is not None]
        return {f.rel: [f.size, f.mtime] for f in sorted(files, key=lambda f: f.rel)}

    def _read_file(self, found: Found, rank: int, kind: str, session: str) -> None:
        if self.ledger.unchanged(found):
            return
        if found.size > self.run.max_bytes:
            self.skips[TOO_LARGE] += 1
            return
        entry = dict(self.ledger.entry(found.rel) or {})
        if entry and self._rewritten(found):
            entry = {}
        file = FileState(found, rank, kind, int(entry.get("offset", 0)))
        file.root = entry.get("root") or (session if kind == "main" else None)
        file.speaker = entry.get("speaker")
        file.at = parse_time(entry.get("at"))
        file.stop = parse_time(entry.get("stop"))
        # What the rows read before said, up to when (a ledger written before it kept this
        # knew no better than the file's last time).
        file.latest = parse_time(entry["latest"] if "latest" in entry else entry.get("at"))
        # A file read before that gave no row yet (empty, its first line torn, or only rows
        # that name no session) still has its first row to come: it starts, not resumes.
        file.needs_head = file.speaker is None
        file.resume = not file.needs_head
        file.legacy = bool(entry.get("legacy"))
        file.progress_rows = bool(entry.get("progress_rows"))
        file.internal = bool(entry.get("internal"))
        file.owns = set(entry.get("owns") or ())
        file.unkeyed = entry.get("unkeyed")
        if kind != "main":
            file.agent = entry.get("agent") or agent_of(found)
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
                file.said = file.latest
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

    def _put_entry(self, file: FileState, end: int, check: bytes) -> None:
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
            "latest": file.said.isoformat() if file.said else None,
            "legacy": file.legacy,
            "progress_rows": file.progress_rows,
            "owns": sorted(file.owns),
        }
        if file.kind != "main":
            entry |= {"agent": file.agent, "session": file.root, "internal": file.internal}
            entry["unkeyed"] = file.unkeyed
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

    def _region(self, file: FileState, region: Region) -> None:
        self._marked(file, region)
        if not file.internal:
            count_bad_lines(region.data, self.skips)

    def _marked(self, file: FileState, region: Region) -> None:
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

        def next_session(after: int) -> None:
            line = _next_session(data, after, file.speaker) if file.kind == "main" else None
            if line is not None:
                heapq.heappush(queue, (*line, _NEXT_SESSION))

        for marker in self._watch(file):
            look(marker, pos)
        next_session(pos)
        parsed = -1
        while queue:
            start, end, marker = heapq.heappop(queue)
            watched = self._watch(file)
            if marker and marker != _NEXT_SESSION:
                if marker not in watched:
                    scheduled.pop(marker, None)
                    continue
                look(marker, end)
            if start != parsed:
                parsed = start
                self._line(file, base + start, data[start:end])
                for new in self._watch(file) - watched:
                    if new not in scheduled:
                        look(new, end)
            if marker == _NEXT_SESSION:
                next_session(end)  # a session after the one this line started

    def _watch(self, file: FileState) -> set[bytes]:
        """What else to look for, given what was read so far: the results of open spawn
        calls, notices while background agents run, and 2.1.3x progress rows."""
        markers = {b'"tool_use_id":"' + key.encode() + b'"' for key in self.meaning.open_spawns()}
        if self.background:
            markers.add(b"<task-notification>")
        if file.progress_rows:
            markers.add(b'"agent_progress"')
        return markers

    def _line(self, file: FileState, offset: int, raw: bytes) -> None:
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

    def _release(self, file: FileState) -> None:
        held, file.held = file.held, []
        for offset, row in held:
            self._row(file, offset, row)

    def _row(self, file: FileState, offset: int, row: dict[str, Any]) -> None:
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

    def _main_row(self, file: FileState, offset: int, row: dict[str, Any]) -> None:
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
            if self.fileless_stop is not None and session == self.group.session:
                # Its agents' files were read without it, and their end stopped the root:
                # the root goes on from there, and this file's rows take over.
                self._resume(file, offset, row, session, self.fileless_stop)
                self.fileless_stop = None
        elif session != file.speaker:
            # Two sessions in one file (a recorder's concatenation of a /clear): the first
            # goes on to the second's first row, where the clear ended it (its stop at the
            # file's end in the last run was only where the file ended then).
            if file.resume:
                self._resume(file, offset, row, file.speaker)
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

    def _agent_row(self, file: FileState, offset: int, row: dict[str, Any]) -> None:
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
            file.nesting = not isinstance(version, str) or version_tuple(version) >= NESTING_SINCE
            file.prompt = prompt_digest(row)
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

    def _start(self, file: FileState, agent: str, root: str | None) -> Fact:
        meta: Mapping[str, Any] = {}
        path = file.found.path
        if path[: -len(".jsonl")] + ".meta.json" in self.run.sidecars:
            try:
                meta = read_meta(Path(path))
            except InputError:
                self.skips[BAD_SIDECAR] += 1
        return agent_start(meta, agent, root)

    # -- a file's last row --------------------------------------------------------------------

    def _last_row(self, file: FileState, chunks: Chunks) -> None:
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
            # they follow): the file stops at its last row, but no earlier than anything it
            # said (in this run or before). Not at a later row that said nothing: the stop
            # is the one an import of the whole file makes, wherever earlier imports cut it
            # (a stop taken back and made again earlier reads the same at every moment).
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

    def _stop(self, file: FileState, offset: int, row: dict[str, Any], at: datetime) -> None:
        """Stop the file's conversation at its last row, under a key of the row's own plus
        where it stands (a resumed session copies its old rows verbatim, and the copy of a
        row that stopped the file in an earlier run must stop it again): with the row's own
        facts, or apart when the stop comes later than the row (rows out of time order)."""
        assert file.speaker is not None
        stop: list[Fact] = [Stopped(conversation=file.speaker, provisional=True)]
        tag = "end" if file.kind == "main" else "own"
        suffix = f"stop@{offset}"
        index = file.emitted.get(offset)
        # A stop stamped before the resume that took the last run's stop back sorts after
        # it (the conversation went on, then stopped), dated at its row all the same.
        order = max(at, file.went_on) if file.went_on is not None else at
        if order != at or (index is not None and self.timed[index][0] != at):
            self._emit(
                file,
                offset,
                row,
                file.speaker,
                file.root,
                stop,
                at=order,
                key_suffix=suffix,
                last=True,
                tag=tag,
                dated=at,
            )
            return
        self._emit(file, offset, row, file.speaker, file.root, stop, at=at)
        index = file.emitted.get(offset)
        if index is None:
            return
        when, rank, place, observation = self.timed[index]
        key = f"{observation.key}:{suffix}"
        self.timed[index] = (when, rank, place, with_facts(observation, observation.facts, key))
        self.kinds[index] = tag

    # -- agents that go on after something stopped them -----------------------------------------

    def _acting_after_stops(self) -> None:
        """An agent stopped by another file's row (its parent's result or notification, the
        root's last row) that still writes rows later acts again at the first such row."""
        stops: dict[str, list[datetime]] = {}
        root_end: datetime | None = None
        for index, (order, _, _, observation) in enumerate(self.timed):
            tag = self.kinds.get(index, "")
            when = observation.at or order  # a stop's own time, wherever it sorts
            for fact in observation.facts:
                if not isinstance(fact, Stopped):
                    continue
                target = fact.conversation or self.spawns.spawned.get(fact.spawn_key or "")
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

    def _act_again(self, file: FileState, times: list[datetime]) -> None:
        """Observe the agent acting at its first row after each of ``times``, no later than
        its file's stop (rows are not always in time order: a row stamped after the file's
        last one would leave the agent live past its own end)."""
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
                    when = min(at, file.last_at) if file.last_at else at
                    self._emit(file, here, row, agent, file.root, [Acted(agent)], at=when)
        except OSError:
            return


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


def _next_session(data: bytes, pos: int, session: str | None) -> tuple[int, int] | None:
    """The first line from ``pos`` whose ``sessionId`` is not ``session``'s, as (start, end)
    in ``data``: a second session in the file (a recorder's concatenation of a ``/clear``)
    starts at its own first row, which no other marker may point to. Checked first by the
    region's last line naming a session, so a region of one session costs one short search;
    a line naming ``session`` too (a fork's ``forkedFrom``) is the session's own."""
    if session is None:
        return None
    mine = _SESSION_ID + session.encode() + b'"'
    last = data.rfind(_SESSION_ID, pos)
    if last < 0 or data.find(mine, data.rfind(b"\n", 0, last) + 1, len(data)) >= 0:
        return None
    at = data.find(_SESSION_ID, pos)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.index(b"\n", at) + 1
        if data.find(mine, start, end) < 0:
            return start, end
        at = data.find(_SESSION_ID, end)
    return None


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
