"""Opening an engine's store: its journal (the event-sourced application) and its tree view,
each on the store's own kind (memory, a SQLite file, PostgreSQL).

Kept apart from the front door (:mod:`lineage_es.engine.engine`), which only uses what is
opened here: the setup lock, the tables a new store needs, the view's kind and the naming of a
failed open are one concern, and all of it happens once per engine.
"""

from __future__ import annotations

import contextlib

from lineage_es.engine.application import LineageApplication
from lineage_es.engine.unit import CacheWatch
from lineage_es.errors import StoreError, StoreLocked
from lineage_es.read.view import MemoryView, ViewStore
from lineage_es.stores import (
    LockTimedOut,
    SetupHold,
    StoreLocation,
    StoreNeeds,
    application_env,
    lock_timeout_for,
    prepare_sqlite_file,
    setup_lock,
    store_needs,
    wrap_open_error,
)


def open_store(
    location: StoreLocation, *, create: bool, lock_timeout: float | None
) -> tuple[LineageApplication, ViewStore, CacheWatch]:
    """The journal at ``location``, its tree view, and the watch on the journal's aggregate
    cache (current as of the open), for an engine to use.

    A SQLite file that does not exist is created unless ``create`` is false
    (:class:`~lineage_es.stores.NoJournal`). A store whose tables all exist runs none of the
    library's DDL and takes no lock, so hooks opening it at once do not wait for each other.
    A failed open lets go of the journal it had opened, and is a
    :class:`~lineage_es.errors.StoreError` naming the store (:class:`StoreLocked` for a lock
    held past ``lock_timeout``); an interrupt is raised as it is.
    """
    if location.kind == "sqlite":
        assert location.path is not None
        prepare_sqlite_file(location.path, create=create)
    app: LineageApplication | None = None
    try:
        with setup_lock(location, lock_timeout, store_needs_of(location)) as hold:
            env = application_env(location, lock_timeout=lock_timeout, create_tables=not hold.ready)
            app = LineageApplication(env=env)
            cache = CacheWatch(app)  # current as of now: the cache is empty yet
            view = open_view(location, lock_timeout, hold)
    except BaseException as exc:
        if app is not None:  # opened before what failed: its connections are let go now
            with contextlib.suppress(Exception):
                app.close()
        if isinstance(exc, StoreError) or not isinstance(exc, Exception):
            raise
        if isinstance(exc, LockTimedOut):
            raise StoreLocked(location.display, waited=exc.waited, holder=exc.holder) from exc
        # every driver has its own errors; name the store
        raise wrap_open_error(location, exc) from None
    return app, view, cache


def store_needs_of(location: StoreLocation) -> StoreNeeds | None:
    """What the journal and view need on PostgreSQL; ``None`` on another store."""
    if location.kind != "postgresql":
        return None
    from lineage_es.read.sqlview import VIEW_TABLES

    return store_needs(location, LineageApplication.name, VIEW_TABLES)


def open_view(location: StoreLocation, lock_timeout: float | None, hold: SetupHold) -> ViewStore:
    """The tree view of the store at ``location``: in memory, in the SQLite file beside the
    journal, or in PostgreSQL on the setup lock's own connection."""
    if location.kind == "memory":
        return MemoryView()
    if location.kind == "sqlite":
        from lineage_es.read.sqlview import SQLiteView

        assert location.path is not None
        timeout = lock_timeout_for("sqlite", lock_timeout)
        return SQLiteView(location.path, timeout=timeout)
    from lineage_es.read.sqlview import PostgresView

    return PostgresView(
        location.postgres,
        connection=hold.take(),
        tables_exist=hold.ready,
        lock_timeout=lock_timeout,
    )


__all__ = ["open_store", "open_view", "store_needs_of"]
