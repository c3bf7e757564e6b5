"""Dated duplicates: a recorded payload that can recur, delivered again with the time it was
recorded, is a duplicate when that time is no later than the last fact its lifetime saw.

A lifetime of a root ends when one of its nodes stops or resumes, and a payload that can recur
(a hook payload naming no tool call) is new again in a later lifetime. A recording ingested
twice keeps its times, so a payload dated before the change that ended the lifetime it was
seen in is that payload again. At the very instant of that change the date alone cannot tell:
the payload seen at that instant, delivered again, is the same payload at the same time (a
duplicate), while one seen earlier and now dated at the change's instant is not a copy of its
recording (that copy would carry the earlier time) and happens again. So a delivery is a
duplicate when dated before the change, or no later than the last fact seen in the lifetime
(whose time a re-delivery of it carries, even when the change was dated back before it).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from eventsourcing.domain import Snapshot

from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified
from tests.support.claude_hooks import AGENT, SESSION, claude

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

STARTUP = claude("SessionStart", source="startup")
SUBAGENT_START = claude("SubagentStart", agent_id=AGENT, agent_type="Explore")
SUBAGENT_STOP = claude("SubagentStop", agent_id=AGENT, agent_type="Explore")
SUBAGENT_RESUME = claude(
    "PreToolUse",
    tool_name="Agent",
    tool_use_id="toolu_01R",
    tool_input={"prompt": "go on", "resume": AGENT},
)


def second(n: float) -> datetime:
    return AT + timedelta(seconds=n)


def deliver(engine: Engine, *timed: tuple[float, dict[str, Any]]) -> None:
    """Deliver each payload dated as its recording dates it."""
    for n, payload in timed:
        engine.observe("claude", payload, at=second(n))


def agent_status(engine: Engine) -> str:
    return {m.conversation: m.status for m in engine.family(SESSION)}[AGENT]


def ended_and_resumed_at_once() -> RootLineage:
    """A root whose session ended at 1 s (key ``k1``) and was resumed within that instant."""
    root = RootLineage.start("claude", "R", at=second(0), fact="k0")
    root.end_session(at=second(1), fact="k1")
    root.see_root(at=second(1), fact="k2")
    return root


# -- through the engine ----------------------------------------------------------------------


def test_a_stop_delivered_again_at_its_own_instant_after_a_resume_then_is_a_duplicate(
    memory: Engine,
) -> None:
    """The subagent stopped at 2 s and was resumed within that second: the stop's recording,
    ingested again, leaves it running."""
    recording = ((0, STARTUP), (1, SUBAGENT_START), (2, SUBAGENT_STOP), (2, SUBAGENT_RESUME))
    deliver(memory, *recording)
    before = memory.position()
    deliver(memory, (2, SUBAGENT_STOP))
    assert memory.position() == before
    assert agent_status(memory) == "live"


def test_a_stop_seen_earlier_and_dated_at_the_resumes_instant_happens_again(
    memory: Engine,
) -> None:
    """The subagent stopped at 1 s, was resumed at 2 s and stopped again within that second:
    a copy of the first stop's recording would be dated 1 s."""
    deliver(memory, (0, STARTUP), (1, SUBAGENT_START), (1, SUBAGENT_STOP), (2, SUBAGENT_RESUME))
    deliver(memory, (2, SUBAGENT_STOP))
    assert agent_status(memory) == "stopped"


def test_a_stop_dated_after_the_resume_happens_again(memory: Engine) -> None:
    deliver(memory, (0, STARTUP), (1, SUBAGENT_START), (2, SUBAGENT_STOP), (2, SUBAGENT_RESUME))
    deliver(memory, (3, SUBAGENT_STOP))
    assert agent_status(memory) == "stopped"


# -- the rule, on the aggregate --------------------------------------------------------------


def test_a_payload_seen_at_the_instant_its_lifetime_ended_is_a_duplicate_at_that_instant() -> None:
    assert ended_and_resumed_at_once().has_seen("k1", recurs=True, at=second(1))


def test_a_payload_seen_before_the_change_is_new_again_at_the_changes_instant() -> None:
    root = RootLineage.start("claude", "R", at=second(0), fact="k0")
    root.end_session(at=second(1), fact="k1")
    root.see_root(at=second(2), fact="k2")
    assert not root.has_seen("k1", recurs=True, at=second(2))


def test_a_payload_is_a_duplicate_at_its_own_time_when_the_next_change_was_dated_before_it() -> (
    None
):
    """AGENT stopped provisionally at 3 s and the session ended at 5 s; a rename at 10 s (key
    ``k``); then AGENT's own stop at 12 s, capped at the end, resumes it from 3 s first: the
    lifetime ``k`` was seen in ends at 3 s, before ``k``'s own time."""
    root = RootLineage.start("claude", "R", at=second(0), fact="k0")
    root.apply_identified(ChildIdentified("R", AGENT, "native"), at=second(1), fact="k-start")
    root.stop(AGENT, None, at=second(3), fact="k-file-end", provisional=True)
    root.end_session(at=second(5), fact="k-end")
    root.rename(AGENT, "scout", at=second(10), fact="k")
    root.stop(AGENT, None, at=second(12), fact="k-stop")
    assert root.has_seen("k", recurs=True, at=second(10))
    assert not root.has_seen("k", recurs=True, at=second(13))


def test_a_root_read_back_from_its_events_knows_the_last_time_each_lifetime_saw(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'lineage.sqlite'}"
    with open_engine(url) as engine:
        recording = ((0, STARTUP), (1, SUBAGENT_START), (2, SUBAGENT_STOP), (2, SUBAGENT_RESUME))
        deliver(engine, *recording)
    with open_engine(url) as engine:  # a new process: the root is replayed from the store
        before = engine.position()
        deliver(engine, (2, SUBAGENT_STOP))
        assert (engine.position(), agent_status(engine)) == (before, "live")


# -- snapshots -------------------------------------------------------------------------------


def test_a_snapshot_round_trips_the_last_time_each_lifetime_saw() -> None:
    restored = RootLineage.Snapshot.take(ended_and_resumed_at_once()).mutate(None)
    assert isinstance(restored, RootLineage)
    assert restored.has_seen("k1", recurs=True, at=second(1))
    assert not restored.has_seen("k1", recurs=True, at=second(2))


def version_4_snapshot(root: RootLineage) -> Snapshot:
    """``root``'s snapshot as version 4 wrote it: no last time per lifetime."""
    snapshot = RootLineage.Snapshot.take(root)
    state = {k: v for k, v in snapshot.state.items() if k != "latest"} | {"class_version": 4}
    return dataclasses.replace(snapshot, state=state)


def test_a_version_4_snapshot_loads_and_decides_by_when_lifetimes_began_as_it_did() -> None:
    restored = version_4_snapshot(ended_and_resumed_at_once()).mutate(None)
    assert isinstance(restored, RootLineage)
    assert restored.has_seen("k2", recurs=True)  # the current lifetime, as before
    assert restored.has_seen("k1", recurs=True, at=second(0.5))  # before the resume, as before
    assert not restored.has_seen("k1", recurs=True, at=second(1))  # as version 4 decided it
    restored.end_session(at=second(3), fact="k3")
    restored.see_root(at=second(3), fact="k4")
    assert restored.has_seen("k3", recurs=True, at=second(3))  # a lifetime ended since: known


def test_a_root_whose_snapshot_is_version_4_decides_as_its_events_do(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old-snapshot.sqlite'}"
    with open_engine(url) as engine:
        recording = ((0, STARTUP), (1, SUBAGENT_START), (2, SUBAGENT_STOP), (2, SUBAGENT_RESUME))
        deliver(engine, *recording)
        root = engine.app.root(root_id("claude", SESSION))
        assert engine.app.snapshots is not None
        engine.app.snapshots.put([version_4_snapshot(root)])
    with open_engine(url) as engine:  # a new process: the root is loaded from the store
        before = engine.position()
        deliver(engine, (2, SUBAGENT_STOP))
        assert (engine.position(), agent_status(engine)) == (before, "live")
