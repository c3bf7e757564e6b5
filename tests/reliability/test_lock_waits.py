"""A command behind another process's lock waits once, for its lock timeout, and then fails
with a StoreLocked that says the store is locked and, where the database can tell, by whom.

Nothing here times anything: how often the engine tried is counted instead."""

from __future__ import annotations

from pathlib import Path

import eventsourcing.utils
import orjson
import pytest
from click.testing import CliRunner

from lineage_es import hook
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.errors import StoreError, StoreLocked
from lineage_es.stores import parse_store_url, setup_lock
from lineage_es.stores.locks import LOCK_TIMEOUT_ENV, application_name
from lineage_es.stores.settings import lock_timeout_for
from tests.support.locks import (
    HOLDER_NAME,
    count_calls,
    postgres_setup_lock,
    postgres_table_lock,
    sqlite_write_lock,
)

START = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}
OTHER_START = {"session_id": "S", "hook_event_name": "SessionStart", "source": "startup"}


@pytest.fixture(autouse=True)
def _no_lock_timeout_from_the_callers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sets the variable itself, or not at all."""
    monkeypatch.delenv(LOCK_TIMEOUT_ENV, raising=False)


@pytest.fixture
def short_lock_timeout(monkeypatch: pytest.MonkeyPatch) -> float:
    """A lock timeout of 0.2 s for whatever sets none of its own, through the environment."""
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0.2")
    return 0.2


@pytest.fixture
def sqlite_store(tmp_path: Path) -> str:
    """A SQLite store holding root R."""
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        engine.observe("claude", START)
    return url


@pytest.fixture
def postgres_store(postgres_url: str) -> str:
    """A PostgreSQL store holding root R."""
    with open_engine(postgres_url) as engine:
        engine.observe("claude", START)
    return postgres_url


@pytest.fixture
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pauses of eventsourcing's retry decorator, one per attempt after the first."""
    return count_calls(monkeypatch, eventsourcing.utils, "sleep")


# -- SQLite -----------------------------------------------------------------------------------


def test_a_sqlite_write_behind_a_held_lock_is_store_locked_after_one_wait(
    sqlite_store: str, short_lock_timeout: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_engine(sqlite_store) as engine, sqlite_write_lock(sqlite_store):
        inserts = count_calls(monkeypatch, engine.app.recorder, "insert_events")
        with pytest.raises(StoreLocked, match="is locked") as raised:
            engine.observe("claude", OTHER_START)
    assert len(inserts) == 1
    assert raised.value.waited == short_lock_timeout
    assert sqlite_store.removeprefix("sqlite:///") in str(raised.value)


def test_a_command_behind_a_held_lock_exits_2_saying_the_store_is_locked(
    sqlite_store: str, short_lock_timeout: float
) -> None:
    with sqlite_write_lock(sqlite_store):
        result = CliRunner().invoke(main, ["rename", "R", "runner", "--store", sqlite_store])
    assert result.exit_code == 2
    assert f"is locked: gave up after {short_lock_timeout:g} s" in result.output


# -- PostgreSQL -------------------------------------------------------------------------------


def test_a_postgres_write_behind_a_held_table_lock_is_tried_once_and_names_the_holder(
    postgres_store: str,
    short_lock_timeout: float,
    retry_sleeps: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with open_engine(postgres_store) as engine:
        locks_taken = count_calls(monkeypatch, engine.app.recorder, "_lock_table")
        with (
            postgres_table_lock(postgres_store, "lineage_events", "EXCLUSIVE") as holder,
            pytest.raises(StoreLocked) as raised,
        ):
            engine.observe("claude", OTHER_START)
    assert (len(locks_taken), len(retry_sleeps)) == (1, 0)
    assert raised.value.waited == short_lock_timeout
    assert f"pid {holder} ('{HOLDER_NAME}'" in str(raised.value)
    assert "ExclusiveLock on lineage_events" in str(raised.value)


def test_a_postgres_read_behind_an_exclusive_table_lock_is_store_locked_not_a_wait_forever(
    postgres_store: str, short_lock_timeout: float, retry_sleeps: list[int]
) -> None:
    with (
        open_engine(postgres_store) as engine,
        postgres_table_lock(postgres_store, "lineage_events", "ACCESS EXCLUSIVE") as holder,
        pytest.raises(StoreLocked) as raised,
    ):
        engine.observe("claude", OTHER_START)  # first reads the journal's last position
    assert len(retry_sleeps) == 0
    assert raised.value.holder is not None
    assert raised.value.holder.startswith(f"pid {holder} ('{HOLDER_NAME}'")


def test_opening_a_postgres_store_while_another_creates_its_tables_names_that_process(
    postgres_url: str, short_lock_timeout: float
) -> None:
    with postgres_setup_lock(postgres_url) as holder, pytest.raises(StoreLocked) as raised:
        open_engine(postgres_url)
    assert raised.value.waited == short_lock_timeout
    assert f"held by pid {holder} ('{HOLDER_NAME}'" in str(raised.value)


def test_opening_a_postgres_store_behind_a_held_table_lock_names_the_holder(
    postgres_store: str, short_lock_timeout: float
) -> None:
    with (
        postgres_table_lock(postgres_store, "lineage_events", "ACCESS EXCLUSIVE") as holder,
        pytest.raises(StoreLocked) as raised,
    ):
        open_engine(postgres_store)  # reads the journal's last position
    assert f"after {short_lock_timeout:g} s waiting for a lock held by pid {holder}" in str(
        raised.value
    )


def test_every_postgres_connection_of_a_command_carries_its_name(
    postgres_store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.argv", ["/usr/local/bin/lineage", "tree", "--all"])
    with open_engine(postgres_store) as engine:
        with engine.app.factory.datastore.get_connection() as journal:  # type: ignore[attr-defined]
            journal_name = journal.execute("SHOW application_name").fetchone()
        view_name = engine.view._db.execute("SHOW application_name").fetchone()  # type: ignore[attr-defined]
    assert journal_name == {"application_name": "lineage tree"}
    assert view_name == ("lineage tree",)


def test_a_hook_behind_a_held_postgres_lock_logs_the_holder_after_one_wait(
    postgres_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eventsourcing.postgres import PostgresApplicationRecorder

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(hook, "LOCK_TIMEOUT", 0.2)
    locks_taken = count_calls(monkeypatch, PostgresApplicationRecorder, "_lock_table")
    with postgres_table_lock(postgres_store, "lineage_events", "EXCLUSIVE") as holder:
        outcome = hook.run_hook("claude", orjson.dumps(OTHER_START), store=postgres_store)
    assert len(locks_taken) == 1
    assert outcome.error is not None and outcome.error.startswith("StoreLocked: ")
    assert f"held by pid {holder} ('{HOLDER_NAME}'" in outcome.error


def test_the_views_postgres_connection_waits_for_a_lock_as_long_as_the_journals(
    postgres_url: str,
) -> None:
    with setup_lock(parse_store_url(postgres_url), 0.4) as hold:
        taken = hold.take()
    assert taken is not None
    with taken:
        assert taken.execute("SHOW lock_timeout").fetchone() == ("400ms",)


# -- the lock timeout and the names --------------------------------------------------------


def test_the_environment_sets_the_lock_timeout_of_a_caller_that_sets_none(
    short_lock_timeout: float,
) -> None:
    assert lock_timeout_for("postgresql") == short_lock_timeout
    assert lock_timeout_for("sqlite") == short_lock_timeout


def test_a_callers_own_lock_timeout_wins_over_the_environment(short_lock_timeout: float) -> None:
    assert lock_timeout_for("postgresql", 4) == 4


def test_a_lock_timeout_in_the_environment_that_is_no_number_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "soon")
    with pytest.raises(StoreError, match=f"{LOCK_TIMEOUT_ENV}='soon'"):
        lock_timeout_for("sqlite")


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        pytest.param(
            ["/usr/bin/lineage", "journal", "export", "-o", "j"], "lineage journal export"
        ),
        pytest.param(["/venv/lineage_es/hook.py", "claude"], "lineage hook claude", id="hook"),
        pytest.param(["/venv/lineage_es/__main__.py", "tree"], "lineage tree", id="python -m"),
        pytest.param(["/srv/app/worker.py", "--fast"], "lineage_es (worker.py)", id="embedded"),
    ],
)
def test_a_process_names_its_postgres_connections_for_what_it_runs(
    argv: list[str], name: str
) -> None:
    assert application_name(argv) == name


def test_a_connections_name_is_kept_within_what_postgresql_keeps() -> None:
    assert len(application_name(["/usr/bin/lineage-" + "x" * 100]).encode()) == 63


def test_a_postgres_view_write_behind_a_held_table_lock_is_store_locked_not_a_wait_forever(
    postgres_store: str, short_lock_timeout: float
) -> None:
    with (
        open_engine(postgres_store) as engine,
        postgres_table_lock(postgres_store, "lineage_nodes", "ACCESS EXCLUSIVE"),
        pytest.raises(StoreLocked, match="is locked"),
    ):
        engine.observe("claude", OTHER_START)  # journaled, then the view's rows


def test_the_sqlite_views_wait_follows_the_lock_timeout_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(LOCK_TIMEOUT_ENV, "0.2")
    with open_engine(f"sqlite:///{tmp_path / 'store.db'}") as engine:
        busy_timeout = engine.view._query("PRAGMA busy_timeout")  # type: ignore[attr-defined]
    assert busy_timeout[0][0] == 200
