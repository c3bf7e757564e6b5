"""The eventsourcing settings that open a journal: which recorder, where, how long a write
waits for another process's lock, and durable commits on SQLite."""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager

from eventsourcing.persistence import OperationalError
from eventsourcing.sqlite import (
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteDatastore,
    SQLiteFactory,
)
from eventsourcing.utils import Environment, EnvType

from lineage_es.stores.connections import application_name, whole_millis
from lineage_es.stores.connections import lock_timeout_for as lock_timeout_for  # noqa: PLC0414
from lineage_es.stores.locations import StoreLocation
from lineage_es.stores.locks import (
    LOCK_NOT_AVAILABLE,
    TABLE_HOLDERS_QUERY,
    LockTimedOut,
    SQLiteLockTimedOut,
    is_lock_wait_error,
    postgres_holders,
)

#: The settings that carry the lock timeout to the millisecond: eventsourcing reads whole
#: seconds (and takes 0 as "its default" on SQLite, "wait forever" on PostgreSQL).
SQLITE_LOCK_TIMEOUT_MS = "SQLITE_LOCK_TIMEOUT_MS"
POSTGRES_LOCK_TIMEOUT_MS = "POSTGRES_LOCK_TIMEOUT_MS"

#: The journal's PostgreSQL connection pool: none opened in advance, one the first time the
#: journal is read or written, more (up to ``POSTGRES_MAX_OVERFLOW``) only while a thread
#: waits for one. A hook or a ``lineage`` command uses one at a time; a long-lived engine
#: following the journal holds one for ``LISTEN`` and pulls on another. eventsourcing's
#: defaults open five at once (``POSTGRES_POOL_SIZE``, and a sixth as the first is awaited)
#: and grow to fifteen: sixteen hooks at once had the server refuse clients. A ``POSTGRES_*``
#: setting in the environment wins over these.
POSTGRES_POOL: dict[str, str] = {"POSTGRES_POOL_SIZE": "0", "POSTGRES_MAX_OVERFLOW": "5"}


class _DurablePool(SQLiteConnectionPool):
    """Every connection commits with ``synchronous=FULL``: an observe that returned is on
    disk even if the machine loses power. ``busy_timeout_ms`` is how long it waits for
    another writer's lock, to the millisecond (``None``: eventsourcing's whole seconds)."""

    busy_timeout_ms: int | None = None

    def _create_connection(self) -> SQLiteConnection:
        connection = super()._create_connection()
        try:
            cursor = connection.cursor()
            cursor.execute("PRAGMA synchronous=FULL")
            if self.busy_timeout_ms is not None:
                cursor.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
        except BaseException:
            connection.close()  # not the pool's yet: nobody else would close it
            raise
        return connection


class _LockReportingSQLiteDatastore(SQLiteDatastore):
    """A transaction that waited out another writer's lock raises
    :class:`~lineage_es.stores.locks.SQLiteLockTimedOut`, saying how long it waited."""

    pool: _DurablePool

    @property
    def lock_wait(self) -> float | None:
        """How long a write waits for another writer's lock (seconds)."""
        if self.pool.busy_timeout_ms is not None:
            return self.pool.busy_timeout_ms / 1000
        return None

    @contextmanager
    def transaction(self, *, commit: bool) -> Iterator[SQLiteCursor]:
        try:
            with super().transaction(commit=commit) as cursor:
                yield cursor
        except OperationalError as exc:
            if not is_lock_wait_error(exc):
                raise
            raise SQLiteLockTimedOut(str(exc), waited=self.lock_wait) from exc


class DurableSQLiteFactory(SQLiteFactory):
    """eventsourcing's SQLite factory, with durable commits; a write that waited out another
    writer's lock says so (:class:`~lineage_es.stores.locks.SQLiteLockTimedOut`)."""

    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        original = self.datastore
        datastore = _LockReportingSQLiteDatastore.__new__(_LockReportingSQLiteDatastore)
        pool = _DurablePool(
            db_name=original.pool.db_name,
            lock_timeout=original.pool.lock_timeout,
        )
        millis = self.env.get(SQLITE_LOCK_TIMEOUT_MS)
        if millis:
            pool.busy_timeout_ms = int(millis)
        datastore.pool = pool
        datastore.single_row_tracking = original.single_row_tracking
        datastore.originator_id_type = original.originator_id_type
        original.close()
        self.datastore = datastore


def application_env(
    location: StoreLocation, *, lock_timeout: float | None = None, create_tables: bool = True
) -> dict[str, str]:
    """The eventsourcing settings for ``location``; ``lock_timeout`` (seconds, default
    :func:`lock_timeout_for`) bounds how long any one statement waits for another process's
    lock, reads included on PostgreSQL: 0 waits for none (1 ms on PostgreSQL, where 0 is
    "forever"), a fraction is kept to the millisecond. A wait that runs out raises
    :class:`~lineage_es.stores.locks.LockTimedOut` and is not retried.
    ``create_tables=False`` (a PostgreSQL store whose tables all exist:
    :attr:`SetupHold.ready`) has eventsourcing run none of its DDL."""
    env: dict[str, str] = {}
    if location.kind == "memory":
        env["PERSISTENCE_MODULE"] = "eventsourcing.popo"
    elif location.kind == "sqlite":
        assert location.path is not None
        seconds = lock_timeout_for("sqlite", lock_timeout)
        env["PERSISTENCE_MODULE"] = f"{__name__}:DurableSQLiteFactory"
        env["SQLITE_DBNAME"] = str(location.path)
        # eventsourcing takes whole seconds (for its first statement); the pool sets the rest.
        env["SQLITE_LOCK_TIMEOUT"] = str(max(1, math.ceil(seconds)))
        env[SQLITE_LOCK_TIMEOUT_MS] = str(whole_millis(seconds, least=0))
    else:
        pg = location.postgres
        seconds = lock_timeout_for("postgresql", lock_timeout)
        env["PERSISTENCE_MODULE"] = _postgres_factory_topic()
        env["POSTGRES_DBNAME"] = pg["dbname"]
        env["POSTGRES_HOST"] = pg["host"]
        env["POSTGRES_PORT"] = pg["port"]
        env["POSTGRES_USER"] = pg["user"]
        env["POSTGRES_PASSWORD"] = pg.get("password", "")
        env["POSTGRES_CONNECT_TIMEOUT"] = "5"
        env["POSTGRES_LOCK_TIMEOUT"] = str(max(1, math.ceil(seconds)))
        env[POSTGRES_LOCK_TIMEOUT_MS] = str(whole_millis(seconds, least=1))
        if "schema" in pg:
            env["POSTGRES_SCHEMA"] = pg["schema"]
        if not create_tables:
            env["CREATE_TABLE"] = "n"
        # The Application reads os.environ under the settings passed to it: set only what
        # the user did not.
        env.update({k: v for k, v in POSTGRES_POOL.items() if k not in os.environ})
    return env


@functools.cache
def _postgres_factory_topic() -> str:
    """The topic of eventsourcing's PostgreSQL factory with the lock timeout to the
    millisecond, made on first use: eventsourcing.postgres imports psycopg, which a SQLite
    store must not pay for on every hook."""
    from eventsourcing.postgres import PostgresDatastore, PostgresFactory
    from eventsourcing.utils import register_topic
    from psycopg import Connection
    from psycopg.rows import DictRow

    class LockReportingPostgresDatastore(PostgresDatastore):
        """A statement that waited out another session's lock raises
        :class:`~lineage_es.stores.locks.LockTimedOut` naming the sessions that hold locks
        on the store's tables, instead of the ``OperationalError`` that eventsourcing's
        recorders retry ten times (each retry waiting the whole lock timeout again)."""

        @contextmanager
        def get_connection(self) -> Iterator[Connection[DictRow]]:
            try:
                with super().get_connection() as connection:
                    yield connection
            except OperationalError as exc:
                if getattr(exc.__cause__, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                    raise
                raise LockTimedOut(
                    str(exc), waited=float(self.lock_timeout), holder=self._table_holders()
                ) from exc

        def _table_holders(self) -> str | None:
            """Who holds locks on the store's tables, asked on another of the pool's
            connections (the one that waited is back in the pool, its transaction undone)."""
            try:
                with super().get_connection() as connection:
                    return postgres_holders(connection, TABLE_HOLDERS_QUERY, [self.schema])
            except Exception:  # a best effort on a path that is failing already
                return None

    class PreciseLockPostgresFactory(PostgresFactory):
        """eventsourcing spells the lock timeout ``'{seconds}s'``; a fraction of a second
        keeps its milliseconds there. Every connection of the journal's pool waits at most
        that long for any lock, reads included (eventsourcing bounds only its writes' table
        lock), names itself (:func:`~lineage_es.stores.locks.application_name`) and reports
        a wait that ran out as :class:`~lineage_es.stores.locks.LockTimedOut`."""

        def __init__(self, env: Environment | EnvType | None) -> None:
            super().__init__(env)
            millis = self.env.get(POSTGRES_LOCK_TIMEOUT_MS)
            if millis:
                self.datastore.lock_timeout = int(millis) / 1000  # type: ignore[assignment]
            # The library's factory builds a plain PostgresDatastore, its pool not yet open:
            # this one adds only behaviour, so it takes that datastore over as it stands.
            self.datastore.__class__ = LockReportingPostgresDatastore
            session_millis = int(millis) if millis else 1000 * self.datastore.lock_timeout
            connection_args = self.datastore.pool.kwargs
            assert isinstance(connection_args, dict)  # eventsourcing passes a dict
            connection_args["application_name"] = application_name()
            if session_millis:  # 0: the user's POSTGRES_LOCK_TIMEOUT=0, "forever"
                connection_args["options"] = f"-c lock_timeout={int(session_millis)}"

    topic = f"{__name__}:{PreciseLockPostgresFactory.__name__}"
    register_topic(topic, PreciseLockPostgresFactory)
    return topic
