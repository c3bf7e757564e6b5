"""The tool matchers `install-hooks` writes: narrowed to the tools whose calls the adapter
reads something from, never so far that a fact is lost, and read as the hosts read them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lineage_es.facts import Acted
from lineage_es.hook_config import MARKER, matcher_covers, missing_mcp_hooks
from lineage_es.hosts import adapter
from tests.support.claude_hooks import AGENT, claude
from tests.support.codex_hooks import CHILD, hook

#: Tool names each host really uses (HOSTS.md), spawn tools and others, MCP tools included.
CLAUDE_TOOLS = (
    "Agent",
    "Task",
    "Bash",
    "Read",
    "SendMessage",
    "Workflow",
    "mcp__lineage__list_agents",
)
CODEX_TOOLS = (
    "spawn_agent",
    "collaborationspawn_agent",
    "multi_agent_v1spawn_agent",
    "collaboration.spawn_agent",
    "exec_command",
    "apply_patch",
    "wait_agent",
    "close_agent",
    "mcp__tools__spawn_agent",
)


def claude_post(tool: str) -> dict[str, Any]:
    """A PostToolUse whose result would name a child, were the tool a spawn."""
    return claude(
        "PostToolUse",
        tool_name=tool,
        tool_use_id="toolu_01",
        tool_input={"prompt": "p", "subagent_type": "Explore"},
        tool_response={"status": "completed", "agentId": AGENT},
    )


def codex_post(tool: str) -> dict[str, Any]:
    return hook(
        "PostToolUse",
        tool_name=tool,
        tool_use_id="call_1",
        tool_input={"message": "m", "agent_type": "explorer"},
        tool_response={"agent_id": CHILD},
    )


def reads_more_than_an_act(host: str, payload: dict[str, Any]) -> bool:
    facts = adapter(host).observe(payload).facts
    return any(not isinstance(fact, Acted) for fact in facts)


@pytest.mark.parametrize(
    ("host", "tools", "payload"),
    [("claude", CLAUDE_TOOLS, claude_post), ("codex", CODEX_TOOLS, codex_post)],
)
def test_post_tool_use_runs_for_every_tool_whose_result_the_adapter_reads(
    host: str, tools: tuple[str, ...], payload: Any
) -> None:
    matcher = adapter(host).tool_matchers["PostToolUse"]
    read = {tool for tool in tools if reads_more_than_an_act(host, payload(tool))}
    assert read and all(matcher_covers(matcher, tool) for tool in read)


@pytest.mark.parametrize(
    ("host", "tool"), [("claude", "Bash"), ("claude", "Read"), ("codex", "exec_command")]
)
def test_post_tool_use_skips_tools_whose_result_adds_nothing(host: str, tool: str) -> None:
    assert not matcher_covers(adapter(host).tool_matchers["PostToolUse"], tool)


def test_codex_spawn_matcher_is_not_fooled_by_an_mcp_tool_of_that_name() -> None:
    assert not matcher_covers(adapter("codex").tool_matchers["PostToolUse"], "mcp__t__spawn_agent")


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_pre_tool_use_runs_for_every_tool(host: str) -> None:
    """Every call is an act: it revives a child resumed after its stop (Claude's
    SendMessage, each Codex child turn) and places a child whose start was missed."""
    assert adapter(host).tool_matchers["PreToolUse"] == "*"


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_every_tool_event_has_a_matcher_and_only_tool_events_do(host: str) -> None:
    each = adapter(host)
    assert set(each.tool_matchers) == set(each.tool_events)


@pytest.mark.parametrize(
    ("matcher", "tool", "covers"),
    [
        ("Agent|Task", "Task", True),
        ("Agent|Task", "TaskOutput", False),  # a list of names matches them exactly
        ("mcp__lineage", "mcp__lineage__list_agents", False),
        ("^mcp__", "mcp__lineage__list_agents", True),  # a regex is found anywhere
        ("mcp__.*", "mcp__lineage__list_agents", True),
        ("spawn_agent$", "collaborationspawn_agent", True),
        ("[", "[", False),  # a regex that does not compile matches nothing
        ("", "Bash", True),
        ("*", "Bash", True),
    ],
)
def test_a_matcher_is_read_as_claude_code_and_codex_read_it(
    matcher: str, tool: str, covers: bool
) -> None:
    assert matcher_covers(matcher, tool) is covers


def test_an_unanchored_regex_matcher_counts_for_lineage_mcp(tmp_path: Path) -> None:
    group = {"matcher": "^mcp__", "hooks": [{"type": "command", "command": f"x {MARKER}"}]}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    assert missing_mcp_hooks("claude", path) == ()
