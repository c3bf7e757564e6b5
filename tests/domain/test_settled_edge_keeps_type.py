"""A child placed late under the parent its fact stated is what that fact stated.

HOSTS.md: a depth-2 Claude agent's ``agent-*.meta.json`` sidecar states ``parentAgentId`` and
the agent's ``agentType``. Read before its parent agent is known, the edge waits for the
parent (``EdgeRejected``, ``unknown-parent``) and is placed when it becomes known
(``EdgeCorrected``); the type and description the sidecar stated are kept with it, so the
child reads as it does when the parent was read first: live, after a rebuild, and at every
moment (time travel). A version-2 ``EdgeRejected`` kept no type: it replays as before.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
from eventsourcing.persistence import StoredEvent

from lineage_es import open_engine
from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine
from lineage_es.facts import ChildIdentified, Fact
from lineage_es.read.queries import Queries
from tests.support.feed import EPOCH, Feed
from tests.support.past_view import past_queries

REJECTED = "lineage:RootLineage.EdgeRejected"
CORRECTED = "lineage:RootLineage.EdgeCorrected"

#: The depth-1 agent A's sidecar (depth 1 names the root) and its depth-2 child B's.
A_META = ChildIdentified(
    "R", "A", "transcript", spawn_key="toolu_A", depth=1, agent_type="general-purpose"
)


def b_meta(spawn_key: str | None = "toolu_B") -> ChildIdentified:
    return ChildIdentified(
        "A", "B", "transcript", spawn_key=spawn_key, depth=2, agent_type="Explore",
        description="map the repo",
    )  # fmt: skip


def row(view: Engine | Queries, conversation: str = "B") -> tuple[Any, ...]:
    """What the view says of a node: its edge, depth, type and description."""
    if isinstance(view, Engine):
        view.catch_up()
        view = view.queries
    found = view.find(conversation)
    assert found is not None
    return found.parent, found.depth, found.ambiguous, found.agent_type, found.description


def imported(*facts: tuple[str, Fact]) -> Engine:
    """An engine fed R's start, then each (requester, fact) in order, one second apart."""
    engine = open_engine("memory://")
    feed = Feed(engine)
    feed.root("R")
    for requester, fact in facts:
        feed.send(requester, fact, root="R")
    return engine


def agrees(late: Engine, early: Engine) -> None:
    """``late`` reads as ``early`` live, after a rebuild, and back in time once both were
    read (and, for ``late``, before its parent was)."""
    assert row(late) == row(early)
    late.rebuild()
    assert row(late) == row(early)
    read = EPOCH + timedelta(seconds=3)
    assert row(past_queries(late, time=read)) == row(past_queries(early, time=read))
    waiting = row(past_queries(late, time=read - timedelta(seconds=1)))
    assert waiting == (None, 1, True, None, None)  # the sidecar alone: placed ambiguous


def test_a_child_whose_sidecar_is_read_before_its_parent_keeps_the_type_it_states() -> None:
    late = imported(("B", b_meta()), ("A", A_META))
    early = imported(("A", A_META), ("B", b_meta()))
    assert [e.state["reason"] for e in late.journal() if e.topic == REJECTED] == ["unknown-parent"]
    assert row(late) == ("A", 2, False, "Explore", "map the repo")
    agrees(late, early)


def test_a_child_stating_no_spawn_read_before_its_parent_keeps_the_type_it_states() -> None:
    """A sidecar with no ``toolUseId``: the fact states a parent and a type, no spawn."""
    late = imported(("B", b_meta(None)), ("A", A_META))
    early = imported(("A", A_META), ("B", b_meta(None)))
    assert row(late) == ("A", 2, False, "Explore", "map the repo")
    agrees(late, early)


def test_a_child_refused_at_a_contradicting_depth_keeps_the_type_it_states() -> None:
    """A is first known at depth 2 (under P); B, stating depth 2 under A, waits until a
    later fact moves A to depth 1."""
    p_meta = ChildIdentified("R", "P", "transcript", depth=1)
    a_under_p = ChildIdentified("P", "A", "transcript", depth=2)
    late = imported(("P", p_meta), ("A", a_under_p), ("B", b_meta()), ("A", A_META))
    assert [e.state["reason"] for e in late.journal() if e.topic == REJECTED] == ["depth"]
    assert row(late) == ("A", 2, False, "Explore", "map the repo")
    live = row(late)
    late.rebuild()
    assert row(late) == live


def test_a_version_2_edge_rejected_event_replays_and_places_the_child_untyped_as_before() -> None:
    at = datetime(2026, 1, 1, 9, tzinfo=UTC)
    with open_engine("memory://") as engine:
        root = RootLineage.start("claude", "R", at=at, fact="k0")
        root.apply_identified(
            ChildIdentified(
                "A", "B", "transcript", depth=2, agent_type="Explore", description="map the repo"
            ),
            at=at,
            fact="k1",
        )
        stored = []
        for e in root.collect_events():
            s = engine.app.mapper.to_stored_event(e)
            if s.topic == REJECTED:
                state = orjson.loads(s.state)
                assert state.pop("class_version") == 3
                assert (state.pop("agent_type"), state.pop("description")) == (
                    "Explore",
                    "map the repo",
                )
                state["class_version"] = 2  # as version 2 wrote it
                s = StoredEvent(s.originator_id, s.originator_version, s.topic, orjson.dumps(state))
            stored.append(s)
        engine.app.recorder.insert_events(stored)
        loaded: RootLineage = engine.app.repository.get(root_id("claude", "R"))
        assert loaded.stated["B"]["agent_type"] is None
        loaded.apply_identified(
            ChildIdentified("R", "A", "transcript", depth=1),
            at=at + timedelta(seconds=1),
            fact="k2",
        )
        engine.app.save(loaded)
        assert row(engine) == ("A", 2, False, None, None)
        engine.rebuild()
        assert row(engine) == ("A", 2, False, None, None)
        assert CORRECTED in [e.topic for e in engine.journal()]


def test_a_snapshot_whose_stated_parents_kept_no_type_loads_and_places_the_child_untyped() -> None:
    at = datetime(2026, 1, 1, 9, tzinfo=UTC)
    root = RootLineage.start("claude", "R", at=at, fact="k0")
    root.apply_identified(
        ChildIdentified(
            "A", "B", "transcript", depth=2, agent_type="Explore", description="map the repo"
        ),
        at=at,
        fact="k1",
    )
    snapshot = RootLineage.Snapshot.take(root)
    state = dict(snapshot.state)
    assert state["stated"]["B"]["agent_type"] == "Explore"
    state["stated"] = {
        child: {k: v for k, v in entry.items() if k not in ("agent_type", "description")}
        for child, entry in state["stated"].items()
    }  # what the code before this kept
    restored = dataclasses.replace(snapshot, state=state).mutate(None)
    assert isinstance(restored, RootLineage)
    restored.apply_identified(
        ChildIdentified("R", "A", "transcript", depth=1), at=at + timedelta(seconds=1), fact="k2"
    )
    corrected = [e for e in restored.collect_events() if isinstance(e, RootLineage.EdgeCorrected)]
    assert [(e.conversation, e.parent, e.agent_type, e.retyped) for e in corrected] == [
        ("B", "A", None, False)
    ]
