"""What a Claude Code session's files have shown so far, to place and time its children by.

Both files of a session (the session file and its agent files) feed one
:class:`SessionEvidence`: the row meaning (:class:`~.claude_rows.RowMeaning`) and the spawn
calls and children (:class:`~.claude_agents.Spawns`), so that a child is placed by the same
evidence ``lineage import`` uses (which has every row of the session read when it places
them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lineage_es.errors import InputError, PayloadError
from lineage_es.facts import ChildStarted, Fact, Observation
from lineage_es.hosts.base import payload_key
from lineage_es.hosts.claude import HOST
from lineage_es.hosts.claude_agents import Spawns, nests, prompt_digest
from lineage_es.hosts.claude_rows import RowMeaning


def row_observation(
    row: dict[str, Any],
    requester: str,
    root: str | None,
    facts: list[Fact],
    at: datetime | None,
    where: tuple[Path, int],
    *,
    suffix: str = "",
) -> Observation:
    """The row's observation; with ``suffix``, one made apart from the row's own (under a
    key of its own), as ``lineage import`` makes it."""
    try:
        key = payload_key(row)
    except PayloadError as exc:
        raise InputError(exc.reason, path=str(where[0]), line=where[1]) from None
    return Observation(
        host=HOST,
        requester=requester,
        key=f"{key}:{suffix}" if suffix else key,
        facts=tuple(facts),
        root=root,
        workspace=(),  # roots are scoped by workspace for Cursor only
        at=at,
    )


@dataclass
class SessionEvidence:
    """What the rows read so far say about one session's spawn calls and children, across
    its main file and agent files (:class:`~lineage_es.hosts.claude_agents.Spawns`), to place
    children by the same evidence as ``lineage import`` (which has every row of the session
    read when it places them).
    """

    meaning: RowMeaning
    #: The agents with a file of their own in this session.
    agent_ids: frozenset[str] = frozenset()
    spawns: Spawns = field(default_factory=Spawns)

    def note(self, facts: list[Fact], at: datetime | None) -> None:
        """Remember what ``facts``, observed at ``at``, say about calls and children."""
        self.meaning.note(facts)
        for fact in facts:
            self.spawns.note(fact, at, self.meaning.tool_uses)

    def observe(
        self,
        row: dict[str, Any],
        requester: str,
        root: str | None,
        facts: list[Fact],
        at: datetime | None,
        where: tuple[Path, int],
        *,
        otherwise: Fact | None = None,
    ) -> list[Observation]:
        """The row's observations: first the start of each child it names that started at
        its call (observed at the call's time, under a key of its own, as ``lineage import``
        observes it), then the row's other facts (``otherwise`` when there are none, or
        nothing). ``facts`` are noted."""
        early, rest = self.spawns.started_at_calls(facts, at, self.agent_ids)
        if not rest and otherwise is not None:
            rest = [otherwise]
        made: list[Observation] = []
        for fact, when in early:
            self.note([fact], when)
            suffix = f"start:{fact.child}"
            made.append(row_observation(row, requester, root, [fact], when, where, suffix=suffix))
        if rest or not early:
            self.note(rest, at)
            made.append(row_observation(row, requester, root, rest, at, where))
        return made

    def place(self, start: Fact, row: Mapping[str, Any], root: str | None) -> Fact:
        """An agent's start from its first ``row``, placed where the transcripts place it
        when its sidecar did not (:meth:`~lineage_es.hosts.claude_agents.Spawns.place`)."""
        if not isinstance(start, ChildStarted) or start.child is None:
            return start
        placed = self.spawns.place(
            start, prompt=prompt_digest(row), nesting=nests(row.get("version")), root=root
        )
        return placed or start
