"""A root journals which of its nodes made an MCP tool call, and changes nothing else: the
facts an MCP server tells its caller by (:mod:`lineage_es.domain.call_events`)."""

from __future__ import annotations

from dataclasses import replace

from lineage_es.domain.call_events import ToolCallEnded, ToolCallStarted
from lineage_es.engine.engine import Engine
from lineage_es.facts import Deleted, Observation, ToolCalled, ToolReturned
from lineage_es.model import Member
from tests.support.claude_hooks import AGENT, SESSION, claude
from tests.support.cursor_hooks import hook as cursor


def _topics(engine: Engine) -> list[str]:
    return [event.topic for event in engine.journal()]


def _spawn_child(engine: Engine) -> None:
    engine.observe("claude", claude("SessionStart", source="startup"))
    engine.observe("claude", claude("SubagentStart", agent_id=AGENT, agent_type="Explore"))


def unseen(members: tuple[Member, ...]) -> list[Member]:
    """``members`` without their ``last_seen``."""
    return [replace(member, last_seen=None) for member in members]


def test_a_nodes_tool_call_is_journaled_with_its_call_id(memory: Engine) -> None:
    _spawn_child(memory)
    before = memory.family(SESSION)
    observation = Observation(
        host="claude",
        requester=AGENT,
        key="k1",
        facts=(ToolCalled(AGENT, "mcp__lineage__lineage", call="toolu_1"),),
        root=SESSION,
    )
    memory.observe("claude", observation)
    [event] = [e for e in memory.journal() if e.topic == ToolCallStarted.TOPIC]
    assert (event.state["conversation"], event.state["call"]) == (AGENT, "toolu_1")
    # the tree is as it was; only the caller's last_seen moved (tests/read/test_last_seen.py)
    assert unseen(memory.family(SESSION)) == unseen(before)


def test_a_tool_call_returning_is_journaled(memory: Engine) -> None:
    _spawn_child(memory)
    facts = (ToolCalled(AGENT, "t", arguments="{}"), ToolReturned(AGENT, "t", arguments="{}"))
    memory.observe(
        "claude", Observation(host="claude", requester=AGENT, key="k2", facts=facts, root=SESSION)
    )
    assert _topics(memory)[-2:] == [ToolCallStarted.TOPIC, ToolCallEnded.TOPIC]


def test_a_deleted_nodes_tool_call_is_not_journaled(memory: Engine) -> None:
    _spawn_child(memory)
    memory.observe(
        "claude",
        Observation(
            host="claude", requester=SESSION, key="k3", facts=(Deleted(AGENT),), root=SESSION
        ),
    )
    memory.observe(
        "claude",
        Observation(
            host="claude",
            requester=SESSION,
            key="k4",
            facts=(ToolCalled(AGENT, "t", call="toolu_2"),),
            root=SESSION,
        ),
    )
    assert ToolCallStarted.TOPIC not in _topics(memory)


def test_the_same_hook_payload_delivered_twice_journals_one_call(memory: Engine) -> None:
    _spawn_child(memory)
    payload = claude(
        "PreToolUse", agent_id=AGENT, tool_name="mcp__a__b", tool_use_id="toolu_3", tool_input={}
    )
    memory.observe("claude", payload)
    memory.observe("claude", payload)
    assert _topics(memory).count(ToolCallStarted.TOPIC) == 1


def test_a_cursor_call_made_again_after_it_returned_opens_its_window_again(
    memory: Engine,
) -> None:
    memory.observe("cursor", cursor("c1", "sessionStart"))
    before = cursor("c1", "beforeMCPExecution", tool_name="t", tool_input="{}")
    after = cursor("c1", "afterMCPExecution", tool_name="t", tool_input="{}")
    for payload in (before, after, before):
        memory.observe("cursor", payload)
    assert _topics(memory).count(ToolCallStarted.TOPIC) == 2


def test_a_cursor_call_delivered_twice_while_open_opens_one_window(memory: Engine) -> None:
    memory.observe("cursor", cursor("c1", "sessionStart"))
    before = cursor("c1", "beforeMCPExecution", tool_name="t", tool_input="{}")
    memory.observe("cursor", before)
    memory.observe("cursor", before)
    assert _topics(memory).count(ToolCallStarted.TOPIC) == 1
