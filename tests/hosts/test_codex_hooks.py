"""The Codex CLI hook adapter and its MCP ``_meta`` claims (shared/spec/HOSTS.md section 2)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.errors import PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Claim,
    RootSeen,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.codex import CodexAdapter
from lineage_es.hosts.detect import payload_host as detect
from tests.support.codex_hooks import CHILD, GRANDCHILD, ROLLOUT, ROOT, hook, spawn_call
from tests.support.hosts_examples import HOSTS_CLAUDE, HOSTS_CODEX, HOSTS_CURSOR


@pytest.fixture
def codex() -> CodexAdapter:
    return CodexAdapter()


# -- recognises -------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", HOSTS_CODEX, ids=["SubagentStart", "SubagentStop"])
def test_recognises_the_codex_examples_of_hosts_md(
    codex: CodexAdapter, payload: dict[str, Any]
) -> None:
    assert codex.recognises(payload)


@pytest.mark.parametrize("payload", HOSTS_CLAUDE, ids=["start", "post", "stop", "Stop"])
def test_does_not_recognise_the_claude_examples_of_hosts_md(
    codex: CodexAdapter, payload: dict[str, Any]
) -> None:
    assert not codex.recognises(payload)


@pytest.mark.parametrize("payload", HOSTS_CURSOR, ids=["Task", "start", "child", "stop"])
def test_does_not_recognise_the_cursor_examples_of_hosts_md(
    codex: CodexAdapter, payload: dict[str, Any]
) -> None:
    assert not codex.recognises(payload)


def test_recognises_a_session_start_by_its_rollout_transcript(codex: CodexAdapter) -> None:
    payload = {
        "session_id": "s-1",
        "transcript_path": ROLLOUT,
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert codex.recognises(payload)


def test_recognises_a_session_start_without_transcript_by_its_uuid7_thread_id(
    codex: CodexAdapter,
) -> None:
    payload = {"session_id": ROOT, "transcript_path": None, "hook_event_name": "SessionStart"}
    assert codex.recognises(payload)


def test_does_not_recognise_a_claude_session_start_with_a_uuid4_session(
    codex: CodexAdapter,
) -> None:
    payload = {
        "session_id": "5f1c2e4a-0000-4000-8000-000000000001",
        "transcript_path": "/home/u/.claude/projects/-w/5f1c2e4a-0000-4000-8000-000000000001.jsonl",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    assert not codex.recognises(payload)


def test_recognises_a_namespaced_spawn_tool_name(codex: CodexAdapter) -> None:
    payload = {"session_id": "s-1", "hook_event_name": "PreToolUse"}
    payload["tool_name"] = "collaborationspawn_agent"
    assert codex.recognises(payload)


def test_does_not_recognise_a_non_object(codex: CodexAdapter) -> None:
    assert not codex.recognises(["session_id", "hook_event_name"])  # type: ignore[arg-type]


def test_detect_names_codex_for_a_codex_payload() -> None:
    assert detect(hook("Stop")) == "codex"


# -- what only Codex sends ---------------------------------------------------------------------


def test_own_fields_are_turn_rollout_tools_call_ids_and_uuid7_threads(codex: CodexAdapter) -> None:
    payload = spawn_call(agent_id=CHILD)
    assert codex.own_fields(payload) == (
        "turn_id",
        "transcript_path",
        "tool_name",
        "tool_use_id",
        "session_id",
        "agent_id",
    )


@pytest.mark.parametrize(
    "payload", HOSTS_CLAUDE + HOSTS_CURSOR, ids=["a", "b", "c", "d", "w", "x", "y", "z"]
)
def test_claude_and_cursor_examples_carry_no_codex_own_fields(
    codex: CodexAdapter, payload: dict[str, Any]
) -> None:
    assert codex.own_fields(payload) == ()


# -- observe: who and where --------------------------------------------------------------------


def test_the_root_is_the_session_id_and_the_cwd_scopes_nothing(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("Stop"))
    assert (observation.requester, observation.root, observation.workspace) == (ROOT, ROOT, ())


def test_inside_a_child_the_requester_is_the_agent_id(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("PreToolUse", agent_id=CHILD, tool_name="exec_command"))
    assert (observation.requester, observation.root) == (CHILD, ROOT)


def test_the_same_payload_delivered_twice_has_the_same_key(codex: CodexAdapter) -> None:
    assert codex.observe(hook("Stop")).key == codex.observe(hook("Stop")).key


def test_the_key_of_a_spawn_call_does_not_change(codex: CodexAdapter) -> None:
    """Keys are stored in journals (the idempotency key of a payload's events)."""
    assert codex.observe(spawn_call()).key == "8605b3ed6674ee095d55533c19ec29f7"


def test_different_turns_have_different_keys(codex: CodexAdapter) -> None:
    first = codex.observe(hook("Stop"))
    second = codex.observe(hook("Stop", turn_id="019a0000-0000-7000-8000-0000000000f2"))
    assert first.key != second.key


def test_the_receipt_time_is_kept(codex: CodexAdapter) -> None:
    at = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)
    assert codex.observe(hook("Stop"), at=at).at == at


# -- observe: facts ----------------------------------------------------------------------------


def test_session_start_sees_the_root_with_its_source(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("SessionStart", source="resume"))
    assert observation.facts == (RootSeen(ROOT, "resume"),)


def test_a_prompt_at_the_root_sees_the_root(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("UserPromptSubmit", prompt="go"))
    assert observation.facts == (RootSeen(ROOT, "prompt"),)


def test_a_prompt_inside_a_child_is_an_act_of_the_child(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("UserPromptSubmit", agent_id=CHILD, prompt="go"))
    assert observation.facts == (Acted(CHILD),)


def test_subagent_start_starts_the_child_without_a_parent(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("SubagentStart", agent_id=CHILD, agent_type="default"))
    assert observation.facts == (ChildStarted(child=CHILD, agent_type="default"),)
    assert observation.requester == CHILD


def test_subagent_stop_stops_the_child_and_nothing_else(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("SubagentStop", agent_id=CHILD, last_assistant_message="x"))
    assert observation.facts == (Stopped(conversation=CHILD),)


def test_stop_ends_a_turn_and_stops_nothing(codex: CodexAdapter) -> None:
    assert codex.observe(hook("Stop")).facts == (Acted(ROOT),)


def test_a_tool_call_inside_a_child_is_an_act_of_the_child(codex: CodexAdapter) -> None:
    observation = codex.observe(hook("PostToolUse", agent_id=CHILD, tool_name="exec_command"))
    assert observation.facts == (Acted(CHILD),)


def test_spawn_agent_requests_a_spawn_keyed_by_its_tool_use_id(codex: CodexAdapter) -> None:
    observation = codex.observe(spawn_call())
    assert observation.facts == (SpawnRequested(ROOT, "call_1", agent_type="explorer"),)


def test_the_v2_spawn_tool_is_a_spawn_named_by_its_task(codex: CodexAdapter) -> None:
    payload = spawn_call(tool_name="collaborationspawn_agent")
    payload["tool_input"] = {"task_name": "scan", "message": "…", "fork_turns": "all"}
    observation = codex.observe(payload)
    assert observation.facts == (SpawnRequested(ROOT, "call_1", description="scan"),)


def test_a_spawn_inside_a_child_acts_the_child_then_requests(codex: CodexAdapter) -> None:
    observation = codex.observe(spawn_call(agent_id=CHILD))
    assert observation.facts == (
        Acted(CHILD),
        SpawnRequested(CHILD, "call_1", agent_type="explorer"),
    )


def test_an_mcp_tool_named_like_the_spawn_tool_is_no_spawn(codex: CodexAdapter) -> None:
    observation = codex.observe(spawn_call(tool_name="mcp__tools__spawn_agent"))
    assert observation.facts == (Acted(ROOT),)


def test_a_v1_spawn_result_naming_the_child_confirms_it(codex: CodexAdapter) -> None:
    payload = spawn_call(tool_response=f'{{"agent_id":"{CHILD}","nickname":"Tesla"}}')
    payload["hook_event_name"] = "PostToolUse"
    observation = codex.observe(payload)
    assert observation.facts == (
        ChildIdentified(
            parent=ROOT,
            child=CHILD,
            resolution="confirmed",
            spawn_key="call_1",
            agent_type="explorer",
        ),
    )


def test_a_spawn_result_without_a_thread_id_is_only_an_act(codex: CodexAdapter) -> None:
    payload = spawn_call(tool_response={"status": "ok"})
    payload["hook_event_name"] = "PostToolUse"
    assert codex.observe(payload).facts == (Acted(ROOT),)


# -- observe: bad input ------------------------------------------------------------------------


def test_a_non_object_payload_is_refused(codex: CodexAdapter) -> None:
    with pytest.raises(PayloadError, match="JSON object"):
        codex.observe("SessionStart")  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["session_id", "hook_event_name"])
def test_a_payload_without_a_required_field_is_refused(codex: CodexAdapter, field: str) -> None:
    payload = hook("Stop")
    del payload[field]
    with pytest.raises(PayloadError, match=field):
        codex.observe(payload)


@pytest.mark.parametrize(
    ("field", "value"),
    [("session_id", 7), ("agent_id", ["x"]), ("cwd", 1), ("tool_name", {"n": 1})],
)
def test_a_mistyped_field_is_refused(codex: CodexAdapter, field: str, value: Any) -> None:
    with pytest.raises(PayloadError, match=field):
        codex.observe(hook("PreToolUse", **{field: value}))


def test_subagent_start_without_agent_id_is_refused(codex: CodexAdapter) -> None:
    with pytest.raises(PayloadError, match="agent_id"):
        codex.observe(hook("SubagentStart", agent_type="default"))


def test_a_spawn_without_tool_use_id_is_refused(codex: CodexAdapter) -> None:
    payload = spawn_call()
    del payload["tool_use_id"]
    with pytest.raises(PayloadError, match="tool_use_id"):
        codex.observe(payload)


def test_a_spawn_whose_tool_input_is_not_an_object_is_refused(codex: CodexAdapter) -> None:
    with pytest.raises(PayloadError, match="tool_input"):
        codex.observe(spawn_call() | {"tool_input": "scan"})


def test_a_too_deep_payload_is_refused(codex: CodexAdapter) -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = {"d": deep}
    with pytest.raises(PayloadError, match="deeper"):
        codex.observe(hook("Stop", extra=deep))


# -- claim -------------------------------------------------------------------------------------


def test_turn_metadata_claims_thread_root_and_parent(codex: CodexAdapter) -> None:
    meta = {
        "threadId": CHILD,
        "x-codex-turn-metadata": {
            "session_id": ROOT,
            "thread_id": CHILD,
            "parent_thread_id": ROOT,
            "thread_source": "subagent",
            "turn_id": "t2",
        },
    }
    assert codex.claim(meta) == Claim(
        host="codex", conversation=CHILD, root=ROOT, parent=ROOT, depth=1
    )


def test_a_bare_thread_id_claims_a_root(codex: CodexAdapter) -> None:
    assert codex.claim({"threadId": ROOT}) == Claim(
        host="codex", conversation=ROOT, root=ROOT, parent=None, depth=0
    )


def test_turn_metadata_sent_as_json_text_is_read(codex: CodexAdapter) -> None:
    meta = {"x-codex-turn-metadata": f'{{"session_id":"{ROOT}","thread_id":"{CHILD}"}}'}
    claim = codex.claim(meta)
    assert claim is not None and (claim.conversation, claim.root) == (CHILD, ROOT)


def test_a_stated_depth_wins(codex: CodexAdapter) -> None:
    meta = {"x-codex-turn-metadata": {"thread_id": CHILD, "parent_thread_id": "p", "depth": 2}}
    claim = codex.claim(meta)
    assert claim is not None and claim.depth == 2


def test_a_parent_that_is_not_the_root_puts_the_thread_at_depth_two(codex: CodexAdapter) -> None:
    meta = {
        "threadId": GRANDCHILD,
        "x-codex-turn-metadata": {
            "session_id": ROOT,
            "thread_id": GRANDCHILD,
            "parent_thread_id": CHILD,
            "thread_source": "subagent",
        },
    }
    assert codex.claim(meta) == Claim(
        host="codex", conversation=GRANDCHILD, root=ROOT, parent=CHILD, depth=2
    )


def test_a_parent_with_no_root_named_puts_the_thread_at_depth_one(codex: CodexAdapter) -> None:
    claim = codex.claim({"x-codex-turn-metadata": {"thread_id": CHILD, "parent_thread_id": ROOT}})
    assert claim is not None and claim.depth == 1


def test_meta_naming_no_thread_claims_nothing(codex: CodexAdapter) -> None:
    assert codex.claim({"progressToken": 3}) is None


@pytest.mark.parametrize(
    "meta",
    [
        {"threadId": CHILD},
        {"x-codex-turn-metadata": {"thread_id": CHILD}},
        {"x-codex-turn-metadata": f'{{"session_id":"{ROOT}"}}'},
    ],
    ids=["threadId", "thread_id", "session_id-as-text"],
)
def test_meta_names_a_thread_by_its_id_or_turn_metadata(
    codex: CodexAdapter, meta: dict[str, Any]
) -> None:
    assert codex.mcp_meta and codex.meta_names_thread(meta)


@pytest.mark.parametrize(
    "meta",
    [{}, {"progressToken": 3}, {"x-codex-turn-metadata": {"turn_id": "t2", "thread_id": ""}}],
    ids=["empty", "progress-token", "turn-only"],
)
def test_meta_without_thread_or_session_names_no_thread(
    codex: CodexAdapter, meta: dict[str, Any]
) -> None:
    assert not codex.meta_names_thread(meta)


@pytest.mark.parametrize(
    "meta",
    [
        {"threadId": 5},
        {"x-codex-turn-metadata": ["not", "an", "object"]},
        {"x-codex-turn-metadata": "{not json"},
        {"x-codex-turn-metadata": {"thread_id": CHILD, "parent_thread_id": 1}},
        {"x-codex-turn-metadata": {"thread_id": CHILD, "depth": True}},
        {"threadId": ROOT, "x-codex-turn-metadata": {"thread_id": CHILD}},
    ],
    ids=["thread-int", "meta-list", "meta-text", "parent-int", "depth-bool", "two-threads"],
)
def test_mistyped_meta_is_refused(codex: CodexAdapter, meta: dict[str, Any]) -> None:
    with pytest.raises(PayloadError):
        codex.claim(meta)


# -- through the engine ------------------------------------------------------------------------


def test_a_started_child_lands_under_the_thread_that_asked_for_it() -> None:
    with open_engine("memory://") as engine:
        engine.observe("codex", hook("SessionStart", source="startup"))
        engine.observe("codex", spawn_call())
        lineage = engine.observe("codex", hook("SubagentStart", agent_id=CHILD))
    assert lineage is not None
    assert (lineage.conversation, lineage.parent, lineage.root, lineage.depth) == (
        CHILD,
        ROOT,
        ROOT,
        1,
    )


def test_a_child_stopped_at_its_turn_end_is_live_again_when_it_acts() -> None:
    with open_engine("memory://") as engine:
        engine.observe("codex", hook("SessionStart", source="startup"))
        engine.observe("codex", spawn_call())
        engine.observe("codex", hook("SubagentStart", agent_id=CHILD))
        engine.observe("codex", hook("SubagentStop", agent_id=CHILD))
        after_stop = engine.tree_for(ROOT, "codex")
        engine.observe("codex", hook("PreToolUse", agent_id=CHILD, tool_name="shell"))
        after_act = engine.tree_for(ROOT, "codex")
    assert after_stop is not None and after_act is not None
    assert after_stop.children == ()
    assert [peer.conversation for peer in after_act.children] == [CHILD]


def test_meta_of_an_unseen_thread_whose_parent_is_not_the_root_is_at_depth_two() -> None:
    turn = {"session_id": ROOT, "thread_id": GRANDCHILD, "parent_thread_id": CHILD}
    with open_engine("memory://") as engine:
        lineage = engine.resolve("codex", {"x-codex-turn-metadata": turn})
    assert lineage is not None
    assert (lineage.root, lineage.parent, lineage.depth, lineage.resolution, lineage.tree) == (
        ROOT,
        CHILD,
        2,
        "native",
        None,
    )


def test_meta_of_an_unseen_thread_under_a_known_parent_is_one_deeper_than_it() -> None:
    great_grandchild = "019a0000-0000-7000-8000-0000000000d4"
    turn = {"session_id": ROOT, "thread_id": great_grandchild, "parent_thread_id": GRANDCHILD}
    with open_engine("memory://") as engine:
        engine.observe("codex", hook("SessionStart", source="startup"))
        engine.observe("codex", spawn_call())
        engine.observe("codex", hook("SubagentStart", agent_id=CHILD))
        engine.observe("codex", spawn_call(agent_id=CHILD, tool_use_id="call_2"))
        engine.observe("codex", hook("SubagentStart", agent_id=GRANDCHILD))
        lineage = engine.resolve("codex", {"x-codex-turn-metadata": turn})
    assert lineage is not None
    assert (lineage.parent, lineage.depth, lineage.tree) == (GRANDCHILD, 3, None)


def test_meta_of_a_thread_never_seen_resolves_its_own_chain_without_tree() -> None:
    meta = {"x-codex-turn-metadata": {"session_id": ROOT, "thread_id": CHILD}}
    meta["x-codex-turn-metadata"]["parent_thread_id"] = ROOT
    with open_engine("memory://") as engine:
        lineage = engine.resolve("codex", meta)
    assert lineage is not None
    assert (lineage.conversation, lineage.parent, lineage.depth, lineage.tree) == (
        CHILD,
        ROOT,
        1,
        None,
    )
