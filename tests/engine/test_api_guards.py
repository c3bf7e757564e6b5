"""The engine's public calls refuse what they cannot keep, and fail only with explicit errors:
a bad argument is refused before anything is journaled, a closed engine says it is closed,
and a store's own failures are named :class:`StoreError`, never leaked raw."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, OperationalError

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.engine.guards import MAX_NAME_LENGTH
from lineage_es.errors import EngineClosed, InvalidArgument, PayloadError, StoreError
from lineage_es.facts import Observation, Renamed, RootSeen
from lineage_es.read.sqlview import SQLiteView
from tests.support.feed import Feed
from tests.support.postgres import PG_URL

START = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}
OTHER_START = {"session_id": "S", "hook_event_name": "SessionStart", "source": "startup"}
#: A payload the Cursor adapter ignores: it answers no lineage and journals nothing.
IGNORED = {"conversation_id": "empty-state-draft", "hook_event_name": "beforeSubmitPrompt"}


@pytest.fixture
def feed(engine: Engine) -> Feed:
    """Root R with its child A."""
    feed = Feed(engine)
    feed.root("R")
    feed.child("R", "R", "A")
    return feed


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        engine.observe("claude", START)
    return url


@pytest.fixture
def write_locked(sqlite_url: str) -> Iterator[str]:
    """The SQLite store, its write lock held by another connection for the whole test."""
    holder = sqlite3.connect(sqlite_url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield sqlite_url
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def journal_reads_raise(engine: Engine, monkeypatch: pytest.MonkeyPatch, error: Exception) -> None:
    """Every read of ``engine``'s journal raises ``error``, as its driver would."""

    def broken(*args: object, **kwargs: object) -> object:
        raise error

    monkeypatch.setattr(engine.app.recorder, "select_notifications", broken)


# -- arguments --------------------------------------------------------------------------------

UNFIT_NAMES = [
    pytest.param(["a"], id="a-list"),
    pytest.param(5, id="an-int"),
    pytest.param(None, id="none"),
    pytest.param("", id="empty"),
    pytest.param("   ", id="only-spaces"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("two\nlines", id="newline"),
    pytest.param("\x1b[31mred", id="terminal-escape"),
    pytest.param("x" * (MAX_NAME_LENGTH + 1), id="too-long"),
    pytest.param("\ud800", id="lone-surrogate"),
]


@pytest.mark.parametrize("name", UNFIT_NAMES)
def test_a_name_the_view_cannot_hold_is_refused_before_it_is_journaled(
    feed: Feed, engine: Engine, name: Any
) -> None:
    before = engine.position()
    with pytest.raises(InvalidArgument):
        engine.rename("A", name)
    assert engine.position() == before


def test_a_refused_rename_leaves_the_store_answering_in_a_new_process(sqlite_url: str) -> None:
    with open_engine(sqlite_url) as engine, pytest.raises(InvalidArgument):
        engine.rename("R", ["a"])  # type: ignore[arg-type]
    with open_engine(sqlite_url) as engine:
        engine.rebuild()
        assert engine.lineage("R").depth == 0


def test_a_name_of_the_longest_length_is_kept(feed: Feed, engine: Engine) -> None:
    engine.rename("A", "é" * MAX_NAME_LENGTH)
    assert engine.family("R")[1].name == "é" * MAX_NAME_LENGTH


def test_an_observed_rename_with_a_name_that_is_not_a_str_is_a_payload_error(
    memory: Engine,
) -> None:
    observation = Observation(
        host="claude",
        requester="R",
        key="k",
        facts=(RootSeen("R"), Renamed("R", 5)),  # type: ignore[arg-type]
        root="R",
    )
    with pytest.raises(PayloadError, match="must be a str"):
        memory.observe("claude", observation)
    assert memory.position() == 0


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(lambda engine: engine.rename(["R"], "x"), id="rename"),
        pytest.param(lambda engine: engine.delete(["R"]), id="delete"),
        pytest.param(lambda engine: engine.rename("R", "x", host=5), id="rename-host"),
    ],
)
def test_a_command_naming_a_conversation_by_other_than_a_str_is_refused(
    memory: Engine, command: Callable[[Engine], None]
) -> None:
    memory.observe("claude", START)
    with pytest.raises(InvalidArgument):
        command(memory)


def test_an_unknown_delete_reason_is_an_invalid_argument(memory: Engine) -> None:
    memory.observe("claude", START)
    with pytest.raises(InvalidArgument):
        memory.delete("R", ["user"])  # type: ignore[arg-type]


@pytest.mark.parametrize("answer", [True, False], ids=["answered", "unanswered"])
def test_a_payload_time_that_is_not_a_datetime_is_refused_before_it_is_journaled(
    memory: Engine, answer: bool
) -> None:
    with pytest.raises(InvalidArgument, match="datetime"):
        memory.observe("claude", START, at="2020-01-01", answer=answer)  # type: ignore[arg-type]
    assert memory.position() == 0


#: Aware times whose UTC falls outside the years 1 to 9999: no datetime holds them.
BEYOND_UTC = [
    pytest.param(datetime.fromisoformat("9999-12-31T23:00:00-05:00"), id="after-9999"),
    pytest.param(datetime.fromisoformat("0001-01-01T00:00:00+05:00"), id="before-year-1"),
]


@pytest.mark.parametrize("moment", BEYOND_UTC)
def test_a_payload_time_beyond_the_utc_range_is_refused_before_it_is_journaled(
    memory: Engine, moment: datetime
) -> None:
    with pytest.raises(InvalidArgument, match="outside the years 1 to 9999"):
        memory.observe("claude", START, at=moment)
    assert memory.position() == 0


@pytest.mark.parametrize("moment", BEYOND_UTC)
def test_time_travel_to_a_time_beyond_the_utc_range_is_refused(
    memory: Engine, moment: datetime
) -> None:
    memory.observe("claude", START)
    with pytest.raises(InvalidArgument, match="outside the years 1 to 9999"):
        memory.as_of(time=moment)


def test_a_payload_in_the_first_minute_of_year_1_is_journaled(memory: Engine) -> None:
    """The earliest times a datetime holds are kept as any other (whether a ``Seen`` is due
    is judged without stepping back past them)."""
    memory.observe("claude", START, at=datetime(1, 1, 1, 0, 0, 10, tzinfo=UTC))
    memory.observe(
        "claude",
        {**START, "hook_event_name": "UserPromptSubmit", "prompt": "x"},
        at=datetime(1, 1, 1, 0, 0, 20, tzinfo=UTC),
    )
    assert memory.lineage("R").depth == 0


def test_observing_something_that_is_not_an_observation_is_refused(memory: Engine) -> None:
    with pytest.raises(InvalidArgument, match="Observation"):
        memory.observe_many([{"requester": "R"}])  # type: ignore[list-item]


def test_an_observation_whose_time_is_not_a_datetime_is_refused(memory: Engine) -> None:
    observation = Observation(
        host="claude",
        requester="R",
        key="k",
        facts=(RootSeen("R"),),
        root="R",
        at="2020",  # type: ignore[arg-type]
    )
    with pytest.raises(InvalidArgument, match="datetime"):
        memory.observe("claude", observation, answer=False)
    assert memory.position() == 0


def test_a_batch_holding_something_that_is_not_an_observation_journals_none_of_its_batch(
    memory: Engine,
) -> None:
    good = Observation(host="claude", requester="R", key="k", facts=(RootSeen("R"),), root="R")
    with pytest.raises(InvalidArgument, match="Observation"):
        memory.observe_many([good, {"requester": "S"}])  # type: ignore[list-item]
    assert memory.position() == 0


@pytest.mark.parametrize("batch", [0, -1, "10", True])
def test_a_batch_size_that_is_not_a_positive_int_is_refused(memory: Engine, batch: Any) -> None:
    with pytest.raises(InvalidArgument, match="batch"):
        memory.observe_many([], batch=batch)


@pytest.mark.parametrize("position", ["3", 2.5, -1, True])
def test_time_travel_to_a_position_that_is_not_a_journal_position_is_refused(
    memory: Engine, position: Any
) -> None:
    with pytest.raises(InvalidArgument, match="position"):
        memory.as_of(position=position)


def test_time_travel_to_a_time_that_is_not_a_datetime_is_refused(memory: Engine) -> None:
    with pytest.raises(InvalidArgument, match="datetime"):
        memory.as_of(time="2020-01-01")  # type: ignore[arg-type]


# -- a closed engine --------------------------------------------------------------------------

PUBLIC_CALLS: list[Any] = [
    pytest.param(lambda e: e.observe("claude", OTHER_START), id="observe"),
    pytest.param(lambda e: e.observe("claude", OTHER_START, answer=False), id="unanswered"),
    pytest.param(lambda e: e.observe("cursor", IGNORED), id="ignored"),
    pytest.param(
        lambda e: e.observe(
            "claude",
            Observation(host="claude", requester="S", key="k", facts=(RootSeen("S"),), root="S"),
        ),
        id="observation",
    ),
    pytest.param(lambda e: e.observe_many([]), id="observe_many"),
    pytest.param(lambda e: e.resolve("codex", {"threadId": "T"}), id="resolve"),
    pytest.param(lambda e: e.resolve("claude", {}), id="resolve-nothing"),
    pytest.param(lambda e: e.lineage("R"), id="lineage"),
    pytest.param(lambda e: e.tree_for("R"), id="tree_for"),
    pytest.param(lambda e: e.relation("R", "R"), id="relation"),
    pytest.param(lambda e: e.chain("R"), id="chain"),
    pytest.param(lambda e: e.provenance("R", "R"), id="provenance"),
    pytest.param(lambda e: e.family("R"), id="family"),
    pytest.param(lambda e: e.agents("R"), id="agents"),
    pytest.param(lambda e: e.forest(), id="forest"),
    pytest.param(lambda e: e.as_of(position=1), id="as_of"),
    pytest.param(lambda e: e.position(), id="position"),
    pytest.param(lambda e: list(e.journal()), id="journal"),
    pytest.param(lambda e: e.catch_up(), id="catch_up"),
    pytest.param(lambda e: e.rebuild(), id="rebuild"),
    pytest.param(lambda e: e.rename("R", "x"), id="rename"),
    pytest.param(lambda e: e.delete("R"), id="delete"),
    pytest.param(lambda e: e.__enter__(), id="enter"),
]


@pytest.fixture(params=["memory", "sqlite"])
def closed(request: pytest.FixtureRequest, tmp_path: Path) -> Engine:
    """An engine that journaled root R, then was closed."""
    url = "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'j.sqlite'}"
    engine = open_engine(url)
    engine.observe("claude", START)
    engine.close()
    return engine


@pytest.mark.parametrize("call", PUBLIC_CALLS)
def test_every_public_call_on_a_closed_engine_says_it_is_closed(
    closed: Engine, call: Callable[[Engine], object]
) -> None:
    with pytest.raises(EngineClosed, match="the engine is closed"):
        call(closed)


def test_a_closed_engine_on_postgresql_says_it_is_closed(postgres_url: str) -> None:
    engine = open_engine(postgres_url)
    engine.observe("claude", START)
    engine.close()
    with pytest.raises(EngineClosed):
        engine.lineage("R")
    with pytest.raises(EngineClosed):
        engine.observe("claude", OTHER_START)


def test_a_closed_memory_engine_journals_nothing(memory: Engine) -> None:
    memory.observe("claude", START)
    journaled = memory.position()
    memory.close()
    with pytest.raises(EngineClosed):
        memory.observe("claude", OTHER_START)
    assert memory.app.recorder.max_notification_id() == journaled


def test_closing_twice_is_closing_once(sqlite_url: str) -> None:
    engine = open_engine(sqlite_url)
    engine.close()
    engine.close()
    with pytest.raises(EngineClosed):
        engine.lineage("R")


def test_a_closed_engine_is_a_store_error() -> None:
    assert issubclass(EngineClosed, StoreError)


# -- the store's own failures -----------------------------------------------------------------


def test_a_write_lock_held_past_the_lock_timeout_is_a_store_error_naming_the_store(
    write_locked: str,
) -> None:
    with open_engine(write_locked, lock_timeout=1) as engine:
        with pytest.raises(StoreError, match="locked") as raised:
            engine.observe("claude", OTHER_START)
        assert write_locked.removeprefix("sqlite:///") in str(raised.value)
        assert isinstance(raised.value.__cause__, OperationalError)


def test_a_journal_that_cannot_be_written_is_a_store_error(sqlite_url: str) -> None:
    path = sqlite_url.removeprefix("sqlite:///")
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    if subprocess.run(["chattr", "+i", path], check=False, capture_output=True).returncode != 0:
        pytest.skip("this file system cannot make a file immutable")
    try:
        with open_engine(sqlite_url, create=False) as engine:
            with pytest.raises(StoreError, match="readonly") as raised:
                engine.observe("claude", OTHER_START)
            assert raised.value.__cause__ is not None
    finally:
        subprocess.run(["chattr", "-i", path], check=True)


def test_a_dropped_postgresql_connection_is_a_store_error(postgres_url: str) -> None:
    with open_engine(postgres_url) as engine:
        engine.observe("claude", START)
        view_pid = engine.view._db.info.backend_pid  # type: ignore[attr-defined]
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (view_pid,))
        time.sleep(0.2)
        with pytest.raises(StoreError) as raised:
            engine.lineage("R")
        assert isinstance(raised.value.__cause__, psycopg.Error)


def test_a_store_error_while_reading_the_journal_is_named(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_engine(sqlite_url) as engine:
        journal_reads_raise(engine, monkeypatch, sqlite3.DatabaseError("disk image is malformed"))
        with pytest.raises(StoreError, match="malformed"):
            list(engine.journal())


def test_a_lost_race_for_a_root_is_still_retried(
    memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = memory.app.recorder
    insert = recorder.insert_events
    calls = []

    def lose_once(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise IntegrityError("another writer saved this root first")
        return insert(*args, **kwargs)

    monkeypatch.setattr(recorder, "insert_events", lose_once)
    assert memory.observe("claude", START) is not None
    assert len(calls) == 2


# -- lock timeouts ----------------------------------------------------------------------------


def test_a_lock_timeout_of_zero_has_the_view_wait_for_no_lock(sqlite_url: str) -> None:
    with open_engine(sqlite_url, lock_timeout=0) as engine:
        assert isinstance(engine.view, SQLiteView)
        assert engine.view._query("PRAGMA busy_timeout")[0][0] == 0


def test_a_view_write_behind_another_writers_lock_is_a_store_error(write_locked: str) -> None:
    with (
        open_engine(write_locked, lock_timeout=0) as engine,
        pytest.raises(StoreError, match="locked"),
    ):
        engine.rebuild()  # the view's own write


# -- what is no failure of the store stays what it is ------------------------------------------


@pytest.mark.parametrize("call", ["lineage", "chain", "family", "tree_for"])
def test_an_id_that_is_not_a_str_is_an_invalid_argument_on_every_store(
    engine: Engine, call: str
) -> None:
    with pytest.raises(InvalidArgument, match="must be a str"):
        getattr(engine, call)({"a": 1})


def test_an_id_holding_nul_is_an_invalid_argument_on_every_store(engine: Engine) -> None:
    with pytest.raises(InvalidArgument, match="NUL"):
        engine.lineage("a\x00b")
    with pytest.raises(InvalidArgument, match="NUL"):
        engine.relation("x", "a\x00")


def test_a_programming_error_of_the_driver_is_not_called_a_store_failure(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_engine(sqlite_url) as engine:
        journal_reads_raise(engine, monkeypatch, sqlite3.ProgrammingError("Error binding"))
        with pytest.raises(sqlite3.ProgrammingError):
            list(engine.journal())


def test_a_follower_of_a_closed_engine_stops_instead_of_retrying() -> None:
    from lineage_es.follow import Follower

    engine = open_engine("memory://")
    follower = Follower(engine, poll_interval=0.01, retry_delay=0.01).start()
    engine.close()
    follower._stopping.wait(10)
    assert follower._stopping.is_set()
    follower.stop()


def test_a_postgresql_permission_denied_is_a_store_error_though_filed_as_programming(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eventsourcing.persistence import ProgrammingError

    denied = ProgrammingError("permission denied for table x")
    denied.__cause__ = psycopg.errors.InsufficientPrivilege("permission denied for table x")
    with open_engine(sqlite_url) as engine:
        journal_reads_raise(engine, monkeypatch, denied)
        with pytest.raises(StoreError, match="permission denied"):
            list(engine.journal())


def test_waiters_on_a_follower_whose_engine_closed_are_woken() -> None:
    import threading

    from lineage_es.follow import Follower

    engine = open_engine("memory://")
    follower = Follower(engine, poll_interval=0.01, retry_delay=0.01).start()
    answers: list[bool] = []
    waiter = threading.Thread(target=lambda: answers.append(follower.wait_for(10**9, 600)))
    waiter.start()
    engine.close()
    waiter.join(60)  # woken by the stop, not by its 600 s timeout
    assert answers == [False]
    follower.stop()
