"""The tree view persisted beside the journal, in SQLite or PostgreSQL.

A new process answers from these tables without replaying the journal. Both stores share the
SQL; they differ in how they connect, lock and spell parameters.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import orjson

from lineage_es.errors import StoreError
from lineage_es.read.view import NodeRow
from lineage_es.stores.connections import SQLITE_LOCK_TIMEOUT, bounded_conninfo

COLUMNS = (
    "nid",
    "root_id",
    "host",
    "root",
    "conversation",
    "spawn_key",
    "parent",
    "depth",
    "status",
    "resolution",
    "started_at",
    "ambiguous",
    "agent_type",
    "subagent_id",
    "description",
    "name",
    "stopped_at",
    "delete_reason",
    "workspace",
    "last_seen",
)
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM lineage_nodes"
_UPSERT = (
    f"INSERT INTO lineage_nodes ({', '.join(COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in COLUMNS)}) "
    "ON CONFLICT (nid) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c != "nid")
)


#: The view's tables, all created in one transaction (:func:`_schema`).
VIEW_TABLES = ("lineage_nodes", "lineage_view", "lineage_root_versions", "lineage_checkpoints")


def _schema(id_type: str) -> list[str]:
    return [
        "CREATE TABLE IF NOT EXISTS lineage_nodes ("
        f"nid {id_type} PRIMARY KEY, root_id TEXT NOT NULL, host TEXT NOT NULL, "
        "root TEXT NOT NULL, conversation TEXT, spawn_key TEXT, parent TEXT, "
        "depth INTEGER NOT NULL, status TEXT NOT NULL, resolution TEXT NOT NULL, "
        "started_at TEXT NOT NULL, ambiguous INTEGER NOT NULL, agent_type TEXT, "
        "subagent_id TEXT, description TEXT, name TEXT, stopped_at TEXT, "
        "delete_reason TEXT, workspace TEXT, last_seen TEXT)",
        "CREATE INDEX IF NOT EXISTS lineage_nodes_by_root ON lineage_nodes (root_id)",
        "CREATE INDEX IF NOT EXISTS lineage_nodes_by_conversation ON lineage_nodes (conversation)",
        "CREATE INDEX IF NOT EXISTS lineage_nodes_pending ON lineage_nodes (host, spawn_key) "
        "WHERE conversation IS NULL",
        "CREATE INDEX IF NOT EXISTS lineage_nodes_roots ON lineage_nodes (host, status) "
        "WHERE depth = 0",
        "CREATE TABLE IF NOT EXISTS lineage_view (id INTEGER PRIMARY KEY, "
        f"position {id_type} NOT NULL, roots_version {id_type} NOT NULL)",
        "INSERT INTO lineage_view (id, position, roots_version) VALUES (1, 0, 0) "
        "ON CONFLICT DO NOTHING",
        "CREATE TABLE IF NOT EXISTS lineage_root_versions (root_id TEXT PRIMARY KEY, "
        f"position {id_type} NOT NULL)",
        # Time travel's checkpoints of the view (lineage_es.read.checkpoints)
        f"CREATE TABLE IF NOT EXISTS lineage_checkpoints (position {id_type} PRIMARY KEY, "
        "full_rows INTEGER NOT NULL, stretch_min TEXT NOT NULL, prefix_max TEXT NOT NULL, "
        "held_free INTEGER NOT NULL, checked TEXT NOT NULL, "
        f"rows {'BLOB' if id_type == 'INTEGER' else 'BYTEA'} NOT NULL)",
    ]


#: The column the newest view schema added: a view without it was made by an older version,
#: and is dropped and projected again from the journal (:func:`_outdated`). The view is a
#: cache of the journal, so a new column needs no migration, only a replay.
NEWEST_COLUMN = "last_seen"

#: Drops an outdated view's tables, before :func:`_schema` makes them again (position 0: the
#: next catch-up projects the whole journal).
_DROP = [f"DROP TABLE IF EXISTS {table}" for table in VIEW_TABLES]


def _older_view(columns: set[str]) -> bool:
    """Whether a ``lineage_nodes`` table with ``columns`` is an older version's view: every
    column but the newest. Any other table of that name is left alone (making the view there
    fails, and says so)."""
    return NEWEST_COLUMN not in columns and set(COLUMNS) - {NEWEST_COLUMN} <= columns


#: At most this many ids in one ``IN (...)`` of a bulk read (SQLite builds before 3.32 take
#: at most 999 parameters a statement; a bulk find names each id twice).
_IDS_PER_STATEMENT = 400


def _chunks(ids: Sequence[str]) -> Iterator[tuple[Sequence[str], str]]:
    """``ids`` in statements' worth, each with its ``IN (...)`` placeholders."""
    for start in range(0, len(ids), _IDS_PER_STATEMENT):
        chunk = ids[start : start + _IDS_PER_STATEMENT]
        yield chunk, ", ".join("?" * len(chunk))


def _row_from_columns(values: Sequence[Any]) -> NodeRow:
    workspace = values[18]
    return NodeRow(
        nid=values[0],
        root_id=values[1],
        host=values[2],
        root=values[3],
        conversation=values[4],
        spawn_key=values[5],
        parent=values[6],
        depth=values[7],
        status=values[8],
        resolution=values[9],
        started_at=values[10],
        ambiguous=bool(values[11]),
        agent_type=values[12],
        subagent_id=values[13],
        description=values[14],
        name=values[15],
        stopped_at=values[16],
        delete_reason=values[17],
        workspace=tuple(orjson.loads(workspace)) if workspace else (),
        last_seen=values[19],
    )


def _columns_of(row: NodeRow) -> tuple[Any, ...]:
    return (
        row.nid,
        row.root_id,
        row.host,
        row.root,
        row.conversation,
        row.spawn_key,
        row.parent,
        row.depth,
        row.status,
        row.resolution,
        row.started_at,
        int(row.ambiguous),
        row.agent_type,
        row.subagent_id,
        row.description,
        row.name,
        row.stopped_at,
        row.delete_reason,
        orjson.dumps(list(row.workspace)).decode() if row.workspace else None,
        row.last_seen,
    )


class SqlView(ABC):
    """The view in SQL tables: ``lineage_nodes``, ``lineage_view`` (position) and
    ``lineage_root_versions`` (per-root change marks for query caches). Subclasses hold one
    connection in ``_db``, guarded by ``_lock``."""

    _db: Any
    _lock: threading.RLock
    #: Set by :meth:`close` for good: a closed view neither answers nor reconnects.
    _closed = False

    @abstractmethod
    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]: ...

    @abstractmethod
    def _write_transaction(self) -> AbstractContextManager[Any]:
        """A transaction that holds the view's write lock; yields a cursor-like object
        with ``execute``, ``executemany`` and ``rowcount``."""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()

    def _check_open(self) -> None:
        """Refuse a call after :meth:`close`, rather than the driver's error or, on
        PostgreSQL, a new connection nobody would close."""
        if self._closed:
            raise StoreError("the store is closed")

    def position(self) -> int:
        return int(self._query("SELECT position FROM lineage_view WHERE id = 1")[0][0])

    def select(self, sql: str) -> list[Sequence[Any]]:
        """The rows of a caller's read-only statement, on the view's connection (a reader
        compares the view's position with the journal's: :mod:`lineage_es.read.readonly`)."""
        return self._query(sql)

    def roots_version(self) -> int:
        return int(self._query("SELECT roots_version FROM lineage_view WHERE id = 1")[0][0])

    def root_version(self, root_id: str) -> int:
        found = self._query(
            "SELECT position FROM lineage_root_versions WHERE root_id = ?", (root_id,)
        )
        return int(found[0][0]) if found else 0

    def root_rows(self, root_id: str) -> list[NodeRow]:
        return [
            _row_from_columns(r) for r in self._query(f"{_SELECT} WHERE root_id = ?", (root_id,))
        ]

    def root_versions(self, root_ids: Sequence[str]) -> dict[str, int]:
        versions = dict.fromkeys(root_ids, 0)
        for chunk, marks in _chunks(root_ids):
            sql = f"SELECT root_id, position FROM lineage_root_versions WHERE root_id IN ({marks})"
            versions.update((str(r[0]), int(r[1])) for r in self._query(sql, chunk))
        return versions

    def roots_rows(self, root_ids: Sequence[str]) -> dict[str, list[NodeRow]]:
        found: dict[str, list[NodeRow]] = {root_id: [] for root_id in root_ids}
        for chunk, marks in _chunks(root_ids):
            for columns in self._query(f"{_SELECT} WHERE root_id IN ({marks})", chunk):
                row = _row_from_columns(columns)
                found[row.root_id].append(row)
        return found

    def find(self, conversation: str) -> list[NodeRow]:
        found = self._query(
            f"{_SELECT} WHERE conversation = ? "
            "UNION ALL "
            f"{_SELECT} WHERE conversation IS NULL AND spawn_key = ?",
            (conversation, conversation),
        )
        return [_row_from_columns(r) for r in found]

    def find_many(self, keys: Sequence[str]) -> dict[str, list[NodeRow]]:
        found: dict[str, list[NodeRow]] = {key: [] for key in keys}
        for chunk, marks in _chunks(keys):
            sql = (
                f"{_SELECT} WHERE conversation IN ({marks}) UNION ALL "
                f"{_SELECT} WHERE conversation IS NULL AND spawn_key IN ({marks})"
            )
            for columns in self._query(sql, [*chunk, *chunk]):
                row = _row_from_columns(columns)
                found[row.key].append(row)
        return found

    def roots(self, host: str | None, *, live_only: bool) -> list[NodeRow]:
        sql = f"{_SELECT} WHERE depth = 0 AND conversation = root"
        params: list[Any] = []
        if host is not None:
            sql += " AND host = ?"
            params.append(host)
        sql += " AND status = 'live'" if live_only else " AND status <> 'deleted'"
        return [_row_from_columns(r) for r in self._query(sql, params)]

    def all_rows(self) -> list[NodeRow]:
        return [_row_from_columns(r) for r in self._query(f"{_SELECT} ORDER BY nid")]

    def pending(self, host: str) -> list[NodeRow]:
        return [
            _row_from_columns(r)
            for r in self._query(
                f"{_SELECT} WHERE conversation IS NULL AND host = ? AND status = 'live'", (host,)
            )
        ]

    def write(self, rows: Sequence[NodeRow], expected: int, position: int) -> bool:
        try:
            self._write_rows_at(rows, expected, position)
        except _PositionMovedError:
            return False
        return True

    def _write_rows_at(self, rows: Sequence[NodeRow], expected: int, position: int) -> None:
        """Write ``rows`` as of ``position``, moving the view there from ``expected`` in one
        transaction; :class:`_PositionMovedError` when the view is no longer at ``expected``."""
        roots_changed = any(row.depth == 0 for row in rows)
        with self._write_transaction() as cursor:
            cursor.execute(
                "UPDATE lineage_view SET position = ?, "
                "roots_version = CASE WHEN ? = 1 THEN ? ELSE roots_version END "
                "WHERE id = 1 AND position = ?",
                (position, int(roots_changed), position, expected),
            )
            if cursor.rowcount != 1:
                raise _PositionMovedError
            if rows:
                cursor.executemany(_UPSERT, [_columns_of(row) for row in rows])
                cursor.executemany(
                    "INSERT INTO lineage_root_versions (root_id, position) VALUES (?, ?) "
                    "ON CONFLICT (root_id) DO UPDATE SET position = excluded.position",
                    [(root_id, position) for root_id in {row.root_id for row in rows}],
                )

    def replace(self, rows: Sequence[NodeRow], position: int, *, force: bool = False) -> bool:
        with self._write_transaction() as cursor:
            # The position row first, as every write takes it: taking the node rows first
            # deadlocked with a writer on PostgreSQL (opposite lock orders).
            cursor.execute(
                "UPDATE lineage_view SET position = ?, roots_version = ? "
                "WHERE id = 1 AND (position <= ? OR ? = 1)",
                (position, position, position, int(force)),
            )
            if cursor.rowcount == 0:
                return False  # another writer projected past it meanwhile
            cursor.execute("DELETE FROM lineage_nodes")
            cursor.execute("DELETE FROM lineage_root_versions")
            if rows:
                cursor.executemany(_UPSERT, [_columns_of(row) for row in rows])
                cursor.executemany(
                    "INSERT INTO lineage_root_versions (root_id, position) VALUES (?, ?)",
                    [(root_id, position) for root_id in {row.root_id for row in rows}],
                )
        return True


class _PositionMovedError(Exception):
    """Another writer moved the view's position first."""


class SQLiteView(SqlView):
    """The view in the journal's own SQLite file, on a connection of its own."""

    def __init__(self, path: Path, *, timeout: float | None = None) -> None:
        """``timeout``: seconds a write waits for another writer's lock (``None``: the
        journal's default); 0 waits for none."""
        self._lock = threading.RLock()
        db: sqlite3.Connection | None = None
        try:
            self._db = db = sqlite3.connect(
                path,
                isolation_level=None,
                timeout=SQLITE_LOCK_TIMEOUT if timeout is None else timeout,
                check_same_thread=False,
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            # The view is rebuilt from the journal, and its rows and position commit together:
            # a commit lost to a power cut only means re-projecting from the older position
            # (the journal's own connection stays at FULL). One fsync less for every write.
            self._db.execute("PRAGMA synchronous=NORMAL")
            # Existing tables are left alone: the DDL would take the write lock on every open.
            exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
            if not self._query(exists, ("lineage_checkpoints",)) or self._outdated():
                with self._write_transaction() as cursor:
                    if self._outdated():  # checked again under the write lock
                        for statement in _DROP:
                            cursor.execute(statement)
                    for statement in _schema("INTEGER"):
                        cursor.execute(statement)
        except BaseException as exc:
            if db is not None:  # a failed open keeps no file open
                db.close()
            if isinstance(exc, sqlite3.Error):
                raise StoreError(f"cannot open the tree view in {path}: {exc}") from None
            raise

    def _outdated(self) -> bool:
        """Whether the view's tables were made by an older version (:func:`_older_view`)."""
        columns = self._query("SELECT name FROM pragma_table_info('lineage_nodes')")
        return _older_view({str(c[0]) for c in columns})

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        with self._lock:
            self._check_open()
            rows: list[Sequence[Any]] = self._db.execute(sql, params).fetchall()
            return rows

    @contextmanager
    def _write_transaction(self) -> Iterator[Any]:
        with self._lock:
            self._check_open()
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db.cursor()
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")


class PostgresView(SqlView):
    """The view in the journal's PostgreSQL database, shared by every engine using it.

    Opened under :func:`~lineage_es.stores.setup_lock`, it goes on with the lock's
    ``connection`` (and closes it) rather than opening another; ``tables_exist`` when the
    lock found them (:attr:`~lineage_es.stores.SetupHold.ready`), so that they are not looked
    for again."""

    def __init__(
        self,
        settings: dict[str, str],
        connection: Any = None,
        *,
        tables_exist: bool = False,
        lock_timeout: float | None = None,
    ) -> None:
        import psycopg

        self._lock = threading.RLock()
        self._settings = settings
        self._lock_timeout = lock_timeout
        try:
            self._db = connection or psycopg.connect(
                **bounded_conninfo(settings, lock_timeout), autocommit=True
            )
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the tree view in PostgreSQL: {exc}") from None
        try:
            # Existing tables are left alone: even "IF NOT EXISTS" DDL takes table locks
            # that deadlock with another process's view write. Tables made by an older
            # version (``tables_exist`` or not) are made again.
            missing = (
                not tables_exist
                and self._query("SELECT to_regclass('lineage_root_versions')")[0][0] is None
            )
            if missing or self._outdated():
                with self._write_transaction() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(7135550001)")
                    if self._outdated():  # checked again under the lock
                        for statement in _DROP:
                            cursor.execute(statement)
                    for statement in _schema("BIGINT"):
                        cursor.execute(statement.replace("?", "%s"))
        except BaseException as exc:
            self._db.close()  # a failed open keeps no server connection
            if isinstance(exc, psycopg.Error):
                raise StoreError(f"cannot open the tree view in PostgreSQL: {exc}") from None
            raise

    def _outdated(self) -> bool:
        """Whether the view's tables were made by an older version (:func:`_older_view`)."""
        columns = self._query(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'lineage_nodes' AND table_schema = current_schema()"
        )
        return _older_view({str(c[0]) for c in columns})

    def _reconnect_if_closed(self) -> None:
        """A connection the server or network dropped is replaced; one :meth:`close`
        closed is not (:meth:`_check_open`)."""
        import psycopg

        self._check_open()
        if self._db.closed:
            # the same lock timeout and name as the connection it replaces
            self._db = psycopg.connect(
                **bounded_conninfo(self._settings, self._lock_timeout), autocommit=True
            )

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Sequence[Any]]:
        with self._lock:
            self._reconnect_if_closed()
            with self._db.cursor() as cursor:
                cursor.execute(sql.replace("?", "%s"), params)
                return list(cursor.fetchall())

    @contextmanager
    def _write_transaction(self) -> Iterator[Any]:
        with self._lock:
            self._reconnect_if_closed()
            with self._db.transaction(), self._db.cursor() as cursor:
                yield _PercentCursor(cursor)


class _PercentCursor:
    """A psycopg cursor that takes the SQLite-style ``?`` placeholders the shared SQL uses."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._cursor.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, params: Sequence[Sequence[Any]]) -> None:
        self._cursor.executemany(sql.replace("?", "%s"), params)

    @property
    def rowcount(self) -> int:
        return int(self._cursor.rowcount)
