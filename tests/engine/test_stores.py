"""Store URLs, file permissions and stores that cannot be opened."""

from __future__ import annotations

import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.errors import NoJournal, StoreError
from lineage_es.stores import default_store_url, parse_store_url


def test_memory_url_parses() -> None:
    assert parse_store_url("memory://").kind == "memory"


def test_sqlite_url_keeps_its_absolute_path() -> None:
    location = parse_store_url("sqlite:////tmp/x/journal.sqlite")
    assert location.kind == "sqlite" and location.path == Path("/tmp/x/journal.sqlite")


def test_postgres_url_carries_host_port_user_database_and_schema() -> None:
    location = parse_store_url("postgresql://ann:pw@db.local:6543/lineage?schema=s1")
    assert location.postgres == {
        "dbname": "lineage",
        "host": "db.local",
        "port": "6543",
        "user": "ann",
        "password": "pw",
        "schema": "s1",
    }
    assert "pw" not in location.display


def test_an_unknown_scheme_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="not a store URL"):
        parse_store_url("mysql://x")


def test_the_default_store_follows_lineage_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LINEAGE_STORE", "memory://")
    assert default_store_url() == "memory://"


def test_the_default_store_is_a_sqlite_file_in_the_data_dir(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_store_url() == f"sqlite:///{tmp_path}/lineage-es/journal.sqlite"


def test_a_new_sqlite_store_is_private(tmp_path: Path) -> None:
    path = tmp_path / "private" / "journal.sqlite"
    with open_engine(f"sqlite:///{path}"):
        pass
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_world_readable_store_warns(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with open_engine(f"sqlite:///{path}"):
        pass
    path.chmod(0o644)
    with pytest.warns(UserWarning, match="chmod 600"), open_engine(f"sqlite:///{path}"):
        pass


def test_a_file_that_is_not_sqlite_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    path.write_bytes(b"this is not a database, just text " * 200)
    path.chmod(0o600)
    with pytest.raises(StoreError, match="not a SQLite journal"):
        open_engine(f"sqlite:///{path}")


def test_an_unreachable_postgres_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot open store"):
        open_engine("postgresql://nobody@127.0.0.1:1/none")


def test_a_sqlite_store_commits_with_synchronous_full(tmp_path: Path) -> None:
    with open_engine(f"sqlite:///{tmp_path / 'j.sqlite'}") as engine:
        datastore = engine.app.factory.datastore  # type: ignore[attr-defined]
        with datastore.transaction(commit=False) as cursor:
            cursor.execute("PRAGMA synchronous")
            assert cursor.fetchone()[0] == 2


def test_a_new_process_answers_from_the_persisted_view(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    from tests.support.feed import Feed

    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
    with open_engine(url) as reopened:
        assert reopened.projector.catch_up() == 0
        assert reopened.lineage("A").parent == "R"


def test_sqlite_url_with_three_slashes_is_relative_to_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    assert parse_store_url("sqlite:///j.sqlite").path == tmp_path / "j.sqlite"


@pytest.mark.parametrize("schema", ["bad-name;drop", "1st", "a b", "", "Team"])
def test_a_postgres_schema_that_is_not_a_lower_case_sql_identifier_is_a_store_error(
    schema: str,
) -> None:
    with pytest.raises(StoreError, match="not a lower-case SQL identifier"):
        parse_store_url(f"postgresql://ann@db.local/lineage?schema={schema}")


def test_a_postgres_schema_of_lower_case_letters_digits_and_underscores_is_kept() -> None:
    location = parse_store_url("postgresql://ann@db.local/lineage?schema=_team_2")
    assert location.postgres["schema"] == "_team_2"


def test_opening_without_create_refuses_a_missing_sqlite_file_and_creates_nothing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "missing" / "journal.sqlite"
    with pytest.raises(NoJournal, match=f"no journal at {path}") as refused:
        open_engine(f"sqlite:///{path}", create=False)
    assert refused.value.path == path and isinstance(refused.value, StoreError)
    assert not path.parent.exists()


def test_opening_without_create_opens_an_existing_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        from tests.support.feed import Feed

        Feed(engine).root("R")
    with open_engine(url, create=False) as reopened:
        assert reopened.lineage("R").conversation == "R"


def test_opening_creates_a_missing_sqlite_file_by_default(tmp_path: Path) -> None:
    path = tmp_path / "new" / "journal.sqlite"
    with open_engine(f"sqlite:///{path}"):
        pass
    assert path.is_file()


def hold_setup_lock(url: str) -> Any:
    """A connection holding the setup lock of the store ``url`` names (as a process creating
    its tables does)."""
    import psycopg

    from lineage_es.stores import SETUP_LOCK_CLASS

    schema = parse_store_url(url).postgres["schema"]
    holder = psycopg.connect(url.split("?", maxsplit=1)[0], autocommit=True)
    holder.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (SETUP_LOCK_CLASS, schema))
    return holder


def test_a_postgres_store_locked_past_the_lock_timeout_is_a_store_error_in_time(
    postgres_url: str,
) -> None:
    holder = hold_setup_lock(postgres_url)
    try:
        start = time.monotonic()
        with pytest.raises(StoreError, match="kept it locked for more than 1 s"):
            open_engine(postgres_url, lock_timeout=1)
        assert time.monotonic() - start < 10  # not the unbounded wait a hook cannot afford
    finally:
        holder.close()


def test_a_postgres_store_opens_while_a_store_in_another_schema_is_being_created(
    postgres_url: str,
) -> None:
    other = postgres_url.rsplit("=", 1)[0] + "=lineage_other_schema_being_created"
    holder = hold_setup_lock(other)
    try:
        with open_engine(postgres_url, lock_timeout=1) as engine:
            assert engine.position() == 0
    finally:
        holder.close()


def test_a_rebuilds_swap_and_a_write_on_postgresql_do_not_deadlock(postgres_url: str) -> None:
    """A write locks the view's position row, then node rows; the swap must take them in
    the same order, or each waits for the other (PostgreSQL aborts one of them)."""
    import psycopg

    from tests.support.feed import Feed

    schema = parse_store_url(postgres_url).postgres["schema"]
    with open_engine(postgres_url) as engine:
        Feed(engine).root("R")
        rows, position = engine.view.all_rows(), engine.view.position()
        writer = psycopg.connect(
            postgres_url.split("?", maxsplit=1)[0], options=f"-c search_path={schema}"
        )
        failed: list[BaseException] = []

        def swap() -> None:
            try:
                engine.view.replace(rows, position)
            except BaseException as exc:
                failed.append(exc)

        with writer:
            writer.execute("UPDATE lineage_view SET position = position WHERE id = 1")
            swapping = threading.Thread(target=swap)
            swapping.start()
            time.sleep(0.5)  # the swap takes what it takes first, then waits for the writer
            writer.execute("UPDATE lineage_nodes SET depth = depth")
            writer.commit()
        swapping.join(30)
        assert not swapping.is_alive() and failed == []
        assert engine.view.position() == position


def test_a_failed_open_closes_the_journal_it_had_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lineage_es.engine import opening
    from lineage_es.engine.application import LineageApplication

    closed_by: list[str] = []  # who closed it: the open itself, or the app's __del__ at last

    def close(app: LineageApplication) -> None:
        closed_by.append(sys._getframe(1).f_code.co_name)

    monkeypatch.setattr(LineageApplication, "close", close)

    def broken_view(*args: object) -> None:
        raise RuntimeError("the view's table is locked")

    monkeypatch.setattr(opening, "open_view", broken_view)
    with pytest.raises(StoreError, match="the view's table is locked"):
        open_engine("memory://")
    assert "open_store" in closed_by
