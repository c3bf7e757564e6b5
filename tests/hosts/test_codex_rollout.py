"""Codex rollouts read as observations (shared/spec/HOSTS.md 2.2-2.4, REPLAY.md form 4)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.errors import InputError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    Resumed,
    RootSeen,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts import codex_rollout
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.codex_rollout import read_rollout
from tests.support.codex_rollouts import (
    NEW_TURN,
    OLD_TURN,
    STAMP,
    C,
    F,
    P,
    activity,
    call,
    child_meta,
    event,
    item,
    lineage_facts,
    meta,
    observations,
    rows,
    write,
)

CODEX = Path("codex")
FORK = CODEX / "irrlicht_fork-conversation_v0.130.0"
NEW = CODEX / "irrlicht_1-5-session-new_v0.130.0"
HEADERS = CODEX / "irrlicht_subagent-parent-link-headers_v0.144.4"
REVIEW = CODEX / "agtrace_review-subagent-excerpt_v0.77.0"


def corpus_rollouts(corpus: Path) -> Iterator[Path]:
    yield from sorted((corpus / CODEX).rglob("*.jsonl"))


# -- threads -----------------------------------------------------------------------------------


def test_the_first_session_meta_sees_its_thread_as_a_root(tmp_path: Path) -> None:
    first = rows(write(tmp_path, meta(P)))[0]
    assert first.row == 1 and first.observation is not None
    assert first.observation.facts == (RootSeen(P, "transcript"),)
    assert (first.observation.requester, first.observation.root) == (P, P)


def test_every_later_row_is_an_act_of_the_thread(tmp_path: Path) -> None:
    second = observations(write(tmp_path, meta(P), event("user_message", message="hi")))[1]
    assert (second.requester, second.root, second.facts) == (P, P, (Acted(P),))


def test_a_row_carries_its_time_and_key_and_no_workspace(tmp_path: Path) -> None:
    row = event("token_count", info=None)
    second = observations(write(tmp_path, meta(P), row))[1]
    assert second.at == parse_time(STAMP)
    assert second.key == payload_key(row)
    assert second.workspace == ()


def test_reading_a_file_twice_gives_the_same_keys(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), event("task_started", turn_id=OLD_TURN))
    assert [o.key for o in observations(path)] == [o.key for o in observations(path)]


def test_a_thread_spawned_child_is_identified_under_its_parent(tmp_path: Path) -> None:
    first = observations(write(tmp_path, child_meta(C, P, session_id=P)))[0]
    assert first.facts == (
        ChildIdentified(parent=P, child=C, resolution="transcript", depth=1, agent_type="explorer"),
    )
    assert (first.requester, first.root) == (C, P)


def test_a_top_level_parent_thread_id_alone_names_the_parent(tmp_path: Path) -> None:
    path = write(tmp_path, meta(C, session_id=P, parent_thread_id=P, thread_source="subagent"))
    assert lineage_facts(path) == [ChildIdentified(parent=P, child=C, resolution="transcript")]


def test_a_depth_one_child_without_root_id_has_its_parent_as_root(tmp_path: Path) -> None:
    assert observations(write(tmp_path, child_meta(C, P)))[0].root == P


def test_a_deeper_child_without_root_id_leaves_the_root_to_the_engine(tmp_path: Path) -> None:
    assert observations(write(tmp_path, child_meta(C, P, depth=2)))[0].root is None


def test_a_repeated_session_meta_of_the_same_thread_is_not_authoritative(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, meta(P), event("task_started", turn_id=OLD_TURN), meta(P))
    assert lineage_facts(path) == [RootSeen(P, "transcript")]


def test_a_fork_is_a_new_root_with_no_parent_edge(tmp_path: Path) -> None:
    path = write(tmp_path, meta(F, forked_from_id=P))
    assert lineage_facts(path) == [RootSeen(F, "transcript")]


def test_an_unlinked_session_meta_starts_the_next_thread(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), event("task_complete", turn_id=OLD_TURN), meta(F))
    found = observations(path)
    assert [o.requester for o in found] == [P, P, F]
    assert found[2].facts == (RootSeen(F, "transcript"),)


# -- copies in forked threads ------------------------------------------------------------------


def test_the_source_header_copied_after_a_fork_header_is_ignored(tmp_path: Path) -> None:
    path = write(tmp_path, meta(F, forked_from_id=P), meta(P))
    found = observations(path)
    assert [o.requester for o in found] == [F, F]
    assert found[1].facts == (Acted(F),)


def test_spawns_copied_from_the_source_are_not_the_forks(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        child_meta(F, P, session_id=P, forked_from_id=P),
        meta(P),
        event("task_started", turn_id=OLD_TURN),
        call("spawn_agent", "call_old"),
        activity("started"),
        event("task_complete", turn_id=OLD_TURN),
    )
    assert lineage_facts(path) == [
        ChildIdentified(parent=P, child=F, resolution="transcript", depth=1, agent_type="explorer")
    ]


def test_a_turn_begun_after_the_fork_was_created_is_its_own(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        meta(F, forked_from_id=P),
        meta(P),
        event("task_started", turn_id=OLD_TURN),
        call("spawn_agent", "call_old"),
        event("task_started", turn_id=NEW_TURN),
        call("spawn_agent", "call_new"),
    )
    assert lineage_facts(path)[1:] == [SpawnRequested(F, "call_new")]


def test_the_forks_own_settings_end_the_copy(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        meta(F, forked_from_id=P),
        meta(P),
        call("spawn_agent", "call_old"),
        event("thread_settings_applied", thread_id=F),
        call("spawn_agent", "call_new"),
    )
    assert lineage_facts(path)[1:] == [SpawnRequested(F, "call_new")]


def test_the_history_start_ordinal_ends_the_copy(tmp_path: Path) -> None:
    header = child_meta(F, P, session_id=P, forked_from_id=P, subagent_history_start_ordinal=3)
    own = call("spawn_agent", "call_new") | {"ordinal": 3}
    copied = call("spawn_agent", "call_old") | {"ordinal": 2}
    path = write(tmp_path, header | {"ordinal": 0}, meta(P) | {"ordinal": 1}, copied, own)
    assert lineage_facts(path)[1:] == [SpawnRequested(F, "call_new")]


# -- spawns and stops --------------------------------------------------------------------------


def test_a_spawn_agent_call_requests_a_spawn_keyed_by_its_call_id(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), call("spawn_agent", message="scan", agent_type="explorer"))
    assert lineage_facts(path)[1:] == [SpawnRequested(P, "call_1", agent_type="explorer")]


def test_a_v2_spawn_is_named_by_its_task(tmp_path: Path) -> None:
    spawn = call("spawn_agent", namespace="collaboration", task_name="scan", fork_turns="all")
    path = write(tmp_path, meta(P), spawn)
    assert lineage_facts(path)[1:] == [SpawnRequested(P, "call_1", description="scan")]


def test_the_v1_spawn_result_names_the_child(tmp_path: Path) -> None:
    output = item("function_call_output", call_id="call_1", output=f'{{"agent_id":"{C}"}}')
    path = write(tmp_path, meta(P), call("spawn_agent"), output)
    assert lineage_facts(path)[2:] == [
        ChildIdentified(parent=P, child=C, resolution="transcript", spawn_key="call_1")
    ]


@pytest.mark.parametrize(
    "output",
    [
        {"agent_id": C},
        {"content": f'{{"agent_id":"{C}"}}', "success": True},
        [{"type": "input_text", "text": f'{{"agent_id":"{C}"}}'}],
    ],
    ids=["object", "content-text", "content-items"],
)
def test_the_spawn_result_is_read_in_each_stored_shape(tmp_path: Path, output: Any) -> None:
    result = item("function_call_output", call_id="call_1", output=output)
    path = write(tmp_path, meta(P), call("spawn_agent"), result)
    assert lineage_facts(path)[2:] == [
        ChildIdentified(parent=P, child=C, resolution="transcript", spawn_key="call_1")
    ]


def test_the_result_of_another_call_names_no_child(tmp_path: Path) -> None:
    output = item("function_call_output", call_id="call_2", output=f'{{"agent_id":"{C}"}}')
    path = write(tmp_path, meta(P), call("spawn_agent"), output)
    assert lineage_facts(path)[2:] == []


def test_a_started_sub_agent_activity_identifies_the_child_by_its_call(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), activity("started"))
    assert lineage_facts(path)[1:] == [
        ChildIdentified(parent=P, child=C, resolution="transcript", spawn_key="call_9")
    ]


@pytest.mark.parametrize("kind", ["completed", "interrupted"])
def test_a_finished_sub_agent_activity_stops_the_child(tmp_path: Path, kind: str) -> None:
    path = write(tmp_path, meta(P), activity(kind))
    assert lineage_facts(path)[1:] == [Stopped(conversation=C)]


def test_an_interaction_wakes_the_child(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), activity("interacted"))
    assert lineage_facts(path)[1:] == [Resumed(C)]


def test_an_activity_item_of_another_thread_says_nothing(tmp_path: Path) -> None:
    row = activity("started")
    row["payload"]["thread_id"] = F
    assert lineage_facts(write(tmp_path, meta(P), row))[1:] == []


def test_the_legacy_activity_event_identifies_the_child(tmp_path: Path) -> None:
    row = event("sub_agent_activity", event_id="e1", agent_thread_id=C, kind="started")
    path = write(tmp_path, meta(P), row)
    assert lineage_facts(path)[1:] == [ChildIdentified(parent=P, child=C, resolution="transcript")]


def test_a_v1_close_agent_stops_its_target(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), call("close_agent", target=C))
    assert lineage_facts(path)[1:] == [Stopped(conversation=C)]


def test_a_v1_resume_agent_resumes_its_target(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), call("resume_agent", namespace="multi_agent_v1", id=C))
    assert lineage_facts(path)[1:] == [Resumed(C)]


def test_a_v2_close_agent_naming_a_path_stops_nothing(tmp_path: Path) -> None:
    path = write(
        tmp_path, meta(P), call("close_agent", namespace="collaboration", target="/root/a")
    )
    assert lineage_facts(path)[1:] == []


def test_extended_history_spawn_and_close_events_are_read(tmp_path: Path) -> None:
    spawned = event("collab_agent_spawn_end", call_id="call_1", new_thread_id=C)
    closed = event("collab_close_end", call_id="call_2", receiver_thread_id=C)
    path = write(tmp_path, meta(P), spawned, closed)
    assert lineage_facts(path)[1:] == [
        ChildIdentified(parent=P, child=C, resolution="transcript", spawn_key="call_1"),
        Stopped(conversation=C),
    ]


def test_a_childs_turn_end_stops_it(tmp_path: Path) -> None:
    path = write(tmp_path, child_meta(C, P, session_id=P), event("task_complete", turn_id=NEW_TURN))
    assert lineage_facts(path)[1:] == [Stopped(conversation=C)]


def test_a_roots_turn_end_stops_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), event("turn_aborted", turn_id=NEW_TURN))
    assert lineage_facts(path)[1:] == []


# -- threads that are not delegation -----------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [{"subagent": "review"}, {"subagent": {"other": "guardian"}}, "agent_job:42"],
    ids=["review", "guardian", "agent-job"],
)
def test_a_host_run_subagent_says_nothing(tmp_path: Path, source: Any) -> None:
    path = write(tmp_path, meta(C, source=source), event("user_message", message="review"))
    assert [row.observation for row in rows(path)] == [None, None]


def test_rows_before_any_session_meta_say_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, event("thread_settings_applied", thread_id=P), meta(P))
    assert [row.observation is None for row in rows(path)] == [True, False]


def test_a_blank_line_says_nothing(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), b"   ", event("task_started", turn_id=OLD_TURN))
    found = rows(path)
    assert [row.row for row in found] == [1, 2, 3]
    assert found[1].observation is None


# -- bad input ---------------------------------------------------------------------------------


def test_an_interior_line_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), b"{oops", event("task_started"))
    with pytest.raises(InputError) as caught:
        rows(path)
    assert (caught.value.path, caught.value.line) == (str(path), 2)


def test_a_line_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a JSON object") as caught:
        rows(write(tmp_path, meta(P), b"[1, 2]"))
    assert caught.value.line == 2


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), tail=b'{"timestamp":"2026-09-03T08:0')
    assert [row.row for row in rows(path)] == [1]


def test_a_last_line_without_newline_that_parses_is_read(tmp_path: Path) -> None:
    path = write(tmp_path, meta(P), tail=orjson.dumps(event("task_started")))
    assert [row.row for row in rows(path)] == [1, 2]


def test_an_oversized_line_is_refused_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codex_rollout, "MAX_LINE_BYTES", 64)
    path = write(tmp_path, meta(P) | {"padding": "x" * 100})
    with pytest.raises(InputError, match="longer than") as caught:
        rows(path)
    assert caught.value.line == 1


def test_a_line_exactly_at_the_limit_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = orjson.dumps(meta(P))
    monkeypatch.setattr(codex_rollout, "MAX_LINE_BYTES", len(line))
    assert len(rows(write(tmp_path, line))) == 1


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ({"type": "session_meta", "payload": {"cwd": "/w"}}, "payload.id' is missing"),
        ({"type": "session_meta", "payload": {"id": 7}}, "payload.id' must be a string"),
        ({"type": "session_meta", "payload": "x"}, "'payload' must be an object"),
        (
            meta(C, source={"subagent": {"thread_spawn": {"parent_thread_id": P, "depth": "1"}}}),
            "depth' must be an integer",
        ),
        (meta(C, session_id=["x"]), "session_id' must be a string"),
    ],
    ids=["no-id", "int-id", "payload-text", "depth-text", "session-list"],
)
def test_a_mistyped_header_is_refused(tmp_path: Path, row: dict[str, Any], reason: str) -> None:
    with pytest.raises(InputError, match=reason):
        rows(write(tmp_path, row))


def test_a_spawn_call_without_call_id_is_refused(tmp_path: Path) -> None:
    spawn = item("function_call", name="spawn_agent", arguments="{}")
    with pytest.raises(InputError, match="call_id") as caught:
        rows(write(tmp_path, meta(P), spawn))
    assert caught.value.line == 2


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        rows(tmp_path / "absent.jsonl")


# -- through the engine ------------------------------------------------------------------------


def test_a_spawn_and_its_result_place_the_child_under_the_spawner(tmp_path: Path) -> None:
    output = item("function_call_output", call_id="call_1", output=f'{{"agent_id":"{C}"}}')
    path = write(tmp_path, meta(P), call("spawn_agent"), output)
    with open_engine("memory://") as engine:
        for row in read_rollout(path):
            if row.observation is not None:
                engine.observe(row.observation.host, row.observation)
        lineage = engine.lineage(C, "codex")
    assert (lineage.parent, lineage.root, lineage.depth) == (P, P, 1)


# -- the corpus --------------------------------------------------------------------------------


def test_every_corpus_rollout_reads_every_line(corpus: Path) -> None:
    for path in corpus_rollouts(corpus):
        lines = path.read_bytes().count(b"\n")
        assert [row.row for row in rows(path)] == list(range(1, lines + 1)), path.name


def test_the_concatenated_fork_file_holds_two_threads_split_before_line_23(
    corpus: Path,
) -> None:
    (path,) = (corpus / FORK).glob("rollout-*.jsonl")
    requesters = [row.observation.requester for row in rows(path) if row.observation]
    first, fork = "019e5615-1ef8-7270-b988-4f52f86449a4", "019e5615-9632-7740-b2cf-3061e4ff06e2"
    assert requesters == [first] * 22 + [fork] * 32


def test_the_corpus_fork_is_a_new_root_with_no_parent_edge(corpus: Path) -> None:
    (path,) = (corpus / FORK).glob("rollout-*.jsonl")
    assert lineage_facts(path) == [
        RootSeen("019e5615-1ef8-7270-b988-4f52f86449a4", "transcript"),
        RootSeen("019e5615-9632-7740-b2cf-3061e4ff06e2", "transcript"),
    ]


def test_the_corpus_fork_roots_are_separate_trees_in_the_engine(corpus: Path) -> None:
    (path,) = (corpus / FORK).glob("rollout-*.jsonl")
    with open_engine("memory://") as engine:
        for row in read_rollout(path):
            if row.observation is not None:
                engine.observe(row.observation.host, row.observation)
        fork = engine.lineage("019e5615-9632-7740-b2cf-3061e4ff06e2", "codex")
    assert (fork.depth, fork.parent) == (0, None)


def test_the_corpus_new_session_is_a_second_unlinked_root(corpus: Path) -> None:
    (path,) = (corpus / NEW).glob("rollout-*.jsonl")
    found = rows(path)
    requesters = {row.observation.requester for row in found[12:] if row.observation}
    assert requesters == {"019e5c19-5842-77f0-9417-0ad6552cd62b"}
    assert found[12].observation is not None
    assert found[12].observation.facts == (
        RootSeen("019e5c19-5842-77f0-9417-0ad6552cd62b", "transcript"),
    )


def test_the_corpus_headers_identify_three_children_at_depth_one(corpus: Path) -> None:
    parent = "019f6249-055d-76d3-b381-cd9d3eb99189"
    children = []
    for path in sorted((corpus / HEADERS).glob("rollout-*.jsonl")):
        for fact in lineage_facts(path):
            if isinstance(fact, ChildIdentified):
                assert (fact.parent, fact.depth) == (parent, 1)
                children.append(fact.child)
    assert len(children) == 3


def test_the_corpus_review_subagent_says_nothing(corpus: Path) -> None:
    path = corpus / REVIEW / "rollout-subagent-019b88e5.jsonl"
    assert [row.observation for row in rows(path)] == [None, None]
