"""How many PostgreSQL connections a process opens on a shared store: a hook journals its
fact on two (the journal's, and the view's, which first held the setup lock), where it took
eight (a pool of five opened at once and a sixth as the first was awaited, the view's, the
setup lock's), and sixteen hooks at once had the server refuse clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
from eventsourcing.postgres import PostgresFactory

from lineage_es import hook
from lineage_es.engine.engine import open_engine
from lineage_es.stores import SETUP_LOCK_CLASS, parse_store_url


class Census:
    """Every psycopg connection opened (by ``psycopg.connect`` or a pool), and the most that
    were open at once."""

    def __init__(self) -> None:
        self.opened: list[psycopg.Connection[Any]] = []
        self.peak = 0

    def add(self, connection: psycopg.Connection[Any]) -> None:
        self.opened.append(connection)
        self.peak = max(self.peak, sum(not c.closed for c in self.opened))


@pytest.fixture
def census(monkeypatch: pytest.MonkeyPatch) -> Iterator[Census]:
    counted = Census()
    connect = psycopg.Connection.connect.__func__  # type: ignore[attr-defined]

    def counting(cls: type[psycopg.Connection[Any]], *args: Any, **kwargs: Any) -> Any:
        connection = connect(cls, *args, **kwargs)
        counted.add(connection)
        return connection

    monkeypatch.setattr(psycopg.Connection, "connect", classmethod(counting))
    # ``psycopg.connect`` is the classmethod as bound at import.
    monkeypatch.setattr(psycopg, "connect", psycopg.Connection.connect)
    yield counted


def test_a_hook_journals_its_fact_on_two_connections(
    postgres_url: str, census: Census, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # where a failing hook would log
    with open_engine(postgres_url):  # the store's tables exist, as for every hook but the first
        pass
    census.opened.clear()
    payload = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}
    outcome = hook.run_hook("claude", orjson.dumps(payload), store=postgres_url, answer=False)
    assert outcome.error is None
    assert (len(census.opened), census.peak) == (2, 2)


def base_url(url: str) -> str:
    return url.split("?", maxsplit=1)[0]


def test_the_setup_lock_is_released_while_the_view_keeps_its_connection(
    postgres_url: str,
) -> None:
    from lineage_es.stores import setup_lock

    location = parse_store_url(postgres_url)
    schema = location.postgres["schema"]
    with setup_lock(location, 1) as hold:
        taken = hold.take()
    assert taken is not None
    with taken, psycopg.connect(base_url(postgres_url), autocommit=True) as other:
        assert not taken.closed
        locked = other.execute(
            "SELECT pg_try_advisory_lock(%s, hashtext(%s))", (SETUP_LOCK_CLASS, schema)
        ).fetchone()
        assert locked == (True,)


def test_a_users_pool_size_is_kept_beside_the_default_overflow(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("POSTGRES_POOL_SIZE", "2")
    monkeypatch.delenv("POSTGRES_MAX_OVERFLOW", raising=False)
    with open_engine(postgres_url) as engine:
        factory = engine.app.factory
        assert isinstance(factory, PostgresFactory)
        pool = factory.datastore.pool
        assert (pool.min_size, pool.max_size) == (2, 2 + 5)
