"""Where the transcripts place a Claude Code agent that its ``.meta.json`` sidecar does not.

Shared by both readers of a session's files, which see them differently: ``lineage import``
(:mod:`lineage_es.importers.claude_placement`) places an agent once every file of its session
is read, ``lineage ingest`` and ``lineage-replay``
(:mod:`lineage_es.hosts.claude_transcript`) at the agent's first row, knowing only the rows
before it. The evidence, and its order, is the same: the result or progress row that names
the agent; the call its sidecar's ``toolUseId`` names; the one open call whose prompt its
first prompt repeats; before subagents could spawn subagents, the session its rows name.
Both keep that evidence, the spawn calls and children their rows name, the one way
(:class:`Spawns`).
"""

from __future__ import annotations

import re
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from lineage_es.facts import ChildIdentified, ChildStarted, Fact, SpawnRequested
from lineage_es.hosts.claude_rows import message_texts, object_field, text_digest

#: The first version whose subagents may spawn subagents (HOSTS.md 1.2, Nesting): before it,
#: the session an agent file's rows name is that agent's parent.
NESTING_SINCE = (2, 1, 172)


class SpawnCall(NamedTuple):
    """A spawn call: who made it, when (``lineage ingest`` knows no time for a session file
    whose rows carry none), and its prompt's digest (an agent's first prompt repeats it)."""

    parent: str
    at: datetime | None
    prompt: bytes | None


class Prompted(Protocol):
    """A tool call as a reader's row meaning keeps it, until its result: its prompt's digest."""

    @property
    def prompt(self) -> bytes | None: ...


@dataclass
class Spawns:
    """What a session's rows read so far say about its spawn calls and children, kept the one
    way by both readers, to place children by and to time those that started at their call.

    Calls are kept for the whole session (unlike the row meaning's open calls, which go at
    their result): an agent's first prompt may repeat any call no other child claimed.
    """

    #: Spawn calls by key (``lineage import`` starts with those earlier runs read and no
    #: child claimed).
    calls: dict[str, SpawnCall] = field(default_factory=dict)
    #: The child each spawn key named, so a stop by spawn key finds its agent.
    spawned: dict[str, str] = field(default_factory=dict)
    #: The parent and spawn key a row first gave each child (a result, a progress row).
    identified: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    def note(self, fact: Fact, at: datetime | None, uses: Mapping[str, Prompted]) -> None:
        """Remember what ``fact``, observed at ``at``, says about calls and children: a spawn
        call when first requested (its prompt's digest from its open tool call in ``uses``),
        the child a spawn key names, the parent and key a row first gives a child."""
        if isinstance(fact, SpawnRequested):
            if fact.spawn_key not in self.calls:
                use = uses.get(fact.spawn_key)
                prompt = use.prompt if use is not None else None
                self.calls[fact.spawn_key] = SpawnCall(fact.parent, at, prompt)
        elif isinstance(fact, ChildIdentified | ChildStarted) and fact.child is not None:
            if fact.spawn_key is not None:
                self.spawned[fact.spawn_key] = fact.child
            if isinstance(fact, ChildIdentified):
                self.identified.setdefault(fact.child, (fact.parent, fact.spawn_key))

    def started_at_calls(
        self, facts: list[Fact], at: datetime | None, with_files: Container[str | None]
    ) -> tuple[list[tuple[ChildIdentified, datetime]], list[Fact]]:
        """``facts`` observed at ``at`` that name, for the first time, a child that has no
        file of its own (none of ``with_files``; known only from its call's result or a
        progress row), which started at its call, earlier: each with its call's time; and
        the rest of ``facts``."""
        early: list[tuple[ChildIdentified, datetime]] = []
        rest: list[Fact] = []
        for fact in facts:
            call = (
                self.calls.get(fact.spawn_key)
                if isinstance(fact, ChildIdentified) and fact.spawn_key is not None
                else None
            )
            if (
                isinstance(fact, ChildIdentified)
                and call is not None
                and call.at is not None
                and at is not None
                and call.at < at
                and fact.child not in with_files
                and fact.child not in self.identified
            ):
                early.append((fact, call.at))
            else:
                rest.append(fact)
        return early, rest

    def place(
        self, start: ChildStarted, *, prompt: bytes | None, nesting: bool, root: str | None
    ) -> ChildIdentified | None:
        """Where the transcripts place the agent ``start`` starts (its sidecar did not): under
        the parent and call a result or progress row named it for; under the call its
        sidecar's ``toolUseId`` (``start.spawn_key``) names; under the one call no other child
        claimed whose prompt its first ``prompt`` repeats; without ``nesting`` (a version
        before 2.1.172), under the session its rows name (``root``). ``None`` leaves it to
        the engine's ordering (``inferred``): an agent that could be any agent's child."""
        agent = start.child
        assert agent is not None
        named = self.identified.get(agent)
        parent: str | None = None
        key = start.spawn_key
        if named is not None:
            parent, key = named[0], named[1] or key
        elif key is not None and key in self.calls:
            parent = self.calls[key].parent
        else:
            matched = self._prompt_match(agent, prompt)
            if matched is not None:
                key, parent = matched, self.calls[matched].parent
            elif not nesting:
                parent = root
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
        """The one spawn call no other child than ``agent`` claimed whose prompt ``prompt``
        repeats."""
        if prompt is None:
            return None
        keys = [
            key
            for key, call in self.calls.items()
            if call.prompt == prompt and self.spawned.get(key, agent) == agent
        ]
        return keys[0] if len(keys) == 1 else None


def nests(version: Any) -> bool:
    """Whether an agent whose first row carries ``version`` may have an agent as its parent
    (a row without a version may)."""
    return not isinstance(version, str) or version_tuple(version) >= NESTING_SINCE


def version_tuple(version: str) -> tuple[int, ...]:
    """``2.1.143`` as ``(2, 1, 143)``; as far as it is numbers."""
    parts: list[int] = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def prompt_digest(row: Mapping[str, Any]) -> bytes | None:
    """The digest of an agent's first prompt (its row's one text), as the readers keep their
    calls' prompts."""
    texts = message_texts(object_field(row, "message").get("content"))
    return text_digest(texts[0]) if len(texts) == 1 else None
