"""A Codex agent asks ``lineage mcp`` who it is: its ``_meta`` names its thread, root and parent
(``x-codex-turn-metadata``, HOSTS.md 2.1), answered as ``Engine.resolve`` answers it."""

from __future__ import annotations

from tests.support.mcp_families import CODEX_CHILD, CODEX_ROOT, codex_meta
from tests.support.mcp_session import Call, McpStore, relations


def test_a_codex_child_is_told_from_its_turn_metadata(codex_store: McpStore) -> None:
    [answer] = codex_store.session(Call("list_agents", {}, codex_meta(CODEX_CHILD, CODEX_ROOT)))
    assert not answer.is_error, answer.text
    caller = answer.structured["caller"]
    assert (caller["conversation"], caller["parent"], caller["depth"]) == (
        CODEX_CHILD,
        CODEX_ROOT,
        1,
    )
    assert answer.structured["resolution"] == "codex:_meta"
    assert relations(answer) == {CODEX_ROOT: "parent", CODEX_CHILD: "self"}


def test_a_codex_thread_no_hook_reported_is_a_tool_error_for_list_agents(
    codex_store: McpStore,
) -> None:
    stranger = "019a0000-0000-7000-8000-0000000000ff"
    [answer] = codex_store.session(Call("list_agents", {}, codex_meta(stranger, CODEX_ROOT)))
    assert answer.is_error
    assert stranger in answer.text
