"""What a store refuses to open or to do: another program's database, a bad port, a view
used after close; and what it keeps when it fails or waits: no connection left open, and
the lock timeout it was given, zero and fractions of a second included."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from eventsourcing.persistence import InfrastructureFactory, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore
from eventsourcing.utils import Environment

from lineage_es.engine.engine import open_engine
from lineage_es.errors import InvalidArgument, StoreError
from lineage_es.follow import Follower
from lineage_es.read.sqlview import PostgresView, SQLiteView
from lineage_es.stores import (
    JOURNAL_COLUMNS,
    DurableSQLiteFactory,
    LockTimedOut,
    application_env,
    parse_store_url,
)
from lineage_es.stores.connections import LOCK_TIMEOUT_ENV, MAX_LOCK_TIMEOUT

START = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}


def database(path: Path, *statements: str) -> Path:
    """A SQLite file made by another program, holding what ``statements`` create."""
    with sqlite3.connect(path) as connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    path.chmod(0o600)
    return path


def tables(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        found = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        names = [name for (name,) in found]
    connection.close()
    return names


# 1. a SQLite file that is not a lineage journal


def test_opening_another_programs_database_to_read_is_refused(tmp_path: Path) -> None:
    path = database(tmp_path / "app.db", "CREATE TABLE bookmarks (url TEXT)")
    with pytest.raises(StoreError, match=r"is not a lineage journal: it holds other tables"):
        open_engine(f"sqlite:///{path}", create=False)


def test_a_refused_database_is_left_exactly_as_it_was(tmp_path: Path) -> None:
    path = database(tmp_path / "app.db", "CREATE TABLE bookmarks (url TEXT)")
    before = path.read_bytes()
    with pytest.raises(StoreError):
        open_engine(f"sqlite:///{path}")
    assert (path.read_bytes(), tables(path)) == (before, ["bookmarks"])


def test_the_refusal_names_the_tables_it_found(tmp_path: Path) -> None:
    path = database(tmp_path / "app.db", "CREATE TABLE bookmarks (url TEXT)")
    with pytest.raises(StoreError) as refused:
        open_engine(f"sqlite:///{path}")
    assert (
        str(refused.value) == f"{path} is not a lineage journal: it holds other tables (bookmarks)"
    )


def test_another_event_sourced_programs_stored_events_is_not_a_journal(tmp_path: Path) -> None:
    path = database(
        tmp_path / "other.db",
        "CREATE TABLE stored_events (originator_id TEXT, originator_version INT, topic TEXT)",
    )
    with pytest.raises(StoreError, match=r"not a lineage journal: .*\(stored_events\)"):
        open_engine(f"sqlite:///{path}")


def test_a_journal_of_another_event_sourced_program_of_the_same_shape_is_refused_untouched(
    tmp_path: Path,
) -> None:
    path = tmp_path / "billing.sqlite"
    datastore = SQLiteDatastore(str(path))
    SQLiteApplicationRecorder(datastore).create_table()
    datastore.close()
    with sqlite3.connect(path) as connection:
        connection.execute(
            "INSERT INTO stored_events (originator_id, originator_version, topic, state) "
            "VALUES (?, 1, 'billing.domain:Invoice.Created', x'7b7d')",
            ("9c5b94b1-35ad-49bb-b118-8e8fc24abf80",),
        )
    connection.close()
    path.chmod(0o600)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a lineage journal"):
        open_engine(f"sqlite:///{path}", create=False)
    assert path.read_bytes() == before


def test_a_journal_of_an_older_version_without_the_view_tables_opens(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    datastore = SQLiteDatastore(str(path))
    SQLiteApplicationRecorder(datastore).create_table()
    datastore.close()
    path.chmod(0o600)
    with open_engine(f"sqlite:///{path}", create=False) as engine:
        assert engine.forest() == ()


def test_a_journal_opens_again_to_read(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        engine.observe("claude", START)
    with open_engine(url, create=False) as engine:
        assert engine.lineage("R").depth == 0


def test_a_sqlite_database_without_tables_becomes_a_journal(tmp_path: Path) -> None:
    path = database(tmp_path / "blank.db", "CREATE TABLE t (x)", "DROP TABLE t")
    with open_engine(f"sqlite:///{path}") as engine:
        engine.observe("claude", START)
    assert "stored_events" in tables(path)


def test_the_journal_shape_checked_is_the_one_eventsourcing_creates() -> None:
    datastore = SQLiteDatastore(":memory:")
    SQLiteApplicationRecorder(datastore).create_table()
    with datastore.transaction(commit=False) as cursor:
        cursor.execute("PRAGMA table_info(stored_events)")
        columns = tuple(row[1] for row in cursor.fetchall())
    datastore.close()
    assert columns == JOURNAL_COLUMNS


# 2. a failed open leaves nothing open


def test_a_sqlite_view_that_cannot_open_closes_its_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = database(tmp_path / "broken.sqlite", "CREATE TABLE lineage_nodes (x)")
    opened: list[sqlite3.Connection] = []
    connect = sqlite3.connect

    def recording(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        connection: sqlite3.Connection = connect(*args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(sqlite3, "connect", recording)
    with pytest.raises(StoreError, match="cannot open the tree view"):
        SQLiteView(path)
    assert opened
    for connection in opened:
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            connection.execute("SELECT 1")


# 3. a port that is no port


def test_a_port_out_of_range_is_a_store_error() -> None:
    with pytest.raises(StoreError, match=r"port '99999' .*1 to 65535"):
        parse_store_url("postgresql://127.0.0.1:99999/test")


def test_a_port_that_is_not_a_number_is_a_store_error() -> None:
    with pytest.raises(StoreError, match=r"port 'abc' .*1 to 65535"):
        parse_store_url("postgresql://127.0.0.1:abc/test")


def test_a_bad_port_error_does_not_show_the_password() -> None:
    with pytest.raises(StoreError) as refused:
        parse_store_url("postgresql://ann:s3cret@db.local:abc/test")
    assert "s3cret" not in str(refused.value)


# 4. the lock timeout given, not a default in its place


def busy_timeout_ms(lock_timeout: float, path: Path) -> int:
    """How long (ms) the journal's SQLite connections wait for another writer's lock."""
    env = application_env(parse_store_url(f"sqlite:///{path}"), lock_timeout=lock_timeout)
    factory = DurableSQLiteFactory(env)
    try:
        with factory.datastore.transaction(commit=False) as cursor:
            cursor.execute("PRAGMA busy_timeout")
            return int(cursor.fetchone()[0])
    finally:
        factory.close()


def test_a_zero_lock_timeout_has_the_sqlite_journal_wait_for_no_lock(tmp_path: Path) -> None:
    assert busy_timeout_ms(0, tmp_path / "journal.sqlite") == 0


def test_a_sub_second_lock_timeout_is_kept_to_the_millisecond_on_sqlite(tmp_path: Path) -> None:
    assert busy_timeout_ms(0.4, tmp_path / "journal.sqlite") == 400


@pytest.mark.parametrize("lock_timeout", [-1, 1e300, float("nan"), float("inf"), "30", True])
def test_a_lock_timeout_no_store_can_wait_is_refused_before_anything_is_opened(
    tmp_path: Path, lock_timeout: Any
) -> None:
    """Both stores keep it as milliseconds in a 32-bit int: from 0 to about 24 days."""
    journal = tmp_path / "journal.sqlite"
    with pytest.raises(InvalidArgument, match="from 0 to 2,147,483"):
        open_engine(f"sqlite:///{journal}", lock_timeout=lock_timeout)
    assert not journal.exists()


def test_the_longest_lock_timeout_is_kept(tmp_path: Path) -> None:
    assert busy_timeout_ms(MAX_LOCK_TIMEOUT, tmp_path / "journal.sqlite") == 2**31 - 1


@pytest.mark.parametrize("value", ["-1", "inf", "1e300", "soon"])
def test_a_lock_timeout_from_the_environment_no_store_can_wait_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, value)
    with pytest.raises(StoreError, match=f"{LOCK_TIMEOUT_ENV}='{value}'.*from 0 to"):
        open_engine(f"sqlite:///{tmp_path / 'journal.sqlite'}")


def test_a_sqlite_view_without_a_timeout_waits_the_default(tmp_path: Path) -> None:
    view = SQLiteView(tmp_path / "journal.sqlite", timeout=None)
    try:
        assert view._query("PRAGMA busy_timeout")[0][0] == 30_000
    finally:
        view.close()


def postgres_lock_timeout(postgres_url: str, lock_timeout: float) -> float:
    """The lock timeout (seconds) the journal's PostgreSQL writes set for themselves
    (eventsourcing issues ``SET LOCAL lock_timeout = '{it}s'`` in each write transaction)."""
    location = parse_store_url(postgres_url)
    env = application_env(location, lock_timeout=lock_timeout, create_tables=False)
    factory = InfrastructureFactory.construct(Environment("lineage", env))
    try:
        return float(factory.datastore.lock_timeout)  # type: ignore[attr-defined]
    finally:
        factory.close()


def test_a_zero_lock_timeout_has_a_postgres_write_wait_for_no_lock(postgres_url: str) -> None:
    assert postgres_lock_timeout(postgres_url, 0) == 0.001  # 0 would be "forever" there


def test_a_sub_second_lock_timeout_is_kept_on_postgres(postgres_url: str) -> None:
    assert postgres_lock_timeout(postgres_url, 0.4) == 0.4


def test_a_postgres_write_past_its_lock_timeout_fails_as_a_lock_timeout(
    postgres_url: str,
) -> None:
    with open_engine(postgres_url):
        pass  # the tables exist
    location = parse_store_url(postgres_url)
    env = application_env(location, lock_timeout=0.4, create_tables=False)
    factory = InfrastructureFactory.construct(Environment("lineage", env))
    recorder = factory.application_recorder()
    event = StoredEvent(originator_id=uuid4(), originator_version=1, topic="t", state=b"{}")
    holder = psycopg.connect(postgres_url.split("?", maxsplit=1)[0])
    try:
        holder.execute(f"LOCK TABLE {location.postgres['schema']}.lineage_events IN EXCLUSIVE MODE")
        with pytest.raises(LockTimedOut, match="lock timeout"):
            type(recorder).insert_events.__wrapped__(recorder, [event])  # type: ignore[attr-defined]
    finally:
        holder.close()
        factory.close()


# 5. a closed view stays closed


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every psycopg connection opened while the test runs."""
    opened: list[Any] = []
    connect = psycopg.Connection.connect.__func__  # type: ignore[attr-defined]

    def counting(cls: type[psycopg.Connection[Any]], *args: Any, **kwargs: Any) -> Any:
        connection = connect(cls, *args, **kwargs)
        opened.append(connection)
        return connection

    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(counting))
    monkeypatch.setattr(psycopg, "connect", psycopg.Connection.connect)
    yield opened
    for connection in opened:
        connection.close()


def test_a_closed_postgres_view_refuses_calls_without_reconnecting(
    postgres_url: str, connections: list[Any]
) -> None:
    view = PostgresView(parse_store_url(postgres_url).postgres)
    view.close()
    connections.clear()
    with pytest.raises(StoreError, match="the store is closed"):
        view.position()
    with pytest.raises(StoreError, match="the store is closed"):
        view.write([], 0, 1)
    assert connections == []


def test_a_closed_sqlite_view_refuses_calls_with_a_store_error(tmp_path: Path) -> None:
    view = SQLiteView(tmp_path / "journal.sqlite")
    view.close()
    with pytest.raises(StoreError, match="the store is closed"):
        view.position()


def test_a_follower_of_a_closed_engine_opens_no_view_connection(
    postgres_url: str, connections: list[Any]
) -> None:
    engine = open_engine(postgres_url)
    follower = Follower(engine, poll_interval=0.05, retry_delay=0.05).start()
    try:
        assert follower.wait_subscribed(timeout=10)
        engine.close()
        connections.clear()
        time.sleep(0.5)
        assert [c for c in connections if not c.closed] == []
    finally:
        follower.stop()
