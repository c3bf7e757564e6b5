"""Shared fixtures: where the repository and the recorded corpus live, and engines on each
store."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.paths import CORPUS, REPO
from tests.support.postgres import PG_URL, postgres_reachable

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine


@pytest.fixture(autouse=True)
def no_quiet_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests feed facts at fixed past times, so the default ``lineage tree`` would leave their
    roots out as quiet: every test runs with no quiet limit (``LINEAGE_QUIET_AFTER=off``)
    unless it sets one (tests/cli/test_quiet_tree.py)."""
    monkeypatch.setenv("LINEAGE_QUIET_AFTER", "off")


@pytest.fixture
def repo() -> Path:
    """The repository's root folder."""
    return REPO


@pytest.fixture
def corpus() -> Path:
    """The host recordings in ../shared/corpus; the test is skipped when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus folder {CORPUS} is absent (set LINEAGE_CORPUS to point at it)")
    return CORPUS


@pytest.fixture
def memory() -> Engine:
    """An engine on the in-memory store alone, for tests whose subject is not the store."""
    from lineage_es.engine.engine import open_engine

    return open_engine("memory://")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A store URL on the real PostgreSQL server, in a schema of its own that is dropped
    afterwards. Skipped when the server is unreachable, except under CI, where that fails."""
    import psycopg

    if not postgres_reachable():
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {PG_URL} is unreachable under CI")
        pytest.skip(f"PostgreSQL at {PG_URL} is unreachable")
    schema = f"lineage_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{PG_URL}?schema={schema}"
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each behavioural test runs on every store."""
    if request.param == "memory":
        return "memory://"
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each test of what several engines on one store see runs on every store that can be
    shared (a memory store is one process's own)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def engine(store_url: str) -> Iterator[Engine]:
    from lineage_es.engine.engine import open_engine

    with open_engine(store_url) as opened:
        yield opened


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A SQLite store holding root R with child A, its view current: what a new process's
    first answer reads (a module about another store defines its own ``store``)."""
    from lineage_es.engine.engine import open_engine
    from tests.support.feed import Feed

    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
    return url
