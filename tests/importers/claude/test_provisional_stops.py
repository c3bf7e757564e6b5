"""Hooks and imports on one store: an import's stop where a file ended is provisional.

shared/spec/LINEAGE.md: "a root stops when its session ends (SessionEnd, sessionEnd)". An
import stops each conversation at its file's last row only because the file ended there (it
may go on); a host's own stop is a stop for good. So, whichever came first:

- a fact dated before a node's stop (a row older than the stop, read late) resumes nothing;
- a node stopped provisionally that a later fact of its own shows went on is taken back from
  that stop: a later act resumes it from there (no gap), a later stop of its own moves its stop
  there (a stop another node reports, a parent's result, says only it was done by then);
- a native stop (a hook's SessionEnd) is neither undone by an import's older rows nor
  replaced by its provisional stop, and replaces a provisional stop at its very time;
- no node outlives its root's session end for good: not a child placed or re-dated late,
  and not once the root is really resumed (that end still holds for what came before it).
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.domain.topics import upcast
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Resumed,
    RootSeen,
    SessionEnded,
    Stopped,
)
from tests.support import codex_sessions as cx
from tests.support.claude_projects import AGENT, SESSION, Session, at, members, one_child, run
from tests.support.growing import feed, live, session_ended_and_resumed, stamp

STOPPED = "lineage:RootLineage.Stopped"
RESUMED = "lineage:RootLineage.Resumed"
TRANSCRIPT = f"/Users/dev/.claude/projects/-w-app/{SESSION}.jsonl"


def claude_hook(event: str, **fields: Any) -> dict[str, Any]:
    """A Claude Code hook payload of SESSION (inside ``agent_id`` when given)."""
    payload = {
        "session_id": SESSION,
        "transcript_path": TRANSCRIPT,
        "cwd": "/w/app",
        "hook_event_name": event,
    }
    return payload | fields


def hooks(engine: Engine, *timed: tuple[float, dict[str, Any]]) -> None:
    for second, payload in timed:
        engine.observe("claude", payload, at=at(0) + timedelta(seconds=second))


def stops(engine: Engine) -> list[tuple[str, str, bool]]:
    """Each journaled stop: (conversation, time, provisional)."""
    return [
        (e.state["conversation"], e.timestamp, e.state["provisional"])
        for e in engine.journal()
        if e.topic == STOPPED
    ]


def resumes(engine: Engine, conversation: str) -> list[str]:
    return [
        e.timestamp
        for e in engine.journal()
        if e.topic == RESUMED and e.state["conversation"] == conversation
    ]


def partial_session(folder: Path) -> Session:
    """A session whose root spawned AGENT at 2 s; AGENT's file has its first row (3 s) only:
    the import reads the files as they stood at about 3 s."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    return s


# -- the import marks its file-end stops provisional ------------------------------------------


def test_an_imports_file_end_stops_are_provisional_and_a_hooks_stops_are_not(
    tmp_path: Path, memory: Engine
) -> None:
    one_child(tmp_path)
    run(memory, tmp_path)
    assert stops(memory) == [(AGENT, stamp(6), True), (SESSION, stamp(9), True)]
    other = open_engine("memory://")
    hooks(other, (1, claude_hook("SessionStart", source="startup")))
    hooks(other, (5, claude_hook("SessionEnd", reason="other")))
    assert stops(other) == [(SESSION, stamp(5), False)]


def test_a_provisional_root_stop_stops_its_live_children_provisionally(memory: Engine) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    assert stops(memory) == [(AGENT, stamp(9), True), (SESSION, stamp(9), True)]


def test_a_child_stopped_with_its_root_stops_where_its_own_record_read_late_says(
    memory: Engine,
) -> None:
    """Its root's record ended at 9 s; its own, read after, ended at 6 s."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 6, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    assert members(memory)[AGENT].stopped_at == stamp(6)
    assert AGENT not in live(memory, 7)


def test_a_child_that_stopped_on_its_own_keeps_its_stop_against_an_older_one(
    memory: Engine,
) -> None:
    """Its own record went on to 9 s: a stop of 6 s delivered late says nothing new."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 9, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 6, Stopped(conversation=AGENT), requester=AGENT)
    assert members(memory)[AGENT].stopped_at == stamp(9)


# -- a native stop stands ---------------------------------------------------------------------


def test_a_hooks_session_end_is_not_undone_by_an_import_of_older_rows(
    tmp_path: Path, memory: Engine
) -> None:
    """(c) then (a): the session ended at 20 s; its file, imported after, ends at 9 s."""
    hooks(
        memory,
        (1, claude_hook("SessionStart", source="startup")),
        (1, claude_hook("UserPromptSubmit", prompt="hi")),
        (9, claude_hook("Stop", stop_hook_active=False)),
        (20, claude_hook("SessionEnd", reason="other")),
    )
    one_child(tmp_path)
    run(memory, tmp_path)
    root = members(memory)[SESSION]
    assert (root.status, root.stopped_at) == ("stopped", stamp(20))
    assert resumes(memory, SESSION) == []  # its first row (1 s) is older than the end
    assert SESSION in live(memory, 15)
    assert live(memory, 21) == set()


def test_an_import_of_a_live_session_stops_it_provisionally_and_the_next_hook_takes_it_back(
    tmp_path: Path, memory: Engine
) -> None:
    """(c) then (a) while the session goes on: its next prompt resumes it from the file's
    end, with no gap."""
    hooks(
        memory,
        (1, claude_hook("SessionStart", source="startup")),
        (1, claude_hook("UserPromptSubmit", prompt="hi")),
    )
    one_child(tmp_path)
    run(memory, tmp_path)
    assert members(memory)[SESSION].stopped_at == stamp(9)
    hooks(memory, (30, claude_hook("UserPromptSubmit", prompt="more")))
    assert resumes(memory, SESSION) == [stamp(9)]
    assert SESSION in live(memory, 15)
    hooks(memory, (40, claude_hook("SessionEnd", reason="other")))
    assert members(memory)[SESSION].stopped_at == stamp(40)
    assert SESSION in live(memory, 35)


# -- a provisional stop gives way to later facts of its own -----------------------------------


def test_a_subagent_stop_after_a_partial_import_moves_the_childs_stop_to_it(
    tmp_path: Path, memory: Engine
) -> None:
    """(a) then (c): the import stopped AGENT at its file's first row (3 s)."""
    partial_session(tmp_path)
    run(memory, tmp_path)
    assert members(memory)[AGENT].stopped_at == stamp(3)
    hooks(
        memory,
        (6, claude_hook("SubagentStop", agent_id=AGENT, agent_type="Explore")),
        (
            7,
            claude_hook(
                "PostToolUse",
                tool_name="Agent",
                tool_use_id="toolu_A",
                tool_input={"prompt": "do it", "subagent_type": "Explore"},
                tool_response={"status": "completed", "agentId": AGENT},
            ),
        ),
        (9, claude_hook("Stop", stop_hook_active=False)),
    )
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(6))
    assert resumes(memory, AGENT) == [stamp(3)]
    assert AGENT in live(memory, 4) and AGENT in live(memory, 5.5)
    assert AGENT not in live(memory, 6.5)
    assert SESSION in live(memory, 5)  # its Stop at 9 s took the root back from 2 s


def test_a_parents_result_after_a_provisional_stop_leaves_it_where_it_was(
    tmp_path: Path, memory: Engine
) -> None:
    """A stop another node reports says the child was done by then, not that it ran on."""
    partial_session(tmp_path)
    run(memory, tmp_path)
    hooks(
        memory,
        (
            7,
            claude_hook(
                "PostToolUse",
                tool_name="Agent",
                tool_use_id="toolu_A",
                tool_input={"prompt": "do it"},
                tool_response={"status": "completed", "agentId": AGENT},
            ),
        ),
    )
    assert members(memory)[AGENT].stopped_at == stamp(3)
    assert resumes(memory, AGENT) == []


def test_an_act_of_the_child_after_a_partial_import_resumes_it_from_its_stop(
    tmp_path: Path, memory: Engine
) -> None:
    partial_session(tmp_path)
    run(memory, tmp_path)
    hooks(
        memory,
        (5, claude_hook("PreToolUse", agent_id=AGENT, tool_name="Read", tool_input={})),
    )
    assert members(memory)[AGENT].status == "live"
    assert resumes(memory, AGENT) == [stamp(3)]
    assert AGENT in live(memory, 4)


def test_a_codex_subagent_stop_after_a_partial_import_moves_the_childs_stop(
    tmp_path: Path, memory: Engine
) -> None:
    cx.parent_spawning(tmp_path)
    cx.rollout(tmp_path, cx.CHILD, cx.spawned(3, cx.CHILD, cx.PARENT), cx.message(4))
    cx.run(memory, tmp_path)
    child = cx.family(memory)[cx.CHILD]
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:04")
    payload = {
        "session_id": cx.PARENT,
        "turn_id": "019a0000-0000-7000-8000-0000000000f1",
        "transcript_path": "/w/rollout.jsonl",
        "cwd": "/w",
        "hook_event_name": "SubagentStop",
        "agent_id": cx.CHILD,
    }
    memory.observe("codex", payload, at=cx.T0 + timedelta(seconds=8))
    assert cx.family(memory)[cx.CHILD].stopped_at == "2026-09-03T08:00:08.000000+00:00"
    assert cx.live_at(memory, 6)[0] >= {cx.CHILD}


# -- rows read late ---------------------------------------------------------------------------


def test_a_hook_dated_before_an_imports_stop_does_not_resume_it(
    tmp_path: Path, memory: Engine
) -> None:
    """A recording ingested after the import: its prompt at 5 s is older than the stop."""
    one_child(tmp_path)
    run(memory, tmp_path)
    hooks(memory, (5, claude_hook("UserPromptSubmit", prompt="hi")))
    root = members(memory)[SESSION]
    assert (root.status, root.stopped_at) == ("stopped", stamp(9))
    assert resumes(memory, SESSION) == []


def test_a_fact_at_a_stops_own_time_resumes_it(memory: Engine) -> None:
    """What a file that goes on gives: its node resumed at the very time of its stop."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 9, Resumed(SESSION))
    assert members(memory)[SESSION].status == "live"


def test_a_stop_for_good_is_resumed_by_a_later_act_at_the_acts_time(memory: Engine) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 3, Acted(SESSION))
    assert members(memory)[SESSION].status == "stopped"
    feed(memory, 8, Acted(SESSION))
    assert resumes(memory, SESSION) == [stamp(8)]
    feed(memory, 12, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 15, SessionEnded(SESSION))
    assert members(memory)[SESSION].stopped_at == stamp(15)
    assert resumes(memory, SESSION) == [stamp(8), stamp(12)]
    assert SESSION in live(memory, 13)


def test_a_provisional_stop_does_not_replace_a_native_one(memory: Engine) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 20, SessionEnded(SESSION))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 30, Stopped(conversation=SESSION, provisional=True))
    assert members(memory)[SESSION].stopped_at == stamp(20)
    assert stops(memory) == [(SESSION, stamp(20), False)]


# -- old journals and snapshots ----------------------------------------------------------------


def test_a_version_1_stop_loads_as_a_stop_for_good() -> None:
    state: dict[str, Any] = {"conversation": "c", "spawn_key": None}
    upcast(STOPPED, state)
    assert (state["provisional"], state["cascade"]) == (False, False)


@pytest.mark.parametrize("provisional", [False, True])
def test_a_node_of_an_old_snapshot_resumes_as_it_did(provisional: bool) -> None:
    """A node restored from a snapshot made before stops kept their time."""
    root = RootLineage.start("claude", SESSION, at=at(0), fact="r")
    root.stop(SESSION, None, at=at(9), fact="s", provisional=provisional)
    for key in ("stopped", "provisional", "cascade"):
        del root.nodes[SESSION][key]
    root.resume(SESSION, at=at(5), fact="late")
    assert root.nodes[SESSION]["status"] == "live"
    events = root.collect_events()
    assert (type(events[-1]).__name__, events[-1].timestamp) == ("Resumed", at(5))


# -- no node outlives its root's session ------------------------------------------------------


def test_a_childs_own_stop_read_after_its_roots_session_end_is_capped_at_the_end(
    memory: Engine,
) -> None:
    """The import stopped AGENT at 3 s; the session ended at 5 s; AGENT's own stop at 7 s,
    read late, shows it went on from 3 s, but not past its root's end."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 3, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 7, Stopped(conversation=AGENT), requester=AGENT)
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert resumes(memory, AGENT) == [stamp(3)]
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set() and live(memory, 8) == set()


def test_a_childs_provisional_stop_read_after_its_roots_session_end_is_capped_at_the_end(
    memory: Engine,
) -> None:
    """AGENT's file, imported again after the session ended at 5 s, now ends at 7 s: it went
    on from 3 s, up to its root's end, and stops there for good."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 3, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 7, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    assert stops(memory)[-1] == (AGENT, stamp(5), False)
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set() and live(memory, 8) == set()


def test_a_final_session_end_read_late_pulls_a_childs_later_provisional_stop_back_to_it(
    memory: Engine,
) -> None:
    """The import stopped AGENT where its file ended (7 s); the hook's SessionEnd at 5 s,
    journaled after, stops it there for good."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 7, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert stops(memory)[-2:] == [(AGENT, stamp(5), False), (SESSION, stamp(5), False)]
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set() and live(memory, 8) == set()


def test_a_final_session_end_pulls_back_a_grandchilds_provisional_stop_too(
    memory: Engine,
) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 3, ChildIdentified(AGENT, "grandchild", "native"), requester=AGENT)
    feed(memory, 8, Stopped(conversation="grandchild", provisional=True), requester="grandchild")
    feed(memory, 5, SessionEnded(SESSION))
    assert members(memory)["grandchild"].stopped_at == stamp(5)
    assert live(memory, 4) == {SESSION, AGENT, "grandchild"}
    assert live(memory, 6) == set()


def test_a_provisional_session_end_pulls_back_no_childs_stop(memory: Engine) -> None:
    """An import's stop of the root where its file ended says nothing of where it ended."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 7, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 5, Stopped(conversation=SESSION, provisional=True))
    assert members(memory)[AGENT].stopped_at == stamp(7)


def test_a_stop_of_a_child_placed_late_before_its_roots_end_is_capped_at_the_end(
    memory: Engine,
) -> None:
    """AGENT's start at 3 s is read after the session ended at 5 s."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 7, Stopped(conversation=AGENT), requester=AGENT)
    assert members(memory)[AGENT].stopped_at == stamp(5)
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set()


def test_a_root_resumed_after_its_end_lets_a_capped_child_run_again_from_its_next_act(
    memory: Engine,
) -> None:
    """A real resume starts a new lifetime: AGENT's stop, capped at the end (5 s), stands;
    its act at 12 s, after the root resumed at 10 s, resumes it then, and its stop at 15 s
    is its own."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 3, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 7, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 10, RootSeen(SESSION, "resume"))
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    feed(memory, 15, Stopped(conversation=AGENT), requester=AGENT)
    assert resumes(memory, AGENT) == [stamp(3), stamp(12)]
    assert members(memory)[AGENT].stopped_at == stamp(15)
    assert live(memory, 8) == set()
    assert live(memory, 11) == {SESSION}
    assert live(memory, 13) == {SESSION, AGENT}


# -- a real resume of the root does not undo the end before it --------------------------------


def ended_and_resumed(engine: Engine, child_stop: Stopped) -> None:
    """AGENT stopped at 3 s (``child_stop``); the session ended for good at 5 s and was
    resumed for real at 10 s (the root acted again)."""
    feed(engine, 1, RootSeen(SESSION, "startup"))
    feed(engine, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(engine, 3, child_stop, requester=AGENT)
    feed(engine, 5, SessionEnded(SESSION))
    feed(engine, 10, Acted(SESSION))


PROVISIONAL = Stopped(conversation=AGENT, provisional=True)
FOR_GOOD = Stopped(conversation=AGENT)


def test_a_childs_own_stop_read_after_its_root_resumed_is_capped_at_the_end_before_it(
    memory: Engine,
) -> None:
    """AGENT's stop at 7 s shows it went on from 3 s, but not past its root's end at 5 s: the
    resume at 10 s started a new lifetime, it did not undo that end."""
    ended_and_resumed(memory, PROVISIONAL)
    feed(memory, 7, Stopped(conversation=AGENT), requester=AGENT)
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert AGENT in live(memory, 4)
    assert AGENT not in live(memory, 6) and AGENT not in live(memory, 8)


def test_a_childs_act_after_its_roots_resume_runs_it_to_the_end_before_and_again_from_the_act(
    memory: Engine,
) -> None:
    """Taken back from its provisional stop up to its root's end, not past it; the act, in
    the root's new lifetime, resumes it then."""
    ended_and_resumed(memory, PROVISIONAL)
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    assert resumes(memory, AGENT) == [stamp(3), stamp(12)]
    assert AGENT in live(memory, 4) and AGENT in live(memory, 13)
    assert AGENT not in live(memory, 6) and AGENT not in live(memory, 11)


def test_a_childs_act_dated_before_its_roots_end_read_after_the_resume_runs_it_to_the_end(
    memory: Engine,
) -> None:
    ended_and_resumed(memory, PROVISIONAL)
    feed(memory, 4, Acted(AGENT), requester=AGENT)
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert AGENT in live(memory, 4.5)
    assert AGENT not in live(memory, 6)


@pytest.mark.parametrize("child_stop", [PROVISIONAL, FOR_GOOD], ids=["provisional", "for-good"])
def test_a_childs_act_dated_while_its_root_had_ended_read_after_the_resume_revives_nothing(
    memory: Engine, child_stop: Stopped
) -> None:
    """At 7 s its root's session had ended: the act changes what it would have changed then,
    nothing."""
    ended_and_resumed(memory, child_stop)
    feed(memory, 7, Acted(AGENT), requester=AGENT)
    assert members(memory)[AGENT].status == "stopped"
    assert resumes(memory, AGENT) == []


def test_a_child_stopped_for_good_resumed_by_an_act_before_its_roots_end_stops_at_the_end(
    memory: Engine,
) -> None:
    """AGENT stopped at 3 s and acted again at 4 s (read after the root's resume at 10 s): it
    ran from 4 s to its root's end at 5 s."""
    ended_and_resumed(memory, FOR_GOOD)
    feed(memory, 4, Acted(AGENT), requester=AGENT)
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert AGENT in live(memory, 4.5)
    assert AGENT not in live(memory, 6)


# -- a child placed late stops with its root ---------------------------------------------------


def test_a_child_placed_after_its_roots_final_end_is_stopped_at_the_end(memory: Engine) -> None:
    """AGENT's start at 3 s is read after the session ended at 5 s."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert stops(memory)[-1] == (AGENT, stamp(5), False)
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set()


def test_a_child_placed_after_its_roots_provisional_stop_stops_with_it_provisionally(
    memory: Engine,
) -> None:
    """The import stopped the root where its file ended (9 s); AGENT's start at 3 s is read
    after."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert stops(memory)[-1] == (AGENT, stamp(9), True)
    assert AGENT in live(memory, 8)
    assert live(memory, 10) == set()


def test_a_pending_child_placed_after_its_roots_final_end_is_stopped_at_the_end(
    memory: Engine,
) -> None:
    """A child known by its spawn key only (a transcript's start), read after the end."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 3, ChildStarted(spawn_key="toolu_A", parent=SESSION, resolution="transcript"))
    pending = [e for e in memory.journal() if e.topic == STOPPED][-1]
    assert (pending.state["spawn_key"], pending.timestamp) == ("toolu_A", stamp(5))
    assert live(memory, 4) == {SESSION, "toolu_A"}
    assert live(memory, 6) == set()


def test_a_child_placed_after_its_root_resumed_stops_at_the_end_it_started_before(
    memory: Engine,
) -> None:
    """AGENT's start at 3 s is read after the session ended (5 s) and was resumed (10 s)."""
    session_ended_and_resumed(memory)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert live(memory, 11) == {SESSION}


# -- a stop for good at a provisional stop's very time wins -------------------------------------


def test_a_final_session_end_at_the_time_of_the_roots_provisional_stop_stops_it_for_good(
    memory: Engine,
) -> None:
    """The import stopped the root at its file's last row (9 s); the hook's SessionEnd has
    the same time. A later act of the root is then a real resume, at its own time."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 9, SessionEnded(SESSION))
    assert stops(memory)[-1] == (SESSION, stamp(9), False)
    feed(memory, 12, Acted(SESSION))
    assert resumes(memory, SESSION)[-1] == stamp(12)
    assert SESSION not in live(memory, 10)


def test_a_final_session_end_at_the_time_of_a_provisional_stop_stops_the_children_for_good(
    memory: Engine,
) -> None:
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 9, SessionEnded(SESSION))
    assert (AGENT, stamp(9), False) in stops(memory)


def test_a_childs_own_stop_at_the_time_of_its_provisional_stop_stops_it_for_good(
    memory: Engine,
) -> None:
    """AGENT's file ended at 6 s; its SubagentStop has the same time: a later act is a
    resume at its own time, not a take-back from 6 s."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 2, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 6, Stopped(conversation=AGENT, provisional=True), requester=AGENT)
    feed(memory, 6, Stopped(conversation=AGENT), requester=AGENT)
    assert stops(memory)[-1] == (AGENT, stamp(6), False)
    feed(memory, 8, Acted(AGENT), requester=AGENT)
    assert AGENT not in live(memory, 7)


def test_a_child_re_dated_to_before_its_roots_final_end_is_stopped_at_the_end(
    memory: Engine,
) -> None:
    """AGENT's act at 7 s placed it after the session ended at 5 s; its own start at 3 s,
    read later, shows it began before the end."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 7, Acted(AGENT), requester=AGENT)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert stops(memory)[-1] == (AGENT, stamp(5), False)
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set()


def test_a_child_re_dated_to_before_an_end_its_root_resumed_from_runs_again_from_its_act(
    memory: Engine,
) -> None:
    """AGENT's act at 12 s placed it after the session ended (5 s) and was resumed (10 s);
    its own start at 3 s, read later: it ran to the end, and again from its act."""
    session_ended_and_resumed(memory)
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert members(memory)[AGENT].status == "live"
    assert AGENT in live(memory, 4) and AGENT in live(memory, 13)
    assert AGENT not in live(memory, 6) and AGENT not in live(memory, 11)


def test_a_child_stopped_before_it_is_re_dated_to_before_an_end_its_root_resumed_from_has_the_gap(
    memory: Engine,
) -> None:
    """As above, but AGENT's own stop at 14 s arrives before its start at 3 s: the same
    history as when the start comes first (its stop held at the end, again from its act)."""
    session_ended_and_resumed(memory)
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    feed(memory, 14, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(14))
    assert AGENT in live(memory, 4) and AGENT in live(memory, 13)
    assert AGENT not in live(memory, 6) | live(memory, 9) | live(memory, 11) | live(memory, 15)


def test_a_child_stopped_before_it_is_re_dated_to_before_its_roots_final_end_stops_at_the_end(
    memory: Engine,
) -> None:
    """AGENT's act at 7 s placed it after the session ended at 5 s, and it stopped at 8 s; its
    own start at 3 s, read last, shows it began before the end: held to it, as when the start
    comes before the stop."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 5, SessionEnded(SESSION))
    feed(memory, 7, Acted(AGENT), requester=AGENT)
    feed(memory, 8, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))
    assert AGENT in live(memory, 4)
    assert live(memory, 6) == set() and live(memory, 7.5) == set()


def test_a_child_stopped_by_an_end_read_late_and_then_re_dated_is_stopped_after_the_end_as_of_then(
    memory: Engine,
) -> None:
    """AGENT's act at 20 s placed it; the session end at 15 s, read late, stopped it there;
    its start at 12 s, read last: a view as of 16 s has it stopped, as the current view does."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 20, Acted(AGENT), requester=AGENT)
    feed(memory, 15, SessionEnded(SESSION))
    feed(memory, 12, ChildIdentified(SESSION, AGENT, "native"))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(15))
    assert AGENT in live(memory, 13)
    assert live(memory, 16) == set() and live(memory, 21) == set()


def test_a_child_stopped_before_the_act_that_placed_it_and_then_re_dated_is_stopped_as_of_then(
    memory: Engine,
) -> None:
    """AGENT's act at 17 s placed it; its stop at 10 s, read after, stopped it there; its
    start at 9 s, read last: a view as of 12 s has it stopped, as the current view does."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 17, Acted(AGENT), requester=AGENT)
    feed(memory, 10, Stopped(conversation=AGENT), requester=AGENT)
    feed(memory, 9, ChildIdentified(SESSION, AGENT, "native"))
    child = members(memory)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(10))
    assert AGENT in live(memory, 9.5)
    assert AGENT not in live(memory, 12)


def test_a_child_re_dated_to_earlier_still_before_an_end_it_already_started_before_keeps_running(
    memory: Engine,
) -> None:
    """AGENT started at 4 s, before the end at 5 s (held to it), and ran again from its act at
    12 s, after the root's resume at 10 s; its start moved to 3 s crosses no end: it is live."""
    session_ended_and_resumed(memory)
    feed(memory, 4, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert members(memory)[AGENT].status == "live"
    assert AGENT in live(memory, 3.5) and AGENT in live(memory, 13)
    assert AGENT not in live(memory, 6) and AGENT not in live(memory, 11)


def test_a_child_that_went_on_past_its_roots_provisional_stop_keeps_running_when_re_dated(
    memory: Engine,
) -> None:
    """The import stopped the root at 9 s, and AGENT (started at 5 s) with it; AGENT's act at
    12 s took it back from there; its start moved to 3 s says nothing of where it stopped."""
    feed(memory, 1, RootSeen(SESSION, "startup"))
    feed(memory, 9, Stopped(conversation=SESSION, provisional=True))
    feed(memory, 5, ChildIdentified(SESSION, AGENT, "native"))
    feed(memory, 12, Acted(AGENT), requester=AGENT)
    feed(memory, 3, ChildIdentified(SESSION, AGENT, "native"))
    assert members(memory)[AGENT].status == "live"
    assert AGENT in live(memory, 10) and AGENT in live(memory, 13)


# -- snapshots taken before roots kept their session ends ---------------------------------------


def with_version_3_snapshot(url: str) -> None:
    """The session ended for good at 5 s and was resumed for real at 10 s; the root's latest
    snapshot is one an older version took (no ``gaps``, no ``began``: class version 3)."""
    with open_engine(url) as engine:
        feed(engine, 1, RootSeen(SESSION, "startup"))
        feed(engine, 5, SessionEnded(SESSION))
        feed(engine, 10, Acted(SESSION))
        snapshot = RootLineage.Snapshot.take(engine.app.root(root_id("claude", SESSION)))
        state = {k: v for k, v in snapshot.state.items() if k != "began"} | {"class_version": 3}
        state["nodes"] = {
            name: {k: v for k, v in node.items() if k != "gaps"}
            for name, node in state["nodes"].items()
        }
        assert engine.app.snapshots is not None
        engine.app.snapshots.put([dataclasses.replace(snapshot, state=state)])


def test_a_root_whose_snapshot_predates_its_session_ends_decides_as_its_events_do(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'old-snapshot.sqlite'}"
    with_version_3_snapshot(url)
    with open_engine(url) as engine:  # a new process: the root is loaded from the store
        feed(engine, 3, ChildIdentified(SESSION, AGENT, "native"))
        child = members(engine)[AGENT]
    assert (child.status, child.stopped_at) == ("stopped", stamp(5))


def test_a_snapshot_taken_after_an_old_one_keeps_what_the_events_imply(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old-snapshot.sqlite'}"
    with_version_3_snapshot(url)
    with open_engine(url) as engine:
        feed(engine, 11, ChildIdentified(SESSION, "a-later", "native"))  # a version to take
        engine.app.take_snapshot(root_id("claude", SESSION))
        assert engine.app.snapshots is not None
        latest = next(iter(engine.app.snapshots.get(root_id("claude", SESSION), desc=True)))
    assert isinstance(latest, RootLineage.Snapshot)
    assert latest.state["class_version"] == RootLineage.class_version
    assert latest.state["nodes"][SESSION]["gaps"] == [[stamp(5), stamp(10)]]


def test_a_subagent_first_seen_after_its_roots_session_ended_is_placed_stopped(
    memory: Engine,
) -> None:
    """Hooks run apart: AGENT's SubagentStop overtook its SubagentStart, and the session
    ended before the start came. The start places it, stopped: nothing outlives the end."""
    hooks(
        memory,
        (1, claude_hook("SessionStart", source="startup")),
        (2, claude_hook("SubagentStop", agent_id=AGENT, agent_type="Explore")),
        (3, claude_hook("SessionEnd", reason="other")),
        (4, claude_hook("SubagentStart", agent_id=AGENT, agent_type="Explore")),
    )
    assert {m.conversation: m.status for m in memory.family(SESSION)} == {
        SESSION: "stopped",
        AGENT: "stopped",
    }
    assert live(memory, 5) == set()
