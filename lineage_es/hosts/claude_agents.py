"""Where the transcripts place a Claude Code agent that its ``.meta.json`` sidecar does not.

Shared by both readers of a session's files, which see them differently: ``lineage import``
(:mod:`lineage_es.importers.claude_placement`) places an agent once every file of its session
is read, ``lineage ingest`` and ``lineage-replay``
(:mod:`lineage_es.hosts.claude_transcript`) at the agent's first row, knowing only the rows
before it. The evidence, and its order, is the same: the result or progress row that names
the agent; the call its sidecar's ``toolUseId`` names; the one open call whose prompt its
first prompt repeats; before subagents could spawn subagents, the session its rows name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from lineage_es.facts import ChildIdentified, ChildStarted

#: The first version whose subagents may spawn subagents (HOSTS.md 1.2, Nesting): before it,
#: the session an agent file's rows name is that agent's parent.
NESTING_SINCE = (2, 1, 172)


class SpawnCall(Protocol):
    """A spawn call as a reader keeps it: who made it, and its prompt's digest."""

    @property
    def parent(self) -> str: ...

    @property
    def prompt(self) -> bytes | None: ...


def place_agent(
    start: ChildStarted,
    *,
    named: tuple[str, str | None] | None,
    calls: Mapping[str, SpawnCall],
    spawned: Mapping[str, str],
    prompt: bytes | None,
    nesting: bool,
    root: str | None,
) -> ChildIdentified | None:
    """Where the transcripts place the agent ``start`` starts (its sidecar did not): under
    the parent and call a result or progress row ``named`` it for; under the call its
    sidecar's ``toolUseId`` (``start.spawn_key``) names; under the one call of ``calls`` no
    other child claimed (``spawned``: the child each call named) whose prompt its first
    ``prompt`` repeats; without ``nesting`` (a version before 2.1.172), under the session its
    rows name (``root``). ``None`` leaves it to the engine's ordering (``inferred``): an
    agent that could be any agent's child."""
    agent = start.child
    assert agent is not None
    parent: str | None = None
    key = start.spawn_key
    if named is not None:
        parent, key = named[0], named[1] or key
    elif key is not None and key in calls:
        parent = calls[key].parent
    else:
        matched = prompt_match(calls.items(), spawned, agent, prompt)
        if matched is not None:
            key, parent = matched, calls[matched].parent
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


def prompt_match(
    calls: Iterable[tuple[str, SpawnCall]],
    spawned: Mapping[str, str],
    agent: str,
    prompt: bytes | None,
) -> str | None:
    """The one spawn call no other child than ``agent`` claimed whose prompt ``prompt``
    repeats."""
    if prompt is None:
        return None
    keys = [
        key for key, call in calls if call.prompt == prompt and spawned.get(key, agent) == agent
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
