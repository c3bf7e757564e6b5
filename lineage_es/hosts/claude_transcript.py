"""Claude Code session transcripts on disk as observations, row by row.

A session is ``<project>/<sessionId>.jsonl``; its subagents write ``agent-<agentId>.jsonl`` files
in ``<sessionId>/subagents/`` (2.1.2 on, with optional ``.meta.json`` sidecars) or beside the
session file (~2.0.24 to 2.1.1). Observations from agent files are merged in by time and
numbered with the main-file row after which they happened, so a replay checks them after it.

Children are placed and timed as ``lineage import`` places and times them, by what the rows
read so far state: an agent file's agent at its first row, under its sidecar's call, else the
one open call its first prompt repeats (:mod:`.claude_agents`); a child no file of its own
speaks for at its call, observed when its result (or a progress row) names it.

What rows mean is :mod:`.claude_rows`; the agent files, their sidecars and rows are
:mod:`.claude_agent_files`; what the rows read so far show, to place children by, is
:mod:`.claude_evidence`. This module reads the session file and merges the agent files in.

Reading streams: each file is read a line at a time, and an agent file is opened only when the
merge reaches its first row, so a session with hundreds of subagents keeps few files open.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lineage_es.facts import Acted, Fact, Observation, RootSeen, SessionEnded
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude_agent_files import (
    AGENT_FILE,
    EARLIEST,
    AgentFile,
    AgentRow,
    first_look,
    open_agent_file,
    session_agent_files,
)
from lineage_es.hosts.claude_evidence import SessionEvidence, row_observation
from lineage_es.hosts.claude_rows import RowMeaning, text_field
from lineage_es.hosts.transcript import TranscriptRow
from lineage_es.lines import MAX_LINE_BYTES, OnBadLine, json_rows


def read_transcript(path: Path, *, bad: OnBadLine | None = None) -> Iterator[TranscriptRow]:
    """The observations of a session transcript, numbered by the rows of ``path``.

    ``path`` may also be a lone ``agent-<id>.jsonl`` (its session file gone or unpublished):
    its own rows are numbered then. Raises :class:`InputError` naming the file and line of a
    row that is not a JSON object, or naming an agent's ``.meta.json`` sidecar that cannot be
    read; a torn last line (no newline, an interrupted append) is skipped. With ``bad``, such
    a line (in any of the session's files) is handed to ``bad`` instead and the rows after it
    are read as if it were absent; such a sidecar is handed to ``bad`` too (the error names
    no line) and its agent is placed as if it had none, as ``lineage import`` places it.
    """
    path = Path(path)
    match = AGENT_FILE.fullmatch(path.name)
    if match is not None:
        return _lone_agent_rows(path, match.group(1), bad)
    return _session_rows(path, bad)


def _numbered_rows(
    path: Path, bad: OnBadLine | None = None
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Each line's number and object (``None`` when blank), bounded by
    :data:`MAX_LINE_BYTES` before it is parsed."""
    return json_rows(path, MAX_LINE_BYTES, bad=bad)


@dataclass
class _MainFile:
    """Rows of the session file: the session's own activity, and where one session ends."""

    path: Path
    state: SessionEvidence
    #: The time of a row that carries none: the latest one before it (or the file's first).
    at: datetime | None
    session: str | None = None
    seen: set[str] = field(default_factory=set)

    def observe(self, number: int, row: dict[str, Any] | None) -> list[Observation | None]:
        """The row's observation, preceded by the end of the previous session when the
        session changes (``/clear`` recordings hold two sessions in one file), and by the
        start of a child it names that started at its call (:meth:`.SessionEvidence.observe`)."""
        if row is None:
            return [None]
        uuid = text_field(row, "uuid")
        if uuid is not None:
            if uuid in self.seen:  # rows repeat (quirk 5)
                return [None]
            self.seen.add(uuid)
        self.at = parse_time(row.get("timestamp")) or self.at
        session = text_field(row, "sessionId")
        if session is None:  # it belongs to the next session, which it does not name
            return [None]
        where = (self.path, number)
        before: list[Observation | None] = []
        facts: list[Fact] = []
        if self.session is None:
            facts.append(RootSeen(session, source="transcript"))
        elif session != self.session:
            ended: list[Fact] = [SessionEnded(self.session)]
            before.append(row_observation(row, self.session, self.session, ended, self.at, where))
            facts.append(RootSeen(session, source="clear"))
        self.session = session
        meaning = self.state.meaning
        if row.get("isSidechain") is True and text_field(row, "agentId") is None:
            # 2.0.x inline subagent rows: not the root's doing, and the child has no id.
            facts.extend(meaning.inline_child(row, session))
            if not facts:
                return [*before, None]
        else:
            facts.extend(meaning.facts(row, session))
        # A row that says nothing else (or only names children that started at their
        # calls) is the session acting.
        made = self.state.observe(
            row, session, session, facts, self.at, where, otherwise=Acted(session)
        )
        return [*before, *made]


class _AgentRowMerge:
    """Agent-file rows in time order, each file opened when the merge reaches it."""

    def __init__(self, agents: list[AgentFile], state: SessionEvidence) -> None:
        self._state = state
        self._order = itertools.count()
        self._heap: list[tuple[datetime, int, int, AgentFile, AgentRow | None]] = [
            (agent.start or EARLIEST, index, next(self._order), agent, None)
            for index, agent in enumerate(agents)
        ]
        heapq.heapify(self._heap)

    def before(self, limit: datetime | None) -> Iterator[Observation]:
        """Observations of rows earlier than ``limit`` (all of them when ``None``)."""
        while self._heap and (limit is None or self._heap[0][0] < limit):
            _, index, _, agent, item = heapq.heappop(self._heap)
            if item is not None:
                yield from agent.observe(item, self._state)
            following = agent.next_row()
            if following is not None:
                entry = (following.key, index, next(self._order), agent, following)
                heapq.heappush(self._heap, entry)


def _session_rows(path: Path, bad: OnBadLine | None) -> Iterator[TranscriptRow]:
    head = first_look(path, bad)
    agents = session_agent_files(path, head.session, bad)
    state = SessionEvidence(RowMeaning(), frozenset(a.agent for a in agents))
    main = _MainFile(path, state, head.time)
    merge = _AgentRowMerge(agents, state)
    last = 0
    for number, row in _numbered_rows(path, bad):
        time = parse_time(row.get("timestamp")) if row is not None else None
        if time is not None and last:
            for merged in merge.before(time):
                yield TranscriptRow(last, merged, own=False)
        observations = main.observe(number, row)
        for index, observation in enumerate(observations):
            yield TranscriptRow(number, observation, own=index == len(observations) - 1)
        last = number
    if last:
        for merged in merge.before(None):
            yield TranscriptRow(last, merged, own=False)


def _lone_agent_rows(path: Path, agent: str, bad: OnBadLine | None) -> Iterator[TranscriptRow]:
    """An agent file read on its own: its rows numbered in it, its session unread."""
    found = open_agent_file(path, agent, None, same_session=False, bad=bad)
    if found is None:
        for number, _ in _numbered_rows(path, bad):
            yield TranscriptRow(number, None)
        return
    state = SessionEvidence(RowMeaning(), frozenset({found.agent}))
    done = 0
    while (item := found.next_row()) is not None:
        for number in range(done + 1, item.number):
            yield TranscriptRow(number, None)
        observations: list[Observation | None] = [*found.observe(item, state)] or [None]
        for index, observation in enumerate(observations):
            yield TranscriptRow(item.number, observation, own=index == len(observations) - 1)
        done = item.number
    for number in range(done + 1, found.lines + 1):
        yield TranscriptRow(number, None)
