"""What one Codex import leaves the next about rollouts still being written.

Every import leaves the history one import of the finished files would give, at every
moment. A rollout's last row stopped its thread only because the file ended there (a
provisional stop): a root's stop also stopped every live thread below it. When the file goes
on, its thread goes on from that very moment, with the threads its stop stopped, and what
would have stopped or woken them since, journaled while they stood stopped (so changing
nothing), is observed again after that, so that it comes out as it happened. As
:mod:`.claude_carryover` does for Claude sessions.

Kept per root in the ledger group ``carry:<root>``:

``own``
    ``{thread: [time, later]}``: the threads of the tree their own file's last row stopped,
    provisionally, each with ``later``, what happened to it since as ``[time, kind]`` pairs
    (``act``, ``stop``, and ``root`` for the root's own provisional stop, which would have
    stopped it had its file gone on).
``ended``
    ``[time, {thread: later}]``: the root's own provisional stop, with the threads it stopped
    below it and what happened to each since (``act``, ``stop``, ``own`` for the thread's
    own provisional stop).

Times are kept as ISO-8601 text (this module writes ``datetime.isoformat()`` of UTC times)
and compared only once parsed (:func:`~lineage_es.hosts.base.parse_time`): ISO text in
mixed forms (``Z`` or ``+00:00``, fractions of other lengths or none) does not sort as time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lineage_es.facts import Acted, Fact, Observation, Resumed, Stopped
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.codex import HOST

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.importers.driver import Timed
    from lineage_es.importers.ledger import Ledger

Later = list[list[str]]


@dataclass
class Stop:
    """A provisional stop this run made: the file's thread, its root, when, its observation."""

    thread: str
    root: str
    at: datetime
    observation: Observation


@dataclass
class GoesOn:
    """A file whose last import stopped its thread at ``stop`` goes on at ``at``."""

    thread: str
    root: str
    stop: datetime
    at: datetime | None
    key: str
    rank: int


@dataclass
class _TreeStops:
    """The provisional stops kept for one root's tree (``own`` and ``ended``, as above), and
    whether this run changed them."""

    own: dict[str, list[Any]] = field(default_factory=dict)
    ended: list[Any] | None = None
    changed: bool = False

    def state(self) -> dict[str, Any]:
        """What the ledger keeps of them (``{}``: nothing is in place)."""
        if not self.own and self.ended is None:
            return {}
        return {"own": self.own, "ended": self.ended}


class Carry:
    """The provisional stops of the trees one import touches."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.trees: dict[str, _TreeStops] = {}
        #: The observations :meth:`go_on` made: what they observe again is noted already.
        self.again: set[int] = set()
        #: What this run's rows did to the threads that go on, as (time, kind) by thread.
        self.steps: dict[str, list[tuple[datetime, str]]] = {}

    def tree(self, root: str) -> _TreeStops:
        """The stops kept for ``root``'s tree, loaded from the ledger on first use."""
        tree = self.trees.get(root)
        if tree is None:
            state = self.ledger.group(f"carry:{root}")
            own = state.get("own")
            ended = state.get("ended")
            tree = _TreeStops(own=_load_own(own), ended=_load_ended(ended))
            self.trees[root] = tree
        return tree

    # -- files that go on ----------------------------------------------------------------

    def go_on(self, files: list[GoesOn], read: list[Timed]) -> list[Timed]:
        """The observations that take on again the threads of ``files`` from their stop:
        the roots' first (a root's stop that did not happen stops no thread after all).
        ``read`` is what this run read: a thread its own rows stopped again before a root's
        stop was not live for that stop to stop."""
        timed: list[Timed] = []
        going = {(f.root, f.thread) for f in files}
        threads = {f.thread for f in files if f.thread != f.root}
        self.steps = {}
        for when, _, _, observation in read:
            for fact in observation.facts:
                if isinstance(fact, Acted | Resumed) and fact.conversation in threads:
                    self.steps.setdefault(fact.conversation, []).append((when, "act"))
                elif isinstance(fact, Stopped) and fact.conversation in threads:
                    self.steps.setdefault(fact.conversation, []).append((when, "stop"))
        for item in sorted(files, key=lambda f: f.thread != f.root):
            tree = self.tree(item.root)
            tree.changed = True
            when = min(item.stop, item.at) if item.at is not None else item.stop
            own = tree.own.pop(item.thread, None)
            later: Later = own[1] if own is not None else []
            facts: list[Fact] = [Acted(item.thread)]
            if item.thread == item.root:
                ended = tree.ended
                tree.ended = None
                for kept in tree.own.values():
                    kept[1] = [pair for pair in kept[1] if pair[1] != "root"]
                children = ended[1] if ended is not None else {}
                for child in sorted(children):
                    # A thread resumed since by another file's row stands live: stopped first,
                    # so that it is journaled live from the root's stop on.
                    facts.extend((Stopped(conversation=child), Resumed(child)))
                timed.append(self._observed(item, item.thread, when, facts, "resume"))
                for child, steps in sorted(children.items()):
                    timed.extend(self._observe_again(item, tree, child, steps, going))
            elif own is not None:  # otherwise its file's end stopped nothing (it stood stopped)
                facts.insert(0, Stopped(conversation=item.thread))
                timed.append(self._observed(item, item.thread, when, facts, "resume"))
                timed.extend(self._observe_again(item, tree, item.thread, later, going))
        self.again = {id(observation) for *_, observation in timed}
        return timed

    def _observe_again(
        self, item: GoesOn, tree: _TreeStops, thread: str, later: Later, going: set[tuple[str, str]]
    ) -> list[Timed]:
        """What happened to ``thread`` after its stop, observed again in order."""
        timed: list[Timed] = []
        for number, (time, kind) in enumerate(later):
            at = parse_time(time)
            if at is None:
                continue
            if kind == "own" and (item.root, thread) in going:
                continue  # its own stop is taken back too
            if kind == "own" and parse_time((tree.own.get(thread) or [None])[0]) != at:
                continue  # its own stop was taken back since
            if kind == "root":
                ended = tree.ended
                if ended is None or parse_time(ended[0]) != at:
                    continue  # the root's stop was taken back
                if not self._live_at(thread, later[:number], at):
                    continue  # stopped again before it: the root's stop found it stopped
                ended[1].setdefault(thread, [])
                # It would have stopped there: what it did after goes on with the root's stop.
                ended[1][thread] = [[t, k] for t, k in later[number + 1 :] if k != "root"]
            # A file end (its own, the root's), observed again, is as provisional as it was.
            fact: Fact = (
                Resumed(thread)
                if kind == "act"
                else Stopped(conversation=thread, provisional=kind in ("own", "root"))
            )
            timed.append(self._observed(item, thread, at, [fact], f"again:{thread}:{number}"))
        return timed

    def _live_at(self, thread: str, before: Later, at: datetime) -> bool:
        """Whether ``thread``, taken on again, is live at ``at`` by what happened to it
        since (the steps noted before, and its rows read by this run), in time order."""
        noted = [(parse_time(t), k) for t, k in before if k in ("act", "stop")]
        steps = sorted(
            [(t, k) for t, k in noted if t is not None]
            + [step for step in self.steps.get(thread, ()) if step[0] <= at]
        )
        return not steps or steps[-1][1] == "act"

    @staticmethod
    def _observed(item: GoesOn, thread: str, at: datetime, facts: list[Fact], suffix: str) -> Timed:
        observation = Observation(
            host=HOST,
            requester=thread,
            key=f"{item.key}:{suffix}",
            facts=tuple(facts),
            root=item.root,
            workspace=(),
            at=at,
        )
        return (at, item.rank, 0, observation)

    # -- what this run stopped -------------------------------------------------------------

    def note(self, engine: Engine, before: int, timed: list[Timed], stops: list[Stop]) -> None:
        """Go through this run's observations, in the order the engine took them (``timed``
        is sorted), after the engine journaled them from position ``before``: start the
        provisional stops ``stops`` made, with the threads a root's stopped (as journaled),
        and note what happened after each stop still in place."""
        by_observation = {id(stop.observation): stop for stop in stops}
        # What each stop's observation stopped, as journaled: a root's stop, the threads below
        # it; a child's, the child itself unless it stood stopped already.
        journaled: dict[str, set[str]] = {stop.observation.key: set() for stop in stops}
        if journaled:
            for event in engine.journal(before):
                state = event.state
                key = state.get("fact")
                if key in journaled and event.topic.endswith(".Stopped"):
                    conversation = state.get("conversation")
                    if isinstance(conversation, str):
                        journaled[key].add(conversation)
        for when, _, _, observation in timed:
            requester = observation.requester
            if requester is None or id(observation) in self.again:
                continue
            stop = by_observation.get(id(observation))
            root = stop.root if stop is not None else observation.root or requester
            if stop is None and root not in self.trees and not self.ledger.group(f"carry:{root}"):
                continue  # a tree no provisional stop concerns
            tree = self.tree(root)
            for fact in observation.facts:
                if (
                    stop is not None
                    and isinstance(fact, Stopped)
                    and fact.conversation == stop.thread
                    and fact.provisional
                ):
                    stopped = journaled.get(observation.key, set())
                    self._keep_stop(tree, stop, when.isoformat(), stopped, observation)
                elif isinstance(fact, Acted | Resumed):
                    self._note_step(tree, fact.conversation, when, "act")
                elif isinstance(fact, Stopped) and fact.conversation is not None:
                    self._note_step(tree, fact.conversation, when, "stop")

    def _keep_stop(
        self, tree: _TreeStops, stop: Stop, time: str, stopped: set[str], observation: Observation
    ) -> None:
        """Keep the provisional stop ``stop`` (``stopped``: what it stopped, as journaled)."""
        tree.changed = True
        if stop.thread != stop.root and stop.thread not in stopped:
            # It stood stopped already (its parent closed it): its file's end stopped nothing
            # its file going on should take back, and no older stop of it is still in place.
            tree.own.pop(stop.thread, None)
            return
        if stop.thread == stop.root:
            named = {
                f.conversation
                for f in observation.facts
                if isinstance(f, Stopped) and f.conversation != stop.thread
            }
            below = sorted(stopped - named - {stop.thread})
            tree.ended = [time, {child: [] for child in below}]
            for thread, own in tree.own.items():
                if thread != stop.thread:
                    own[1].append([time, "root"])
        elif tree.ended is not None and stop.thread in tree.ended[1]:
            tree.ended[1][stop.thread].append([time, "own"])
        tree.own[stop.thread] = [time, []]

    @staticmethod
    def _note_step(tree: _TreeStops, thread: str, when: datetime, kind: str) -> None:
        """Note what happened to ``thread`` at ``when``, after a provisional stop of its own
        or its root's still in place (kept as ``when.isoformat()``)."""
        own = tree.own.get(thread)
        if own is not None and _not_before(when, own[0]):
            own[1].append([when.isoformat(), kind])
            tree.changed = True
        ended = tree.ended
        if ended is not None and thread in ended[1] and _not_before(when, ended[0]):
            ended[1][thread].append([when.isoformat(), kind])
            tree.changed = True

    def save(self) -> None:
        """Put the trees this run changed into the ledger (saved with it)."""
        for root, tree in self.trees.items():
            if tree.changed:
                self.ledger.put_group(f"carry:{root}", tree.state())


def _not_before(when: datetime, stop: str) -> bool:
    """Whether ``when`` is at or after the stop kept as ``stop`` (``False`` if unreadable)."""
    at = parse_time(stop)
    return at is not None and when >= at


def _load_later(value: Any) -> Later:
    """``[[time, kind], ...]`` as kept in the ledger; other items are dropped."""
    return [
        [pair[0], pair[1]]
        for pair in (value if isinstance(value, list) else ())
        if isinstance(pair, list)
        and len(pair) == 2
        and isinstance(pair[0], str)
        and isinstance(pair[1], str)
    ]


def _load_own(value: Any) -> dict[str, list[Any]]:
    """``{thread: [time, later]}`` as kept in the ledger; malformed entries are dropped."""
    return {
        thread: [stop[0], _load_later(stop[1])]
        for thread, stop in (value if isinstance(value, dict) else {}).items()
        if isinstance(stop, list) and len(stop) == 2 and isinstance(stop[0], str)
    }


def _load_ended(value: Any) -> list[Any] | None:
    """``[time, {thread: later}]`` as kept in the ledger, or ``None``."""
    if not (
        isinstance(value, list)
        and len(value) == 2
        and isinstance(value[0], str)
        and isinstance(value[1], dict)
    ):
        return None
    return [value[0], {thread: _load_later(later) for thread, later in value[1].items()}]
