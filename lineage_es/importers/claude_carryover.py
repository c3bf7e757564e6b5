"""What one import leaves the next about a session still being written.

Files are read while Claude Code writes them, and every import leaves the history one import
of the finished files would give, at every moment. A file's last row stopped its conversation
only because the file ended there: when the file goes on, its conversation goes on from that
very moment (a session, with the children that stopped with it), and what would have stopped
it since is observed again after. A file with no complete row yet (empty, its first line
being written) is read from its start next time; what the session says of an agent whose own
file has no row yet waits for that row until the session's files change, and a session file
with no row yet holds its agents' files back until then (an import that finds nothing
changed journals nothing).

A module of its own because one import of the finished files needs none of it: a mixin of
:class:`~.claude_session.SessionReader` (resuming, what a file's end stopped, what waits for an
agent's first row), and the loaders of what it keeps in the ledger's session state.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import asdict, replace
from datetime import datetime
from operator import attrgetter
from time import time_ns
from typing import Any

from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Observation,
    Resumed,
    SessionEnded,
    Stopped,
)
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude import HOST, is_internal_agent
from lineage_es.hosts.claude_agents import SpawnCall
from lineage_es.hosts.claude_rows import row_time
from lineage_es.importers.claude_layout import agent_of
from lineage_es.importers.claude_session_state import FileState, SessionState

#: Seconds a session file with no complete row yet holds its agents' files back for,
#: counted from its last write.
HEADLESS_WAIT = 300

#: The facts a held-back observation may carry, by name (see ``Carryover._hold_back_for_headless``).
_HELD_FACT_TYPES: dict[str, type[Fact]] = {
    kind.__name__: kind for kind in (Acted, ChildIdentified, ChildStarted, Resumed, Stopped)
}


class Carryover(SessionState):
    """Takes on, or keeps for the next run, what a file's end stopped or held back."""

    # -- a file that goes on after where it had ended -----------------------------------------

    def _resume_session(
        self,
        file: FileState,
        offset: int,
        row: dict[str, Any],
        session: str,
        since: datetime | None = None,
    ) -> None:
        """The session file goes on after the row where the last run stopped its root: the
        file had only ended there. The root goes on from that moment, and so do the children
        that stopped with it alone, so the history reads as if both runs had been one. With
        ``since``, from that stop instead of the file's (the last run stopped a root known
        only from its agents' files there, :mod:`.claude_fileless`)."""
        again: list[Fact] = [Acted(session), *(Resumed(child) for child in sorted(self.ended))]
        stop = since or file.stop
        when = file.went_on = _resume_sorts_at(stop, row)
        suffix = f"resume@{offset}"
        self._observe_at_row(
            file, offset, row, session, session, again, at=when, key_suffix=suffix, dated=stop
        )
        # What such a child did after the root's stop was journaled while it stood stopped:
        # it is observed again, after the resume, so that it comes out as it happened.
        for child, later in sorted(self.ended.items()):
            for number, (time, kind) in enumerate(later):
                # A child's own file end, observed again, is as provisional as it was.
                fact = (
                    Resumed(child)
                    if kind == "act"
                    else Stopped(conversation=child, provisional=kind == "own")
                )
                self._observe_at_row(
                    file,
                    offset,
                    row,
                    child,
                    session,
                    [fact],
                    at=parse_time(time),
                    key_suffix=f"again@{offset}:{child}:{number}",
                    tag="own" if kind == "own" else "",
                )
        self.ended = {}
        # The root's stop did not happen after all: it stops no agent that had stopped first.
        for _, later in self.own.values():
            later[:] = [pair for pair in later if pair[1] != "root"]

    def _resume_agent(self, file: FileState, offset: int, row: dict[str, Any], agent: str) -> None:
        """The agent's file goes on after the row where an earlier run stopped it: the file
        had only ended there. The agent goes on from that moment; what would have stopped it
        since, had it gone on (its parent's result, a notice, the session's end), is observed
        again after that, so that it comes out as it happened (and the agent acts again at
        its first row after each, :meth:`SessionReader._acting_after_stops`)."""
        stopped, later = self.own.pop(agent)
        since = parse_time(stopped)
        when = file.went_on = _resume_sorts_at(since, row)
        again: list[Fact] = [Resumed(agent)]
        suffix = f"resume@{offset}"
        self._observe_at_row(
            file, offset, row, agent, file.root, again, at=when, key_suffix=suffix, dated=since
        )
        for number, (time, kind) in enumerate(later):
            # Reported by another node, as it was (its parent's result, a notice, the
            # session's end): it says the agent was done by then, not that it ran until
            # then, and so leaves an earlier stop of its own file where it is.
            self._observe_at_row(
                file,
                offset,
                row,
                file.root or agent,
                file.root,
                # The session's stop, observed again, is as provisional as it was.
                [Stopped(conversation=agent, provisional=kind == "root")],
                at=parse_time(time),
                key_suffix=f"again@{offset}:{number}",
                tag="root" if kind == "root" else "",
            )

    # -- what the session's end stopped ------------------------------------------------------

    def _stopped_at_file_ends(self) -> dict[str, Any]:
        """What stopped only because a file had ended, for the runs that read on.

        ``ended``: the children the root's last stop stopped with it, each with what it did
        after (acted again, stopped); if the session file goes on (the root was not done),
        :meth:`_resume_session` takes them on with the root and observes their later life again.
        ``own``: the agents their own file's last row stopped, each with what would have
        stopped it since had it gone on; if its file goes on, :meth:`_resume_agent` takes it
        on. Found by going through this run's observations in the order the engine gets
        them, from what the last runs left (everything else they left stopped: a run stops
        every file at its end)."""
        root = self._session_root()
        ended = {child: list(later) for child, later in self.ended.items()}
        own = {agent: (at, list(later)) for agent, (at, later) in self.own.items()}
        live = {child: bool(later) and later[-1][1] == "act" for child, later in ended.items()}

        def mark(child: str, kind: str, when: datetime) -> None:
            live[child] = kind == "act"
            if child in ended:
                ended[child].append([when.isoformat(), kind])

        for index in sorted(range(len(self.timed)), key=lambda i: self.timed[i][:3]):
            order, _, _, observation = self.timed[index]
            tag = self.kinds.get(index, "")
            for fact in observation.facts:
                # A stop is kept at its own time, wherever it sorts (a file's stop sorts
                # after the resume that took its earlier stop back, dated at its row).
                when = observation.at or order if isinstance(fact, Stopped) else order
                if isinstance(fact, Stopped):
                    key = fact.spawn_key or ""
                    # A child with no id (2.0.x inline) is named by its spawn key.
                    target = fact.conversation or self.spawns.spawned.get(key)
                    target = target or (key if key in live else None)
                    if target is None:
                        continue
                    if target == root:
                        for _, later in own.values():
                            later.append([when.isoformat(), "root"])
                        for child in [child for child, on in live.items() if on]:
                            if child in ended:
                                mark(child, "stop", when)
                            else:
                                live[child] = False
                                ended[child] = []
                    elif tag == "own" and target == observation.requester:
                        mark(target, "own", when)
                        own[target] = (when.isoformat(), [])
                    elif tag == "root":  # the session's stop, observed again for an agent
                        # It stops the agent with the root only if the agent's own file had
                        # not stopped it first (reported, it leaves that stop where it is).
                        if live.get(target):
                            live[target] = False
                            ended.setdefault(target, [])
                    else:
                        mark(target, "stop", when)
                        if target in own:
                            own[target][1].append([when.isoformat(), "stop"])
                elif isinstance(fact, SessionEnded):
                    live = dict.fromkeys(live, False)  # a real end: nothing goes on after it
                    ended.clear()
                    own.clear()
                elif isinstance(fact, ChildIdentified | ChildStarted):
                    if fact.child is not None and not is_internal_agent(fact.child):
                        live.setdefault(fact.child, True)
                    elif fact.child is None and fact.spawn_key is not None:
                        live.setdefault(fact.spawn_key, True)  # pending, named by its key
                elif isinstance(fact, Acted | Resumed) and fact.conversation != root:
                    mark(fact.conversation, "act", when)
                    own.pop(fact.conversation, None)
        return {"ended": ended, "own": {agent: [at, later] for agent, (at, later) in own.items()}}

    def _agent_files_held_back(self) -> dict[str, list[int]] | None:
        """Whether the session's agent files wait for its file's first row: the size and
        time of each of the session's files (``[size, mtime]`` by path: what the wait waits
        to change) when they do, ``None`` when they are read now.

        A session file with no row yet (empty, or its first line still being written)
        holds its agents' files back until one of the session's files changes: they are
        read with the session's first rows, not before them (the session's root would
        start at its agents' first rows). An import that finds nothing changed holds them
        back again, as the one before did; once the file has not been written for
        :data:`HEADLESS_WAIT`, its first row is not coming and its agents' files speak for
        the root alone (:mod:`.claude_fileless`)."""
        group = self.group
        files = sorted(
            (f for f in [group.main, *group.agents] if f is not None), key=attrgetter("rel")
        )
        sizes = {f.rel: [f.size, f.mtime] for f in files}
        main = group.main
        written_lately = main is not None and time_ns() - main.mtime < HEADLESS_WAIT * 1e9
        if self._headless_main() and written_lately and (not self.waited or self.waited == sizes):
            return sizes
        return None

    def _headless_main(self) -> bool:
        """Whether the session's file was read and gave no row (it names no session yet)."""
        main = self.group.main
        entry = self.entries.get(main.rel) or self.ledger.entry(main.rel) if main else None
        return entry is not None and not entry.get("speaker")

    def _session_root(self) -> str | None:
        """The conversation the session's main file speaks for at its end; failing one, the
        root this run stopped at its agents' files' end (:mod:`.claude_fileless`)."""
        main = self.group.main
        entry = (self.entries.get(main.rel) or self.ledger.entry(main.rel) or {}) if main else {}
        speaker = entry.get("speaker")
        if isinstance(speaker, str):
            return speaker
        return self.group.session if self.fileless_stop is not None else None

    # -- agents whose own file has no row yet ---------------------------------------------------

    def _hold_back_for_headless(self) -> list[dict[str, Any]]:
        """Facts this run found about an agent whose own file is on disk with no complete
        first row yet (its parent's result or a notice, written before the agent's first
        row could be read), taken out of their observations and kept for the next run: there
        they follow the agent's own start, as in one run reading the finished files, rather
        than starting it at its result. The next run that finds a file of the session
        changed observes them whatever it reads, unless the agent's file grew since and
        still has no complete row (its first row is still being written): they wait on for
        it. A run that finds none changed does not read the session."""
        waiting = self._headless_agents()
        if not waiting:
            return []
        growing = self._headless_agents(growing=True)
        held: list[dict[str, Any]] = []
        for index, (when, rank, place, observation) in enumerate(self.timed):
            holding = growing if index in self.released else waiting
            about = [(fact, self._child_of(fact)) for fact in observation.facts]
            kept = tuple(fact for fact, agent in about if agent not in holding)
            if len(kept) == len(about):
                continue
            whole = not kept
            for agent in sorted({agent for _, agent in about if agent in holding}):
                facts = [fact for fact, of in about if of == agent]
                held.append(
                    {
                        "key": observation.key if whole else f"{observation.key}:{agent}",
                        "at": when.isoformat(),
                        "rank": rank,
                        "place": place,
                        "requester": observation.requester,
                        "root": observation.root,
                        "facts": [[type(f).__name__, asdict(f)] for f in facts],
                    }
                )
            self.timed[index] = (when, rank, place, replace(observation, facts=kept))
        return held

    def _headless_agents(self, *, growing: bool = False) -> set[str]:
        """The agents of this session whose own file gave no row yet (and is not one of the
        host's own helpers): empty, or its first line still being written; with
        ``growing``, only those whose file changed since the last run."""
        waiting: set[str] = set()
        for found in self.group.agents:
            entry = self.entries.get(found.rel) or self.ledger.entry(found.rel)
            if entry is None or entry.get("speaker") or entry.get("internal"):
                continue
            if growing and self.ledger.unchanged(found):
                continue
            agent = entry.get("agent")
            if isinstance(agent, str) and not is_internal_agent(agent):
                waiting.add(agent)
        # A flat agent file beside the session that names no session yet may be one of its
        # agents' (read or not: it is read with its own session once its first row is).
        for found in self.group.strays:
            entry = self.ledger.entry(found.rel) or {}
            if entry.get("speaker") or entry.get("internal"):
                continue
            if growing and self.ledger.unchanged(found):
                continue
            agent = agent_of(found)
            if isinstance(agent, str) and not is_internal_agent(agent):
                waiting.add(agent)
        return waiting

    def _child_of(self, fact: Fact) -> str | None:
        """The child a fact is about, when it is one."""
        if isinstance(fact, ChildIdentified | ChildStarted):
            return fact.child
        if isinstance(fact, Stopped):
            return fact.conversation or self.spawns.spawned.get(fact.spawn_key or "")
        if isinstance(fact, Acted | Resumed):
            return fact.conversation
        return None

    def _observe_held_back(self) -> None:
        """Observe what the last run held back (:meth:`_hold_back_for_headless`), as it was."""
        for item in self.held:
            facts = _held_facts(item.get("facts"))
            at = parse_time(item.get("at"))
            if not facts or at is None or not isinstance(item.get("key"), str):
                continue
            observation = Observation(
                host=HOST,
                requester=item.get("requester"),
                key=item["key"],
                facts=facts,
                root=item.get("root"),
                workspace=(),
                at=at,
            )
            for fact in facts:
                self._note_fact(None, fact, at)
            self.released.add(len(self.timed))
            rank, place = int(item.get("rank") or 0), int(item.get("place") or 0)
            self.timed.append((at, rank, place, observation))


def _resume_sorts_at(stop: datetime | None, row: dict[str, Any]) -> datetime | None:
    """Where the observation taking a file's conversation on from its provisional ``stop``
    sorts: never after the row that takes it on (rows are not always in time order). It is
    dated at the stop all the same (``dated``): the engine takes a provisional stop back
    from its own time, and a fact dated before the stop (the row, stamped earlier) would
    take nothing back, leaving what stopped with it stopped. The file stops again at its new
    last row, which may be stamped before that stop: no earlier than anything the rows read
    before said (:attr:`FileState.latest`, kept in the ledger), as one import of the whole
    file stops it; that stop sorts after this (:attr:`FileState.went_on`), dated at its row."""
    at = row_time(row)
    return min(stop, at) if stop and at else stop or at


def load_calls(state: Any) -> dict[str, SpawnCall]:
    """``{key: [parent, time, prompt digest in hex or null]}`` as kept in the ledger
    (:func:`calls_state`); a call without a parent or a time is dropped."""
    calls: dict[str, SpawnCall] = {}
    for key, fields in (state if isinstance(state, dict) else {}).items():
        if not isinstance(fields, list) or len(fields) != 3:
            continue
        parent, at, prompt = fields
        when = parse_time(at)
        if isinstance(parent, str) and when is not None:
            digest = bytes.fromhex(prompt) if isinstance(prompt, str) else None
            calls[key] = SpawnCall(parent, when, digest)
    return calls


def calls_state(calls: Mapping[str, SpawnCall], keys: Container[str]) -> dict[str, Any]:
    """The calls of ``keys`` for the ledger (:func:`load_calls`): those without a time
    (never here: the import times every row) are not kept."""
    return {
        key: [call.parent, call.at.isoformat(), call.prompt.hex() if call.prompt else None]
        for key, call in calls.items()
        if key in keys and call.at is not None
    }


def load_later(state: Any) -> dict[str, list[list[str]]]:
    """``{conversation: [[time, kind], ...]}`` as kept in the ledger."""
    found: dict[str, list[list[str]]] = {}
    for conversation, later in (state if isinstance(state, dict) else {}).items():
        if isinstance(later, list):
            found[conversation] = [
                [pair[0], pair[1]]
                for pair in later
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
            ]
    return found


def load_own(state: Any) -> dict[str, tuple[str, list[list[str]]]]:
    """``{agent: [time, [[time, kind], ...]]}`` as kept in the ledger."""
    found: dict[str, tuple[str, list[list[str]]]] = {}
    for agent, value in (state if isinstance(state, dict) else {}).items():
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str):
            found[agent] = (value[0], load_later({agent: value[1]}).get(agent, []))
    return found


def _held_facts(rows: Any) -> tuple[Fact, ...]:
    """Facts kept as ``[name, fields]`` pairs (:meth:`Carryover._hold_back_for_headless`)."""
    facts: list[Fact] = []
    for pair in rows if isinstance(rows, list) else ():
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[1], dict):
            continue
        kind = _HELD_FACT_TYPES.get(pair[0])
        if kind is not None:
            try:
                facts.append(kind(**pair[1]))
            except TypeError:
                continue
    return tuple(facts)
