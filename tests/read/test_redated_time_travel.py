"""A child re-dated to before an end of its root's session keeps what it did since.

A child first placed by its act at 12 s, after the session ended (5 s) and was resumed
(10 s), and re-dated by its own start at 3 s, read last, was held to the end from 5 s until
that act. Its stops and resumes from 12 s on, journaled before the re-dating, stand: in the
current view, in a rebuilt one, and in a view as of any time (time travel), as when its start
is read first.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lineage_es.domain.topics import upcast
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import Acted, ChildIdentified, RootSeen, SessionEnded, Stopped
from lineage_es.journal import export_journal, import_journal
from tests.support.claude_projects import AGENT, SESSION, members
from tests.support.growing import feed, live, session_ended_and_resumed

STOPPED = "lineage:RootLineage.Stopped"
RESUMED = "lineage:RootLineage.Resumed"


def stopped_and_acting_again(engine: Engine, start_first: bool) -> None:
    """AGENT acted at 12 s, stopped at 14 s and acted again at 16 s; its start at 3 s is
    read first, or last."""
    session_ended_and_resumed(engine)
    if start_first:
        feed(engine, 3, ChildIdentified(SESSION, AGENT, "native"))
    feed(engine, 12, Acted(AGENT), requester=AGENT)
    feed(engine, 14, Stopped(conversation=AGENT), requester=AGENT)
    feed(engine, 16, Acted(AGENT), requester=AGENT)
    if not start_first:
        feed(engine, 3, ChildIdentified(SESSION, AGENT, "native"))


def acting_past_a_later_end(engine: Engine, start_first: bool) -> None:
    """AGENT acted at 12 s; the session ended again at 20 s and was resumed at 25 s; AGENT
    acted at 27 s; its start at 3 s is read first, or last."""
    session_ended_and_resumed(engine)
    if start_first:
        feed(engine, 3, ChildIdentified(SESSION, AGENT, "native"))
    feed(engine, 12, Acted(AGENT), requester=AGENT)
    feed(engine, 20, SessionEnded(SESSION))
    feed(engine, 25, Acted(SESSION))
    feed(engine, 27, Acted(AGENT), requester=AGENT)
    if not start_first:
        feed(engine, 3, ChildIdentified(SESSION, AGENT, "native"))


def test_a_re_dated_child_is_stopped_as_of_a_time_between_its_own_stop_and_its_next_act(
    memory: Engine,
) -> None:
    stopped_and_acting_again(memory, start_first=False)
    assert AGENT not in live(memory, 15)


def test_a_re_dated_child_resumed_after_a_later_end_of_its_root_stays_live(
    memory: Engine,
) -> None:
    acting_past_a_later_end(memory, start_first=False)
    assert members(memory)[AGENT].status == "live"


def test_a_re_dated_child_is_live_as_of_a_time_after_it_acted_past_a_later_end(
    memory: Engine,
) -> None:
    acting_past_a_later_end(memory, start_first=False)
    assert AGENT in live(memory, 28)


def test_a_rebuilt_view_keeps_a_re_dated_child_resumed_after_a_later_end_live(
    memory: Engine,
) -> None:
    acting_past_a_later_end(memory, start_first=False)
    memory.rebuild()
    assert members(memory)[AGENT].status == "live"


@pytest.mark.parametrize(
    ("history", "seconds"),
    [
        (stopped_and_acting_again, (2, 4, 6, 11, 12, 13, 14, 15, 16, 17)),
        (acting_past_a_later_end, (4, 6, 11, 13, 20, 21, 26, 27, 28)),
    ],
)
def test_a_view_as_of_any_time_is_the_same_whether_the_start_is_read_first_or_last(
    history: Callable[[Engine, bool], None], seconds: tuple[int, ...]
) -> None:
    with open_engine("memory://") as first, open_engine("memory://") as last:
        history(first, True)
        history(last, False)
        for second in seconds:
            assert live(last, second) == live(first, second), second


def test_a_re_dated_childs_history_survives_a_journal_export_and_import(
    tmp_path: Path, memory: Engine
) -> None:
    stopped_and_acting_again(memory, start_first=False)
    path = tmp_path / "journal.jsonl"
    with path.open("wb") as out:
        export_journal(memory, out)
    with open_engine("memory://") as copy:
        import_journal(copy, path)
        assert [AGENT in live(copy, second) for second in (4, 11, 13, 15, 17)] == [
            True,
            False,
            True,
            False,
            True,
        ]


def test_a_child_re_dated_twice_is_held_to_both_ends_and_runs_again_from_its_act(
    memory: Engine,
) -> None:
    """The session ended at 5 s (resumed at 7 s) and at 10 s (resumed at 11 s); AGENT's act
    at 12 s placed it; its start at 8 s, then its start at 3 s, read after."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 7, Acted(SESSION))
    feed(memory, 10, SessionEnded(SESSION))
    feed(memory, 11, Acted(SESSION))
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    feed(memory, 8, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert [AGENT in live(memory, second) for second in (4, 6, 10.5, 11.5, 13)] == [
        True,
        False,
        False,
        False,
        True,
    ]


def test_a_version_2_stop_stops_its_node_from_its_time_on() -> None:
    state: dict[str, object] = {"class_version": 2, "conversation": AGENT, "spawn_key": None}
    state |= {"provisional": False, "cascade": True}
    upcast(STOPPED, state)
    assert state["until"] is None


def test_a_version_1_resume_resumes_its_node() -> None:
    state: dict[str, object] = {"conversation": AGENT}
    upcast(RESUMED, state)
    assert state["restores"] is False
