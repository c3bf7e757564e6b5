"""What reading one session keeps while it reads, and how facts become observations in it.

:class:`~.claude_session.SessionReader` reads a session's files; where the transcripts place an
agent (:mod:`.claude_placement`), what an import leaves the next about a session still being
written (:mod:`.claude_carryover`), a session known only from its agents' files
(:mod:`.claude_fileless`) and the stops at files' ends (:mod:`.claude_file_stops`) are mixins
of it. They share one state, declared here once with its types (:class:`SessionState`), and
all of them observe facts the one way :meth:`SessionState._observe_at_row` and
:meth:`SessionState._note_fact` do, so those are here too. What the import gives every
session's reading is a :class:`SessionContext`, and what the ledger keeps of each file is
read and written by :class:`FileState`.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lineage_es.errors import PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Observation,
    Stopped,
)
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.claude import HOST, is_internal_agent
from lineage_es.hosts.claude_agents import Spawns
from lineage_es.hosts.claude_rows import row_time
from lineage_es.importers.claude_layout import SessionFiles, agent_of
from lineage_es.importers.lines import NOT_OBJECT, Skips
from lineage_es.importers.walk import Found

if TYPE_CHECKING:
    from lineage_es.hosts.claude_rows import RowMeaning
    from lineage_es.importers.driver import Timed
    from lineage_es.importers.ledger import Ledger
    from lineage_es.importers.report import ImportReport, Progress


@dataclass(frozen=True)
class SessionContext:
    """What every session's reading in one import shares: the folder's ledger (read while
    reading, written only by the import), the folder, the size above which a file is passed
    over, and every agent sidecar's path (an agent without one is not looked up on disk)."""

    ledger: Ledger
    folder: str
    max_file_bytes: int
    sidecars: Set[str]


@dataclass
class FileState:
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
    #: The latest time of a row observed in this file (in this run and, from the ledger,
    #: the runs before): the file stops no earlier than anything it said.
    latest: datetime | None = None
    #: :attr:`latest` before the file's stop was observed (what the ledger keeps: the stop is
    #: where the file ended, not something it said).
    said: datetime | None = None
    needs_head: bool = True
    resume: bool = False
    #: Where a main file's last timed row stopped its root: the file had ended there. When
    #: the file goes on, the root (and what stopped with it) goes on from that very moment.
    stop: datetime | None = None
    #: Where the observation taking the file's conversation on from an earlier run's stop
    #: sorts (:func:`~.claude_carryover._resume_sorts_at`): its new stop sorts no earlier.
    went_on: datetime | None = None
    legacy: bool = False
    progress_rows: bool = False
    internal: bool = False
    #: Whether this agent's version lets subagents spawn subagents; its first prompt's digest.
    nesting: bool = False
    prompt: bytes | None = None
    #: An agent whose start no call placed (no row read yet named its call): when it
    #: started, its first prompt's digest (hex) and whether it may nest, to place it by once
    #: a later run reads its call (:meth:`~.claude_placement.Placement._place_again`).
    unkeyed: list[Any] | None = None
    #: Observations made at each row (by byte offset): a row's facts share one observation.
    emitted: dict[int, int] = field(default_factory=dict)
    #: Observations made apart from their row's (a stop, a resume, a start at its call).
    extra: list[int] = field(default_factory=list)
    #: Leading rows that carry no time, held until the file's first time is known.
    held: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    owns: set[str] = field(default_factory=set)
    #: Rows of an unknown type parsed in this run (by offset), counted once.
    unknown: set[int] = field(default_factory=set)

    @classmethod
    def from_entry(
        cls, found: Found, rank: int, kind: str, entry: dict[str, Any], session: str
    ) -> FileState:
        """The file as its ledger ``entry`` left it (``{}``: read from its start); ``kind``
        is ``main`` (the file of ``session``), ``agent`` or ``flat``."""
        file = cls(found, rank, kind, int(entry.get("offset", 0)))
        file.root = entry.get("root") or (session if kind == "main" else None)
        file.speaker = entry.get("speaker")
        file.at = parse_time(entry.get("at"))
        file.stop = parse_time(entry.get("stop"))
        # What the rows read before said, up to when (an entry without ``latest`` knows no
        # better than the file's last time).
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
        return file

    def ledger_entry(self, end: int, check: bytes) -> dict[str, Any]:
        """What the ledger keeps of the file once read up to ``end`` (``check``: the bytes
        before it, to tell a file appended to from one replaced)."""
        found = self.found
        entry: dict[str, Any] = {
            "kind": self.kind,
            "size": found.size,
            "mtime": found.mtime,
            "offset": end,
            "check": check.hex(),
            "root": self.root,
            "speaker": self.speaker,
            "at": self.at.isoformat() if self.at else None,
            "stop": self.stop.isoformat() if self.stop else None,
            "latest": self.said.isoformat() if self.said else None,
            "legacy": self.legacy,
            "progress_rows": self.progress_rows,
            "owns": sorted(self.owns),
        }
        if self.kind != "main":
            entry |= {"agent": self.agent, "session": self.root, "internal": self.internal}
            entry["unkeyed"] = self.unkeyed
        return entry


class SessionState:
    """The state of one session's reading, declared once for :class:`~.claude_session.SessionReader`
    (which sets it) and its mixins, and the making of observations into it."""

    context: SessionContext
    group: SessionFiles
    ledger: Ledger
    progress: Progress
    #: This session's share of the report, and its ledger entries (kept apart, so that a
    #: forked worker can hand them back).
    report: ImportReport
    skips: Skips
    entries: dict[str, dict[str, Any]]
    bytes: int
    advanced: int
    meaning: RowMeaning
    #: Background agents launched and not yet stopped: only then do notices matter.
    background: set[str]
    timed: list[Timed]
    files: list[FileState]
    seen: set[str]
    #: Spawn calls (this run's, and those earlier runs read and no child claimed), the child
    #: each spawn key named, the parent and spawn key a row gave each child.
    spawns: Spawns
    #: Agents started by their first row with no parent named yet: placed after reading.
    unplaced: list[tuple[FileState, int, ChildStarted]]
    #: Children the root's last stop stopped with it (the session file had ended there),
    #: each with what it did after: ``[time, "act" | "stop" | "own"]`` pairs.
    ended: dict[str, list[list[str]]]
    #: Agents their own file's last row stopped (the file had ended there): when, and what
    #: would have stopped them since had they gone on: ``[time, "stop" | "root"]`` pairs.
    own: dict[str, tuple[str, list[list[str]]]]
    #: Observations (by index in ``timed``) that stop a file at its end: the session's
    #: (``end``), an agent's own (``own``); and a root's stop observed again (``root``).
    kinds: dict[int, str]
    #: Facts about agents whose own file had no first row yet, held back by the last run.
    held: list[Any]
    #: The observations released from ``held`` in this run (by index in ``timed``).
    released: set[int]
    #: The agents that have a file of their own in this session.
    agent_ids: set[str | None]
    #: When the last run held the agent files back for want of the session's first row, the
    #: size and time of the session's files then (``[size, mtime]`` by path): they are held
    #: back until one of them changes. ``True``: held back once, the sizes not kept.
    waited: dict[str, Any] | bool | None
    #: Where a root known only from its agents' files was stopped (their last row), by the
    #: last run or this one (:mod:`.claude_fileless`); ``None`` once its own file speaks.
    fileless_stop: datetime | None
    #: Where such a root started: the earliest first row its agents' files gave, in the
    #: last run or this one (:meth:`~.claude_fileless.Fileless._start_fileless`).
    fileless_from: datetime | None

    # -- observations ---------------------------------------------------------------------------

    def _observe_at_row(
        self,
        file: FileState,
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
        dated: datetime | None = None,
    ) -> None:
        """Observe ``facts`` at a row; facts for a row already observed join its
        observation (one row, one idempotency key). With ``key_suffix`` they are observed
        apart, under a key of their own; ``last`` sorts them after everything else observed
        at the row (at ``offset + 1``: no other line starts there); ``tag`` says what kind
        of stop they are (:attr:`kinds`). ``dated`` is the time the facts carry when it is
        not the one they are sorted by (``at``, the row's): only with ``key_suffix``."""
        if not facts:
            return
        when = at or row_time(row) or file.at or _mtime_as_time(file.found)
        if not key_suffix:
            # A child named for the first time that has no file of its own (known only from
            # its call's result) is observed apart, at its spawn call's time: it started then.
            early, facts = self.spawns.started_at_calls(facts, when, self.agent_ids)
            for identified, started in early:
                suffix = f"start:{identified.child}"
                self._observe_at_row(
                    file, offset, row, requester, root, [identified], at=started, key_suffix=suffix
                )
            if not facts:
                return
        if file.first_at is None:
            file.first_at = when
        if not key_suffix and (file.latest is None or when > file.latest):
            file.latest = when
        for fact in facts:
            self._note_fact(file, fact, when)
        index = file.emitted.get(offset) if not key_suffix else None
        if index is not None:
            when, rank, place, earlier = self.timed[index]
            merged = _merge_row_facts(earlier.facts, facts)
            self.timed[index] = (when, rank, place, replace(earlier, facts=merged))
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
            at=dated if dated is not None and key_suffix else when,
        )
        if tag:
            self.kinds[len(self.timed)] = tag
        if key_suffix:
            file.extra.append(len(self.timed))
        else:
            file.emitted[offset] = len(self.timed)
        self.timed.append((when, file.rank, offset + 1 if last else offset, observation))

    def _note_fact(self, file: FileState | None, fact: Fact, when: datetime) -> None:
        """Remember which conversations this file placed (``--reconcile`` deletes them when
        their file is gone), which spawn calls were made when and by whom, which spawn key
        named which child under which parent (:attr:`spawns`), and which background agents
        stopped."""
        self.spawns.note(fact, when, self.meaning.tool_uses)
        if isinstance(fact, ChildIdentified | ChildStarted) and fact.child is not None:
            if not is_internal_agent(fact.child):
                self.report.subagents.add(fact.child)
                if file is not None:
                    file.owns.add(fact.child)
        elif isinstance(fact, Stopped) and fact.conversation is not None:
            self.background.discard(fact.conversation)


def _mtime_as_time(found: Found) -> datetime:
    return datetime.fromtimestamp(found.mtime / 1e9, tz=UTC)


def _merge_row_facts(earlier: tuple[Fact, ...], later: list[Fact]) -> tuple[Fact, ...]:
    """Facts of one row gathered in two passes: acting first, stopping last."""
    acts = [f for f in later if isinstance(f, Acted) and f not in earlier]
    rest = [f for f in later if not isinstance(f, Acted) and f not in earlier]
    return (*acts, *earlier, *rest)
