"""Locks held by another connection, as another process would hold them, and counters of
how often the engine tried to get past them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from lineage_es.stores import parse_store_url

#: What the holding connection calls itself, as another lineage process would.
HOLDER_NAME = "lineage import (lock holder)"

#: How long a holder keeps its lock at most: were the engine to wait longer (the unbounded
#: wait this guards against), the holder lets go and the test fails on what the engine did
#: next, instead of hanging the run.
HOLDER_GIVES_UP = "30s"


@contextmanager
def sqlite_write_lock(url: str) -> Iterator[None]:
    """The SQLite store's write lock, held by another connection (``BEGIN IMMEDIATE``)."""
    holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@contextmanager
def postgres_table_lock(url: str, table: str, mode: str) -> Iterator[int]:
    """``LOCK TABLE`` on one of the store's tables in ``mode``, held in an open transaction by
    another session named :data:`HOLDER_NAME`; yields that session's pid."""
    import psycopg

    schema = parse_store_url(url).postgres["schema"]
    holder = psycopg.connect(url.split("?", maxsplit=1)[0], application_name=HOLDER_NAME)
    try:
        holder.execute(f"SET idle_in_transaction_session_timeout = '{HOLDER_GIVES_UP}'")
        holder.commit()
        holder.execute(f"LOCK TABLE {schema}.{table} IN {mode} MODE")
        yield holder.info.backend_pid
    finally:
        holder.close()


@contextmanager
def postgres_setup_lock(url: str) -> Iterator[int]:
    """The advisory lock that serialises creating the store's tables, held by another session
    named :data:`HOLDER_NAME`; yields that session's pid."""
    import psycopg

    from lineage_es.stores import SETUP_LOCK_CLASS

    schema = parse_store_url(url).postgres["schema"]
    holder = psycopg.connect(
        url.split("?", maxsplit=1)[0], autocommit=True, application_name=HOLDER_NAME
    )
    try:
        holder.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (SETUP_LOCK_CLASS, schema))
        yield holder.info.backend_pid
    finally:
        holder.close()


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Count the calls of ``owner.name`` (an object's method or a module's function), still
    doing what it did; returns the list that grows by one per call."""
    calls: list[int] = []
    original: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls
