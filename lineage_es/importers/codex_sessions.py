"""Import a Codex sessions folder (``~/.codex/sessions``) into the journal.

Layout (HOSTS.md 2.3): ``YYYY/MM/DD/rollout-<local time>-<threadId>.jsonl``, possibly
compressed (``.jsonl.zst``); continuation files ``…-<threadId>_<rolloutId>.jsonl`` start with
``history_base`` and carry on their thread. What rows mean is
:class:`~lineage_es.hosts.codex_rollout.RolloutReader`'s business, as for ``lineage ingest``:
only the first ``session_meta`` of a file is authoritative, forked children copy their
parent's, review and guardian threads are not delegation.

Each line is looked at in its first bytes and parsed only when it can carry a lineage fact
(:mod:`~lineage_es.hosts.codex_rows` tells which). Every file's observations are journaled
together in the host's time order, so a parent's spawn comes before the child's own header,
whichever file holds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from lineage_es.errors import InputError
from lineage_es.facts import Acted, ChildIdentified, Fact, Observation, RootSeen, Stopped
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.codex import HOST
from lineage_es.hosts.codex_rollout import RolloutReader, RolloutThread, continuation_state
from lineage_es.hosts.codex_rows import (
    is_compact,
    is_header,
    is_known_row,
    is_timed_line,
    may_carry_fact,
    row_time,
    whole_row_kind,
)
from lineage_es.importers.codex_carryover import Carry, GoesOn, Stop
from lineage_es.importers.driver import Batch, ImportRun, Plan, Timed, import_history
from lineage_es.importers.ledger import Ledger, tail_before
from lineage_es.importers.lines import (
    BAD_FIELDS,
    CORRUPT,
    MAX_FILE_BYTES,
    NOT_JSON,
    NOT_OBJECT,
    TOO_LARGE,
    UNKNOWN_TYPE,
    UNREADABLE,
    Skips,
    damaged,
    is_compressed,
    open_binary,
    read_lines,
)
from lineage_es.importers.report import SILENT, ImportReport, Progress
from lineage_es.importers.walk import Found, history_folder

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

DEFAULT_FOLDER = Path("~/.codex/sessions")

#: Where Codex moves an archived thread's rollout: a folder beside ``sessions``.
ARCHIVE_FOLDER = "archived_sessions"

#: A line that begins a row but does not parse: cut off mid-write (a crash, a full disk) and,
#: in the middle of a file, followed by the next row on a line of its own or on the same one.
TORN = "torn line (a row cut off mid-write)"

_CONTINUATION = re.compile(
    r".*-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})_[^/]+"
    r"\.jsonl(\.zst)?"
)


def import_codex(
    engine: Engine,
    folder: Path | None = None,
    *,
    reconcile_gone: bool = False,
    progress: Progress = SILENT,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ImportReport:
    """Import every rollout under ``folder`` (default ``~/.codex/sessions``) that changed
    since the last import into ``engine``; with ``reconcile_gone``, delete (as ``gc``) the
    threads whose rollout files are gone."""
    root = history_folder(folder, DEFAULT_FOLDER)
    return import_history(
        engine,
        HOST,
        root,
        _plan_rollouts,
        wanted=_is_rollout,
        reconcile_gone=reconcile_gone,
        moved_to=_archive_beside(root) if reconcile_gone else (),
        progress=progress,
        max_file_bytes=max_file_bytes,
    )


def _is_rollout(name: str) -> bool:
    return name.endswith((".jsonl", ".jsonl.zst"))


def _archive_beside(root: Path) -> list[Path]:
    """Where Codex moves an archived thread's rollout, flat: ``archived_sessions`` beside
    ``sessions`` (a move there is no delete, imported from there yet or not)."""
    archive = root.parent / ARCHIVE_FOLDER
    return [archive] if root.name == "sessions" and archive.is_dir() else []


def _plan_rollouts(run: ImportRun, found: list[Found]) -> Plan:
    """Read the rollouts that changed, continuations after the files they continue and
    otherwise in name (creation) order, as one batch."""
    ledger = run.ledger
    changed = [f for f in found if not ledger.unchanged(f)]
    changed.sort(key=lambda f: (_continued_thread(f) is not None, f.rel))
    total = sum(
        f.size - ledger.resume_offset(f, resumable=not f.rel.endswith(".zst")) for f in changed
    )
    return Plan(total, _read_rollouts(run, changed))


def _read_rollouts(run: ImportRun, changed: list[Found]) -> Iterator[Batch]:
    """Every changed rollout read, with what the carryover takes on again, as one batch; once
    it is journaled, the carryover notes what it stopped and keeps that in the ledger."""
    ledger, report = run.ledger, run.report
    timed: list[Timed] = []
    stops: list[Stop] = []
    going: list[GoesOn] = []
    for rank, item in enumerate(changed):
        if item.size > run.max_file_bytes:
            report.skipped[TOO_LARGE] += 1
            continue
        rollout = _Rollout(ledger, report, item, rank)
        timed.extend(rollout.read(run.progress))
        stops.extend(rollout.stops)
        going.extend(rollout.going)
    carry = Carry(ledger)
    timed.extend(carry.go_on(going, timed))

    def journaled(before: int) -> None:
        carry.note(run.engine, before, timed, stops)
        carry.save()

    yield Batch(timed, journaled)


def _continued_thread(found: Found) -> str | None:
    """The thread a continuation file carries on (``…-<threadId>_<rolloutId>.jsonl``)."""
    match = _CONTINUATION.fullmatch(found.rel.rsplit("/", 1)[-1])
    return match.group(1) if match else None


@dataclass
class _Rollout:
    """One rollout file being read from where the last import stopped."""

    ledger: Ledger
    report: ImportReport
    found: Found
    rank: int
    timed: list[Timed] = field(default_factory=list)
    emitted: dict[int, int] = field(default_factory=dict)
    owns: set[str] = field(default_factory=set)
    #: The provisional stop this read made at the file's end (the carryover's business).
    stops: list[Stop] = field(default_factory=list)
    #: The file goes on after a provisional stop an earlier import made.
    going: list[GoesOn] = field(default_factory=list)
    roots: set[str] = field(default_factory=set)
    subagents: set[str] = field(default_factory=set)

    def read(self, progress: Progress) -> list[Timed]:
        found = self.found
        entry = dict(self.ledger.entry(found.rel) or {})
        path = Path(found.path)
        compressed = is_compressed(path)
        if entry and (compressed or self._rewritten(entry)):
            entry = {}  # a compressed file is read again whole: it cannot be resumed inside
        self.reader = RolloutReader(found.path)
        thread = _continued_thread(found)
        if entry:
            self.reader.restore(entry.get("state") or {})
        elif thread is not None:
            self.reader.restore(self.ledger.group(f"thread:{thread}") or continuation_state(thread))
        self.owns = set(entry.get("owns") or ())
        start = int(entry.get("offset", 0))
        # After a turn's end, the next row resumes the thread at its own time; an entry
        # without the flag resumes it at its next row, whatever stopped it.
        self.resume = bool(entry.get("resume", True)) if entry else thread is not None
        #: When the file's last row read stopped its thread only because the file ended.
        self.stop: str | None = entry.get("stop") if entry else None
        #: Whether the file is not in Codex's compact JSON: then every line is parsed.
        self.loose: bool | None = bool(entry.get("loose")) if entry else None
        skips: Skips = self.report.skipped
        offset, number = start, int(entry.get("line", 0))
        #: The thread's last timed line read and the one before it, neither found bad.
        self.last: tuple[int, int, bytes] | None = None
        self.prior: tuple[int, int, bytes] | None = None
        partial = False
        try:
            with open_binary(path) as stream:
                if start:
                    stream.seek(start)
                for raw, size, complete in read_lines(stream, skips):
                    if not complete:
                        partial = True
                        break
                    here, offset, number = offset, offset + size, number + 1
                    progress.advance(size)
                    if raw and raw.strip():
                        if self.loose is None:
                            self.loose = not is_compact(raw)
                        timed_row = is_timed_line(raw)
                        if timed_row and self.stop is not None:
                            self._take_thread_on(raw, here)
                        self.bad = False
                        if self._may_carry_fact(raw):
                            self._parse_line(number, raw, skips)
                        else:
                            self.reader.in_header = False
                        if timed_row and not self.bad:
                            self.prior, self.last = self.last, (here, number, raw)
                cut = compressed and damaged(stream)
                self._stop_at_last_row(
                    self.reader.thread, self.reader.delegation, number, final=True
                )
        except OSError:
            skips[UNREADABLE] += 1
            return []
        if cut:
            skips[CORRUPT] += 1  # cut off or garbled: what came before the damage is kept
        elif partial:
            self.report.partial += 1
        self.report.roots |= self.roots
        self.report.subagents |= self.subagents
        self.report.read += 1
        self.report.bytes += offset - start
        state = self.reader.state()
        tid = (state.get("thread") or {}).get("id")
        if isinstance(tid, str):
            self.owns.add(tid)
            self.ledger.put_group(f"thread:{tid}", state)
        check = b"" if compressed else tail_before(found.path, offset) or b""
        self.ledger.put(
            found.rel,
            {
                "kind": "rollout",
                "size": found.size,
                "mtime": found.mtime,
                "offset": offset,
                "line": number,
                "check": check.hex(),
                "state": state,
                "owns": sorted(self.owns),
                "resume": self.resume,
                "stop": self.stop,
                "loose": bool(self.loose),
            },
        )
        return self.timed

    def _take_thread_on(self, raw: bytes, here: int) -> None:
        """The file goes on after the row where the last import stopped its thread (the
        file had only ended there): the carryover takes the thread on from that moment."""
        stop, self.stop = parse_time(self.stop), None
        thread = self.reader.thread
        if stop is None or thread is None or not self.reader.delegation:
            return
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:
            row = None
        at = row_time(row) if isinstance(row, dict) else None
        key = payload_key(row) if isinstance(row, dict) else f"{self.found.rel}@{here}"
        root = thread.root or thread.id
        self.going.append(GoesOn(thread.id, root, stop, at, key, self.rank))

    def _rewritten(self, entry: dict[str, Any]) -> bool:
        offset = int(entry.get("offset", 0))
        if self.found.size < offset:
            return True
        check = bytes.fromhex(entry.get("check") or "")
        return bool(check) and tail_before(self.found.path, offset) != check

    def _may_carry_fact(self, raw: bytes) -> bool:
        """Whether a line can carry a lineage fact, judged from its first bytes."""
        reader = self.reader
        thread = reader.thread
        if thread is None or thread.copying or self.resume or self.loose:
            return True
        kind = whole_row_kind(raw)
        if kind is None:
            # Not a row of a known type, or not a whole one: parsed, to count it by its fault.
            self._parse_line(0, raw, self.report.skipped, observe=False)
            return False
        return may_carry_fact(kind, raw, thread.spawn_calls, is_child=thread.is_child)

    def _parse_line(self, number: int, raw: bytes, skips: Skips, *, observe: bool = True) -> None:
        """Parse a line and, unless it is bad (counted in ``skips`` by its fault), observe
        it; with ``observe`` false, only count it when it is bad."""
        try:
            row = orjson.loads(raw)
        except orjson.JSONDecodeError:
            skips[TORN if raw.lstrip().startswith(b"{") else NOT_JSON] += 1
            self.bad = True  # no row to stop its thread at
            return
        if not isinstance(row, dict):
            skips[NOT_OBJECT] += 1
            self.bad = True
            return
        if not is_known_row(row):
            skips[UNKNOWN_TYPE] += 1
            return
        if not observe:
            return
        before, delegation = self.reader.thread, self.reader.delegation
        try:
            observation = self.reader.observe(row, number)
        except InputError:
            skips[BAD_FIELDS] += 1
            return
        if before is not None and self.reader.thread is not before:
            # Two rollouts in one file (as recorders keep them): the first ends here.
            self._stop_at_last_row(before, delegation, number)
            self.last = self.prior = None  # the next one's rows are its own
        if observation is None:
            if not self.reader.delegation:
                self.resume = False  # a review or guardian thread: nothing to resume
            return
        facts = observation.facts
        header = is_header(row)
        if not (header or self.resume or any(not isinstance(f, Acted) for f in facts)):
            return
        self.resume = False
        self._add_observation(number, observation)
        if Stopped(conversation=observation.requester) in facts:
            self.resume = True  # a child's turn ended: its next row, if any, resumes it

    def _stop_at_last_row(
        self, thread: RolloutThread | None, delegation: bool, number: int, *, final: bool = False
    ) -> None:
        """A thread's last row stops it (a resumed thread's next row starts it again); a
        child's turn ends already stop it, a root's do not. At the ``final`` end of what the
        file holds so far the stop is provisional: the file may go on. A thread this read took
        on again with no row of its own since (the next rollout of the file began, or only bad
        lines came) stops where the last import stopped it, as one import would stop it there;
        ``number`` is the line read last."""
        if thread is None or not delegation:
            return
        # Where the file holds nothing more yet, its end is no stop the host stated.
        stop = Stopped(conversation=thread.id, provisional=final)
        found = self._last_good_row()
        if found is not None:
            number, row, at = found
            index = self.emitted.get(number)
            if index is not None:
                when, rank, line, earlier = self.timed[index]
                if any(_stops_thread(fact, thread.id) for fact in earlier.facts):
                    return  # stopped by the row itself (a child's turn end): no file end stops it
                observation = replace(earlier, facts=(*earlier.facts, stop))
                self.timed[index] = (when, rank, line, observation)
            else:
                observation = self._stop_observation(thread, payload_key(row), stop, at)
                self._add_observation(number, observation)
        else:
            going = next((g for g in self.going if g.thread == thread.id), None)
            if going is None:
                return
            at = going.stop
            observation = self._stop_observation(thread, f"{going.key}:stop", stop, at)
            self.timed.append((at, self.rank, number, observation))  # after the take-back
        if final:
            self.stop = at.isoformat()
            self.stops.append(Stop(thread.id, thread.root or thread.id, at, observation))

    def _last_good_row(self) -> tuple[int, dict[str, Any], datetime] | None:
        """The thread's last timed row that parses, with its line number and time. A line
        taken for a whole row unparsed (torn just where it closed an object) is counted and
        passed over for the one before it."""
        for candidate in (self.last, self.prior):
            if candidate is None:
                continue
            _, number, raw = candidate
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError:
                self.report.skipped[TORN if raw.lstrip().startswith(b"{") else NOT_JSON] += 1
                continue
            at = row_time(row) if isinstance(row, dict) else None
            if at is not None:
                return number, row, at
        return None

    def _stop_observation(
        self, thread: RolloutThread, key: str, stop: Stopped, at: datetime
    ) -> Observation:
        """An observation of ``thread`` stopping it alone (no other fact came from its row)."""
        return Observation(
            host=HOST,
            requester=thread.id,
            key=key,
            facts=(stop,),
            root=thread.root,
            workspace=thread.workspace,
            at=at,
        )

    def _add_observation(self, number: int, observation: Observation) -> None:
        for fact in observation.facts:
            if isinstance(fact, RootSeen):
                self.roots.add(fact.conversation)
                self.owns.add(fact.conversation)  # a file can hold two (a fork's recorder)
            elif isinstance(fact, ChildIdentified):
                self.subagents.add(fact.child)
                self.owns.add(fact.child)
        when = observation.at or datetime.fromtimestamp(self.found.mtime / 1e9, tz=UTC)
        self.emitted[number] = len(self.timed)
        self.timed.append((when, self.rank, number, observation))


def _stops_thread(fact: Fact, thread: str) -> bool:
    return isinstance(fact, Stopped) and fact.conversation == thread
