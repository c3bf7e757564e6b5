"""The index of journaled MCP tool calls (:class:`~lineage_es.read.tool_calls.ToolCallIndex`)
follows the journal on every store: what another engine on the store journals after the index
last looked is found on the next question."""

from __future__ import annotations

import pytest

from lineage_es.engine.callers import CallerFinder, CallerUnknown
from lineage_es.engine.engine import Engine, open_engine
from tests.support.claude_hooks import AGENT, claude


def _mcp_call(tool_use: str) -> dict[str, object]:
    return claude(
        "PreToolUse", agent_id=AGENT, tool_name="mcp__l__t", tool_use_id=tool_use, tool_input={}
    )


def test_a_call_another_engine_journals_later_is_found(shared_store_url: str) -> None:
    with open_engine(shared_store_url) as engine, open_engine(shared_store_url) as reader:
        engine.observe("claude", claude("SessionStart", source="startup"))
        finder = CallerFinder(reader)
        with pytest.raises(CallerUnknown):
            finder.identify({"claudecode/toolUseId": "toolu_late"}, "t", None)
        engine.observe("claude", _mcp_call("toolu_late"))
        found = finder.identify({"claudecode/toolUseId": "toolu_late"}, "t", None)
    assert (found.lineage.conversation, found.lineage.depth) == (AGENT, 1)


def test_each_call_is_read_once(engine: Engine) -> None:
    engine.observe("claude", claude("SessionStart", source="startup"))
    finder = CallerFinder(engine)
    engine.observe("claude", _mcp_call("toolu_1"))
    assert finder.index.catch_up() == 1
    engine.observe("claude", _mcp_call("toolu_2"))
    assert finder.index.catch_up() == 1
    assert [c.conversation for c in finder.index.callers_of("toolu_1")] == [AGENT]
