"""Evidence that arrives late (a later import, a later hook) counts as if it had come in time.

shared/spec/LINEAGE.md: "A later fact that contradicts an inference corrects it (a journaled
correction event, never an in-place edit)", and a child placed without its parent "a later fact
places it". HOSTS.md: each rollout's first row starts its conversation, and its
``thread_spawn`` states the parent and depth. So an incremental import of a folder ends, and
reads at every moment (time travel), as a one-shot import of the same files does:

- a node first placed by a later fact (a parent's spawn output, a child naming its root) is
  re-dated by its own, earlier header, once (``ChildRedated``, ``RootRedated``);
- a parent stated by a row but unknown when it was read (or known at a depth the row
  contradicts) is remembered, and the child is placed under it when it becomes known
  (``EdgeCorrected``), its own waiting children after it.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from eventsourcing.persistence import StoredEvent

from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, RootSeen
from lineage_es.read.answers import TreeReader
from tests.support.codex_sessions import (
    CHILD,
    PARENT,
    T0,
    event,
    family,
    line,
    meta,
    one_shot,
    rollout,
    run,
    spawned,
)
from tests.support.feed import Feed

#: The four-level Codex tree of the late-parent cases: PARENT (the root) -> A -> A1 -> X.
A = "019a0000-0000-7000-8000-0000000000d4"
A1 = "019a0000-0000-7000-8000-0000000000e5"
X = "019a0000-0000-7000-8000-0000000000f6"

REDATED = "lineage:RootLineage.ChildRedated"
ROOT_REDATED = "lineage:RootLineage.RootRedated"
CORRECTED = "lineage:RootLineage.EdgeCorrected"
REJECTED = "lineage:RootLineage.EdgeRejected"


def shape(engine: Engine | TreeReader) -> dict[str, tuple[Any, ...]]:
    """What the view says of each node of PARENT's family."""
    return {
        c: (m.parent, m.depth, m.resolution, m.started_at, m.status)
        for c, m in family(engine).items()
    }


def topics(engine: Engine) -> list[str]:
    return [e.topic for e in engine.journal()]


def moments(*seconds: float) -> list[datetime]:
    return [T0 + timedelta(seconds=s) for s in seconds]


def row(engine: Engine, conversation: str) -> tuple[str | None, bool]:
    """A node's parent edge and whether it is placed ambiguous."""
    engine.catch_up()
    found = engine.queries.find(conversation)
    assert found is not None
    return found.parent, found.ambiguous


def rebuilt(engine: Engine) -> dict[str, tuple[Any, ...]]:
    live = shape(engine)
    engine.rebuild()
    assert shape(engine) == live
    return live


# -- re-dating: each file's first row starts its conversation ---------------------------------


def spawn_output_only(folder: Path) -> None:
    """PARENT's rollout: a spawn call at 2 s whose output at 3 s names CHILD."""
    call = {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c1"}
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": f'{{"agent_id":"{CHILD}"}}',
    }
    rollout(
        folder,
        PARENT,
        meta(0, PARENT),
        line(2, "response_item", call),
        line(3, "response_item", output),
        event(60, "task_complete"),
    )


def test_child_placed_by_its_parents_output_is_redated_by_its_later_read_header(
    tmp_path: Path, memory: Engine
) -> None:
    spawn_output_only(tmp_path)
    run(memory, tmp_path)
    assert family(memory)[CHILD].started_at.startswith("2026-09-03T08:00:03")
    rollout(tmp_path, CHILD, spawned(2.1, CHILD, PARENT), event(30, "task_complete"))
    run(memory, tmp_path)
    assert family(memory)[CHILD].started_at == "2026-09-03T08:00:02.100000+00:00"
    assert rebuilt(memory) == shape(one_shot(tmp_path))
    assert topics(memory).count(REDATED) == 1


def test_between_the_header_and_the_output_the_child_is_there_as_in_a_one_shot_import(
    tmp_path: Path, memory: Engine
) -> None:
    """Time travel to an instant between the two times leaves the original ``ChildPlaced``
    out: the re-dating event places the child on its own."""
    spawn_output_only(tmp_path)
    run(memory, tmp_path)
    rollout(tmp_path, CHILD, spawned(2.1, CHILD, PARENT), event(30, "task_complete"))
    run(memory, tmp_path)
    once = one_shot(tmp_path)
    for moment in moments(2, 2.5, 3, 31, 61):
        assert shape(memory.as_of(time=moment)) == shape(once.as_of(time=moment)), moment
    assert CHILD in family(memory.as_of(time=T0 + timedelta(seconds=2.5)))


def test_root_created_by_its_childs_rollout_is_redated_by_its_own_header(
    tmp_path: Path, memory: Engine
) -> None:
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), event(30, "task_complete"))
    run(memory, tmp_path)
    assert family(memory)[PARENT].started_at.startswith("2026-09-03T08:00:03")
    rollout(tmp_path, PARENT, meta(0, PARENT), event(60, "task_complete"))
    run(memory, tmp_path)
    assert family(memory)[PARENT].started_at.startswith("2026-09-03T08:00:00")
    assert rebuilt(memory) == shape(one_shot(tmp_path))
    assert topics(memory).count(ROOT_REDATED) == 1
    before_the_child = memory.as_of(time=T0 + timedelta(seconds=1))
    assert [n.conversation for n in before_the_child.forest()] == [PARENT]


def test_a_later_or_equal_time_redates_nothing(engine: Engine) -> None:
    feed = Feed(engine, "codex")
    feed.root("R")
    feed.send("C", ChildIdentified("R", "C", "native", depth=1), root="R")
    before = {m.conversation: m.started_at for m in engine.family("R")}
    feed.send("C", ChildIdentified("R", "C", "transcript", depth=1), root="R")
    feed.send("R", RootSeen("R", "resume"), root="R")
    assert REDATED not in topics(engine) and ROOT_REDATED not in topics(engine)
    assert {m.conversation: m.started_at for m in engine.family("R")} == before


def test_an_earlier_fact_redates_a_child_once() -> None:
    """The aggregate keeps each node's earliest start: the same earlier time again, or a
    time between, changes nothing more."""
    at = datetime(2026, 1, 1, 9, tzinfo=UTC)
    root = RootLineage.start("codex", "R", at=at, fact="k0")
    root.apply_identified(
        ChildIdentified("R", "C", "transcript", spawn_key="s"),
        at=at + timedelta(seconds=10),
        fact="k1",
    )
    for seconds, key in ((5, "k2"), (5, "k3"), (7, "k4"), (12, "k5")):
        root.apply_identified(
            ChildIdentified("R", "C", "native", depth=1),
            at=at + timedelta(seconds=seconds),
            fact=key,
        )
    redated = [e for e in root.collect_events() if isinstance(e, RootLineage.ChildRedated)]
    assert [(e.timestamp, e.parent, e.depth, e.spawn_key) for e in redated] == [
        (at + timedelta(seconds=5), "R", 1, "s")
    ]


# -- a stated parent that becomes known later -------------------------------------------------


def without_a(folder: Path) -> None:
    """The tree's rollouts but A's (skipped, in another folder, or not written yet)."""
    rollout(folder, PARENT, meta(0, PARENT), event(50, "task_complete"))
    rollout(folder, A1, spawned(5, A1, A, depth=2), event(30, "task_complete"))
    rollout(folder, X, spawned(8, X, A1, depth=3), event(20, "task_complete"))


def a_arrives(folder: Path) -> None:
    rollout(folder, A, spawned(2, A, PARENT, depth=1), event(40, "task_complete"))


def test_a_parent_imported_later_places_its_waiting_children(
    tmp_path: Path, memory: Engine
) -> None:
    without_a(tmp_path)
    run(memory, tmp_path)
    assert memory.relation(A1, PARENT) == "descendant"  # placed ambiguous under the root
    assert family(memory)[X].parent is None  # its edge dropped by a depth contradiction
    a_arrives(tmp_path)
    run(memory, tmp_path)
    assert memory.relation(A1, A) == "child"
    assert memory.chain(X).conversations == (X, A1, A, PARENT)
    assert {family(memory)[c].resolution for c in (A, A1, X)} == {"transcript"}
    once = one_shot(tmp_path)
    assert rebuilt(memory) == shape(once)
    assert topics(memory).count(CORRECTED) == 2


def test_a_parent_imported_later_gives_a_one_shot_imports_history_at_every_moment(
    tmp_path: Path, memory: Engine
) -> None:
    without_a(tmp_path)
    run(memory, tmp_path)
    a_arrives(tmp_path)
    run(memory, tmp_path)
    once = one_shot(tmp_path)
    for moment in moments(1, 3, 6, 9, 25, 35, 45, 55):
        assert shape(memory.as_of(time=moment)) == shape(once.as_of(time=moment)), moment


def test_a_waiting_child_is_placed_when_its_parent_is_placed_in_the_same_root(
    engine: Engine,
) -> None:
    """Hook-shaped: the child's and grandchild's facts come before their parent's."""
    feed = Feed(engine, "codex")
    feed.root("R")
    feed.send("A1", ChildIdentified("A", "A1", "native", depth=2), root="R")
    feed.send("X", ChildIdentified("A1", "X", "native", depth=3), root="R")
    assert engine.relation("A1", "A") == "unrelated"  # A is not known yet
    assert [m.conversation for m in engine.family("R") if m.parent is None] == ["R", "A1", "X"]
    feed.send("A", ChildIdentified("R", "A", "native", depth=1), root="R")
    assert engine.chain("X").conversations == ("X", "A1", "A", "R")
    placed = {m.conversation: (m.parent, m.depth) for m in engine.family("R")}
    assert placed == {"R": (None, 0), "A": ("R", 1), "A1": ("A", 2), "X": ("A1", 3)}
    assert [row(engine, c) for c in ("A1", "X")] == [("A", False), ("A1", False)]
    live = {m.conversation: m for m in engine.family("R")}
    engine.rebuild()
    assert {m.conversation: m for m in engine.family("R")} == live


def test_a_parent_at_a_depth_that_still_contradicts_places_nothing(engine: Engine) -> None:
    """Never guess: the child waits for its stated parent at the stated depth only."""
    feed = Feed(engine, "codex")
    feed.root("R")
    feed.send("A1", ChildIdentified("A", "A1", "native", depth=3), root="R")
    feed.send("A", ChildIdentified("R", "A", "native", depth=1), root="R")  # A1 says depth 3
    feed.send("B", ChildIdentified("R", "B", "native", depth=1), root="R")
    assert row(engine, "A1") == (None, True)
    assert CORRECTED not in topics(engine)
    # Refused once, as unknown: A at depth 1 does not fit the depth A1 states, so A1's fact
    # is not tried again (and refused again) each time something is placed.
    assert topics(engine).count(REJECTED) == 1


def test_a_child_placed_by_ordering_alone_is_never_moved_to_a_new_node(engine: Engine) -> None:
    """Only a parent a fact stated is remembered: an ambiguous placement by ordering (spawns
    of different parents open) waits for a fact, not for whichever node comes next."""
    feed = Feed(engine)
    feed.root("R")
    feed.child("R", "R", "A")
    feed.spawn("R", "R", "toolu_R1")
    feed.spawn("R", "A", "toolu_A1")
    feed.start("R", "Q")
    feed.child("R", "R", "B")
    assert row(engine, "Q") == (None, True)


def test_a_stated_parent_that_descends_from_the_child_is_refused_once(engine: Engine) -> None:
    feed = Feed(engine, "codex")
    feed.root("R")
    feed.send("A", ChildIdentified("P", "A", "native"), root="R")  # P unknown: A waits for it
    feed.send("P", ChildIdentified("A", "P", "native"), root="R")  # P is A's child
    feed.send("Z", ChildIdentified("R", "Z", "native"), root="R")
    feed.send("Y", ChildIdentified("R", "Y", "native"), root="R")
    assert engine.relation("P", "A") == "child"
    assert row(engine, "A") == (None, True)  # still waiting for a fact that fits
    rejected = [e.state["reason"] for e in engine.journal() if e.topic == REJECTED]
    assert rejected == ["unknown-parent", "cycle"]


# -- old journals ------------------------------------------------------------------------------


def test_a_version_1_edge_rejected_event_loads_and_remembers_nothing() -> None:
    at = datetime(2026, 1, 1, 9, tzinfo=UTC)
    with open_engine("memory://") as engine:
        root = RootLineage.start("codex", "R", at=at, fact="k0")
        root.apply_identified(ChildIdentified("A", "A1", "native", depth=2), at=at, fact="k1")
        stored = []
        for e in root.collect_events():
            s = engine.app.mapper.to_stored_event(e)
            if s.topic == REJECTED:
                state = orjson.loads(s.state)
                assert state.pop("class_version") == 3
                for name in ("depth", "resolution", "spawn_key", "agent_type", "description"):
                    del state[name]
                s = StoredEvent(s.originator_id, s.originator_version, s.topic, orjson.dumps(state))
            stored.append(s)
        engine.app.recorder.insert_events(stored)
        loaded: RootLineage = engine.app.repository.get(root_id("codex", "R"))
        assert loaded.stated == {} and "A1" in loaded.nodes
        engine.rebuild()
        assert {m.conversation for m in engine.family("R")} == {"R", "A1"}


def test_a_version_2_snapshot_loads_with_no_stated_parents_and_unknown_child_starts() -> None:
    at = datetime(2026, 1, 1, 9, tzinfo=UTC)
    root = RootLineage.start("codex", "R", at=at, fact="k0")
    root.apply_identified(
        ChildIdentified("R", "C", "native", depth=1), at=at + timedelta(seconds=3), fact="k1"
    )
    snapshot = RootLineage.Snapshot.take(root)
    state = dict(snapshot.state)
    assert state.pop("class_version") == 5
    state["class_version"] = 2
    del state["stated"], state["began"], state["latest"]
    state["nodes"] = {
        name: {k: v for k, v in node.items() if k not in ("started", "joined")}
        for name, node in state["nodes"].items()
    }  # what the version-2 code stored
    old = dataclasses.replace(snapshot, state=state)  # as an older version wrote it
    restored = old.mutate(None)
    assert isinstance(restored, RootLineage)
    assert restored.stated == {}
    restored.see_root(at=at + timedelta(seconds=1), fact="k2")  # the root's start is known
    restored.apply_identified(
        ChildIdentified("R", "C", "native", depth=1), at=at + timedelta(seconds=5), fact="k3"
    )
    events = [type(e).__name__ for e in restored.collect_events()]
    assert events == ["ChildRedated"]  # the child's is not: the view keeps the earlier time


@pytest.mark.parametrize("seconds", [2, 5])
def test_redating_a_child_restored_without_a_start_keeps_the_earlier_time(
    memory: Engine, seconds: int
) -> None:
    """A child restored from a version-2 snapshot has no known start: the next fact placing
    it re-dates it, and the view keeps the earlier of the two times."""
    feed = Feed(memory, "codex", clock=iter([1, 3, seconds]))
    feed.root("R")
    feed.send("C", ChildIdentified("R", "C", "native", depth=1), root="R")
    root: RootLineage = memory.app.repository.get(root_id("codex", "R"))
    del root.nodes["C"]["started"]  # as a version-2 snapshot restores it
    feed.send("C", ChildIdentified("R", "C", "transcript", depth=1), root="R")
    started = {m.conversation: m.started_at for m in memory.family("R")}["C"]
    assert started.startswith(f"2026-01-01T00:00:0{min(seconds, 3)}")
