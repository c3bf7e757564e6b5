"""``lineage mcp`` as a server: the tools it lists, and what it answers when a call cannot be
answered (a tool error saying why, never a protocol failure or a guess)."""

from __future__ import annotations

from click.testing import CliRunner

from lineage_es.cli.main import main
from tests.support.mcp_families import GRANDCHILD, claude_mcp_call, claude_meta
from tests.support.mcp_session import Call, McpStore


def test_it_lists_the_three_tools_an_agent_asks_with(store: McpStore) -> None:
    assert store.tool_names() == ["list_agents", "lineage", "provenance"]


def test_a_store_no_hook_has_written_yet_is_a_tool_error(store: McpStore) -> None:
    [answer] = store.session(Call("list_agents", {}, claude_meta("toolu_1")))
    assert answer.is_error
    assert "no hook has written to this store yet" in answer.text
    assert not (store.folder / "journal.sqlite").exists()


def test_provenance_without_its_recipient_is_a_tool_error_naming_the_argument(
    claude_store: McpStore,
) -> None:
    claude_store.hook("claude", claude_mcp_call("toolu_09P", GRANDCHILD, "provenance"))
    [answer] = claude_store.session(Call("provenance", {}, claude_meta("toolu_09P")))
    assert answer.is_error
    assert "'to'" in answer.text


def test_a_memory_store_is_refused_as_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["mcp", "--store", "memory://"])
    assert result.exit_code == 2
    assert "memory:// holds nothing the hooks wrote" in result.output
