"""What the Claude Code and Cursor adapters say about an MCP tool call: the fact that lets
``lineage mcp`` tell who is calling it (HOSTS.md 1.5, 3.5)."""

from __future__ import annotations

import pytest

from lineage_es.errors import PayloadError
from lineage_es.facts import Acted, ToolCalled, ToolReturned
from lineage_es.hosts import adapter
from lineage_es.hosts.base import canonical_arguments
from tests.support.claude_hooks import AGENT, SESSION, claude
from tests.support.cursor_hooks import hook as cursor


def test_a_claude_mcp_tool_call_names_its_caller_and_tool_use_id() -> None:
    payload = claude(
        "PreToolUse",
        agent_id=AGENT,
        agent_type="Explore",
        tool_name="mcp__lineage__list_agents",
        tool_use_id="toolu_01X",
        tool_input={},
    )
    facts = adapter("claude").observe(payload).facts
    assert facts == (Acted(AGENT), ToolCalled(AGENT, "mcp__lineage__list_agents", call="toolu_01X"))


def test_a_claude_mcp_tool_call_of_the_root_is_the_roots() -> None:
    payload = claude("PreToolUse", tool_name="mcp__x__y", tool_use_id="toolu_01R", tool_input={})
    facts = adapter("claude").observe(payload).facts
    assert ToolCalled(SESSION, "mcp__x__y", call="toolu_01R") in facts
    assert Acted(SESSION) in facts


def test_a_claude_call_of_a_builtin_tool_names_no_mcp_call() -> None:
    payload = claude("PreToolUse", tool_name="Bash", tool_use_id="toolu_01B", tool_input={})
    facts = adapter("claude").observe(payload).facts
    assert not any(isinstance(f, ToolCalled) for f in facts)


def test_cursor_before_mcp_execution_opens_a_window_with_its_canonical_arguments() -> None:
    payload = cursor("c1", "beforeMCPExecution", tool_name="t", tool_input='{"b": 1, "a": 2}')
    facts = adapter("cursor").observe(payload).facts
    assert facts == (Acted("c1"), ToolCalled("c1", "t", arguments='{"a":2,"b":1}'))


def test_cursor_after_mcp_execution_closes_it() -> None:
    payload = cursor("c1", "afterMCPExecution", tool_name="t", tool_input="{}", result_json="{}")
    facts = adapter("cursor").observe(payload).facts
    assert facts == (Acted("c1"), ToolReturned("c1", "t", arguments="{}"))


def test_cursor_installs_hooks_around_every_mcp_call() -> None:
    events = adapter("cursor").hook_events
    assert "beforeMCPExecution" in events and "afterMCPExecution" in events


@pytest.mark.parametrize("empty", [None, "", "  ", "{}", {}])
def test_absent_and_empty_arguments_are_the_same(empty: object) -> None:
    assert canonical_arguments(empty) == "{}"


def test_arguments_as_an_object_and_as_its_json_text_are_the_same() -> None:
    assert canonical_arguments({"to": "x", "n": [1]}) == canonical_arguments('{"n":[1],"to":"x"}')


def test_arguments_that_are_not_json_text_are_kept_as_they_are() -> None:
    assert canonical_arguments("not json") == '"not json"'


def test_arguments_that_are_not_plain_data_are_refused() -> None:
    with pytest.raises(PayloadError, match="not plain JSON"):
        canonical_arguments({"when": object()})
