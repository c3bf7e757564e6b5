"""Import a Codex sessions folder (``~/.codex/sessions``) into the journal.

Layout (HOSTS.md 2.3): ``YYYY/MM/DD/rollout-<local time>-<threadId>.jsonl``, possibly
compressed (``.jsonl.zst``); continuation files ``…-<threadId>_<rolloutId>.jsonl`` start with
``history_base`` and carry on their thread. What rows mean is
:class:`~lineage_es.hosts.codex_rollout.RolloutReader`'s business, as for ``lineage ingest``:
only the first ``session_meta`` of a file is authoritative, forked children copy their
parent's, review and guardian threads are not delegation.

A Codex row names its kind in its first bytes (``{"timestamp":…,"type":…,"payload":{"type":…``),
so each line is looked at there and parsed only when it can carry a lineage fact: headers,
spawn, close and resume calls and the outputs of spawn calls, sub-agent activity, a child's
turn ends. Every file's observations are journaled together in the host's time order, so a
parent's spawn comes before the child's own header, whichever file holds them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from lineage_es.errors import InputError
from lineage_es.facts import Acted, ChildIdentified, Fact, Observation, RootSeen, Stopped
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.codex import HOST
from lineage_es.hosts.codex_rollout import RolloutReader, RolloutThread
from lineage_es.importers.codex_carryover import Carry, GoesOn, Stop
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

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

DEFAULT_FOLDER = Path("~/.codex/sessions")

#: Where Codex moves an archived thread's rollout: a folder beside ``sessions``.
ARCHIVE_FOLDER = "archived_sessions"

#: A line that begins a row but does not parse: cut off mid-write (a crash, a full disk) and,
#: in the middle of a file, followed by the next row on a line of its own or on the same one.
TORN = "torn line (a row cut off mid-write)"

#: Rollout line types (0.7x to 0.15x). Others are counted and passed over.
ROW_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "history_base"}
)

_ROW_TYPES = frozenset(kind.encode() for kind in ROW_TYPES)

#: Events that can carry a lineage fact, as they appear in a line's first bytes.
_EVENTS = (b'"sub_agent_activity"', b'"collab_agent_spawn_end"', b'"collab_close_end"')
#: A child's turn ends (they stop it until its next row).
_TURN_ENDS = (b'"task_complete"', b'"turn_aborted"')
_CALLS = (b"spawn_agent", b"close_agent", b"resume_agent")
_HEAD = 256
_TYPE = re.compile(rb'"type":"([^"]*)"')
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
    report = ImportReport(HOST, str(root))
    found = list(walk(root, lambda name: name.endswith((".jsonl", ".jsonl.zst")), report=report))
    report.files = len(found)
    ledger = Ledger(engine, HOST, root)
    changed = [f for f in found if not ledger.unchanged(f)]
    report.unchanged = len(found) - len(changed)
    # Continuations after the files they continue; otherwise in name (creation) order.
    changed.sort(key=lambda f: (_continued(f) is not None, f.rel))
    progress.begin(sum(f.size - _offset(ledger, f) for f in changed))
    timed: list[Timed] = []
    stops: list[Stop] = []
    going: list[GoesOn] = []
    for rank, item in enumerate(changed):
        if item.size > max_file_bytes:
            report.skipped[TOO_LARGE] += 1
            continue
        rollout = _Rollout(ledger, report, item, rank)
        timed.extend(rollout.read(progress))
        stops.extend(rollout.stops)
        going.extend(rollout.going)
    carry = Carry(ledger)
    timed.extend(carry.go_on(going, timed))
    before = engine.position()
    feed(engine, timed, report)
    carry.note(engine, before, timed, stops)
    carry.save()
    ledger.save()
    present = {f.rel for f in found}
    count_gone(ledger, present, report)
    if reconcile_gone:
        # Codex archives a thread by moving its rollout, flat, to ``archived_sessions``
        # beside ``sessions``: there it is no delete, imported from there yet or not.
        archive = root.parent / ARCHIVE_FOLDER
        moved_to = [archive] if root.name == "sessions" and archive.is_dir() else []
        reconcile(engine, ledger, present, report, moved_to=moved_to)
    return report


def _offset(ledger: Ledger, found: Found) -> int:
    """Where reading ``found`` will start (for the progress bar's length)."""
    entry = ledger.entry(found.rel)
    offset = int(entry.get("offset", 0)) if entry and not found.rel.endswith(".zst") else 0
    return offset if offset <= found.size else 0


def _continued(found: Found) -> str | None:
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
        thread = _continued(found)
        if entry:
            self.reader.restore(entry.get("state") or {})
        elif thread is not None:
            self.reader.restore(self.ledger.group(f"thread:{thread}") or _bare(thread))
        self.owns = set(entry.get("owns") or ())
        start = int(entry.get("offset", 0))
        # After a turn's end, the next row resumes the thread at its own time; an entry
        # older than that flag resumed it at its next row whatever stopped it.
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
                            self.loose = b'"type":"' not in raw
                        timed_row = b'"timestamp"' in raw[:_HEAD]
                        if timed_row and self.stop is not None:
                            self._goes_on(raw, here)
                        self.bad = False
                        if self._wanted(raw):
                            self._line(number, raw, skips)
                        else:
                            self.reader.in_header = False
                        if timed_row and not self.bad:
                            self.prior, self.last = self.last, (here, number, raw)
                cut = compressed and damaged(stream)
                self._last_row(self.reader.thread, self.reader.delegation, number, final=True)
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
        check = b"" if compressed else _tail(path, offset)
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

    def _goes_on(self, raw: bytes, here: int) -> None:
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
        at = parse_time(row.get("timestamp")) if isinstance(row, dict) else None
        key = payload_key(row) if isinstance(row, dict) else f"{self.found.rel}@{here}"
        root = thread.root or thread.id
        self.going.append(GoesOn(thread.id, root, stop, at, key, self.rank))

    def _rewritten(self, entry: dict[str, Any]) -> bool:
        offset = int(entry.get("offset", 0))
        if self.found.size < offset:
            return True
        check = bytes.fromhex(entry.get("check") or "")
        return bool(check) and _tail(Path(self.found.path), offset) != check

    def _wanted(self, raw: bytes) -> bool:
        """Whether a line can carry a lineage fact, judged from its first bytes."""
        reader = self.reader
        thread = reader.thread
        if thread is None or thread.copying or self.resume or self.loose:
            return True
        head = raw[:_HEAD]
        kind = _TYPE.search(head)
        if kind is None or kind.group(1) not in _ROW_TYPES or not _whole(raw):
            # Not a row of a known type, or not a whole one: parsed, to count it by its fault.
            self._line(0, raw, self.report.skipped, observe=False)
            return False
        kind_name = kind.group(1)
        if kind_name == b"session_meta":
            return True
        if kind_name == b"response_item":
            if b'"function_call"' in head:
                return any(call in raw for call in _CALLS)
            if b'"function_call_output"' in head and thread.spawn_calls:
                return any(key.encode() in raw for key in thread.spawn_calls)
            return False
        if kind_name == b"event_msg":
            if b'"item_completed"' in head:
                return b"SubAgentActivity" in raw
            if thread.is_child and any(end in head for end in _TURN_ENDS):
                return True
            return any(event in head for event in _EVENTS)
        return False

    def _line(self, number: int, raw: bytes, skips: Skips, *, observe: bool = True) -> None:
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
        if row.get("type") not in ROW_TYPES:
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
            self._last_row(before, delegation, number)
            self.last = self.prior = None  # the next one's rows are its own
        if observation is None:
            if not self.reader.delegation:
                self.resume = False  # a review or guardian thread: nothing to resume
            return
        facts = observation.facts
        header = row.get("type") == "session_meta"
        if not (header or self.resume or any(not isinstance(f, Acted) for f in facts)):
            return
        self.resume = False
        self._emit(number, observation)
        if Stopped(conversation=observation.requester) in facts:
            self.resume = True  # a child's turn ended: its next row, if any, resumes it

    def _last_row(
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
        found = self._last_good()
        if found is not None:
            number, row, at = found
            index = self.emitted.get(number)
            if index is not None:
                when, rank, line, earlier = self.timed[index]
                if any(_stops(fact, thread.id) for fact in earlier.facts):
                    return  # stopped by the row itself (a child's turn end): no file end stops it
                observation = _with(earlier, (*earlier.facts, stop))
                self.timed[index] = (when, rank, line, observation)
            else:
                observation = self._stopping(thread, payload_key(row), stop, at)
                self._emit(number, observation)
        else:
            going = next((g for g in self.going if g.thread == thread.id), None)
            if going is None:
                return
            at = going.stop
            observation = self._stopping(thread, f"{going.key}:stop", stop, at)
            self.timed.append((at, self.rank, number, observation))  # after the take-back
        if final:
            self.stop = at.isoformat()
            self.stops.append(Stop(thread.id, thread.root or thread.id, at, observation))

    def _last_good(self) -> tuple[int, dict[str, Any], datetime] | None:
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
            at = parse_time(row.get("timestamp")) if isinstance(row, dict) else None
            if at is not None:
                return number, row, at
        return None

    def _stopping(
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

    def _emit(self, number: int, observation: Observation) -> None:
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


def _stops(fact: Fact, thread: str) -> bool:
    return isinstance(fact, Stopped) and fact.conversation == thread


def _whole(raw: bytes) -> bool:
    """Whether a line looks like one whole row, judged without parsing it: it ends its
    object, and no second row begins inside it (a line torn off where the next write went
    on). A nested object keyed ``timestamp`` looks like the latter; parsing settles it."""
    return raw.endswith((b"}\n", b"}", b"}\r\n")) and raw.find(b'{"timestamp"', 1) < 0


def _bare(thread: str) -> dict[str, Any]:
    """A continuation of a thread no earlier import read: its rows still act for it."""
    return {"thread": {"id": thread}, "delegation": True, "in_header": False}


def _tail(path: Path, offset: int) -> bytes:
    """The bytes just before ``offset``: they tell an appended file from a replaced one."""
    if offset <= 0:
        return b""
    try:
        with path.open("rb") as stream:
            stream.seek(max(0, offset - 32))
            return stream.read(min(32, offset))
    except OSError:
        return b""


def _with(observation: Observation, facts: tuple[Fact, ...]) -> Observation:
    return Observation(
        host=observation.host,
        requester=observation.requester,
        key=observation.key,
        facts=facts,
        root=observation.root,
        workspace=observation.workspace,
        at=observation.at,
    )
