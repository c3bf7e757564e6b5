"""Read one Claude Code session's files and make their observations.

What rows mean is :class:`~lineage_es.hosts.claude_rows.RowMeaning`'s business, as for
``lineage ingest``; this module decides which rows to look at: in each file its first row (a
root is seen, an agent starts) and its last timed one (it stops), and the lines a marker points
to (:mod:`.claude_markers`). Files of Claude Code before 2.1 (inline subagents, results
without ``agentId``) and any file not in the host's compact JSON are parsed whole. A line no
marker points to is never parsed; one that cannot be a row is still counted, by its shape (a
row is a JSON object on one line: a line that does not begin with ``{`` and end with ``}`` is
parsed to say why, :func:`~.lines.count_bad_lines`). The type of a row no marker points to is
not checked.

Each file's start and stop come from its first and last rows, and an agent still writing
after something stopped it (its parent's result, the root's last row) acts again at its next
row (:mod:`.claude_file_stops`). Where an agent starts is placed by :mod:`.claude_placement`;
a child no file of its own speaks for starts at its call. What an import leaves the next about
files still being written is :mod:`.claude_carryover`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from lineage_es.errors import InputError
from lineage_es.facts import Acted, ChildStarted, Fact, RootSeen, SessionEnded
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude import HOST, is_internal_agent
from lineage_es.hosts.claude_agent_files import agent_start, read_meta
from lineage_es.hosts.claude_agents import NESTING_SINCE, Spawns, prompt_digest, version_tuple
from lineage_es.hosts.claude_rows import (
    AGENT_PROGRESS_BYTES,
    TASK_NOTIFICATION_BYTES,
    RowMeaning,
    is_forked_copy,
    is_inline_sidechain,
    is_known_row,
    is_timed,
    is_warmup,
    launched_agent,
    result_bytes,
    row_agent,
    row_session,
    row_time,
    row_uuid,
    row_version,
)
from lineage_es.importers.claude_carryover import calls_state, load_calls, load_later, load_own
from lineage_es.importers.claude_file_stops import FileStops
from lineage_es.importers.claude_fileless import Fileless
from lineage_es.importers.claude_layout import agent_of, nested_session
from lineage_es.importers.claude_markers import (
    mirrors_progress_rows,
    parse_marked_lines,
    parsed_whole,
)
from lineage_es.importers.claude_placement import Placement
from lineage_es.importers.claude_session_state import FileState, SessionContext
from lineage_es.importers.ledger import TAIL_CHECK_BYTES, tail_before
from lineage_es.importers.lines import (
    BAD_SIDECAR,
    NOT_JSON,
    TOO_LARGE,
    UNKNOWN_TYPE,
    UNREADABLE,
    Chunks,
    Region,
    count_bad_lines,
    looks_like_object,
    why_bad,
)
from lineage_es.importers.report import ImportReport, Progress

if TYPE_CHECKING:
    from lineage_es.importers.claude_layout import SessionFiles
    from lineage_es.importers.driver import Timed
    from lineage_es.importers.walk import Found


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


class SessionReader(Placement, Fileless, FileStops):
    """Reads one session's changed files and makes their observations (its state is declared
    in :class:`~.claude_session_state.SessionState`)."""

    def __init__(self, context: SessionContext, group: SessionFiles, progress: Progress) -> None:
        self.context = context
        self.group = group
        self.ledger = context.ledger
        self.progress = progress
        self.report = ImportReport(HOST, context.folder)
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
        waited = self._agent_files_held_back()
        waiting = waited is not None
        if not waiting:
            self._fileless_goes_on()
        for rank, found in enumerate(sorted(group.agents, key=lambda f: f.rel), start=1):
            if waiting:
                break
            kind = "agent" if nested_session(found.rel) is not None else "flat"
            self._read_file(found, rank, kind, session)
        self._observe_held_back()
        self._place_again()
        self._place_starts()
        self._acting_after_stops()
        self._start_fileless()
        self._end_fileless()
        self._hold_fileless_root()
        held = self._hold_back_for_headless()
        open_calls = set(self.meaning.open_spawns()) - set(self.spawns.spawned)
        state = {
            "meaning": self.meaning.state(),
            "background": sorted(self.background),
            "calls": calls_state(self.spawns.calls, open_calls),
            **self._stopped_at_file_ends(),
            "held": held,
            "waited": waited,
            "fileless": self.fileless_stop.isoformat() if self.fileless_stop else None,
            "fileless_from": self.fileless_from.isoformat() if self.fileless_from else None,
        }
        timed = [item for item in self.timed if item[3].facts]
        return SessionOutcome(
            group.key, timed, self.bytes, self.advanced, self.entries, state, self.report
        )

    def _read_file(self, found: Found, rank: int, kind: str, session: str) -> None:
        """Read a changed file of the session from where the last import left it (from its
        start when it was replaced since) and keep its new ledger entry."""
        if self.ledger.unchanged(found):
            return
        if found.size > self.context.max_file_bytes:
            self.skips[TOO_LARGE] += 1
            return
        entry = dict(self.ledger.entry(found.rel) or {})
        if entry and self._rewritten(found):
            entry = {}
        file = FileState.from_entry(found, rank, kind, entry, session)
        if file.internal:
            self.entries[found.rel] = file.ledger_entry(found.size, b"")
            return
        try:
            with open(found.path, "rb") as stream:
                stream.seek(file.start)
                chunks = Chunks(stream, file.start, self.skips)
                for region in chunks:
                    self._read_region(file, region)
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
                self._stop_at_last_row(file, chunks)
                check = b""
                if end and not file.internal:
                    stream.seek(end - min(end, TAIL_CHECK_BYTES))
                    check = stream.read(min(end, TAIL_CHECK_BYTES))
        except OSError:
            self.skips[UNREADABLE] += 1
            return
        self.bytes += end - file.start
        self.report.read += 1
        self.report.bytes += end - file.start
        if chunks.partial and not file.internal:
            self.report.partial += 1
        self.files.append(file)
        self.entries[found.rel] = file.ledger_entry(end, check)

    def _rewritten(self, found: Found) -> bool:
        """Whether a file read before was replaced rather than appended to: it shrank, or
        the bytes before the saved offset are not the ones read then (a file that cannot be
        read now is taken as appended to: reading it will say it is unreadable)."""
        entry = self.ledger.entry(found.rel)
        if entry is None:
            return True
        offset = int(entry.get("offset", 0))
        if found.size < offset:
            return True
        check = bytes.fromhex(entry.get("check") or "")
        if not check:
            return False
        tail = tail_before(found.path, offset)
        return tail is not None and tail != check

    # -- which lines to parse -----------------------------------------------------------------

    def _read_region(self, file: FileState, region: Region) -> None:
        """Parse the lines of ``region`` that matter and count those that cannot be rows."""
        self._parse_marked_lines(file, region)
        if not file.internal:
            count_bad_lines(region.data, self.skips)

    def _parse_marked_lines(self, file: FileState, region: Region) -> None:
        """Parse every line until the file's first row is known, and in files parsed whole;
        past that, only the lines a marker points to
        (:func:`~.claude_markers.parse_marked_lines`)."""
        data, base, pos = region.data, region.offset, 0
        while pos < len(data) and (file.needs_head or file.resume or file.legacy):
            end = data.index(b"\n", pos) + 1
            self._parse_line(file, base + pos, data[pos:end])
            pos = end
            if file.internal:
                return
        if pos >= len(data):
            return

        def parse(start: int, end: int) -> None:
            self._parse_line(file, base + start, data[start:end])

        def speaker() -> str | None:
            return file.speaker

        parse_marked_lines(
            data,
            pos,
            watched=lambda: self._watched_markers(file),
            parse=parse,
            speaker=speaker if file.kind == "main" else None,
        )

    def _watched_markers(self, file: FileState) -> set[bytes]:
        """What else to look for, given what was read so far: the results of open spawn
        calls, notices while background agents run, and 2.1.3x progress rows."""
        markers = {result_bytes(key) for key in self.meaning.open_spawns()}
        if self.background:
            markers.add(TASK_NOTIFICATION_BYTES)
        if file.progress_rows:
            markers.add(AGENT_PROGRESS_BYTES)
        return markers

    def _parse_line(self, file: FileState, offset: int, raw: bytes) -> None:
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
        if not is_known_row(row):
            self.skips[UNKNOWN_TYPE] += 1
            file.unknown.add(offset)
            return
        uuid = row_uuid(row)
        if uuid is not None:
            if uuid in self.seen:  # rows repeat (HOSTS.md 1.4, quirk 5)
                return
            self.seen.add(uuid)
        version = row_version(row)
        if file.needs_head and version is not None:
            file.legacy = parsed_whole(version, raw)
            file.progress_rows = mirrors_progress_rows(version)
        at = row_time(row)
        if at is None and file.at is None and file.needs_head and len(file.held) < 64:
            file.held.append((offset, row))  # leading rows take the file's first time
            return
        file.at = at or file.at
        self._release_untimed_rows(file)
        self._observe_row(file, offset, row)

    def _release_untimed_rows(self, file: FileState) -> None:
        held, file.held = file.held, []
        for offset, row in held:
            self._observe_row(file, offset, row)

    def _observe_row(self, file: FileState, offset: int, row: dict[str, Any]) -> None:
        agent = launched_agent(row)
        if agent is not None and not is_internal_agent(agent):
            self.background.add(agent)
        if file.kind == "main":
            self._observe_session_row(file, offset, row)
        else:
            self._observe_agent_row(file, offset, row)

    # -- what rows mean -------------------------------------------------------------------------

    def _observe_session_row(self, file: FileState, offset: int, row: dict[str, Any]) -> None:
        session = row_session(row)
        if not session:
            return  # it belongs to the next session, which it does not name
        found: list[Fact] = []
        if is_forked_copy(row):
            pass  # history copied from the session it was forked from: not this one's doing
        elif is_inline_sidechain(row):
            found = self.meaning.inline_child(row, session)
        else:
            found = self.meaning.facts(row, session)
        facts: list[Fact] = []
        if file.speaker is None:
            source = "fork" if is_forked_copy(row) else "transcript"
            facts.append(RootSeen(session, source=source))
            self.report.roots.add(session)
            if self.fileless_stop is not None and session == self.group.session:
                # Its agents' files were read without it, and their end stopped the root:
                # the root goes on from there, and this file's rows take over.
                self._resume_session(file, offset, row, session, self.fileless_stop)
                self.fileless_stop = None
        elif session != file.speaker:
            # Two sessions in one file (a recorder's concatenation of a /clear): the first
            # goes on to the second's first row, where the clear ended it (its stop at the
            # file's end in the last run was only where the file ended then).
            if file.resume:
                self._resume_session(file, offset, row, file.speaker)
            ended: list[Fact] = [SessionEnded(file.speaker)]
            self._observe_at_row(
                file, offset, row, file.speaker, file.speaker, ended, key_suffix="end"
            )
            facts.append(RootSeen(session, source="clear"))
            self.report.roots.add(session)
            self.ended.clear()
        elif file.resume:
            if found or is_timed(row):
                self._resume_session(file, offset, row, session)
            else:
                # A row with no time (a title, a mode) is written again after every turn,
                # so it is no new row to hang the resume on: the next timed row is.
                return
        file.needs_head = file.resume = False
        file.speaker = file.root = session
        file.owns.add(session)
        facts.extend(found)
        self._observe_at_row(file, offset, row, session, session, facts)

    def _observe_agent_row(self, file: FileState, offset: int, row: dict[str, Any]) -> None:
        agent = row_agent(row) or file.agent
        if agent is None:
            return
        root = row_session(row) or file.root
        facts: list[Fact] = []
        if file.needs_head:
            file.needs_head = False
            if is_internal_agent(agent) or is_warmup(row):
                file.internal = True  # Claude Code's own helpers: never children
                self.report.internal += 1
                return
            file.agent = file.speaker = agent
            file.root = root
            version = row_version(row)
            file.nesting = version is None or version_tuple(version) >= NESTING_SINCE
            file.prompt = prompt_digest(row)
            start = self._agent_start(file, agent, root)
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
        self._observe_at_row(file, offset, row, agent, root, facts)

    def _agent_start(self, file: FileState, agent: str, root: str | None) -> Fact:
        meta: Mapping[str, Any] = {}
        path = file.found.path
        if path[: -len(".jsonl")] + ".meta.json" in self.context.sidecars:
            try:
                meta = read_meta(Path(path))
            except InputError:
                self.skips[BAD_SIDECAR] += 1
        return agent_start(meta, agent, root)

    # -- a file's last row --------------------------------------------------------------------

    def _stop_at_last_row(self, file: FileState, chunks: Chunks) -> None:
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
            if not is_known_row(row):
                if offset not in file.unknown:  # not counted when a marker found it
                    self.skips[UNKNOWN_TYPE] += 1
                continue
            at = row_time(row)
            if at is None:
                continue
            # Rows are not always in time order (attachments are stamped before the prompt
            # they follow): the file stops at its last row, but no earlier than anything it
            # said (in this run or before). Not at a later row that said nothing: the stop
            # is the one an import of the whole file makes, wherever earlier imports cut it
            # (a stop taken back and made again earlier reads the same at every moment).
            at = max(at, file.latest or at)
            session = row_session(row)
            if file.kind == "main" and session is not None and session != file.speaker:
                # A second session in the file that no marked row showed (a recorder's
                # concatenation of a /clear): it starts here, at the latest.
                self._observe_session_row(file, offset, row)
            self._observe_file_stop(file, offset, row, at)
            file.last_at = file.at = at
            if file.kind == "main":
                file.stop = at
            return
