"""A Cursor agent asks ``lineage mcp`` who it is: Cursor's ``_meta`` names nobody, so the call is
matched to the open ``beforeMCPExecution`` windows for its tool and arguments (HOSTS.md 3.5)."""

from __future__ import annotations

from tests.support.mcp_families import CURSOR_CHILD, CURSOR_OTHER, CURSOR_ROOT, cursor_mcp
from tests.support.mcp_session import Call, McpStore, relations

#: What Cursor sends as ``_meta``: a progress token, nothing about the caller.
CURSOR_META = {"progressToken": 7}


def test_a_cursor_child_is_told_by_its_open_window(cursor_store: McpStore) -> None:
    cursor_store.hook("cursor", cursor_mcp(CURSOR_CHILD, "beforeMCPExecution", "list_agents"))
    [answer] = cursor_store.session(Call("list_agents", None, CURSOR_META))
    assert not answer.is_error, answer.text
    caller = answer.structured["caller"]
    assert (caller["conversation"], caller["parent"], caller["depth"]) == (
        CURSOR_CHILD,
        CURSOR_ROOT,
        1,
    )
    assert answer.structured["resolution"] == "cursor:beforeMCPExecution"
    assert relations(answer) == {CURSOR_ROOT: "parent", CURSOR_CHILD: "self"}


def test_two_conversations_with_the_same_call_open_cannot_be_told_apart(
    cursor_store: McpStore,
) -> None:
    cursor_store.hook(
        "cursor",
        cursor_mcp(CURSOR_ROOT, "beforeMCPExecution", "list_agents"),
        cursor_mcp(CURSOR_OTHER, "beforeMCPExecution", "list_agents"),
    )
    [answer] = cursor_store.session(Call("list_agents", {}, CURSOR_META))
    assert answer.is_error
    assert "2 conversations" in answer.text
    assert CURSOR_ROOT in answer.text and CURSOR_OTHER in answer.text


def test_the_arguments_tell_apart_two_conversations_calling_one_tool(
    cursor_store: McpStore,
) -> None:
    cursor_store.hook(
        "cursor",
        cursor_mcp(CURSOR_ROOT, "beforeMCPExecution", "provenance", '{"to": "x"}'),
        cursor_mcp(CURSOR_CHILD, "beforeMCPExecution", "provenance", f'{{"to":"{CURSOR_ROOT}"}}'),
    )
    answer, other = cursor_store.session(
        Call("provenance", {"to": CURSOR_ROOT}, CURSOR_META),
        Call("provenance", {"to": "x"}, CURSOR_META),
    )
    assert answer.structured["caller"]["conversation"] == CURSOR_CHILD
    assert answer.structured["provenance"]["sender_relation"] == "child"
    assert other.structured["caller"]["conversation"] == CURSOR_ROOT


def test_after_mcp_execution_closes_the_window(cursor_store: McpStore) -> None:
    cursor_store.hook(
        "cursor",
        cursor_mcp(CURSOR_CHILD, "beforeMCPExecution", "list_agents"),
        cursor_mcp(CURSOR_CHILD, "afterMCPExecution", "list_agents"),
    )
    [answer] = cursor_store.session(Call("list_agents", {}, CURSOR_META))
    assert answer.is_error
    assert "no open Cursor beforeMCPExecution window" in answer.text
