"""Crash: a writer killed with SIGKILL at random points loses nothing that had returned,
leaves nothing half-written, and its view always equals a rebuild from its journal."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.journal import verify_journal
from tests.support.reliability import Report, Workers, compare, runs_per_key, view_is_a_prefix
from tests.support.reliability_streams import crash_stream

pytestmark = pytest.mark.slow

TRIALS = 30
#: Every tenth kill lands while the writer is still starting (opening the store).
STARTUP_EVERY = 10
REBUILD_TRIALS = 5
LENGTH = 20_000


def returned_indices(side: Path) -> list[int]:
    """The indices the writers recorded after observe() returned (complete lines only)."""
    if not side.exists():
        return []
    return [int(line) for line in side.read_bytes().split(b"\n")[:-1]]


def kill(process_pid: int) -> None:
    os.kill(process_pid, signal.SIGKILL)


def integrity(path: Path) -> str:
    db = sqlite3.connect(path)
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()


def test_a_writer_killed_at_random_points_loses_and_invents_no_fact(
    tmp_path: Path, workers: Workers, figures: Report
) -> None:
    path = tmp_path / "store" / "journal.sqlite"
    store = f"sqlite:///{path}"
    side = tmp_path / "returned.txt"
    items = crash_stream(LENGTH)
    rnd = random.Random(20260301)
    reference = open_engine("memory://")  # the same payloads, observed one by one, never killed
    fed = 0
    view_behind = in_flight_committed = startup_kills = 0
    for trial in range(TRIALS):
        start = len(returned_indices(side))
        process = workers.start(
            "write",
            "--store",
            store,
            "--side",
            str(side),
            "--start",
            str(start),
            "--length",
            str(LENGTH),
        )
        if trial % STARTUP_EVERY == STARTUP_EVERY - 1:
            time.sleep(rnd.uniform(0.0, 0.4))
            startup_kills += 1
        else:
            workers.ready(process)
            time.sleep(rnd.uniform(0.02, 0.6))
        kill(process.pid)
        process.wait()

        returned = returned_indices(side)
        assert returned == list(range(len(returned))), "each writer resumes after the last"
        while fed < len(returned):
            reference.observe("claude", items[fed].payload, at=items[fed].at)
            fed += 1
        with open_engine(store) as engine:
            assert integrity(path) == "ok"
            if engine.view.position() < engine.position():
                view_behind += 1
            assert view_is_a_prefix(engine), f"trial {trial}: the view holds a torn page"
            journal = list(engine.journal())
            if len(journal) > reference.position() and fed < len(items):
                # The killed observe had committed but not yet recorded that it returned.
                reference.observe("claude", items[fed].payload, at=items[fed].at)
                fed += 1
                in_flight_committed += 1
            difference = compare(journal, list(reference.journal()))
            assert difference.lost == 0, f"trial {trial}: a returned observe is missing"
            assert difference.invented == 0, f"trial {trial}: the journal holds extra events"
            assert difference.same_order
            # A key is journaled again only where the never-killed reference journaled it
            # again: a payload that recurs in a later lifetime of its root (a session ending
            # the same way after a resume), never a killed write retried.
            assert runs_per_key(journal) == runs_per_key(reference.journal())
            report = verify_journal(engine)
            assert report.ok, report.problems
    with open_engine(store) as engine:
        events = engine.position()
        keys = len(runs_per_key(engine.journal()))
    figures(
        trials=TRIALS,
        startup_kills=startup_kills,
        returned=len(returned_indices(side)),
        events=events,
        observations_journaled=keys,
        in_flight_committed=in_flight_committed,
        view_behind_at_reopen=view_behind,
        lost=0,
        invented=0,
        duplicated=0,
    )


def fill(engine: Engine, count: int) -> None:
    for item in crash_stream(count):
        engine.observe("claude", item.payload, at=item.at)


def test_a_rebuild_killed_at_random_points_leaves_the_view_whole(
    tmp_path: Path, workers: Workers, figures: Report
) -> None:
    """The worker rebuilds over and over until it is killed, so each kill lands in a rebuild
    (replaying into its fresh view, or putting it in place): the store's view is the whole
    one either way, never an emptied or half-rebuilt one, with nothing to catch up."""
    path = tmp_path / "journal.sqlite"
    store = f"sqlite:///{path}"
    with open_engine(store) as engine:
        fill(engine, 1500)
        events = engine.position()
        expected = engine.view.all_rows()
    rnd = random.Random(7)
    for _ in range(REBUILD_TRIALS):
        process = workers.start("rebuild", "--store", store)
        workers.ready(process)
        time.sleep(rnd.uniform(0.01, 0.4))
        kill(process.pid)
        process.wait()
        with open_engine(store) as engine:
            assert integrity(path) == "ok"
            assert engine.view.position() == events
            assert engine.view.all_rows() == expected
            assert verify_journal(engine).ok
    figures(rebuild_kills=REBUILD_TRIALS, events=events)
