"""Claude Code session transcripts read as observations, row by row."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.errors import InputError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts import claude_transcript
from lineage_es.hosts.base import payload_key
from tests.support.claude_transcripts import (
    AGENT,
    CHILD,
    OTHER,
    SESSION,
    agent_rows,
    assistant,
    at,
    facts_of,
    nodes,
    notification,
    observations,
    placed,
    prompt,
    read,
    result,
    row,
    session_file,
    spawn_session,
    starts,
    subagents,
    tool_use,
    write,
)

# -- rows and the envelope --------------------------------------------------------------------


def test_first_row_sees_the_root(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2")])
    first = read(path)[0].observation
    assert first is not None
    assert first.facts == (RootSeen(SESSION, source="transcript"),)


def test_later_rows_are_the_root_acting(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2")])
    assert observations(path)[1].facts == (Acted(SESSION),)


def test_row_carries_session_time_and_key_and_no_workspace(tmp_path: Path) -> None:
    first = prompt(1, "u1")
    observation = observations(session_file(tmp_path, [first]))[0]
    assert (observation.host, observation.requester, observation.root) == (
        "claude",
        SESSION,
        SESSION,
    )
    assert (observation.at, observation.workspace) == (at(1), ())
    assert observation.key == payload_key(first)


def test_one_transcript_row_per_line_numbered_from_one(tmp_path: Path) -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "m"}
    path = session_file(tmp_path, [snapshot, prompt(1, "u1"), "", prompt(2, "u2")])
    assert [r.row for r in read(path)] == [1, 2, 3, 4]


def test_blank_line_and_row_without_session_mean_nothing(tmp_path: Path) -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "m"}
    path = session_file(tmp_path, [prompt(1, "u1"), snapshot, "", prompt(2, "u2")])
    assert [r.observation is None for r in read(path)] == [False, True, True, False]


def test_row_without_time_takes_the_time_before_it(tmp_path: Path) -> None:
    title = row("ai-title", None, None, aiTitle="t")
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(4, "u2"), title])
    assert observations(path)[2].at == at(4)


def test_leading_rows_without_time_take_the_first_time_in_the_file(tmp_path: Path) -> None:
    mode = row("permission-mode", None, None, permissionMode="auto")
    path = session_file(tmp_path, [mode, prompt(3, "u1")])
    first = observations(path)[0]
    assert (first.at, first.facts) == (at(3), (RootSeen(SESSION, source="transcript"),))


def test_repeated_uuid_means_nothing(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2"), prompt(1, "u1")])
    assert read(path)[2].observation is None


# -- spawns and results -----------------------------------------------------------------------


def test_parallel_spawns_in_one_row_each_request(tmp_path: Path) -> None:
    message = assistant(
        2,
        "a1",
        tool_use("toolu_A", subagent_type="Explore", description="one", prompt="p1"),
        tool_use("toolu_B", subagent_type="Plan", description="two", prompt="p2"),
    )
    path = session_file(tmp_path, [prompt(1, "u1"), message])
    assert observations(path)[1].facts == (
        SpawnRequested(SESSION, "toolu_A", "Explore", "one"),
        SpawnRequested(SESSION, "toolu_B", "Plan", "two"),
    )


def test_task_tool_spawns_too(tmp_path: Path) -> None:
    message = assistant(2, "a1", tool_use("toolu_A", name="Task", prompt="p"))
    path = session_file(tmp_path, [prompt(1, "u1"), message])
    assert facts_of(path, SpawnRequested) == [SpawnRequested(SESSION, "toolu_A")]


def test_other_tool_use_is_acting(tmp_path: Path) -> None:
    message = assistant(2, "a1", tool_use("toolu_A", name="Bash", command="ls"))
    path = session_file(tmp_path, [prompt(1, "u1"), message])
    assert observations(path)[1].facts == (Acted(SESSION),)


def test_result_naming_the_agent_identifies_it_at_its_call_and_stops_it(tmp_path: Path) -> None:
    outcome = {"status": "completed", "agentId": CHILD, "agentType": "Explore"}
    done = result(3, "r1", "toolu_A", outcome)
    path = session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(2, "a1", tool_use("toolu_A", description="scan", prompt="p")),
            done,
        ],
    )
    # A child no file of its own speaks for started at its call (as ``lineage import``
    # has it): observed when the result names it, at the call's time, under a key of its
    # own and ahead of the row's own observation.
    started, stopped = [r for r in read(path) if r.row == 3]
    assert started.observation is not None and stopped.observation is not None
    assert (started.own, stopped.own) == (False, True)
    assert started.observation.facts == (
        ChildIdentified(
            parent=SESSION,
            child=CHILD,
            resolution="transcript",
            spawn_key="toolu_A",
            agent_type="Explore",
            description="scan",
        ),
    )
    assert (started.observation.at, started.observation.requester) == (at(2), SESSION)
    assert started.observation.key == f"{payload_key(done)}:start:{CHILD}"
    assert stopped.observation.facts == (Stopped(conversation=CHILD),)
    assert (stopped.observation.at, stopped.observation.key) == (at(3), payload_key(done))


def test_background_launch_identifies_at_its_call_without_stopping(tmp_path: Path) -> None:
    outcome = {"status": "async_launched", "isAsync": True, "agentId": CHILD}
    path = session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(2, "a1", tool_use("toolu_A", prompt="p")),
            result(3, "r1", "toolu_A", outcome),
        ],
    )
    started, own = [r.observation for r in read(path) if r.row == 3]
    assert started is not None and own is not None
    assert ([type(f) for f in started.facts], started.at) == ([ChildIdentified], at(2))
    assert (own.facts, own.at) == ((Acted(SESSION),), at(3))


def test_child_without_a_file_is_live_from_its_call_to_its_result(tmp_path: Path) -> None:
    outcome = {"status": "completed", "agentId": CHILD, "agentType": "Explore"}
    path = session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(2, "a1", tool_use("toolu_A", prompt="p")),
            prompt(5, "u2"),
            result(9, "r1", "toolu_A", outcome),
        ],
    )
    with open_engine("memory://") as engine:
        for observation in observations(path):
            engine.observe(observation.host, observation)
        (child,) = [m for m in engine.family(SESSION) if m.conversation != SESSION]
    assert (child.conversation, child.resolution) == (CHILD, "transcript")
    assert datetime.fromisoformat(child.started_at) == at(2)
    assert child.stopped_at is not None and datetime.fromisoformat(child.stopped_at) == at(9)


def test_child_named_again_is_not_started_again(tmp_path: Path) -> None:
    def progress(second: int, uuid: str) -> dict[str, Any]:
        data = {"type": "agent_progress", "agentId": CHILD}
        return row("progress", second, uuid, data=data, parentToolUseID="toolu_A")

    outcome = {"status": "completed", "agentId": CHILD}
    rows = [
        prompt(1, "u1"),
        assistant(2, "a1", tool_use("toolu_A", prompt="p")),
        progress(3, "p1"),
        result(6, "r1", "toolu_A", outcome),
    ]
    path = session_file(tmp_path, rows)
    starts = [r for r in read(path) if r.observation and r.observation.key.endswith(CHILD)]
    assert [(r.row, r.observation.at) for r in starts if r.observation] == [(3, at(2))]
    assert observations(path)[-1].facts[0] == ChildIdentified(
        parent=SESSION, child=CHILD, resolution="transcript", spawn_key="toolu_A"
    )


def test_result_of_another_tool_identifies_no_child(tmp_path: Path) -> None:
    path = session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(2, "a1", tool_use("toolu_A", name="SendMessage", to=CHILD)),
            result(3, "r1", "toolu_A", {"agentId": CHILD, "status": "completed"}),
        ],
    )
    assert facts_of(path, ChildIdentified) == []


def test_result_of_an_unseen_call_naming_an_agent_identifies_it(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), result(3, "r1", "toolu_A", {"agentId": CHILD})])
    assert [f.child for f in facts_of(path, ChildIdentified)] == [CHILD]


def test_resume_call_resumes_and_its_result_confirms_nothing(tmp_path: Path) -> None:
    path = session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(2, "a1", tool_use("toolu_A", resume=CHILD, prompt="more")),
            result(3, "r1", "toolu_A", {"status": "completed", "agentId": CHILD}),
        ],
    )
    assert observations(path)[1].facts == (Resumed(CHILD),)
    assert observations(path)[2].facts == (Stopped(conversation=CHILD),)


@pytest.mark.parametrize("status", ["completed", "killed"])
def test_task_notification_with_a_final_status_stops_the_task(tmp_path: Path, status: str) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), notification(9, CHILD, status)])
    assert observations(path)[1].facts == (Stopped(conversation=CHILD),)


def test_task_notification_still_running_stops_nothing(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), notification(9, CHILD, "running")])
    assert facts_of(path, Stopped) == []


def test_delivered_notification_in_a_user_row_stops_the_task(tmp_path: Path) -> None:
    text = notification(9, CHILD, "killed")["content"]
    delivered = prompt(9, "u2", text) | {"origin": {"kind": "task-notification"}}
    path = session_file(tmp_path, [prompt(1, "u1"), delivered])
    assert facts_of(path, Stopped) == [Stopped(conversation=CHILD)]


def test_attached_notification_stops_the_task(tmp_path: Path) -> None:
    text = notification(9, CHILD, "completed")["content"]
    attached = row("attachment", 9, "t1", attachment={"type": "queued_command", "prompt": text})
    path = session_file(tmp_path, [prompt(1, "u1"), attached])
    assert facts_of(path, Stopped) == [Stopped(conversation=CHILD)]


def test_prompt_quoting_a_notification_stops_nothing(tmp_path: Path) -> None:
    text = "why did this say " + notification(9, CHILD, "killed")["content"]
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2", text)])
    assert facts_of(path, Stopped) == []


def test_progress_rows_identify_the_child_once(tmp_path: Path) -> None:
    def progress(second: int, uuid: str) -> dict[str, Any]:
        data = {"type": "agent_progress", "agentId": CHILD}
        return row("progress", second, uuid, data=data, parentToolUseID="toolu_A")

    spawn = assistant(2, "a1", tool_use("toolu_A", subagent_type="Plan", prompt="p"))
    path = session_file(tmp_path, [prompt(1, "u1"), spawn, progress(3, "p1"), progress(4, "p2")])
    assert facts_of(path, ChildIdentified) == [
        ChildIdentified(
            parent=SESSION,
            child=CHILD,
            resolution="transcript",
            spawn_key="toolu_A",
            agent_type="Plan",
        )
    ]
    # It started at its call (2.1.38's agent files were not published beside it).
    (identified,) = [o for o in observations(path) if ChildIdentified in map(type, o.facts)]
    assert identified.at == at(2)


# -- sessions ---------------------------------------------------------------------------------


def test_new_session_in_the_file_ends_the_previous_one(tmp_path: Path) -> None:
    snapshot = {"type": "file-history-snapshot", "messageId": "m"}
    cleared = prompt(5, "v1") | {"sessionId": OTHER}
    path = session_file(tmp_path, [prompt(1, "u1"), snapshot, cleared])
    rows = read(path)
    assert rows[1].observation is None
    ended, started = rows[2].observation, rows[3].observation
    assert ended is not None and started is not None
    assert (rows[2].row, rows[3].row) == (3, 3)
    assert (ended.requester, ended.root, ended.facts) == (
        SESSION,
        SESSION,
        (SessionEnded(SESSION),),
    )
    assert (started.requester, started.root) == (OTHER, OTHER)
    assert started.facts == (RootSeen(OTHER, source="clear"),)


# -- 2.0.x inline sidechains ------------------------------------------------------------------


def inline(second: int, uuid: str, text: str, parent: str | None) -> dict[str, Any]:
    return prompt(second, uuid, text) | {"isSidechain": True, "parentUuid": parent}


def test_inline_sidechain_with_the_spawn_prompt_starts_a_pending_child(tmp_path: Path) -> None:
    spawn = assistant(2, "a1", tool_use("toolu_A", name="Task", subagent_type="gp", prompt="p"))
    path = session_file(tmp_path, [prompt(1, "u1"), spawn, inline(3, "s1", "p", None)])
    assert observations(path)[2].facts == (
        ChildStarted(spawn_key="toolu_A", parent=SESSION, agent_type="gp", resolution="transcript"),
    )


def test_inline_child_is_placed_with_resolution_transcript(tmp_path: Path) -> None:
    spawn = assistant(2, "a1", tool_use("toolu_A", name="Task", subagent_type="gp", prompt="p"))
    path = session_file(tmp_path, [prompt(1, "u1"), spawn, inline(3, "s1", "p", None)])
    with open_engine("memory://") as engine:
        for observation in observations(path):
            engine.observe(observation.host, observation)
        (child,) = [m for m in engine.family(SESSION) if m.conversation != SESSION]
    assert child.resolution == "transcript"


def test_inline_sidechain_rows_are_nobodys_requests(tmp_path: Path) -> None:
    spawn = assistant(2, "a1", tool_use("toolu_A", name="Task", prompt="p"))
    rows = [prompt(1, "u1"), spawn, inline(3, "s1", "p", None), inline(4, "s2", "ok", "s1")]
    assert read(session_file(tmp_path, rows))[3].observation is None


def test_inline_sidechain_matching_no_spawn_means_nothing(tmp_path: Path) -> None:
    spawn = assistant(2, "a1", tool_use("toolu_A", name="Task", prompt="p"))
    path = session_file(tmp_path, [prompt(1, "u1"), spawn, inline(3, "s1", "Warmup", None)])
    assert read(path)[2].observation is None


def test_inline_sidechain_matching_two_spawns_is_not_guessed(tmp_path: Path) -> None:
    spawn = assistant(
        2,
        "a1",
        tool_use("toolu_A", name="Task", prompt="p"),
        tool_use("toolu_B", name="Task", prompt="p"),
    )
    path = session_file(tmp_path, [prompt(1, "u1"), spawn, inline(3, "s1", "p", None)])
    assert facts_of(path, ChildStarted) == []


def test_result_without_agent_id_stops_the_pending_spawn(tmp_path: Path) -> None:
    spawn = assistant(2, "a1", tool_use("toolu_A", name="Task", prompt="p"))
    done = result(5, "r1", "toolu_A", {"status": "completed", "prompt": "p"})
    path = session_file(tmp_path, [prompt(1, "u1"), spawn, inline(3, "s1", "p", None), done])
    assert observations(path)[-1].facts == (Stopped(spawn_key="toolu_A"),)


# -- agent files ------------------------------------------------------------------------------


def test_agent_rows_follow_the_main_row_they_happened_after(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 2, 4, 7))
    path = spawn_session(tmp_path)
    assert [(r.row, r.observation.requester) for r in read(path) if r.observation] == [
        (1, SESSION),
        (2, SESSION),
        (2, CHILD),  # same second as the spawn row: after it
        (3, SESSION),
        (3, CHILD),
        (4, SESSION),
    ]


def test_agent_file_starts_and_stops_its_agent(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 5))
    child = [o for o in observations(spawn_session(tmp_path)) if o.requester == CHILD]
    assert [o.facts for o in child] == [
        (placed(),),
        (Stopped(conversation=CHILD),),
    ]
    assert {o.root for o in child} == {SESSION}
    assert [o.at for o in child] == [at(3), at(5)]


def test_running_agent_row_that_says_nothing_more_is_left_out(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 5))
    child_rows = [o for o in observations(spawn_session(tmp_path)) if o.requester == CHILD]
    assert at(4) not in {o.at for o in child_rows}


def test_agent_writing_after_its_stop_acts_again(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 10, 11))
    child = [o for o in observations(spawn_session(tmp_path)) if o.requester == CHILD]
    assert [o.facts for o in child] == [
        (placed(),),
        (Acted(CHILD),),  # after the result at 9 said it completed
        (Stopped(conversation=CHILD),),
    ]


def test_agent_rows_before_the_first_main_row_follow_it(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 0))
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2")])
    assert [(r.row, r.observation.requester) for r in read(path) if r.observation] == [
        (1, SESSION),
        (1, CHILD),
        (2, SESSION),
    ]


def test_agent_rows_after_the_last_main_row_follow_it(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 30))
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2")])
    last = read(path)[-1]
    assert last.row == 2
    assert last.observation is not None
    assert last.observation.requester == CHILD


def test_spawn_inside_an_agent_file_has_the_agent_as_parent(tmp_path: Path) -> None:
    rows = agent_rows(AGENT, 3)
    rows.append(assistant(4, "n1", tool_use("toolu_N", prompt="deeper")) | {"agentId": AGENT})
    write(subagents(tmp_path) / f"agent-{AGENT}.jsonl", rows)
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    assert facts_of(path, SpawnRequested) == [SpawnRequested(AGENT, "toolu_N")]


def test_agent_row_that_spawns_acts_first(tmp_path: Path) -> None:
    first, last = agent_rows(AGENT, 3, 5)
    spawn = assistant(4, "n1", tool_use("toolu_N", prompt="deeper")) | {"agentId": AGENT}
    write(subagents(tmp_path) / f"agent-{AGENT}.jsonl", [first, spawn, last])
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    spawning = next(o for o in observations(path) if o.at == at(4))
    assert spawning.facts == (Acted(AGENT), SpawnRequested(AGENT, "toolu_N"))


def test_repeated_agent_rows_are_dropped(tmp_path: Path) -> None:
    rows = agent_rows(CHILD, 3, 4)
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", [*rows, rows[1]])
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    assert len([o for o in observations(path) if o.requester == CHILD]) == 2


def test_meta_sidecar_at_depth_one_identifies_the_child_under_the_root(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    meta = {"agentType": "Plan", "description": "d", "toolUseId": "toolu_A", "spawnDepth": 1}
    (subagents(tmp_path) / f"agent-{CHILD}.meta.json").write_text(orjson.dumps(meta).decode())
    first = next(o for o in observations(spawn_session(tmp_path)) if o.requester == CHILD)
    assert first.facts[0] == ChildIdentified(
        parent=SESSION,
        child=CHILD,
        resolution="transcript",
        spawn_key="toolu_A",
        depth=1,
        agent_type="Plan",
        description="d",
    )


def test_meta_sidecar_names_a_deeper_parent(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    meta = {"toolUseId": "toolu_B", "parentAgentId": AGENT, "spawnDepth": 2}
    (subagents(tmp_path) / f"agent-{CHILD}.meta.json").write_text(orjson.dumps(meta).decode())
    started = facts_of(spawn_session(tmp_path), ChildIdentified)[0]
    assert (started.parent, started.spawn_key, started.depth) == (AGENT, "toolu_B", 2)


def test_meta_sidecar_with_only_a_seen_spawn_key_places_it_under_that_calls_maker(
    tmp_path: Path,
) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    meta = {"toolUseId": "toolu_A"}
    (subagents(tmp_path) / f"agent-{CHILD}.meta.json").write_text(orjson.dumps(meta).decode())
    assert starts(spawn_session(tmp_path)) == [placed()]


def test_meta_sidecar_with_only_an_unseen_spawn_key_leaves_the_parent_to_it(
    tmp_path: Path,
) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    meta = {"toolUseId": "toolu_Z"}
    (subagents(tmp_path) / f"agent-{CHILD}.meta.json").write_text(orjson.dumps(meta).decode())
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    assert starts(path) == [ChildStarted(child=CHILD, spawn_key="toolu_Z")]


# -- placing agent files by what the transcripts state -----------------------------------------

AAA = "a0000000000000aaa"
BBB = "a0000000000000bbb"


def agent_file(
    tmp_path: Path, agent: str, text: str, *seconds: int, version: str | None = None
) -> Path:
    """An agent file whose first row's prompt is ``text``."""
    rows = agent_rows(agent, *seconds)
    rows[0]["message"] = {"role": "user", "content": text}
    for item in rows if version is not None else ():
        item["version"] = version
    return write(subagents(tmp_path) / f"agent-{agent}.jsonl", rows)


def two_calls(tmp_path: Path, prompts: tuple[str, str] = ("prompt A", "prompt B")) -> Path:
    """Two ``Agent`` calls of different types, answered after their agents' files end."""
    return session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(
                7, "a1", tool_use("toolu_A", subagent_type="code-reviewer", prompt=prompts[0])
            ),
            assistant(8, "a2", tool_use("toolu_B", subagent_type="Explore", prompt=prompts[1])),
            result(55, "r1", "toolu_A", {"status": "completed", "agentId": AAA}),
            result(58, "r2", "toolu_B", {"status": "completed", "agentId": BBB}),
        ],
    )


def test_agent_files_are_placed_under_the_calls_their_first_prompts_repeat(
    tmp_path: Path,
) -> None:
    agent_file(tmp_path, AAA, "prompt A", 10, 50)
    agent_file(tmp_path, BBB, "prompt B", 11, 56)
    assert starts(two_calls(tmp_path)) == [placed(AAA, "toolu_A"), placed(BBB, "toolu_B")]


def test_parallel_agent_files_keep_their_own_calls_agent_types(tmp_path: Path) -> None:
    agent_file(tmp_path, AAA, "prompt A", 10, 50)
    agent_file(tmp_path, BBB, "prompt B", 11, 56)
    with open_engine("memory://") as engine:
        for observation in observations(two_calls(tmp_path)):
            engine.observe(observation.host, observation)
        family = {m.conversation: m for m in engine.family(SESSION)}
    types = {c: m.subagent.type if m.subagent else None for c, m in family.items() if c != SESSION}
    assert types == {AAA: "code-reviewer", BBB: "Explore"}
    assert {family[AAA].resolution, family[BBB].resolution} == {"transcript"}


def test_a_sidecars_spawn_key_wins_over_the_prompt(tmp_path: Path) -> None:
    agent_file(tmp_path, AAA, "prompt B", 10, 50)
    meta = {"toolUseId": "toolu_A"}
    (subagents(tmp_path) / f"agent-{AAA}.meta.json").write_text(orjson.dumps(meta).decode())
    agent_file(tmp_path, BBB, "prompt B", 11, 56)
    assert starts(two_calls(tmp_path)) == [placed(AAA, "toolu_A"), placed(BBB, "toolu_B")]


def test_a_prompt_two_open_calls_share_leaves_the_agent_to_ordering(tmp_path: Path) -> None:
    agent_file(tmp_path, AAA, "same", 10, 50)
    assert starts(two_calls(tmp_path, ("same", "same"))) == [ChildStarted(child=AAA)]


def test_a_call_another_agent_claimed_is_not_matched_again(tmp_path: Path) -> None:
    agent_file(tmp_path, AAA, "prompt A", 10, 50)
    agent_file(tmp_path, BBB, "prompt A", 11, 56)
    assert starts(two_calls(tmp_path)) == [placed(AAA, "toolu_A"), ChildStarted(child=BBB)]


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("2.1.143", placed(AAA, None)),  # no nesting yet: its session is its parent
        ("2.1.172", ChildStarted(child=AAA)),  # any agent's child: left to ordering
    ],
)
def test_an_agent_matching_no_call_is_placed_by_its_version(
    tmp_path: Path, version: str, expected: Fact
) -> None:
    agent_file(tmp_path, AAA, "something else", 10, 50, version=version)
    assert starts(two_calls(tmp_path)) == [expected]


def test_an_agent_a_result_named_before_its_first_row_is_placed_there(tmp_path: Path) -> None:
    agent_file(tmp_path, AAA, "something else", 10, 50)
    launched = {"status": "async_launched", "isAsync": True, "agentId": AAA}
    path = session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(7, "a1", tool_use("toolu_A", prompt="prompt A")),
            result(9, "r1", "toolu_A", launched),
        ],
    )
    assert starts(path) == [placed(AAA, "toolu_A")]


def test_broken_meta_sidecar_is_refused_by_path(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    (subagents(tmp_path) / f"agent-{CHILD}.meta.json").write_text("[1, 2]")
    with pytest.raises(InputError, match=r"\.meta\.json"):
        read(spawn_session(tmp_path))


def test_flat_layout_agent_file_of_this_session_is_read(tmp_path: Path) -> None:
    write(tmp_path / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    assert starts(spawn_session(tmp_path)) == [placed()]


def test_flat_layout_agent_file_of_another_session_is_not(tmp_path: Path) -> None:
    rows = [r | {"sessionId": OTHER} for r in agent_rows(CHILD, 3)]
    write(tmp_path / f"agent-{CHILD}.jsonl", rows)
    assert CHILD not in {o.requester for o in observations(spawn_session(tmp_path))}


def test_a_renamed_transcript_finds_its_subagents_by_the_session_id_of_its_rows(
    tmp_path: Path,
) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    renamed = tmp_path / "transcript.jsonl"
    spawn_session(tmp_path).rename(renamed)
    assert starts(renamed) == [placed()]


def test_the_folder_named_like_the_file_wins_over_the_session_id(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{AGENT}.jsonl", agent_rows(AGENT, 3))
    write(tmp_path / "copy" / "subagents" / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    renamed = tmp_path / "copy.jsonl"
    spawn_session(tmp_path).rename(renamed)
    assert starts(renamed) == [placed()]


def test_a_session_id_naming_a_path_leads_to_no_other_folder(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere" / "subagents" / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    rows = [prompt(1, "u1") | {"sessionId": "../elsewhere"}, prompt(6, "u2")]
    path = write(tmp_path / "main" / "transcript.jsonl", rows)
    assert facts_of(path, ChildStarted) == []


@pytest.mark.parametrize("agent", ["acompact-e1f845", "aprompt_suggestion-1", "aside_question-2"])
def test_internal_agent_files_are_not_children(tmp_path: Path, agent: str) -> None:
    write(subagents(tmp_path) / f"agent-{agent}.jsonl", agent_rows(agent, 3, 4))
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    assert {o.requester for o in observations(path)} == {SESSION}


def test_warmup_sidechain_files_are_not_children(tmp_path: Path) -> None:
    rows = agent_rows(AGENT, 0, 1)
    rows[0]["message"] = {"role": "user", "content": "Warmup"}
    write(tmp_path / f"agent-{AGENT}.jsonl", rows)
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    assert {o.requester for o in observations(path)} == {SESSION}


def test_workflow_agent_files_are_not_read(tmp_path: Path) -> None:
    write(subagents(tmp_path) / "workflows" / "wf_1" / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3))
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(6, "u2")])
    assert {o.requester for o in observations(path)} == {SESSION}


def test_lone_agent_file_is_numbered_by_its_own_rows(tmp_path: Path) -> None:
    path = write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", [*agent_rows(CHILD, 3, 4), ""])
    rows = read(path)
    assert [r.row for r in rows] == [1, 2, 3]
    assert rows[0].observation is not None
    assert rows[0].observation.facts == (ChildStarted(child=CHILD),)
    assert rows[2].observation is None


# -- bad input --------------------------------------------------------------------------------


def test_line_that_is_not_json_is_refused_with_its_line(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), "{not json", prompt(2, "u2")])
    with pytest.raises(InputError) as raised:
        read(path)
    assert (raised.value.path, raised.value.line) == (str(path), 2)


def test_line_that_is_not_an_object_is_refused_with_its_line(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), "[1, 2]"])
    with pytest.raises(InputError, match="not a JSON object") as raised:
        read(path)
    assert raised.value.line == 2


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), '{"type": "user", "sess'], final_newline=False)
    assert [r.row for r in read(path)] == [1]


def test_complete_last_line_without_newline_is_read(tmp_path: Path) -> None:
    path = session_file(tmp_path, [prompt(1, "u1"), prompt(2, "u2")], final_newline=False)
    assert read(path)[1].observation is not None


def test_overlong_line_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_transcript, "MAX_LINE_BYTES", 64)
    path = session_file(tmp_path, [prompt(1, "u1", "x" * 100)])
    with pytest.raises(InputError, match="longer than") as raised:
        read(path)
    assert raised.value.line == 1


def test_bad_line_in_an_agent_file_names_that_file(tmp_path: Path) -> None:
    agent_file = write(
        subagents(tmp_path) / f"agent-{CHILD}.jsonl", [*agent_rows(CHILD, 3), "oops", "{}"]
    )
    with pytest.raises(InputError) as raised:
        read(spawn_session(tmp_path))
    assert (raised.value.path, raised.value.line) == (str(agent_file), 2)


def test_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read(tmp_path / f"{SESSION}.jsonl")


# -- the recorded corpus ----------------------------------------------------------------------


def main_files(corpus: Path) -> list[Path]:
    return sorted(
        p for p in (corpus / "claude").glob("*/*.jsonl") if not p.name.startswith("agent-")
    )


def case(corpus: Path, prefix: str) -> Path:
    (path,) = [p for p in main_files(corpus) if p.parent.name.startswith(prefix)]
    return path


def test_every_claude_main_transcript_reads(corpus: Path) -> None:
    files = main_files(corpus)
    assert len(files) >= 14
    for path in files:
        rows = read(path)
        with path.open("rb") as stream:
            lines = sum(1 for _ in stream)
        assert {r.row for r in rows} == set(range(1, lines + 1)), path.name
        assert any(r.observation is not None for r in rows), path.name


def test_parallel_case_spawns_and_identifies_its_three_agent_files(corpus: Path) -> None:
    path = case(corpus, "irrlicht_subagent-spawn-parallel")
    agents = {p.stem.removeprefix("agent-") for p in path.with_suffix("").glob("subagents/*")}
    spawns = facts_of(path, SpawnRequested)
    identified = facts_of(path, ChildIdentified)
    assert len(agents) == 3
    # Each agent file's first prompt repeats its call's: placed there at its first row, and
    # the result names the same call.
    assert len(spawns) == 3 and len(identified) == 6
    assert {f.child for f in identified} == agents
    assert {f.spawn_key for f in identified} == {f.spawn_key for f in spawns}
    keys: dict[str, set[str | None]] = {}
    for f in identified:
        keys.setdefault(f.child, set()).add(f.spawn_key)
    assert all(len(k) == 1 for k in keys.values())


def test_parallel_case_agents_start_after_their_spawn_rows(corpus: Path) -> None:
    path = case(corpus, "irrlicht_subagent-spawn-parallel")
    begun = [(r.row, f.child) for r in read(path) if r.observation for f in r.observation.facts
             if isinstance(f, ChildStarted | ChildIdentified)
             and f.child == r.observation.requester]  # fmt: skip
    assert begun == [(8, "a31559a022d9a2cb6"), (9, "a5435e8f32c1127d1"), (10, "a8662875f7da1388c")]


def test_foreground_case_child_starts_at_its_call(corpus: Path) -> None:
    path = case(corpus, "irrlicht_3-1")
    (start,) = [r for r in read(path) if r.observation and not r.own]
    assert start.observation is not None and start.row == 10
    assert start.observation.at == datetime(2026, 5, 17, 22, 29, 24, 868000, tzinfo=UTC)
    assert start.observation.facts == (
        ChildIdentified(
            parent="2bbb4a67-aabb-4d52-a003-2d5360d2e3ed",
            child="a9357a216a6d5b5ea",
            resolution="transcript",
            spawn_key="toolu_01VbiyLfvurYiPofiCQ2Cqkt",
            agent_type="general-purpose",
            description="Read README first heading",
        ),
    )


def test_resume_case_dedupes_its_repeated_lines(corpus: Path) -> None:
    path = case(corpus, "irrlicht_1-4")
    rows = read(path)
    repeated = [r for r in rows if 22 <= r.row <= 42]
    with path.open("rb") as stream:
        has_uuid = [b'"uuid"' in line for line in stream]
    assert all(r.observation is None for r in repeated if has_uuid[r.row - 1])
    assert len(facts_of(path, RootSeen)) == 1


def test_clear_case_ends_the_first_session_and_starts_the_second(corpus: Path) -> None:
    path = case(corpus, "irrlicht_1-5")
    first, second = "4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c", "fd023a54-8d3f-441b-bb58-6319f2fc51f0"
    rows = read(path)
    assert rows[9].observation is None  # line 10 belongs to the second session
    at_line_11 = [r.observation.facts for r in rows if r.row == 11 and r.observation]
    assert at_line_11 == [(SessionEnded(first),), (RootSeen(second, source="clear"),)]
    assert [o.root for o in observations(path)][-1] == second


def test_inline_sidechain_case_runs_a_pending_child_to_its_end(corpus: Path) -> None:
    path = case(corpus, "agentlogs_inline-sidechain")
    key = "toolu_01BuNFczVnbvyf3hBd7oYaqy"
    assert facts_of(path, ChildStarted) == [
        ChildStarted(
            spawn_key=key,
            parent=path.stem,
            agent_type="general-purpose",
            resolution="transcript",
        )
    ]
    assert facts_of(path, Stopped) == [Stopped(spawn_key=key)]


def test_warmup_case_has_no_children(corpus: Path) -> None:
    path = case(corpus, "agtrace_warmup")
    assert {o.requester for o in observations(path)} == {path.stem}


def test_acompact_case_identifies_the_explorer_and_not_the_compactor(corpus: Path) -> None:
    path = case(corpus, "spotter_explore-and-acompact")
    requesters = {o.requester for o in observations(path)}
    assert requesters == {path.stem, "a2898e3"}
    assert {f.child for f in facts_of(path, ChildIdentified)} == {"a2898e3"}


def test_progress_case_identifies_the_child_before_its_result(corpus: Path) -> None:
    path = case(corpus, "spotter_task-agent-progress")
    found = [(r.row, f.child) for r in read(path) if r.observation for f in r.observation.facts
             if isinstance(f, ChildIdentified)]  # fmt: skip
    assert found == [(37, "afb92ff"), (56, "afb92ff")]


def test_background_case_stops_all_three_agents(corpus: Path) -> None:
    path = case(corpus, "irrlicht_3-2")
    identified = {f.child for f in facts_of(path, ChildIdentified)}
    assert len(identified) == 3
    assert {f.conversation for f in facts_of(path, Stopped)} == identified


def test_background_shell_case_creates_no_child(corpus: Path) -> None:
    path = case(corpus, "irrlicht_3-3")
    assert facts_of(path, ChildIdentified) == facts_of(path, ChildStarted) == []


def test_orphaned_spawn_case_names_no_child(corpus: Path) -> None:
    path = case(corpus, "irrlicht_3-4")
    assert len(facts_of(path, SpawnRequested)) == 1
    assert facts_of(path, ChildIdentified) == facts_of(path, ChildStarted) == []


def test_lone_agent_file_with_meta_is_identified_under_its_root(corpus: Path) -> None:
    (path,) = (corpus / "claude").glob("phoenix_*/*/subagents/agent-*.jsonl")
    first = observations(path)[0]
    assert first.facts == (
        ChildIdentified(
            parent="00000000-0000-4000-8000-000000000001",
            child="a1b2c3d4e5f60718a",
            resolution="transcript",
            spawn_key="toolu_00000000000000000000001",
            depth=1,
            agent_type="probe-plugin:probe-grep",
            description="Run probe-grep subagent",
        ),
    )
    assert observations(path)[-1].facts[-1] == Stopped(conversation="a1b2c3d4e5f60718a")


# -- agreeing with ``lineage import`` -----------------------------------------------------------


def assert_ingest_agrees_with_import(folder: Path, mains: list[Path]) -> None:
    from lineage_es.importers import import_claude

    with open_engine("memory://") as imported, open_engine("memory://") as ingested:
        import_claude(imported, folder)
        roots: set[str] = set()
        for main in mains:
            for observation in observations(main):
                ingested.observe(observation.host, observation)
                roots.update(f.conversation for f in observation.facts if isinstance(f, RootSeen))
        assert nodes(ingested, roots) == nodes(imported, roots)


def test_ingest_places_and_times_children_as_import_does(tmp_path: Path) -> None:
    agent_file(tmp_path, AAA, "prompt A", 10, 50)
    agent_file(tmp_path, BBB, "prompt B", 11, 56)
    main = two_calls(tmp_path)
    assert_ingest_agrees_with_import(tmp_path, [main])


@pytest.mark.parametrize(
    "prefix",
    [
        "irrlicht_3-1",
        "irrlicht_3-2",
        "irrlicht_subagent-spawn-parallel",
        "spotter_task-agent-progress",
        "spotter_explore-and-acompact",
        "agentlogs_inline-sidechain",
    ],
)
def test_ingest_of_a_corpus_case_agrees_with_import(corpus: Path, prefix: str) -> None:
    path = case(corpus, prefix)
    assert_ingest_agrees_with_import(path.parent, [path])
