"""Opening a PostgreSQL store whose tables exist: one query finds them, and the open takes no
setup lock and runs no DDL, so hooks opening it at once do not line up behind each other. A
store missing any of them is completed under the lock, as a new one is created."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg import sql

from lineage_es.engine.engine import open_engine
from lineage_es.errors import StoreError
from lineage_es.stores import SETUP_LOCK_CLASS, parse_store_url
from tests.support.feed import Feed


def connect(url: str) -> psycopg.Connection[Any]:
    """A connection of the test's own, in the store's schema."""
    schema = parse_store_url(url).postgres["schema"]
    return psycopg.connect(
        url.split("?", maxsplit=1)[0], autocommit=True, options=f"-c search_path={schema}"
    )


def hold_setup_lock(url: str) -> psycopg.Connection[Any]:
    """A connection holding the store's setup lock, as a process creating its tables does."""
    holder = connect(url)
    schema = parse_store_url(url).postgres["schema"]
    holder.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (SETUP_LOCK_CLASS, schema))
    return holder


class Statements:
    """Every statement a psycopg cursor runs, with the thread that ran it."""

    def __init__(self) -> None:
        self.run: list[tuple[int, str]] = []

    def of_other_threads(self) -> list[str]:
        main = threading.main_thread().ident
        return [text for thread, text in self.run if thread != main]

    def ddl(self, texts: list[str]) -> list[str]:
        return [t for t in texts if t.lstrip().upper().startswith(("CREATE", "ALTER", "DROP"))]


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[Statements]:
    seen = Statements()
    execute = psycopg.Cursor.execute

    def recording(cursor: psycopg.Cursor[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        text = query.as_string(cursor) if isinstance(query, sql.Composable) else str(query)
        seen.run.append((threading.get_ident(), text))
        return execute(cursor, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    yield seen


def test_an_existing_store_opens_while_another_process_holds_its_setup_lock(
    postgres_url: str,
) -> None:
    with open_engine(postgres_url) as engine:
        Feed(engine).root("R")
    holder = hold_setup_lock(postgres_url)
    try:
        start = time.monotonic()
        with open_engine(postgres_url, lock_timeout=1) as engine:
            assert engine.lineage("R").conversation == "R"
        assert time.monotonic() - start < 1
    finally:
        holder.close()


def test_opening_an_existing_store_runs_no_ddl(postgres_url: str, statements: Statements) -> None:
    with open_engine(postgres_url):
        pass
    statements.run.clear()
    with open_engine(postgres_url):
        pass
    texts = [text for _, text in statements.run]
    assert statements.ddl(texts) == []
    assert not [t for t in texts if "pg_advisory" in t]


def test_an_engine_opened_without_ddl_journals_and_answers(postgres_url: str) -> None:
    with open_engine(postgres_url):
        pass
    with open_engine(postgres_url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
    with open_engine(postgres_url) as reopened:
        assert reopened.lineage("A").parent == "R"


def test_a_store_whose_view_tables_are_missing_waits_for_the_setup_lock(
    postgres_url: str,
) -> None:
    """The journal's tables committed, the view's not yet: as a store is while another process
    creates it. Opening it must wait for that process, not go on without the view."""
    with open_engine(postgres_url):
        pass
    with connect(postgres_url) as own:
        own.execute("DROP TABLE lineage_nodes, lineage_view, lineage_root_versions")
    holder = hold_setup_lock(postgres_url)
    try:
        with pytest.raises(StoreError, match="kept it locked for more than 1 s"):
            open_engine(postgres_url, lock_timeout=1)
    finally:
        holder.close()


def test_a_store_missing_its_snapshots_table_has_it_created(postgres_url: str) -> None:
    with open_engine(postgres_url):
        pass
    with connect(postgres_url) as own:
        own.execute("DROP TABLE lineage_snapshots")
    with open_engine(postgres_url), connect(postgres_url) as own:
        found = own.execute("SELECT to_regclass('lineage_snapshots')").fetchone()
        assert found is not None and found[0] is not None


def test_an_open_that_waited_while_another_process_created_the_tables_creates_nothing(
    postgres_url: str, statements: Statements
) -> None:
    with open_engine(postgres_url):
        pass
    holder = hold_setup_lock(postgres_url)
    schema = parse_store_url(postgres_url).postgres["schema"]
    waiting = (
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        " AND classid = %s::oid AND objid = hashtext(%s)::oid AND objsubid = 2"
    )
    failed: list[BaseException] = []

    def open_and_close() -> None:
        try:
            with open_engine(postgres_url, lock_timeout=20):
                pass
        except BaseException as exc:
            failed.append(exc)

    try:
        # A table not there yet sends the open to wait for the lock ...
        holder.execute("ALTER TABLE lineage_root_versions RENAME TO lineage_root_versions_later")
        opening = threading.Thread(target=open_and_close)
        opening.start()
        deadline = time.monotonic() + 20
        while holder.execute(waiting, (SETUP_LOCK_CLASS, schema)).fetchone() != (1,):
            assert time.monotonic() < deadline, "the open never waited for the setup lock"
            time.sleep(0.02)
        # ... and the lock's holder goes on to create it.
        holder.execute("ALTER TABLE lineage_root_versions_later RENAME TO lineage_root_versions")
    finally:
        holder.close()
    opening.join(30)
    assert not opening.is_alive() and failed == []
    waited = statements.of_other_threads()
    assert [t for t in waited if "pg_advisory_lock" in t] != []
    assert statements.ddl(waited) == []


def test_the_needs_name_every_table_and_type_a_new_store_has(postgres_url: str) -> None:
    """An open that finds them all creates nothing: a table or type a later eventsourcing (or
    view) creates must be among them, or a store made before it would never have it."""
    from lineage_es.engine.application import LineageApplication
    from lineage_es.read.sqlview import VIEW_TABLES
    from lineage_es.stores import store_needs

    location = parse_store_url(postgres_url)
    schema = location.postgres["schema"]
    needs = store_needs(location, LineageApplication.name, VIEW_TABLES)
    with open_engine(postgres_url), connect(postgres_url) as own:
        created = own.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relkind = 'r'",
            (schema,),
        ).fetchall()
        types = own.execute(
            "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace"
            " JOIN pg_class c ON c.oid = t.typrelid"
            " WHERE n.nspname = %s AND t.typtype = 'c' AND c.relkind = 'c'",
            (schema,),
        ).fetchall()
    named = {name.rsplit(".", 1)[-1].strip('"') for name in needs.relations}
    index = f"{LineageApplication.name}_events_notification_id_idx"
    assert {name for (name,) in created} == named - {index}
    assert {f'"{schema}"."{name}"' for (name,) in types} == set(needs.types)
