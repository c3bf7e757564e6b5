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

from lineage_es.facts import ChildIdentified, ChildStarted
from lineage_es.hosts.claude_agents import NESTING_SINCE, prompt_digest, version_tuple
from lineage_es.importers.claude_session_state import FileState, SessionState, with_facts


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
        """Where the transcripts place an agent that its sidecar does not
        (:meth:`~lineage_es.hosts.claude_agents.Spawns.place`, as ``lineage ingest`` places it
        at its first row): here, with every row of the session read. ``None`` leaves it to
        the engine: an agent of a later version, with no sidecar, whose call no row names yet
        (its result is still to come) and whose prompt matches no one call, could be any
        agent's child, and is placed by ordering (``inferred``)."""
        return self.spawns.place(start, prompt=file.prompt, nesting=file.nesting, root=file.root)


__all__ = ["NESTING_SINCE", "Placement", "prompt_digest", "version_tuple"]
