"""A root's final session end read late holds its descendants to it, as one read first does.

shared/spec/LINEAGE.md: "Background children routinely outlive their parent's turn, but not
its session: a root's session end stops its live descendants with it." A child's own stop
for good read after its root's end is capped at that end; the same facts read the other way
round (the child's later stop first, its root's end after) give the same history: the child
stops at the end, and a view as of a time between the two has it stopped.
"""

from __future__ import annotations

from lineage_es.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, RootSeen, SessionEnded, Stopped
from tests.test_import_claude import AGENT, SESSION, members
from tests.test_provisional_stops import feed, live, stamp, stops

GRANDCHILD = "a2000000000000002"


def started_with_a_child(engine: Engine) -> None:
    feed(engine, 1, RootSeen(SESSION, "startup"))
    feed(engine, 2, ChildIdentified(SESSION, AGENT, "native"))


def test_a_final_session_end_read_late_pulls_a_childs_later_stop_for_good_back_to_it(
    memory: Engine,
) -> None:
    """AGENT's own stop at 10 s was journaled first; the session end at 5 s, read late."""
    started_with_a_child(memory)
    feed(memory, 10, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert stops(memory)[-2:] == [(AGENT, stamp(5), False), (SESSION, stamp(5), False)]


def test_a_child_is_not_live_between_its_roots_late_end_and_its_own_later_stop(
    memory: Engine,
) -> None:
    started_with_a_child(memory)
    feed(memory, 10, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    assert live(memory, 4) == {SESSION, AGENT}
    assert live(memory, 7) == set() and live(memory, 11) == set()


def test_a_late_end_and_a_childs_later_stop_give_one_history_in_either_order() -> None:
    histories = []
    for order in ((10, 5), (5, 10)):
        with open_engine("memory://") as engine:
            started_with_a_child(engine)
            for second in order:
                if second == 10:
                    feed(engine, 10, Stopped(conversation=AGENT), requester=AGENT)
                else:
                    feed(engine, 5, SessionEnded(SESSION))
            child = members(engine)[AGENT]
            timeline = [live(engine, second) for second in (4, 7, 11)]
            histories.append((child.stopped_at, timeline))
    assert histories[0] == histories[1]


def test_a_final_session_end_read_late_pulls_a_grandchilds_later_stop_for_good_back_too(
    memory: Engine,
) -> None:
    started_with_a_child(memory)
    feed(memory, 3, ChildIdentified(AGENT, GRANDCHILD, "native"), requester=AGENT)
    feed(memory, 8, Stopped(conversation=GRANDCHILD), requester=GRANDCHILD)
    feed(memory, 5, SessionEnded(SESSION))
    assert members(memory)[GRANDCHILD].stopped_at == stamp(5)
    assert live(memory, 6) == set()


def test_a_childs_stop_for_good_before_its_roots_late_end_stays_where_it_was(
    memory: Engine,
) -> None:
    started_with_a_child(memory)
    feed(memory, 3, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    assert members(memory)[AGENT].stopped_at == stamp(3)
    assert live(memory, 4) == {SESSION}


def test_a_provisional_session_end_pulls_back_no_childs_stop_for_good(memory: Engine) -> None:
    """An import's stop of the root where its file ended says nothing of where it ended."""
    started_with_a_child(memory)
    feed(memory, 10, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 5, Stopped(conversation=SESSION, provisional=True))
    assert members(memory)[AGENT].stopped_at == stamp(10)
