"""``lineage import claude`` places each agent of a projects folder under its parent, from
the transcripts, and times it by its own rows."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import Engine
from tests.support.claude_projects import (
    AGENT,
    CHILD,
    OTHER,
    SESSION,
    Session,
    at,
    clear,
    members,
    one_child,
    run,
    spawned_agent,
)


@pytest.fixture
def journal(tmp_path: Path, memory: Engine) -> Engine:
    """The journal of ``one_child``'s session, imported from ``tmp_path``."""
    one_child(tmp_path)
    run(memory, tmp_path)
    return memory


# -- placing -----------------------------------------------------------------------------------


def test_agent_file_places_the_child_under_its_root_from_the_transcript(journal: Engine) -> None:
    child = members(journal)[AGENT]
    assert (child.parent, child.depth, child.resolution) == (SESSION, 1, "transcript")


def test_child_starts_and_stops_at_its_own_first_and_last_rows(journal: Engine) -> None:
    child = members(journal)[AGENT]
    assert child.started_at.startswith("2026-09-03T08:00:03")
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:06")


def test_root_stops_at_its_last_timed_row(journal: Engine) -> None:
    root = members(journal)[SESSION]
    assert root.started_at.startswith("2026-09-03T08:00:01")
    assert root.stopped_at is not None and root.stopped_at.startswith("2026-09-03T08:00:09")


def test_time_travel_sees_the_child_live_only_between_its_rows(journal: Engine) -> None:
    live = [
        {m.conversation for m in journal.as_of(time=at(s)).family(SESSION) if m.status == "live"}
        for s in (2, 4, 10)
    ]
    assert live == [{SESSION}, {SESSION, AGENT}, set()]


def test_background_child_stops_at_its_completion_notice(tmp_path: Path, memory: Engine) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A", run_in_background=True)
    s.result(2, "toolu_A", AGENT, status="async_launched")
    s.notice(8, AGENT, status="killed")
    s.answer(9)
    run(memory, tmp_path)
    child = members(memory)[AGENT]
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:08")


def test_depth_two_agent_is_placed_under_its_parent_agent_by_its_sidecar(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT)
    s.meta(CHILD, toolUseId="toolu_B", parentAgentId=AGENT, spawnDepth=2, agentType="Plan")
    s.prompt(5, "deeper", agent=CHILD)
    s.answer(5, agent=CHILD)
    s.result(5, "toolu_B", CHILD, agent=AGENT)
    run(memory, tmp_path)
    child = members(memory)[CHILD]
    assert (child.parent, child.depth, child.resolution) == (AGENT, 2, "transcript")


def test_child_known_only_from_its_result_starts_at_its_spawn_call(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")  # no agent file: the result alone names the child
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    run(memory, tmp_path)
    child = members(memory)[AGENT]
    assert (child.started_at[11:19], str(child.stopped_at)[11:19]) == ("08:00:02", "08:00:07")
    assert members(memory.as_of(time=at(5)))[AGENT].status == "live"


def test_child_with_a_file_of_its_own_still_starts_at_its_first_row(journal: Engine) -> None:
    assert members(journal)[AGENT].started_at.startswith("2026-09-03T08:00:03")


def resolution_at(engine: Engine, second: int, child: str = AGENT) -> tuple[str | None, str]:
    member = members(engine.as_of(time=at(second)))[child]
    return member.parent, member.resolution


def test_agent_named_by_its_result_is_placed_from_the_transcript_from_its_start(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.spawn(2, "toolu_B")  # the same prompt: only the results tell the agents apart
    s.row(3, "user", AGENT, message={"content": "do it"}, version="2.1.220")
    s.row(3, "user", CHILD, message={"content": "do it"}, version="2.1.220")
    s.answer(5, agent=AGENT)
    s.answer(5, agent=CHILD)
    s.result(6, "toolu_A", AGENT)
    s.result(7, "toolu_B", CHILD)
    run(memory, tmp_path)
    assert [resolution_at(memory, 4, c) for c in (AGENT, CHILD)] == [(SESSION, "transcript")] * 2
    spawns = {e.state["conversation"]: e.state["spawn_key"] for e in placements(memory)}
    assert spawns == {AGENT: "toolu_A", CHILD: "toolu_B"}


def placements(engine: Engine) -> list[Any]:
    return [e for e in engine.journal() if e.topic.endswith("ChildPlaced")]


def test_running_agent_is_placed_under_the_call_its_first_prompt_repeats(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT, prompt="look deeper")
    s.row(5, "user", CHILD, message={"content": "look deeper"}, version="2.1.220")
    run(memory, tmp_path)  # no result and no sidecar yet
    assert resolution_at(memory, 5, CHILD) == (AGENT, "transcript")


def test_running_agent_of_a_version_without_nesting_is_placed_under_its_session(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.prompt(4, "something the call did not say", agent=CHILD)  # 2.1.143: no nesting yet
    run(memory, tmp_path)
    assert resolution_at(memory, 4, CHILD) == (SESSION, "transcript")


def test_running_agent_no_row_places_is_inferred_until_its_result(
    tmp_path: Path, memory: Engine
) -> None:
    """The one guess left: a version whose agents may spawn agents, no sidecar, no result
    yet, and a first prompt no open call repeats."""
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT, prompt="look deeper")
    s.row(5, "user", CHILD, message={"content": "go"}, version="2.1.220")
    s.answer(6, agent=AGENT)
    run(memory, tmp_path)
    assert resolution_at(memory, 5, CHILD) == (AGENT, "inferred")
    s.result(6, "toolu_B", CHILD, agent=AGENT)
    run(memory, tmp_path)
    assert members(memory)[CHILD].resolution == "transcript"


def test_sidecar_naming_only_its_call_places_the_agent_under_that_calls_parent(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT)
    s.meta(CHILD, toolUseId="toolu_B", agentType="Plan")
    s.row(5, "user", CHILD, message={"content": "?"}, version="2.1.220")
    run(memory, tmp_path)
    assert resolution_at(memory, 5, CHILD) == (AGENT, "transcript")


@pytest.mark.parametrize(
    "agent", ["acompact-e1f845", "aprompt_suggestion-1a2b", "aside_question-9"]
)
def test_the_hosts_own_agents_are_never_children(
    tmp_path: Path, memory: Engine, agent: str
) -> None:
    s = one_child(tmp_path)
    s.prompt(4, "summarise", agent=agent)
    s.answer(5, agent=agent)
    report = run(memory, tmp_path)
    assert agent not in members(memory)
    assert report.internal == 1


def test_flat_layout_agent_file_joins_the_session_its_rows_name(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    shutil.move(s.agent_path(AGENT), s.project / f"agent-{AGENT}.jsonl")
    s.result(7, "toolu_A", AGENT)
    run(memory, tmp_path)
    assert members(memory)[AGENT].parent == SESSION


def test_agent_writing_after_its_parent_stopped_it_is_live_again_until_its_last_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)  # the result at second 7 stops it
    s.prompt(12, "one more thing", agent=AGENT)  # SendMessage resumes it
    s.answer(14, agent=AGENT)
    run(memory, tmp_path)
    states = [memory.as_of(time=at(t)).family(SESSION) for t in (8, 13, 15)]
    assert [{m.conversation: m.status for m in f}.get(AGENT) for f in states] == [
        "stopped",
        "live",
        "stopped",
    ]


def test_fork_is_a_new_root_whose_copied_rows_place_no_children(
    tmp_path: Path, memory: Engine
) -> None:
    one_child(tmp_path)
    fork = Session(tmp_path, OTHER)
    copied = {"sessionId": SESSION, "messageUuid": "x"}
    block = {"type": "tool_use", "id": "toolu_A", "name": "Agent", "input": {"prompt": "p"}}
    message = {"role": "assistant", "content": [block]}
    fork.row(20, "assistant", message=message, forkedFrom=copied)
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_A"}]}
    outcome = {"status": "completed", "agentId": AGENT}
    fork.row(20, "user", message=answer, toolUseResult=outcome, forkedFrom=copied)
    fork.prompt(21)
    run(memory, tmp_path)
    assert set(members(memory, OTHER)) == {OTHER}
    assert memory.relation(OTHER, SESSION) == "unrelated"


def test_a_session_cleared_inside_its_file_starts_at_its_own_first_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.answer(3)
    clear(s, 5)  # OTHER's rows, up to second 8, in SESSION's file
    run(memory, tmp_path)
    second = members(memory, OTHER)[OTHER]
    assert (second.started_at[11:19], str(second.stopped_at)[11:19]) == ("08:00:05", "08:00:08")


def test_a_session_cleared_inside_its_file_goes_on_until_the_clear_ends_it(
    tmp_path: Path, memory: Engine
) -> None:
    """The end of a turn stops nothing (LINEAGE.md): the first session ends at the /clear,
    which is the next session's first row."""
    s = Session(tmp_path)
    s.prompt(1)
    s.answer(3)
    clear(s, 5)
    run(memory, tmp_path)
    assert members(memory.as_of(time=at(4)))[SESSION].status == "live"
    assert str(members(memory)[SESSION].stopped_at)[11:19] == "08:00:05"
