"""The Claude Code hook adapter: which payloads it claims, and what each one means."""

from __future__ import annotations

from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import pytest

from lineage_es.errors import PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.base import HostAdapter, payload_key
from lineage_es.hosts.claude import ClaudeAdapter

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
AGENT = "a1000000000000001"
CHILD = "a2000000000000002"
AT = datetime(2026, 9, 3, 8, 0, 5, tzinfo=UTC)

adapter: HostAdapter = ClaudeAdapter()


def payload(event: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": ROOT, "hook_event_name": event, "cwd": "/w", **fields}


def spawn(event: str, **fields: Any) -> dict[str, Any]:
    tool_input = {"prompt": "p", "subagent_type": "Explore", "description": "scan"}
    return payload(
        event, tool_name="Agent", tool_use_id="toolu_01A", tool_input=tool_input, **fields
    )


# Examples from shared/spec/HOSTS.md, sections 1.1, 2.1 and 3.1.
CLAUDE_EXAMPLES = [
    {"session_id": ROOT, "transcript_path": "…/5f1c2e4a-….jsonl", "agent_id": AGENT,
     "agent_type": "Explore", "hook_event_name": "SubagentStart"},
    {"session_id": "5f1c2e4a-…", "hook_event_name": "PostToolUse", "agent_id": AGENT,
     "tool_name": "Agent", "tool_use_id": "toolu_01B",
     "tool_input": {"prompt": "…", "subagent_type": "general-purpose"},
     "tool_response": {"status": "completed", "agentId": CHILD}},
    {"session_id": "5f1c2e4a-…", "hook_event_name": "SubagentStop", "agent_id": CHILD,
     "agent_type": "general-purpose",
     "agent_transcript_path": f"…/5f1c2e4a-…/subagents/agent-{CHILD}.jsonl",
     "background_tasks": []},
    {"session_id": "5f1c2e4a-…", "hook_event_name": "Stop",
     "background_tasks": [{"id": AGENT, "type": "subagent", "status": "running",
                           "agent_type": "Explore"}]},
]  # fmt: skip
CODEX_EXAMPLES = [
    {"session_id": "019a…a1", "turn_id": "t2",
     "transcript_path": "…/rollout-2026-09-03T10-00-05-019a…b2.jsonl",
     "hook_event_name": "SubagentStart", "agent_id": "019a…b2", "agent_type": "default"},
    {"session_id": "019a…a1", "hook_event_name": "SubagentStop",
     "transcript_path": "…/rollout-…-019a…a1.jsonl",
     "agent_transcript_path": "…/rollout-…-019a…b2.jsonl", "agent_id": "019a…b2",
     "last_assistant_message": "done"},
]  # fmt: skip
CURSOR_EXAMPLES = [
    {"conversation_id": "c0a1", "generation_id": "g1", "tool_name": "Task",
     "tool_input": {"prompt": "p", "subagent_type": "explore"},
     "tool_use_id": "call-1111…-7\nfc_6666…_0", "hook_event_name": "preToolUse",
     "workspace_roots": ["/w"]},
    {"conversation_id": "c0a1", "generation_id": "c0a1", "subagent_id": "call-1111…-7\nfc_6666…_0",
     "tool_call_id": "call-1111…-7\nfc_6666…_0", "parent_conversation_id": "c0a1",
     "subagent_type": "explore", "is_parallel_worker": False, "hook_event_name": "subagentStart",
     "workspace_roots": ["/w"]},
    {"conversation_id": "d0b2", "generation_id": "g2", "tool_name": "Read",
     "tool_use_id": "call-aa-1\nfc_bb_0", "hook_event_name": "preToolUse",
     "workspace_roots": ["/w"], "transcript_path": None},
    {"conversation_id": "c0a1", "subagent_id": "call-1111…-7\nfc_6666…_0",
     "parent_conversation_id": "c0a1", "status": "completed", "duration_ms": 25995,
     "message_count": 0, "hook_event_name": "subagentStop", "agent_transcript_path": None},
    # Cursor 3.x also sends session_id (= conversation_id).
    {"conversation_id": "c0a1", "session_id": "c0a1", "hook_event_name": "sessionStart"},
]  # fmt: skip


# -- recognising ------------------------------------------------------------------------------


@pytest.mark.parametrize("example", CLAUDE_EXAMPLES)
def test_recognises_claude_examples(example: dict[str, Any]) -> None:
    assert adapter.recognises(example)


@pytest.mark.parametrize("example", CODEX_EXAMPLES)
def test_does_not_recognise_codex_examples(example: dict[str, Any]) -> None:
    assert not adapter.recognises(example)


@pytest.mark.parametrize("example", CURSOR_EXAMPLES)
def test_does_not_recognise_cursor_examples(example: dict[str, Any]) -> None:
    assert not adapter.recognises(example)


def test_codex_turn_id_is_not_claude() -> None:
    assert not adapter.recognises(payload("UserPromptSubmit", turn_id="t1", prompt="hi"))


def test_codex_transcript_under_dot_codex_is_not_claude() -> None:
    path = "/home/u/.codex/sessions/2026/09/03/session.jsonl"
    assert not adapter.recognises(payload("SessionStart", transcript_path=path))


def test_codex_thread_id_as_agent_id_is_not_claude() -> None:
    thread = "019a0000-0000-7000-8000-0000000000b2"
    assert not adapter.recognises(payload("PreToolUse", agent_id=thread, tool_name="Bash"))


def test_codex_snake_case_tool_is_not_claude() -> None:
    assert not adapter.recognises(payload("PreToolUse", tool_name="collaborationspawn_agent"))


def test_mcp_tool_name_is_still_claude() -> None:
    assert adapter.recognises(payload("PostToolUse", tool_name="mcp__lineage__tree"))


def test_claude_transcript_path_is_claude() -> None:
    path = f"/home/u/.claude/projects/-w/{ROOT}.jsonl"
    assert adapter.recognises(payload("SessionStart", transcript_path=path, source="startup"))


@pytest.mark.parametrize(
    "example",
    [
        {"hook_event_name": "SessionStart"},
        {"session_id": ROOT},
        {"session_id": "", "hook_event_name": "SessionStart"},
        {"session_id": ROOT, "hook_event_name": "sessionStart"},
    ],
)
def test_does_not_recognise_without_session_or_pascal_case_event(example: dict[str, Any]) -> None:
    assert not adapter.recognises(example)


def test_does_not_recognise_a_non_object() -> None:
    assert not adapter.recognises(["session_id", "hook_event_name"])  # type: ignore[arg-type]


# -- what only Claude sends --------------------------------------------------------------------


def test_own_fields_are_a_dot_claude_transcript_a_toolu_id_and_a_claude_agent_id() -> None:
    path = f"/home/u/.claude/projects/-w/{ROOT}.jsonl"
    example = spawn("PreToolUse", transcript_path=path, agent_id=AGENT)
    assert adapter.own_fields(example) == ("transcript_path", "tool_use_id", "agent_id")


@pytest.mark.parametrize("agent", ["a7e01f2c", "1f2e3d4", "acompact-e1f845"])
def test_agent_ids_of_every_claude_version_are_its_own(agent: str) -> None:
    assert adapter.own_fields(payload("Stop", agent_id=agent)) == ("agent_id",)


def test_a_bare_claude_envelope_has_no_own_fields() -> None:
    assert adapter.own_fields(payload("SessionStart", source="startup")) == ()


@pytest.mark.parametrize("example", CODEX_EXAMPLES + CURSOR_EXAMPLES)
def test_codex_and_cursor_examples_carry_no_claude_own_fields(example: dict[str, Any]) -> None:
    assert adapter.own_fields(example) == ()


def test_an_mcp_meta_names_no_claude_conversation() -> None:
    assert not adapter.mcp_meta
    assert not adapter.meta_names_thread({"threadId": ROOT})


# -- the envelope -----------------------------------------------------------------------------


def test_root_event_is_requested_by_the_session() -> None:
    observation = adapter.observe(payload("Stop"), at=AT)
    assert (observation.requester, observation.root) == (ROOT, ROOT)


def test_event_inside_a_subagent_is_requested_by_the_agent() -> None:
    observation = adapter.observe(payload("Stop", agent_id=AGENT))
    assert (observation.requester, observation.root) == (AGENT, ROOT)


def test_the_cwd_does_not_scope_roots() -> None:
    assert adapter.observe(payload("Stop")).workspace == ()


def test_a_mistyped_cwd_is_refused() -> None:
    with pytest.raises(PayloadError, match="cwd"):
        adapter.observe({"session_id": ROOT, "hook_event_name": "Stop", "cwd": 3})


def test_time_is_the_receipt_time_given() -> None:
    assert adapter.observe(payload("Stop"), at=AT).at == AT


def test_key_is_the_payload_digest() -> None:
    sent = payload("Stop")
    assert adapter.observe(sent).key == payload_key(sent)


#: A tool call with a nested object, a non-ASCII path, a float, a boolean and a null: its key
#: is stored in journals (the idempotency key of its events), so it must never change.
KEYED = payload(
    "PreToolUse",
    tool_name="Read",
    tool_use_id="toolu_01A",
    tool_input={"file_path": "/w/é.py", "offset": 3, "limit": 1.5, "flags": [True, None]},
)
KEYED_KEY = "5b9210d47ff10e8fe21af68757245d27"


def test_payload_keys_stored_in_journals_do_not_change() -> None:
    assert payload_key(KEYED) == KEYED_KEY
    assert payload_key({**KEYED, "timestamp": "2026-09-03"}, ignore=("timestamp",)) == KEYED_KEY
    assert payload_key(dict(reversed(KEYED.items()))) == KEYED_KEY  # key order is no part of it
    odd_keys: dict[Any, Any] = {"b": 1, 2: "x", "a": {3: [1, 2]}}
    assert payload_key(odd_keys) == "ab92417ae70b24816cbe79d998b04e97"


def test_the_observed_key_is_the_pinned_payload_key() -> None:
    assert adapter.observe(KEYED).key == KEYED_KEY


def test_a_payload_checked_by_the_exact_walk_keeps_its_key() -> None:
    """More brackets than the depth bound (here inside a string) take the slow exact check;
    the key must not depend on which check decided."""
    sent = {**KEYED, "tool_input": {"content": "{[" * 100}}
    assert adapter.observe(sent).key == payload_key(sent) == "12600992ae979da8a90464f7a2d2ede5"


def test_a_mapping_that_is_not_a_dict_is_keyed_by_its_items() -> None:
    assert adapter.observe(MappingProxyType(KEYED)).key == KEYED_KEY


def test_host_is_claude() -> None:
    assert adapter.observe(payload("Stop")).host == "claude"


def test_claim_is_none_for_any_meta() -> None:
    assert adapter.claim({"threadId": "x", "x-codex-turn-metadata": {"session_id": "y"}}) is None


# -- roots ------------------------------------------------------------------------------------


def test_session_start_sees_the_root_with_its_source() -> None:
    observation = adapter.observe(payload("SessionStart", source="resume"))
    assert observation.facts == (RootSeen(ROOT, source="resume"),)


def test_user_prompt_at_the_root_sees_the_root() -> None:
    observation = adapter.observe(payload("UserPromptSubmit", prompt="hi"))
    assert observation.facts == (RootSeen(ROOT, source="prompt"),)


def notice(task: str, status: str) -> str:
    """A background task's notice as it re-enters the root as a prompt (HOSTS.md 1.2)."""
    return (
        f"<task-notification>\n<task-id>{task}</task-id>\n<tool-use-id>toolu_01A</tool-use-id>"
        f"\n<status>{status}</status>\n<summary>done</summary>\n</task-notification>"
    )


@pytest.mark.parametrize("status", ["completed", "killed"])
def test_a_notice_prompt_of_a_finished_background_agent_stops_it(status: str) -> None:
    observation = adapter.observe(payload("UserPromptSubmit", prompt=notice(AGENT, status)))
    assert observation.facts == (RootSeen(ROOT, source="prompt"), Stopped(conversation=AGENT))


def test_a_notice_prompt_of_a_running_background_agent_stops_nothing() -> None:
    observation = adapter.observe(payload("UserPromptSubmit", prompt=notice(AGENT, "running")))
    assert observation.facts == (RootSeen(ROOT, source="prompt"),)


def test_a_prompt_quoting_a_notice_stops_nothing() -> None:
    quoted = "why did this say " + notice(AGENT, "killed")
    observation = adapter.observe(payload("UserPromptSubmit", prompt=quoted))
    assert observation.facts == (RootSeen(ROOT, source="prompt"),)


def test_other_root_event_is_the_root_acting() -> None:
    observation = adapter.observe(payload("PreCompact", trigger="manual"))
    assert observation.facts == (Acted(ROOT),)


def test_session_end_ends_the_session() -> None:
    observation = adapter.observe(payload("SessionEnd", reason="clear"))
    assert observation.facts == (SessionEnded(ROOT),)


def test_stop_ends_a_turn_and_stops_nothing() -> None:
    observation = adapter.observe(payload("Stop", agent_id=AGENT))
    assert observation.facts == (Acted(AGENT),)


# -- spawns -----------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["Agent", "Task"])
def test_spawn_tool_call_requests_a_spawn(tool: str) -> None:
    observation = adapter.observe(spawn("PreToolUse") | {"tool_name": tool})
    assert observation.facts == (SpawnRequested(ROOT, "toolu_01A", "Explore", "scan"),)


def test_spawn_inside_a_subagent_acts_first_then_requests() -> None:
    observation = adapter.observe(spawn("PreToolUse", agent_id=AGENT))
    assert observation.facts == (
        Acted(AGENT),
        SpawnRequested(AGENT, "toolu_01A", "Explore", "scan"),
    )


def test_spawn_call_without_tool_use_id_only_acts() -> None:
    sent = spawn("PreToolUse")
    del sent["tool_use_id"]
    assert adapter.observe(sent).facts == (Acted(ROOT),)


def test_resume_call_resumes_instead_of_spawning() -> None:
    sent = spawn("PreToolUse")
    sent["tool_input"]["resume"] = CHILD
    assert adapter.observe(sent).facts == (Resumed(CHILD),)


def test_other_tool_call_is_acting() -> None:
    sent = payload("PreToolUse", tool_name="Bash", tool_use_id="t", tool_input={"command": "ls"})
    assert adapter.observe(sent).facts == (Acted(ROOT),)


def test_spawn_result_confirms_the_child_and_its_stop() -> None:
    sent = spawn("PostToolUse", tool_response={"status": "completed", "agentId": CHILD})
    assert adapter.observe(sent).facts == (
        ChildIdentified(
            parent=ROOT,
            child=CHILD,
            resolution="confirmed",
            spawn_key="toolu_01A",
            agent_type="Explore",
            description="scan",
        ),
        Stopped(conversation=CHILD),
    )


def test_background_spawn_result_confirms_without_stopping() -> None:
    response = {"status": "async_launched", "isAsync": True, "agentId": CHILD}
    facts = adapter.observe(spawn("PostToolUse", tool_response=response)).facts
    assert [type(f) for f in facts] == [ChildIdentified]


def test_spawn_result_names_the_spawner_inside_a_subagent() -> None:
    sent = spawn("PostToolUse", agent_id=AGENT, tool_response={"agentId": CHILD})
    facts = adapter.observe(sent).facts
    assert facts[0] == Acted(AGENT)
    assert isinstance(facts[1], ChildIdentified)
    assert (facts[1].parent, facts[1].child) == (AGENT, CHILD)


def test_spawn_result_prefers_the_responses_agent_type() -> None:
    response = {"status": "async_launched", "agentId": CHILD, "agentType": "Plan"}
    fact = adapter.observe(spawn("PostToolUse", tool_response=response)).facts[0]
    assert isinstance(fact, ChildIdentified)
    assert fact.agent_type == "Plan"


def test_resume_result_confirms_nothing_new() -> None:
    sent = spawn("PostToolUse", tool_response={"status": "completed", "agentId": CHILD})
    sent["tool_input"]["resume"] = CHILD
    assert adapter.observe(sent).facts == (Stopped(conversation=CHILD),)


def test_string_tool_response_is_not_an_error() -> None:
    sent = spawn("PostToolUse", tool_response="Agent finished")
    assert adapter.observe(sent).facts == (Acted(ROOT),)


def test_spawn_result_without_agent_id_only_acts() -> None:
    sent = spawn("PostToolUse", tool_response={"status": "completed"})
    assert adapter.observe(sent).facts == (Acted(ROOT),)


# -- subagent lifecycle -----------------------------------------------------------------------


def test_subagent_start_starts_the_child() -> None:
    observation = adapter.observe(payload("SubagentStart", agent_id=AGENT, agent_type="Explore"))
    assert observation.requester == AGENT
    assert observation.facts == (ChildStarted(child=AGENT, agent_type="Explore"),)


def test_subagent_stop_only_stops() -> None:
    observation = adapter.observe(payload("SubagentStop", agent_id=AGENT, agent_type=""))
    assert observation.requester == AGENT
    assert observation.facts == (Stopped(conversation=AGENT),)


@pytest.mark.parametrize(
    "agent", ["acompact-e1f845", "aprompt_suggestion-3b2c1a", "aside_question-9f8e7d"]
)
@pytest.mark.parametrize("event", ["SubagentStart", "SubagentStop", "PreToolUse"])
def test_internal_agents_are_not_delegation(agent: str, event: str) -> None:
    observation = adapter.observe(payload(event, agent_id=agent, tool_name="Read"))
    assert (observation.requester, observation.facts) == (None, ())


# -- refusals ---------------------------------------------------------------------------------


def test_non_object_payload_is_refused() -> None:
    with pytest.raises(PayloadError, match="JSON object"):
        adapter.observe([ROOT, "Stop"])  # type: ignore[arg-type]


def test_missing_session_id_is_refused_by_name() -> None:
    with pytest.raises(PayloadError, match="session_id"):
        adapter.observe({"hook_event_name": "Stop"})


def test_empty_session_id_is_refused() -> None:
    with pytest.raises(PayloadError, match="session_id"):
        adapter.observe({"session_id": "", "hook_event_name": "Stop"})


def test_missing_event_name_is_refused_by_name() -> None:
    with pytest.raises(PayloadError, match="hook_event_name"):
        adapter.observe({"session_id": ROOT})


def test_non_string_session_id_is_refused() -> None:
    with pytest.raises(PayloadError, match="session_id"):
        adapter.observe({"session_id": 7, "hook_event_name": "Stop"})


@pytest.mark.parametrize("field", ["agent_id", "cwd"])
def test_mistyped_optional_field_is_refused_by_name(field: str) -> None:
    with pytest.raises(PayloadError, match=field):
        adapter.observe(payload("Stop") | {field: ["x"]})


def test_mistyped_source_is_refused() -> None:
    with pytest.raises(PayloadError, match="source"):
        adapter.observe(payload("SessionStart", source=1))


def test_non_object_tool_input_is_refused() -> None:
    with pytest.raises(PayloadError, match="tool_input"):
        adapter.observe(spawn("PreToolUse") | {"tool_input": "p"})


def test_mistyped_subagent_type_is_refused() -> None:
    sent = spawn("PreToolUse")
    sent["tool_input"]["subagent_type"] = {"name": "Explore"}
    with pytest.raises(PayloadError, match=r"tool_input\.subagent_type"):
        adapter.observe(sent)


def test_mistyped_agent_id_in_response_is_refused() -> None:
    with pytest.raises(PayloadError, match=r"tool_response\.agentId"):
        adapter.observe(spawn("PostToolUse", tool_response={"agentId": 12}))


def test_subagent_start_without_agent_id_is_refused() -> None:
    with pytest.raises(PayloadError, match="agent_id"):
        adapter.observe(payload("SubagentStart", agent_type="Explore"))


def test_subagent_stop_without_agent_id_is_refused() -> None:
    with pytest.raises(PayloadError, match="agent_id"):
        adapter.observe(payload("SubagentStop"))


def test_too_deep_payload_is_refused() -> None:
    nested: dict[str, Any] = {}
    for _ in range(100):
        nested = {"x": nested}
    with pytest.raises(PayloadError, match="deeper"):
        adapter.observe(payload("PreToolUse", tool_name="Bash", tool_input=nested))


def test_payload_that_is_not_plain_json_is_refused() -> None:
    with pytest.raises(PayloadError, match="plain JSON"):
        adapter.observe(payload("Stop", extra=object()))
