"""The Follower keeps a view current from the journal's subscription, and resubscribes when
the listening connection drops."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lineage_es.domain.index import ConversationIndex
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import StoreError
from lineage_es.follow import SETTLE_DELAYS, Follower
from tests.support.reliability_pg import drop_listening_connections

#: The issue's bound: a fact observed by one engine is visible to the others within 1 s.
VISIBLE_WITHIN = 1.0


def start_root(conversation: str) -> dict[str, str]:
    return {"session_id": conversation, "hook_event_name": "SessionStart", "source": "startup"}


def save_unprojected(engine: Engine, conversation: str) -> int:
    """Journal a root the way a writer killed before its view catch-up leaves it: events
    saved, view not moved."""
    at = datetime.now(UTC)
    root = RootLineage.start("claude", conversation, at=at, source="startup")
    engine.app.save(root, ConversationIndex.create("claude", conversation, conversation, at))
    return engine.position()


@pytest.fixture
def pair(postgres_url: str) -> Iterator[tuple[Engine, Engine]]:
    """Two engines on one PostgreSQL journal, standing in for two machines."""
    with open_engine(postgres_url) as one, open_engine(postgres_url) as other:
        yield one, other


def test_a_sqlite_store_cannot_be_followed(tmp_path: Path) -> None:
    with (
        open_engine(f"sqlite:///{tmp_path / 'j.sqlite'}") as engine,
        pytest.raises(StoreError, match="catch_up"),
    ):
        Follower(engine)


def test_a_follower_projects_events_no_writer_projected() -> None:
    with open_engine("memory://") as engine, Follower(engine, poll_interval=None) as follower:
        assert follower.wait_subscribed(timeout=5)
        position = save_unprojected(engine, "R")
        assert follower.wait_for(position, timeout=VISIBLE_WITHIN)
        assert [row.conversation for row in engine.view.roots(None, live_only=True)] == ["R"]


def test_a_fact_observed_by_one_engine_reaches_the_others_view_within_a_second(
    pair: tuple[Engine, Engine],
) -> None:
    writer, reader = pair
    seen: list[tuple[int, str]] = []
    with Follower(reader, on_change=lambda p, c: seen.append((p, c)), poll_interval=None) as f:
        assert f.wait_subscribed(timeout=5)
        writer.observe("claude", start_root("R"))
        assert f.wait_for(writer.position(), timeout=VISIBLE_WITHIN)
    assert seen and seen[-1][0] == writer.position()
    assert reader.view.find("R")


def test_a_follower_projects_a_fact_whose_writer_never_caught_up(
    pair: tuple[Engine, Engine],
) -> None:
    writer, reader = pair
    with Follower(reader, poll_interval=None) as follower:
        assert follower.wait_subscribed(timeout=5)
        position = save_unprojected(writer, "R")
        assert follower.wait_for(position, timeout=VISIBLE_WITHIN)
    assert reader.view.position() == position and reader.view.find("R")


def test_a_dropped_listening_connection_is_replaced_and_nothing_is_missed(
    pair: tuple[Engine, Engine],
) -> None:
    writer, reader = pair
    with Follower(reader, poll_interval=None) as follower:
        assert follower.wait_subscribed(timeout=5)
        assert drop_listening_connections([os.getpid()]) == 1
        writer.observe("claude", start_root("during-the-outage"))
        assert follower.wait_for(writer.position(), timeout=VISIBLE_WITHIN)
        assert follower.wait_subscribed(count=2, timeout=5)
        writer.observe("claude", start_root("after-the-outage"))
        assert follower.wait_for(writer.position(), timeout=VISIBLE_WITHIN)
        assert follower.drops == 1
    assert reader.view.find("during-the-outage") and reader.view.find("after-the-outage")


def test_a_failing_callback_does_not_stop_the_follower() -> None:
    def fail(position: int, cause: str) -> None:
        raise RuntimeError("the callback's own bug")

    with open_engine("memory://") as engine, Follower(engine, on_change=fail) as follower:
        assert follower.wait_subscribed(timeout=5)
        assert follower.wait_for(save_unprojected(engine, "A"), timeout=VISIBLE_WITHIN)
        assert follower.wait_for(save_unprojected(engine, "B"), timeout=VISIBLE_WITHIN)


def test_stop_ends_the_followers_threads() -> None:
    before = set(threading.enumerate())
    with open_engine("memory://") as engine:
        follower = Follower(engine, poll_interval=0.05).start()
        assert follower.wait_subscribed(timeout=5)
        follower.stop()
    assert [t for t in set(threading.enumerate()) - before if t.is_alive()] == []


class SilentSubscription:
    """A subscription whose notifications are all lost in flight."""

    def __init__(self) -> None:
        self._stopped = threading.Event()

    def __enter__(self) -> SilentSubscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __iter__(self) -> SilentSubscription:
        return self

    def __next__(self) -> object:
        self._stopped.wait()
        raise StopIteration

    def stop(self) -> None:
        self._stopped.set()


def test_the_safety_poll_catches_up_when_notifications_are_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    causes: list[str] = []
    with open_engine("memory://") as engine:
        monkeypatch.setattr(engine.app.recorder, "subscribe", lambda gt: SilentSubscription())
        follower = Follower(engine, on_change=lambda p, c: causes.append(c), poll_interval=0.05)
        with follower:
            assert follower.wait_subscribed(timeout=5)
            time.sleep(2 * sum(SETTLE_DELAYS))  # well past the settling catch-ups
            assert follower.wait_for(save_unprojected(engine, "R"), timeout=VISIBLE_WITHIN)
    assert causes == ["poll"]
