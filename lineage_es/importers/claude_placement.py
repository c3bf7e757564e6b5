"""Where the transcripts place an agent that its sidecar does not.

An agent's start carries where the transcripts place it (``transcript``): its sidecar, the
result that names it, the one open call its first prompt repeats, or, before agents could
spawn agents, the session its rows name; only an agent none of these places is left to the
engine's ordering (``inferred``).

A module of its own because placing waits until every file of the session is read (reading
them is :mod:`.claude_session`'s): a mixin of :class:`~.claude_session.SessionReader`, with what
it reads off an agent's first row to place it by (its version, its first prompt's digest).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from lineage_es.facts import ChildIdentified, ChildStarted
from lineage_es.importers.claude_session_state import FileState, SessionState, with_facts

#: The first version whose subagents may spawn subagents (HOSTS.md 1.2, Nesting): before it,
#: the session an agent file's rows name is that agent's parent.
NESTING_SINCE = (2, 1, 172)


class Placement(SessionState):
    """Places the agents a session's files start and no sidecar placed."""

    # -- placing agents by what the transcripts state ---------------------------------------

    def _place_starts(self) -> None:
        """Place each agent its sidecar did not, once every file of the session is read, by
        what the transcripts state (:meth:`_placement`): its start carries the placement
        with resolution ``transcript``, rather than leaving the engine to infer it."""
        for file, offset, start in self.unplaced:
            index = file.emitted.get(offset)
            placed = self._placement(file, start)
            if index is None or placed is None:
                continue
            when, rank, place, observation = self.timed[index]
            facts = tuple(placed if fact is start else fact for fact in observation.facts)
            self.timed[index] = (when, rank, place, with_facts(observation, facts))
            self._note(file, placed, when)

    def _placement(self, file: FileState, start: ChildStarted) -> ChildIdentified | None:
        """Where the transcripts place an agent that its sidecar does not: under the call
        a result or progress row of the session names it for; under the call its sidecar's
        ``toolUseId`` names; under the one open call whose prompt its first prompt repeats;
        before subagents could spawn (2.1.172), under the session its rows name. ``None``
        leaves it to the engine: an agent of a later version, with no sidecar, whose call
        no row names yet (its result is still to come) and whose prompt matches no one call,
        could be any agent's child, and is placed by ordering (``inferred``)."""
        agent = start.child
        assert agent is not None
        parent: str | None = None
        key = start.spawn_key
        named = self.identified.get(agent)
        if named is not None:
            parent, key = named[0], named[1] or key
        elif key is not None and key in self.calls:
            parent = self.calls[key].parent
        else:
            matched = self._prompt_match(agent, file.prompt)
            if matched is not None:
                key, parent = matched, self.calls[matched].parent
            elif not file.nesting:
                parent = file.root
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
        """The one spawn call no other child claimed whose prompt ``prompt`` repeats."""
        if prompt is None:
            return None
        keys = [
            key
            for key, call in self.calls.items()
            if call.prompt == prompt and self.spawned.get(key, agent) == agent
        ]
        return keys[0] if len(keys) == 1 else None


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
    """The digest of an agent's first prompt, as :class:`RowMeaning` keeps its call's."""
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
