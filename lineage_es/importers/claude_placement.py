"""Where the transcripts place an agent that its sidecar does not.

An agent's start carries where the transcripts place it (``transcript``): its sidecar, the
result that names it, the one open call its first prompt repeats, or, before agents could
spawn agents, the session its rows name; only an agent none of these places is left to the
engine's ordering (``inferred``).

The evidence, and its order, is shared with ``lineage ingest``'s reader
(:mod:`lineage_es.hosts.claude_agents`), which places an agent at its first row. A module of
its own because placing waits until every file of the session is read (reading
them is :mod:`.claude_session`'s): a mixin of :class:`~.claude_session.SessionReader`, with what
it reads off an agent's first row to place it by (its version, its first prompt's digest).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lineage_es.facts import ChildIdentified, ChildStarted, Observation
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude import HOST
from lineage_es.hosts.claude_agent_files import placement_key
from lineage_es.importers.claude_session_state import FileState, SessionState


class Placement(SessionState):
    """Places the agents a session's files start and no sidecar placed."""

    # -- placing agents by what the transcripts state ---------------------------------------

    def _place_starts(self) -> None:
        """Place each agent its sidecar did not, once every file of the session is read, by
        what the transcripts state (:meth:`_placement_by_transcripts`): its start carries the
        placement with resolution ``transcript``, rather than leaving the engine to infer
        it."""
        for file, offset, start in self.unplaced:
            index = file.emitted.get(offset)
            placed = self._placement_by_transcripts(file, start)
            if index is None:
                continue
            when, rank, place, observation = self.timed[index]
            if (placed or start).spawn_key is None:
                # No row read yet names its call: a later run that reads it places it there.
                prompt = file.prompt.hex() if file.prompt is not None else None
                self._keep_unkeyed(file.found.rel, [when.isoformat(), prompt, file.nesting])
            if placed is None:
                continue
            facts = tuple(placed if fact is start else fact for fact in observation.facts)
            self.timed[index] = (when, rank, place, replace(observation, facts=facts))
            self._note_fact(file, placed, when)

    def _place_again(self) -> None:
        """Place each agent an earlier run started without its call (its first row was read
        before the row of the call that spawned it, or the call's result) under the call the
        rows read since name, from its start: its call's type and key are the agent's from
        then on, as in one import of the finished files, which reads the call first."""
        agents = sorted(self.group.agents, key=lambda found: found.rel)
        for rank, found in enumerate(agents, start=1):
            entry = self.entries.get(found.rel) or self.ledger.entry(found.rel)
            unkeyed = entry.get("unkeyed") if entry is not None else None
            if entry is None or not isinstance(unkeyed, list) or len(unkeyed) != 3:
                continue
            agent, root = entry.get("agent"), entry.get("root")
            started, prompt, nesting = unkeyed
            when = parse_time(started)
            if not isinstance(agent, str) or when is None:
                continue
            digest = bytes.fromhex(prompt) if isinstance(prompt, str) else None
            start = ChildStarted(child=agent)
            placed = self.spawns.place(start, prompt=digest, nesting=bool(nesting), root=root)
            if placed is None or placed.spawn_key is None:
                continue
            key = placement_key(agent, started, placed.spawn_key)
            observation = Observation(
                host=HOST, requester=agent, key=key, facts=(placed,), root=root, at=when
            )
            self.timed.append((when, rank, 0, observation))
            self._note_fact(None, placed, when)
            self._keep_unkeyed(found.rel, None)

    def _keep_unkeyed(self, rel: str, unkeyed: list[Any] | None) -> None:
        """Keep in an agent file's ledger entry that its agent was started without its call
        (:attr:`~.claude_session_state.FileState.unkeyed`), or that it no longer is."""
        entry = self.entries.get(rel) or self.ledger.entry(rel)
        if entry is not None:
            self.entries[rel] = {**entry, "unkeyed": unkeyed}

    def _placement_by_transcripts(
        self, file: FileState, start: ChildStarted
    ) -> ChildIdentified | None:
        """Where the transcripts place an agent that its sidecar does not
        (:meth:`~lineage_es.hosts.claude_agents.Spawns.place`, as ``lineage ingest`` places it
        at its first row): here, with every row of the session read. ``None`` leaves it to
        the engine: an agent of a later version, with no sidecar, whose call no row names yet
        (its result is still to come) and whose prompt matches no one call, could be any
        agent's child, and is placed by ordering (``inferred``)."""
        return self.spawns.place(start, prompt=file.prompt, nesting=file.nesting, root=file.root)
