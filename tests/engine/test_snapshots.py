"""When roots are snapshotted, and what a snapshot holds.

A snapshot is a cache of a root as its events make it: at most one per save, taken when the
save carries the root past a multiple of the snapshotting interval, of the root as saved.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from uuid import UUID

from eventsourcing.application import project_aggregate

from lineage_es.domain.ids import root_id
from lineage_es.domain.root import RootLineage
from lineage_es.engine.application import LineageApplication
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildStarted, Observation, RootSeen

INTERVAL = LineageApplication.snapshotting_intervals[RootLineage]
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ROOT = "R"


def starts(first: int, count: int) -> list[Observation]:
    """``count`` children of ROOT started, one observation (and one event) each."""
    return [
        Observation(
            host="claude",
            requester=ROOT,
            key=f"start-{i}",
            facts=(ChildStarted(child=f"c{i}", parent=ROOT),),
            root=ROOT,
            at=T0 + timedelta(seconds=i + 1),
        )
        for i in range(first, first + count)
    ]


def opened() -> Engine:
    engine = open_engine("memory://")
    seen = Observation(
        host="claude", requester=ROOT, key="seen", facts=(RootSeen(ROOT),), root=ROOT, at=T0
    )
    engine.observe_many([seen])
    return engine


def snapshot_versions(engine: Engine) -> list[int]:
    assert engine.app.snapshots is not None
    identity: UUID = root_id("claude", ROOT)
    return [s.originator_version for s in engine.app.snapshots.get(identity)]


def test_a_save_of_many_intervals_of_events_takes_one_snapshot_at_the_roots_version() -> None:
    engine = opened()
    engine.observe_many(starts(0, 5 * INTERVAL), batch=10 * INTERVAL)
    version = engine.app.root(root_id("claude", ROOT)).version
    assert snapshot_versions(engine) == [version]


def test_saves_of_one_event_each_take_a_snapshot_as_they_pass_each_multiple() -> None:
    engine = opened()
    for i in range(2 * INTERVAL + 1):
        engine.observe_many(starts(i, 1))
    assert snapshot_versions(engine) == [INTERVAL, 2 * INTERVAL]


def test_a_save_that_passes_no_multiple_takes_no_snapshot() -> None:
    engine = opened()
    engine.observe_many(starts(0, INTERVAL - 10))
    assert snapshot_versions(engine) == []


def test_the_snapshot_holds_the_root_as_its_events_make_it() -> None:
    engine = opened()
    engine.observe_many(starts(0, 3 * INTERVAL), batch=10 * INTERVAL)
    identity = root_id("claude", ROOT)
    assert engine.app.snapshots is not None
    (snapshot,) = engine.app.snapshots.get(identity)
    replayed = project_aggregate(None, engine.app.repository.event_store.get(identity))
    assert isinstance(snapshot, RootLineage.Snapshot) and isinstance(replayed, RootLineage)
    assert snapshot.state == RootLineage.Snapshot.take(replayed).state
