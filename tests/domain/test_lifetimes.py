"""Lifetimes: a payload is a duplicate only within the lifetime of the root it was seen in.

Hook payloads carry no timestamp, so a fact that truly happens again in a later lifetime of a
root (a session that ends again the same way after a resume, a subagent that stops again after
it was resumed) can be byte-identical to one already journaled. A lifetime ends whenever a node
of the root stops or resumes; within one, the same payload delivered twice changes nothing.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, ChildStarted
from tests.support.claude_hooks import AGENT, SESSION, claude
from tests.support.feed import Feed

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


STARTUP = claude("SessionStart", source="startup")
RESUME = claude("SessionStart", source="resume")
END = claude("SessionEnd", reason="other")
SUBAGENT_START = claude("SubagentStart", agent_id=AGENT, agent_type="Explore")
SUBAGENT_STOP = claude(
    "SubagentStop",
    agent_id=AGENT,
    agent_type="Explore",
    agent_transcript_path=f"/home/u/.claude/projects/-w/{SESSION}/subagents/agent-{AGENT}.jsonl",
)
SUBAGENT_RESUME = claude(
    "PreToolUse",
    tool_name="Agent",
    tool_use_id="toolu_01R",
    tool_input={"prompt": "go on", "resume": AGENT},
)


def cursor(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "conversation_id": "c0a1",
        "hook_event_name": event,
        "workspace_roots": ["/w"],
        **fields,
    }


def statuses(engine: Engine) -> dict[str, str]:
    return {member.conversation: member.status for member in engine.family(SESSION)}


def feed(engine: Engine, *payloads: dict[str, Any], host: str = "claude") -> None:
    for payload in payloads:
        engine.observe(host, payload)


def test_a_resumed_session_that_ends_again_the_same_way_stops(memory: Engine) -> None:
    feed(memory, STARTUP, END, RESUME, END)
    assert statuses(memory) == {SESSION: "stopped"}


def test_a_session_resumed_again_the_same_way_is_live(memory: Engine) -> None:
    feed(memory, STARTUP, END, RESUME, claude("SessionEnd", reason="logout"), RESUME)
    assert statuses(memory) == {SESSION: "live"}


def test_the_children_of_a_resumed_session_stop_when_it_ends_again_the_same_way(
    memory: Engine,
) -> None:
    feed(memory, STARTUP, END, RESUME, SUBAGENT_START, END)
    assert statuses(memory) == {SESSION: "stopped", AGENT: "stopped"}


def test_a_resumed_subagent_that_stops_again_the_same_way_stops(memory: Engine) -> None:
    feed(memory, STARTUP, SUBAGENT_START, SUBAGENT_STOP, SUBAGENT_RESUME, SUBAGENT_STOP)
    assert statuses(memory) == {SESSION: "live", AGENT: "stopped"}


def test_a_reopened_cursor_chat_that_ends_again_the_same_way_stops(memory: Engine) -> None:
    end, reopened = cursor("sessionEnd"), cursor("beforeSubmitPrompt", prompt="go on")
    feed(memory, cursor("sessionStart"), end, reopened, end, host="cursor")
    assert [m.status for m in memory.family("c0a1", "cursor")] == ["stopped"]


def test_a_session_end_delivered_twice_is_journaled_once(memory: Engine) -> None:
    feed(memory, STARTUP, END)
    before = memory.position()
    feed(memory, END)
    assert memory.position() == before


def test_a_resume_delivered_twice_is_journaled_once(memory: Engine) -> None:
    feed(memory, STARTUP, END, RESUME)
    before = memory.position()
    feed(memory, RESUME)
    assert memory.position() == before


def test_a_tool_calls_payload_delivered_again_after_a_resume_changes_nothing(
    memory: Engine,
) -> None:
    completed = claude(
        "PostToolUse",
        tool_name="Agent",
        tool_use_id="toolu_01A",
        tool_input={"prompt": "p", "subagent_type": "Explore"},
        tool_response={"status": "completed", "agentId": AGENT},
    )
    acts = claude("PreToolUse", agent_id=AGENT, tool_name="Read", tool_use_id="toolu_01B")
    feed(memory, STARTUP, SUBAGENT_START, completed, acts)
    before = memory.position()
    feed(memory, completed)
    assert memory.position() == before
    assert statuses(memory) == {SESSION: "live", AGENT: "live"}


def test_a_duplicate_among_other_payloads_of_the_same_lifetime_changes_nothing(
    memory: Engine,
) -> None:
    steps = Feed(memory)
    steps.root("R")
    steps.start("R", "A")
    steps.start("R", "B")
    steps.send("A", ChildStarted(child="C", parent="A"), root="R", key="c-under-a")
    steps.send("B", ChildIdentified("B", "C", "native"), root="R", key="c-under-b")
    steps.act("R", "R")
    before = memory.position()
    steps.send("A", ChildStarted(child="C", parent="A"), root="R", key="c-under-a")
    assert memory.position() == before
    assert memory.lineage("C").parent == "B"


def test_a_root_read_back_from_the_journal_knows_the_same_lifetimes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'lineage.sqlite'}"
    with open_engine(url) as live:
        feed(live, STARTUP, END, RESUME, SUBAGENT_START, END, RESUME)
        cached: RootLineage = live.app.repository.get(root_id("claude", SESSION))
        expected = (cached.lifetime, dict(cached.seen))
    with open_engine(url) as fresh:
        replayed: RootLineage = fresh.app.repository.get(root_id("claude", SESSION))
    assert (replayed.lifetime, replayed.seen) == expected


def test_a_snapshot_round_trips_the_lifetimes() -> None:
    root = RootLineage.start("claude", "R", at=AT, fact="k0")
    root.end_session(at=AT, fact="k1")
    root.see_root(at=AT, fact="k2")
    restored = RootLineage.Snapshot.take(root).mutate(None)
    assert isinstance(restored, RootLineage)
    assert [restored.has_seen(k, recurs=True) for k in ("k0", "k1", "k2")] == [False, False, True]


@pytest.mark.parametrize("key", ["k0", "k1", "k2"])
def test_a_snapshot_from_before_lifetimes_counts_its_keys_as_seen_in_the_current_one(
    key: str,
) -> None:
    root = RootLineage.start("claude", "R", at=AT, fact="k0")
    root.end_session(at=AT, fact="k1")
    root.see_root(at=AT, fact="k2")
    snapshot = RootLineage.Snapshot.take(root)
    state = dict(snapshot.state)
    state.pop("class_version", None)
    state.pop("lifetime", None)
    state["seen"] = dict.fromkeys(state["seen"], 1)  # what the version-1 code stored
    old = dataclasses.replace(snapshot, state=state)  # as an older version wrote it
    restored = old.mutate(None)
    assert isinstance(restored, RootLineage)
    assert restored.has_seen(key, recurs=True)
    restored.end_session(at=AT, fact="k3")
    assert not restored.has_seen(key, recurs=True)


def test_a_key_that_does_not_recur_stays_seen_after_a_stop() -> None:
    root = RootLineage.start("claude", "R", at=AT, fact="k0")
    root.end_session(at=AT, fact="k1")
    assert (root.has_seen("k0"), root.has_seen("k0", recurs=True)) == (True, False)


def replay(engine: Engine, *payloads: dict[str, Any]) -> None:
    """Deliver ``payloads`` dated as a recording dates them: a second apart, from ``AT``."""
    for step, payload in enumerate(payloads):
        engine.observe("claude", payload, at=AT + timedelta(seconds=step))


RECORDED = (STARTUP, END, RESUME, SUBAGENT_START, SUBAGENT_STOP, SUBAGENT_RESUME, END, RESUME)


def test_a_recording_delivered_again_journals_nothing(memory: Engine) -> None:
    replay(memory, *RECORDED)
    before, family = memory.position(), statuses(memory)
    replay(memory, *RECORDED)
    assert (memory.position(), statuses(memory)) == (before, family)


def test_a_dated_payload_from_before_the_change_that_ended_its_lifetime_is_a_duplicate(
    memory: Engine,
) -> None:
    replay(memory, STARTUP, END, RESUME)
    memory.observe("claude", END, at=AT + timedelta(seconds=1))  # the first end, again
    assert statuses(memory) == {SESSION: "live"}


def test_a_payload_dated_after_the_change_that_ended_its_lifetime_happens_again(
    memory: Engine,
) -> None:
    replay(memory, STARTUP, END, RESUME)
    memory.observe("claude", END, at=AT + timedelta(seconds=3))
    assert statuses(memory) == {SESSION: "stopped"}


def test_a_snapshot_round_trips_when_lifetimes_began() -> None:
    root = RootLineage.start("claude", "R", at=AT, fact="k0")
    root.end_session(at=AT + timedelta(seconds=1), fact="k1")
    root.see_root(at=AT + timedelta(seconds=2), fact="k2")
    restored = RootLineage.Snapshot.take(root).mutate(None)
    assert isinstance(restored, RootLineage)
    assert restored.has_seen("k1", recurs=True, at=AT + timedelta(seconds=1))
    assert not restored.has_seen("k1", recurs=True, at=AT + timedelta(seconds=2))


def test_a_snapshot_from_before_version_4_counts_its_keys_by_lifetime_alone() -> None:
    root = RootLineage.start("claude", "R", at=AT, fact="k0")
    root.end_session(at=AT + timedelta(seconds=1), fact="k1")
    root.see_root(at=AT + timedelta(seconds=2), fact="k2")
    snapshot = RootLineage.Snapshot.take(root)
    state = dict(snapshot.state)
    assert state.pop("began")
    state["class_version"] = 3
    old = dataclasses.replace(snapshot, state=state)  # as an older version wrote it
    restored = old.mutate(None)
    assert isinstance(restored, RootLineage)
    assert not restored.has_seen("k1", recurs=True, at=AT + timedelta(seconds=1))
    assert restored.has_seen("k2", recurs=True, at=AT + timedelta(seconds=2))
    restored.end_session(at=AT + timedelta(seconds=3), fact="k3")
    assert restored.has_seen("k2", recurs=True, at=AT + timedelta(seconds=2))
