"""A Claude Code agent asks ``lineage mcp`` who it is: its caller is the conversation whose
``PreToolUse`` hook journaled the ``tool_use_id`` Claude repeats in ``_meta`` (HOSTS.md 1.5)."""

from __future__ import annotations

from tests.support.mcp_families import (
    FIRST,
    GRANDCHILD,
    ROOT,
    SECOND,
    claude_mcp_call,
    claude_meta,
)
from tests.support.mcp_session import Call, McpStore, relations


def test_a_caller_at_depth_2_is_named_with_its_lineage(claude_store: McpStore) -> None:
    claude_store.hook("claude", claude_mcp_call("toolu_09G", GRANDCHILD))
    [answer] = claude_store.session(Call("list_agents", {}, claude_meta("toolu_09G")))
    assert not answer.is_error, answer.text
    caller = answer.structured["caller"]
    assert (caller["conversation"], caller["depth"], caller["parent"]) == (GRANDCHILD, 2, FIRST)
    assert answer.structured["resolution"] == "claude:toolUseId"


def test_list_agents_gives_every_relation_as_lineage_agents_as_gives_it(
    claude_store: McpStore,
) -> None:
    claude_store.hook(
        "claude",
        claude_mcp_call("toolu_09G", GRANDCHILD),
        claude_mcp_call("toolu_09F", FIRST),
        claude_mcp_call("toolu_09R", None),
    )
    grandchild, first, root = claude_store.session(
        Call("list_agents", {}, claude_meta("toolu_09G")),
        Call("list_agents", {}, claude_meta("toolu_09F")),
        Call("list_agents", {}, claude_meta("toolu_09R")),
    )
    assert relations(grandchild) == {
        ROOT: "ancestor",
        FIRST: "parent",
        SECOND: "kin",
        GRANDCHILD: "self",
    }
    assert relations(first) == {
        ROOT: "parent",
        FIRST: "self",
        SECOND: "sibling",
        GRANDCHILD: "child",
    }
    assert relations(root)[GRANDCHILD] == "descendant"
    cli = claude_store.cli_json("agents", "--as", GRANDCHILD, "--json")
    assert relations(grandchild) == {m["conversation"]: m["relation"] for m in cli}


def test_parallel_siblings_each_see_the_other_as_their_sibling(claude_store: McpStore) -> None:
    claude_store.hook(
        "claude",
        claude_mcp_call("toolu_09F", FIRST),
        claude_mcp_call("toolu_09S", SECOND),
    )
    first, second = claude_store.session(
        Call("list_agents", {}, claude_meta("toolu_09F")),
        Call("list_agents", {}, claude_meta("toolu_09S")),
    )
    assert (first.structured["caller"]["conversation"], relations(first)[SECOND]) == (
        FIRST,
        "sibling",
    )
    assert (second.structured["caller"]["conversation"], relations(second)[FIRST]) == (
        SECOND,
        "sibling",
    )


def test_the_text_is_a_table_naming_each_agents_parent(claude_store: McpStore) -> None:
    claude_store.hook("claude", claude_mcp_call("toolu_09G", GRANDCHILD))
    [answer] = claude_store.session(Call("list_agents", {}, claude_meta("toolu_09G")))
    line = next(row for row in answer.text.splitlines() if row.startswith("self"))
    assert f"{GRANDCHILD} (Plan)" in line
    assert line.endswith(f"{FIRST} (Explore)")


def test_an_unknown_tool_use_id_is_a_tool_error_saying_why(claude_store: McpStore) -> None:
    [answer] = claude_store.session(Call("list_agents", {}, claude_meta("toolu_never")))
    assert answer.is_error
    assert "no PreToolUse hook journaled the tool call 'toolu_never'" in answer.text


def test_a_call_with_no_meta_and_no_window_is_a_tool_error(claude_store: McpStore) -> None:
    [answer] = claude_store.session(Call("list_agents", {}))
    assert answer.is_error
    assert "_meta names none" in answer.text


def test_the_lineage_tool_answers_as_lineage_show(claude_store: McpStore) -> None:
    claude_store.hook("claude", claude_mcp_call("toolu_09F", FIRST, "lineage"))
    [answer] = claude_store.session(Call("lineage", {}, claude_meta("toolu_09F")))
    assert answer.structured["caller"] == claude_store.cli_json("show", FIRST)


def test_the_provenance_tool_says_what_a_message_to_an_agent_carries(
    claude_store: McpStore,
) -> None:
    claude_store.hook("claude", claude_mcp_call("toolu_09G", GRANDCHILD, "provenance"))
    [answer] = claude_store.session(Call("provenance", {"to": ROOT}, claude_meta("toolu_09G")))
    assert answer.structured["provenance"] == claude_store.cli_json("provenance", GRANDCHILD, ROOT)


def test_a_call_journaled_by_another_process_while_the_server_runs_is_answered(
    claude_store: McpStore,
) -> None:
    before, after = claude_store.session(
        Call("list_agents", {}, claude_meta("toolu_09S")),
        lambda: claude_store.hook("claude", claude_mcp_call("toolu_09S", SECOND)),
        Call("list_agents", {}, claude_meta("toolu_09S")),
    )
    assert before.is_error
    assert after.structured["caller"]["conversation"] == SECOND
