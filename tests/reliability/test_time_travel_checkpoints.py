"""Property: time travel from a checkpoint answers as a full replay of the journal does.

For random journals (facts out of time order: re-dated starts, stops held in the past,
deletions, renames) with a checkpoint every few positions, the view as of every position,
and as of times before, between and after the journal's, equals a fresh replay's, row for
row and answer for answer (forest, families with ``last_seen``, lineages), on every store.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.read import checkpoints
from lineage_es.read.time_travel import past_view
from tests.support.past_view import past_queries
from tests.support.postgres import PG_URL, postgres_reachable
from tests.support.random_journals import answers, feed_steps, moment, steps

SECONDS = range(-1, 43, 3)


@contextmanager
def fresh_engine(kind: str) -> Iterator[Engine]:
    """An engine on a new, empty store of ``kind``."""
    if kind == "memory":
        with open_engine("memory://") as engine:
            yield engine
        return
    if kind == "sqlite":
        with (
            tempfile.TemporaryDirectory() as folder,
            open_engine(f"sqlite:///{folder}/journal.sqlite") as engine,
        ):
            yield engine
        return
    import psycopg

    schema = f"lineage_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        with open_engine(f"{PG_URL}?schema={schema}") as engine:
            yield engine
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


STORES = pytest.mark.parametrize("kind", ["memory", "sqlite", "postgresql"])


def require(kind: str) -> None:
    """Skip a PostgreSQL run when the server is unreachable, except under CI."""
    if kind == "postgresql" and not postgres_reachable():
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {PG_URL} is unreachable under CI")
        pytest.skip(f"PostgreSQL at {PG_URL} is unreachable")


@contextmanager
def checkpoint_every(stretch: int, full_every: int) -> Iterator[None]:
    with (
        mock.patch.object(checkpoints, "STRETCH", stretch),
        mock.patch.object(checkpoints, "FULL_EVERY", full_every),
    ):
        yield


def rows_as_of(engine: Engine, position: int | None, cutoff: str | None) -> list[object]:
    view = past_view(
        engine.app.recorder, engine.view, position=position, cutoff=cutoff, end=engine.position()
    )
    return list(view.all_rows())


@STORES
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journal=steps)
def test_a_view_as_of_any_position_from_a_checkpoint_equals_a_full_replay(
    kind: str, journal: list[tuple[str, int, int, int, int]]
) -> None:
    require(kind)
    with fresh_engine(kind) as engine, checkpoint_every(3, 2):
        feed_steps(engine, journal)
        for position in range(engine.position() + 2):
            replayed = past_queries(engine, position=position)
            assert rows_as_of(engine, position, None) == replayed.view.all_rows()
            assert answers(engine.as_of(position=position)) == answers(replayed)


@STORES
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journal=steps)
def test_a_view_as_of_any_time_from_a_checkpoint_equals_a_full_replay(
    kind: str, journal: list[tuple[str, int, int, int, int]]
) -> None:
    require(kind)
    with fresh_engine(kind) as engine, checkpoint_every(3, 2):
        feed_steps(engine, journal)
        end = engine.position()
        for second in SECONDS:
            for position in (None, end // 2, end):
                time = moment(second)
                replayed = past_queries(engine, position=position, time=time)
                cutoff = time.isoformat(timespec="microseconds")
                assert rows_as_of(engine, position, cutoff) == replayed.view.all_rows()
                got = engine.as_of(position=position, time=time)
                assert answers(got) == answers(replayed)
