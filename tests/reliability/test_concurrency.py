"""Concurrency: hook processes observing the same roots at the same time lose no event, write
none twice, retry their optimistic-concurrency conflicts, and leave the tree a sequential
replay of the same facts in journal order would build.

One race per store (8 processes x 500 payloads) is run once and examined by several tests.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import psycopg
import pytest

from lineage_es.domain.ids import root_id
from lineage_es.engine.engine import open_engine
from lineage_es.journal import VerifyReport, verify_journal
from lineage_es.model import ForestNode
from lineage_es.read.decoding import JournalEvent
from tests.support.postgres import PG_URL, postgres_reachable
from tests.support.reliability import Report, Workers, compare, runs_per_key
from tests.support.reliability_streams import Item, contention_stream

pytestmark = pytest.mark.slow

WORKERS = 8
PAYLOADS = 250
ROOTS = 8


@dataclass(frozen=True)
class Race:
    """What a race left: the payloads, each worker's figures, the journal, view and tree."""

    store: str
    items: dict[str, Item]
    results: list[dict[str, object]]
    journal: list[JournalEvent]
    verify: VerifyReport
    forest: tuple[ForestNode, ...]

    @property
    def gave_up(self) -> set[str]:
        """Keys of the payloads whose observe raised ConcurrencyError (it never returned)."""
        return {str(key) for r in self.results for key in r["gave_up"]}  # type: ignore[attr-defined]

    @property
    def conflicts(self) -> int:
        return sum(int(r["conflicts"]) for r in self.results)  # type: ignore[call-overload]


def payloads() -> dict[str, Item]:
    items = {
        item.key: item for w in range(WORKERS) for item in contention_stream(w, PAYLOADS, ROOTS)
    }
    assert len(items) == WORKERS * PAYLOADS, "every payload of the race is distinct"
    return items


def run_race(store: str) -> Race:
    """Start every worker, let them observe together, and collect what they left."""
    workers = Workers()
    try:
        with open_engine(store):
            pass  # created once, as an installer would, before the hooks race
        processes = []
        for w in range(WORKERS):
            # Started one at a time so the race under test is the observing, which starts
            # when every worker is ready (opening at once has its own test below).
            process = workers.start(
                "contend",
                "--store",
                store,
                "--worker",
                str(w),
                "--count",
                str(PAYLOADS),
                "--roots",
                str(ROOTS),
                stdin=True,
            )
            workers.ready(process)
            processes.append(process)
        for process in processes:  # all ready: go
            assert process.stdin is not None
            process.stdin.write(b"go\n")
            process.stdin.flush()
        results = []
        for process in processes:
            out, err = process.communicate(timeout=900)
            assert process.returncode == 0, err.decode()
            results.append(orjson.loads(out.splitlines()[-1]))
    finally:
        workers.kill_all()
    with open_engine(store) as engine:
        journal = list(engine.journal())
        report = verify_journal(engine)
        forest = engine.forest(include_stopped=True)
    return Race(store, payloads(), results, journal, report, forest)


@pytest.fixture(scope="module")
def sqlite_race(tmp_path_factory: pytest.TempPathFactory) -> Race:
    path: Path = tmp_path_factory.mktemp("race") / "journal.sqlite"
    return run_race(f"sqlite:///{path}")


@pytest.fixture(scope="module")
def postgresql_race() -> Iterator[Race]:
    if not postgres_reachable():
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {PG_URL} is unreachable under CI")
        pytest.skip(f"PostgreSQL at {PG_URL} is unreachable")
    schema = f"lineage_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield run_race(f"{PG_URL}?schema={schema}")
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["sqlite", "postgresql"])
def race(request: pytest.FixtureRequest) -> Race:
    found: Race = request.getfixturevalue(f"{request.param}_race")
    return found


def test_every_returned_observation_is_journaled_once_on_its_own_root(
    race: Race, figures: Report
) -> None:
    assert race.verify.ok, race.verify.problems
    runs = runs_per_key(race.journal)
    roots = {e.state["fact"]: e.originator_id for e in race.journal if e.state.get("fact")}
    returned = set(race.items) - race.gave_up
    lost = [key for key in returned if key not in runs]
    duplicated = [key for key, count in runs.items() if count > 1]
    invented = set(runs) - set(race.items)
    half_written = race.gave_up & set(runs)
    wrong_root = [
        key
        for key, aggregate in roots.items()
        if aggregate != root_id("claude", race.items[key].payload["session_id"]).hex
    ]
    figures(
        processes=WORKERS,
        payloads=len(race.items),
        events=len(race.journal),
        roots=len(Counter(roots.values())),
        conflicts_retried=race.conflicts,
        gave_up=len(race.gave_up),
        lost=len(lost),
        duplicated=len(duplicated),
        invented=len(invented),
    )
    assert not lost, f"{len(lost)} observations returned but left no event"
    assert not duplicated, f"{len(duplicated)} observations were journaled twice"
    assert not invented and not wrong_root
    assert not half_written, "an observation that gave up left events behind"
    assert race.conflicts > 0, "the workers never contended: the race proved nothing"


def test_the_tree_equals_a_sequential_replay_in_journal_order(race: Race) -> None:
    order = list(dict.fromkeys(e.state["fact"] for e in race.journal if e.state.get("fact")))
    with open_engine("memory://") as sequential:
        for key in order:
            sequential.observe("claude", race.items[key].payload, at=race.items[key].at)
        difference = compare(race.journal, list(sequential.journal()))
        assert sequential.forest(include_stopped=True) == race.forest
    assert (difference.lost, difference.invented) == (0, 0)
    assert difference.same_order


def test_no_observation_gives_up_under_contention(race: Race) -> None:
    assert not race.gave_up, f"{len(race.gave_up)} observations raised ConcurrencyError"


def test_processes_opening_a_postgres_store_at_once_all_succeed(
    postgres_url: str, workers: Workers
) -> None:
    """Hooks run as separate processes, several at a time, each opening the store: first on a
    new database, then on the existing one."""
    failures: list[str] = []
    for _ in range(2):
        processes = [
            workers.start(
                "contend",
                "--store",
                postgres_url,
                "--worker",
                str(w),
                "--count",
                "4",
                "--roots",
                "2",
                stdin=True,
            )
            for w in range(WORKERS)
        ]
        for process in processes:
            assert process.stdin is not None
            process.stdin.write(b"go\n")
            process.stdin.flush()
        for process in processes:
            _, err = process.communicate(timeout=120)
            if process.returncode != 0:
                lines = err.decode().strip().splitlines()
                failures.append("\n".join(lines[-12:]))
    assert not failures, failures
