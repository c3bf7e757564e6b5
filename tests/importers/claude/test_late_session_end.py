"""A root's session end read after a child's own later stop, and a resume read after both.

A child's own stop for good journaled before its root's end is read keeps its time: a resume
of the root read later still shows the child went on (the reviewer's case: the child's facts
read first, then the root's end and its resume, as an import reading the subagent's file
first gives them). The same facts read in time order give the same final state.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lineage_es.engine.engine import Engine
from lineage_es.facts import Acted, ChildIdentified, RootSeen, SessionEnded, Stopped
from tests.support.claude_projects import AGENT, SESSION, members
from tests.support.growing import feed, live, stamp


def child_first(engine: Engine) -> None:
    """AGENT starts at 2, acts at 26, stops at 35; then the root's end at 21 and its resume
    at 23 are read."""
    feed(engine, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(engine, 26, Acted(AGENT), requester=AGENT)
    feed(engine, 35, Stopped(conversation=AGENT), requester=AGENT)
    feed(engine, 21, SessionEnded(SESSION))
    feed(engine, 23, Acted(SESSION))


def in_time_order(engine: Engine) -> None:
    feed(engine, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(engine, 21, SessionEnded(SESSION))
    feed(engine, 23, Acted(SESSION))
    feed(engine, 26, Acted(AGENT), requester=AGENT)
    feed(engine, 35, Stopped(conversation=AGENT), requester=AGENT)


@pytest.mark.parametrize("order", [child_first, in_time_order])
def test_a_child_that_went_on_after_its_roots_resume_stops_at_its_own_stop(
    memory: Engine, order: Callable[[Engine], None]
) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    order(memory)
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(35))


@pytest.mark.parametrize("order", [child_first, in_time_order])
def test_a_child_that_went_on_after_its_roots_resume_is_live_after_its_act(
    memory: Engine, order: Callable[[Engine], None]
) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    order(memory)
    assert AGENT in live(memory, 30)
