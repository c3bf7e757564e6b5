"""A wait for another connection's lock that ran out is a StoreLocked, raised at once: never
retried, naming how long it waited and who held the lock when the store said."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import Engine
from lineage_es.engine.guards import StoreFailures
from lineage_es.errors import StoreLocked
from lineage_es.stores.locks import LockTimedOut, describe_holders
from tests.support.locks import count_calls

START = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}
HOLDER = "pid 4242 ('lineage import' from 10.0.0.5), idle in transaction"
SINCE = datetime(2026, 12, 7, 10, 1, 2, tzinfo=UTC)


def test_a_save_that_waited_out_a_lock_is_store_locked_and_not_tried_again(
    memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def locked(*args: Any, **kwargs: Any) -> Any:
        raise LockTimedOut("canceling statement due to lock timeout", waited=4, holder=HOLDER)

    monkeypatch.setattr(memory.app.recorder, "insert_events", locked)
    attempts = count_calls(monkeypatch, memory.app.recorder, "insert_events")
    with pytest.raises(StoreLocked) as raised:
        memory.observe("claude", START)
    assert len(attempts) == 1
    assert (raised.value.waited, raised.value.holder) == (4, HOLDER)
    assert str(raised.value) == (
        f"store memory:// is locked: gave up after 4 s waiting for a lock held by {HOLDER}"
    )


def test_a_sqlite_busy_error_from_the_driver_is_store_locked(tmp_path: Path) -> None:
    path = tmp_path / "view.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    waiter = sqlite3.connect(path, timeout=0)
    try:
        with pytest.raises(sqlite3.OperationalError) as busy:
            waiter.execute("INSERT INTO t VALUES (1)")
    finally:
        waiter.close()
        holder.close()
    named = StoreFailures.of("sqlite").store_error(busy.value, str(path))
    assert isinstance(named, StoreLocked)
    assert str(named).startswith(f"store {path} is locked: gave up waiting for a lock held by")


def test_the_holders_named_are_the_strongest_first_each_session_once() -> None:
    rows = [
        (7, "lineage tree", None, "active", SINCE, "RowExclusiveLock", "lineage_nodes"),
        (
            9,
            "psql",
            "10.0.0.9",
            "idle in transaction",
            SINCE,
            "AccessExclusiveLock",
            "lineage_events",
        ),
        (7, "lineage tree", None, "active", SINCE, "ShareLock", "lineage_view"),
        (3, "", None, "active", None, "RowExclusiveLock", "lineage_events"),
        (5, "lineage hook claude", None, "active", SINCE, "RowExclusiveLock", "lineage_events"),
    ]
    assert describe_holders(rows) == (
        "pid 9 ('psql' from 10.0.0.9), idle in transaction since 2026-12-07 10:01:02 UTC, "
        "AccessExclusiveLock on lineage_events; "
        "pid 7 ('lineage tree'), active since 2026-12-07 10:01:02 UTC, ShareLock on lineage_view; "
        "pid 3, active, RowExclusiveLock on lineage_events; and 1 more"
    )


def test_no_holder_left_is_no_holder_named() -> None:
    assert describe_holders([]) is None
