"""Each host adapter states its own rule for naming an MCP tool call's caller, read from the
call's ``_meta`` (HOSTS.md 1.5, 2.1, 3.5): a tool-use id to look up (Claude Code), a thread to
resolve (Codex), a window to match (Cursor), or none when its rule does not apply."""

from __future__ import annotations

from typing import Any

import pytest

from lineage_es.errors import PayloadError
from lineage_es.hosts import adapter, adapters
from lineage_es.hosts.base import CallerRule, HostAdapter


@pytest.fixture
def claude() -> HostAdapter:
    return adapter("claude")


@pytest.fixture
def codex() -> HostAdapter:
    return adapter("codex")


@pytest.fixture
def cursor() -> HostAdapter:
    return adapter("cursor")


@pytest.fixture
def codex_turn() -> dict[str, Any]:
    """Codex's ``x-codex-turn-metadata`` for a child thread, without a bare ``threadId``."""
    return {
        "session_id": "019a0000-0000-7000-8000-000000000001",
        "thread_id": "019a0000-0000-7000-8000-000000000002",
        "turn_id": "t2",
    }


def test_claude_names_its_caller_by_the_tool_use_id_its_pre_tool_use_hook_journaled(
    claude: HostAdapter,
) -> None:
    assert claude.caller_rule({"claudecode/toolUseId": "toolu_01A"}) == CallerRule(
        "tool_use",
        "claude:toolUseId",
        subject="toolu_01A",
        meta_field="claudecode/toolUseId",
        hook="PreToolUse",
    )


def test_claude_has_no_rule_for_a_meta_without_its_tool_use_id(claude: HostAdapter) -> None:
    assert claude.caller_rule({"progressToken": 7, "threadId": "t"}) is None


@pytest.mark.parametrize("value", ["", 5, ["toolu_01A"]])
def test_claude_refuses_a_tool_use_id_that_is_not_a_non_empty_string(
    claude: HostAdapter, value: object
) -> None:
    assert claude.caller_rule({"claudecode/toolUseId": value}) == CallerRule(
        "refused", subject="_meta['claudecode/toolUseId'] must be a non-empty string"
    )


def test_codex_names_its_caller_by_the_thread_its_meta_names(codex: HostAdapter) -> None:
    assert codex.caller_rule({"threadId": "019a0000-0000-7000-8000-000000000002"}) == (
        CallerRule("thread", "codex:_meta")
    )


def test_codex_reads_the_thread_from_its_turn_metadata_alone(
    codex: HostAdapter, codex_turn: dict[str, Any]
) -> None:
    rule = codex.caller_rule({"x-codex-turn-metadata": codex_turn})
    assert rule == CallerRule("thread", "codex:_meta")


def test_codex_has_no_rule_for_a_meta_naming_no_thread(codex: HostAdapter) -> None:
    assert codex.caller_rule({"claudecode/toolUseId": "toolu_01A"}) is None


def test_codex_refuses_mistyped_turn_metadata_with_a_payload_error(codex: HostAdapter) -> None:
    with pytest.raises(PayloadError):
        codex.caller_rule({"x-codex-turn-metadata": 5})


@pytest.mark.parametrize("meta", [{}, {"progressToken": 7}, {"claudecode/toolUseId": "x"}])
def test_cursor_matches_every_call_to_its_open_before_mcp_execution_window(
    cursor: HostAdapter, meta: dict[str, Any]
) -> None:
    assert cursor.caller_rule(meta) == CallerRule(
        "window", "cursor:beforeMCPExecution", hook="beforeMCPExecution"
    )


def test_a_host_whose_meta_names_its_caller_says_by_what() -> None:
    named = {each.host: each.caller_meta for each in adapters()}
    assert named == {"claude": "'claudecode/toolUseId'", "codex": "Codex thread", "cursor": ""}


@pytest.mark.parametrize("meta", [{}, {"claudecode/toolUseId": ""}, {"claudecode/toolUseId": 5}])
def test_a_recorded_claude_call_without_its_tool_use_id_can_name_no_caller(
    claude: HostAdapter, meta: dict[str, Any]
) -> None:
    assert claude.caller_meta_problem(meta) == (
        "'mcp._meta' names no tool call: missing required field 'claudecode/toolUseId', "
        "the tool_use_id of the call's PreToolUse hook"
    )


def test_a_recorded_claude_call_repeating_its_tool_use_id_can_name_its_caller(
    claude: HostAdapter,
) -> None:
    assert claude.caller_meta_problem({"claudecode/toolUseId": "toolu_01A"}) is None


def test_a_recorded_codex_call_naming_no_thread_can_name_no_caller(codex: HostAdapter) -> None:
    problem = codex.caller_meta_problem({"progressToken": 7})
    assert problem is not None
    assert problem.startswith("'mcp._meta' names no thread: missing required field ")


def test_a_recorded_codex_call_with_mistyped_turn_metadata_says_what_is_wrong(
    codex: HostAdapter,
) -> None:
    with pytest.raises(PayloadError) as caught:
        codex.caller_rule({"x-codex-turn-metadata": 5})
    assert codex.caller_meta_problem({"x-codex-turn-metadata": 5}) == str(caught.value)


def test_a_recorded_codex_call_naming_its_thread_can_name_its_caller(
    codex: HostAdapter, codex_turn: dict[str, Any]
) -> None:
    assert codex.caller_meta_problem({"x-codex-turn-metadata": codex_turn}) is None


@pytest.mark.parametrize("meta", [{}, {"claudecode/toolUseId": 5}, {"x-codex-turn-metadata": 5}])
def test_a_recorded_cursor_call_needs_nothing_in_its_meta(
    cursor: HostAdapter, meta: dict[str, Any]
) -> None:
    assert cursor.caller_meta_problem(meta) is None
