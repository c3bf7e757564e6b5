"""A correction gives back the spawn an inference had claimed (LINEAGE.md: a later fact corrects
an inference by a journaled correction event; inferred = the most recent unclaimed spawn under
the same root).

Codex hooks name the root, never the parent (HOSTS.md 2.1): a thread is placed by spawn order
and claims the spawn it was inferred from. When a later fact (a rollout's ``thread_spawn``)
states another parent and no spawn, the child leaves that spawn: it goes back to the node that
requested it, open for its next child, and the child takes the one spawn its new parent has
open (only when exactly one is: never a guess between several).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import orjson
import pytest
from eventsourcing.persistence import StoredEvent

from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, Observation
from tests.support.codex_hooks import ROOT, hook, spawn_call
from tests.support.codex_threads import A, B, G, two_children
from tests.support.past_view import past_queries

H = "019a0000-0000-7000-8000-0000000000c4"
CORRECTED = "lineage:RootLineage.EdgeCorrected"


@pytest.fixture
def engine() -> Iterator[Engine]:
    with open_engine("memory://") as opened:
        two_children(opened)
        yield opened


def state_parent(engine: Engine, child: str, parent: str) -> None:
    """A fact stating ``child``'s parent and no spawn, as a Codex rollout's ``session_meta``
    ``thread_spawn.parent_thread_id`` is read."""
    fact = ChildIdentified(parent=parent, child=child, resolution="transcript")
    engine.observe_many(
        [
            Observation(
                host="codex", requester=child, key=f"stated:{child}", facts=(fact,), root=ROOT
            )
        ]
    )


def misplace(engine: Engine, *later_spawns_of_b: str) -> None:
    """A opens ``call_3``; G, really B's, starts and is inferred under A (claiming it); B's
    own spawns, if any, are delivered after G's start."""
    engine.observe("codex", spawn_call(agent_id=A, tool_use_id="call_3"))
    engine.observe("codex", hook("SubagentStart", agent_id=G))
    for key in later_spawns_of_b:
        engine.observe("codex", spawn_call(agent_id=B, tool_use_id=key))
    assert engine.lineage(G, "codex").parent == A


def test_a_corrected_child_gives_its_inferred_spawn_back_to_the_old_parent(engine: Engine) -> None:
    """B's own spawn was never seen: A's ``call_3`` is open again, A's next child takes it."""
    misplace(engine)
    state_parent(engine, G, B)
    engine.observe("codex", hook("SubagentStart", agent_id=H))
    lineage = engine.lineage(H, "codex")
    assert (lineage.parent, lineage.depth, lineage.resolution) == (A, 2, "inferred")


def test_the_old_parents_next_child_is_inferred_under_it_after_a_correction(
    engine: Engine,
) -> None:
    """The brief's case: B's ``call_4`` goes to G, A's ``call_3`` to A's next child H."""
    misplace(engine, "call_4")
    state_parent(engine, G, B)
    engine.observe("codex", hook("SubagentStart", agent_id=H))
    assert engine.lineage(H, "codex").parent == A


def test_a_child_placed_ambiguous_takes_the_one_spawn_its_stated_parent_has_open(
    engine: Engine,
) -> None:
    engine.observe("codex", spawn_call(agent_id=A, tool_use_id="call_3"))
    engine.observe("codex", spawn_call(agent_id=B, tool_use_id="call_4"))
    engine.observe("codex", hook("SubagentStart", agent_id=G))
    assert engine.lineage(G, "codex").parent is None  # ambiguous
    state_parent(engine, G, B)
    engine.observe("codex", hook("SubagentStart", agent_id=H))
    assert engine.lineage(H, "codex").parent == A


def test_a_moved_child_takes_no_spawn_when_its_new_parent_has_several_open(
    engine: Engine,
) -> None:
    """B has ``call_4`` and ``call_5`` open, A has ``call_3`` back: H's start cannot tell A's
    spawn from B's, so H is ambiguous, not guessed under B."""
    misplace(engine, "call_4", "call_5")
    state_parent(engine, G, B)
    engine.observe("codex", hook("SubagentStart", agent_id=H))
    lineage = engine.lineage(H, "codex")
    assert (lineage.parent, lineage.depth, lineage.resolution) == (None, 1, "inferred")


def test_the_correction_event_names_the_spawn_released_and_the_one_claimed(
    engine: Engine,
) -> None:
    misplace(engine, "call_4")
    before = engine.position()
    state_parent(engine, G, B)
    [event] = list(engine.journal(start=before))
    assert event.topic == CORRECTED
    state = event.state
    assert (state["spawn_key"], state["released"], state["claimed"]) == (None, "call_3", "call_4")


def test_the_live_rebuilt_and_past_views_agree_on_the_spawn_a_corrected_child_holds(
    engine: Engine,
) -> None:
    misplace(engine, "call_4")
    before = engine.position()
    state_parent(engine, G, B)
    live = engine.queries.require(G, "codex")
    assert (live.parent, live.spawn_key) == (B, "call_4")
    past = past_queries(engine, position=before).require(G, "codex")
    assert (past.parent, past.spawn_key) == (A, "call_3")
    engine.rebuild()
    rebuilt = engine.queries.require(G, "codex")
    assert (rebuilt.parent, rebuilt.spawn_key) == (B, "call_4")
    root: RootLineage = engine.app.repository.get(root_id("codex", live.root))
    assert root.spawns["call_3"]["claimed"] is None
    assert root.spawns["call_4"]["claimed"] == G


def test_a_version_2_correction_event_replays_as_it_did() -> None:
    """An ``EdgeCorrected`` written before version 3 kept the child on its inferred spawn."""
    at = datetime(2026, 1, 1, 9, tzinfo=UTC)
    root = RootLineage.start("codex", "R", at=at, fact="k0")
    for parent, child in (("R", "A"), ("R", "B")):
        root.apply_identified(
            ChildIdentified(parent, child, "native", depth=1), at=at, fact=f"k-{child}"
        )
    root.request_spawn("A", "s3", agent_type=None, description=None, at=at, fact="k3")
    root.place_unknown_child(
        "G", agent_type=None, subagent_id=None, description=None, at=at, fact="k4"
    )
    root.request_spawn("B", "s4", agent_type=None, description=None, at=at, fact="k5")
    root.apply_identified(ChildIdentified("B", "G", "native"), at=at, fact="k6")
    with open_engine("memory://") as engine:
        stored = []
        for e in root.collect_events():
            s = engine.app.mapper.to_stored_event(e)
            if s.topic == CORRECTED:
                state = orjson.loads(s.state)
                assert state.pop("class_version") == 3
                assert state.pop("claimed") == "s4"
                state |= {"class_version": 2, "released": None}  # as version 2 wrote it
                s = StoredEvent(s.originator_id, s.originator_version, s.topic, orjson.dumps(state))
            stored.append(s)
        engine.app.recorder.insert_events(stored)
        loaded: RootLineage = engine.app.repository.get(root_id("codex", "R"))
        assert loaded.nodes["G"]["parent"] == "B" and loaded.nodes["G"]["spawn"] == "s3"
        assert (loaded.spawns["s3"]["claimed"], loaded.spawns["s4"]["claimed"]) == ("G", None)
        engine.rebuild()
        row = engine.queries.require("G", "codex")
        assert (row.parent, row.spawn_key) == ("B", "s3")
