"""A fact about a node that changes nothing else journals a ``Seen`` once
:data:`~lineage_es.domain.seen_events.SEEN_INTERVAL` has passed since the node's last
recorded time, and only then: the journal knows every node's latest fact to that interval,
and grows by at most one event per node per interval of activity."""

from __future__ import annotations

from lineage_es.domain.seen_events import SEEN_INTERVAL
from lineage_es.engine.engine import Engine
from tests.support.quiet_facts import CHILD, ROOT, act, start_family, topics

INTERVAL = SEEN_INTERVAL.total_seconds()


def test_an_act_within_the_interval_journals_nothing(engine: Engine) -> None:
    start_family(engine)
    before = topics(engine)
    act(engine, CHILD, seconds=1 + INTERVAL - 1)
    assert topics(engine) == before


def test_an_act_past_the_interval_journals_one_seen(engine: Engine) -> None:
    start_family(engine)
    before = topics(engine)
    act(engine, CHILD, seconds=1 + INTERVAL + 1)
    assert topics(engine) == [*before, "Seen"]


def test_a_busy_node_journals_one_seen_per_interval(engine: Engine) -> None:
    """An act every sixth of an interval for 5 intervals: one Seen per interval, not one
    per act."""
    start_family(engine)
    before = len(topics(engine))
    for tick in range(1, 31):
        act(engine, CHILD, seconds=1 + INTERVAL / 6 * tick)
    seen = len(topics(engine)) - before
    assert seen == 5


def test_the_seen_names_the_node_that_acted(engine: Engine) -> None:
    start_family(engine)
    act(engine, ROOT, seconds=INTERVAL * 3)
    (last,) = list(engine.journal())[-1:]
    assert (last.topic, last.state["conversation"]) == ("lineage:RootLineage.Seen", ROOT)


def test_a_redelivered_act_journals_no_second_seen(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=INTERVAL * 2, key="same-payload")
    after_first = topics(engine)
    act(engine, CHILD, seconds=INTERVAL * 4, key="same-payload")
    assert topics(engine) == after_first


def test_the_interval_counts_from_the_last_event_of_the_node(engine: Engine) -> None:
    """A Seen at 2 intervals: an act 1.5 intervals after the start, but half an interval
    after that Seen, journals nothing."""
    start_family(engine)
    act(engine, CHILD, seconds=INTERVAL * 2)
    before = topics(engine)
    act(engine, CHILD, seconds=INTERVAL * 2.5)
    assert topics(engine) == before
