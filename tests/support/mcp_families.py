"""Hook payloads of one family per host, in each host's exact format (HOSTS.md 1.1, 2.1, 3.1,
3.5), for the MCP server's tests: a root, two children spawned in parallel, and a grandchild
under the first child (depth 2)."""

from __future__ import annotations

from typing import Any

from tests.support import codex_hooks
from tests.support.claude_hooks import SESSION, claude
from tests.support.codex_hooks import hook as codex
from tests.support.codex_hooks import spawn_call as codex_spawn_call
from tests.support.cursor_hooks import hook as cursor

#: Claude Code: the root session, its parallel children, the first child's child.
ROOT = SESSION
FIRST = "a1000000000000001"
SECOND = "a2000000000000002"
GRANDCHILD = "a3000000000000003"


def claude_family() -> list[dict[str, Any]]:
    """Claude's payloads: two ``Agent`` calls in one message (parallel), then their starts,
    then a nested spawn inside the first child; every child confirmed by ``PostToolUse``."""
    return [
        claude("SessionStart", source="startup"),
        _agent_call("PreToolUse", "toolu_01A", None),
        _agent_call("PreToolUse", "toolu_01B", None),
        claude("SubagentStart", agent_id=FIRST, agent_type="Explore"),
        claude("SubagentStart", agent_id=SECOND, agent_type="general-purpose"),
        _agent_call("PostToolUse", "toolu_01A", None, child=FIRST),
        _agent_call("PostToolUse", "toolu_01B", None, child=SECOND),
        _agent_call("PreToolUse", "toolu_02C", FIRST),
        claude("SubagentStart", agent_id=GRANDCHILD, agent_type="Plan"),
        _agent_call("PostToolUse", "toolu_02C", FIRST, child=GRANDCHILD),
    ]


def _agent_call(event: str, tool_use: str, agent: str | None, child: str | None = None) -> Any:
    fields: dict[str, Any] = {
        "tool_name": "Agent",
        "tool_use_id": tool_use,
        "tool_input": {"prompt": "look", "subagent_type": "Explore"},
    }
    if agent is not None:
        fields |= {"agent_id": agent, "agent_type": "Explore"}
    if child is not None:
        fields["tool_response"] = {"status": "async_launched", "agentId": child}
    return claude(event, **fields)


def claude_mcp_call(tool_use: str, agent: str | None, tool: str = "list_agents") -> Any:
    """The ``PreToolUse`` Claude fires for a call of our ``tool`` (``mcp__lineage__<tool>``)
    by the root or, with ``agent``, inside that subagent."""
    fields: dict[str, Any] = {
        "tool_name": f"mcp__lineage__{tool}",
        "tool_use_id": tool_use,
        "tool_input": {},
    }
    if agent is not None:
        fields |= {"agent_id": agent, "agent_type": "Explore"}
    return claude("PreToolUse", **fields)


def claude_meta(tool_use: str) -> dict[str, Any]:
    """The ``_meta`` of Claude Code's ``tools/call`` for that call (HOSTS.md 1.5)."""
    return {"claudecode/toolUseId": tool_use}


#: Cursor: a root chat and one child bound to its Task.
CURSOR_ROOT = "c0a10000-0000-4000-8000-000000000001"
CURSOR_CHILD = "d0b20000-0000-4000-8000-000000000002"
CURSOR_OTHER = "e0c30000-0000-4000-8000-000000000003"


def cursor_family() -> list[dict[str, Any]]:
    """A root chat, a second root chat, and a child of the first bound to its ``Task``."""
    spawn = "call-1111-7\nfc_6666_0"
    return [
        cursor(CURSOR_ROOT, "sessionStart"),
        cursor(CURSOR_OTHER, "sessionStart"),
        cursor(
            CURSOR_ROOT,
            "preToolUse",
            tool_name="Task",
            tool_use_id=spawn,
            tool_input={"prompt": "p", "subagent_type": "explore"},
        ),
        cursor(
            CURSOR_ROOT,
            "subagentStart",
            subagent_id=spawn,
            tool_call_id=spawn,
            parent_conversation_id=CURSOR_ROOT,
            subagent_type="explore",
            is_parallel_worker=False,
        ),
        cursor(CURSOR_CHILD, "preToolUse", tool_name="Read", tool_use_id="call-aa-1\nfc_bb_0"),
    ]


def cursor_mcp(conversation: str, event: str, tool: str, tool_input: str = "{}") -> Any:
    """Cursor's ``beforeMCPExecution``/``afterMCPExecution`` for a call of our ``tool``:
    ``tool_input`` a JSON string, the server named by its ``command`` (HOSTS.md 3.5)."""
    return cursor(conversation, event, tool_name=tool, tool_input=tool_input, command="lineage mcp")


#: Codex: a root thread and the child thread it spawns.
CODEX_ROOT = codex_hooks.ROOT
CODEX_CHILD = codex_hooks.CHILD


def codex_family() -> list[dict[str, Any]]:
    """A Codex root thread that spawns one child thread (0.147 hooks)."""
    return [
        codex("SessionStart", source="startup"),
        codex_spawn_call(),
        codex(
            "SubagentStart",
            agent_id=CODEX_CHILD,
            agent_type="default",
            transcript_path=f"/home/u/.codex/sessions/2026/09/03/rollout-2026-09-03T10-00-06-{CODEX_CHILD}.jsonl",
        ),
    ]


def codex_meta(thread: str, parent: str | None) -> dict[str, Any]:
    """The ``_meta`` of Codex's ``tools/call`` from ``thread`` (HOSTS.md 2.1)."""
    turn: dict[str, Any] = {"session_id": CODEX_ROOT, "thread_id": thread, "turn_id": "t2"}
    if parent is not None:
        turn |= {"parent_thread_id": parent, "thread_source": "subagent"}
    return {"threadId": thread, "x-codex-turn-metadata": turn}
