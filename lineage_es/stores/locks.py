"""Waits for another connection's lock that run out: the error a store raises then, who held
the lock when the database can tell (PostgreSQL), and the name our PostgreSQL connections
show other sessions, so that such an error can name them.

A wait that ran out is never retried: eventsourcing's PostgreSQL recorders retry every
``OperationalError`` ten times, 0.2 s apart, which made a 4 s lock timeout a 42 s wait.
:class:`LockTimedOut` is a ``PersistenceError`` but no ``OperationalError``, so the library's
retry decorator lets it through at once. Nothing here imports psycopg: a SQLite hook must not
pay for it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from eventsourcing.persistence import OperationalError, PersistenceError

# Moved to :mod:`~lineage_es.stores.connections` (no eventsourcing there), named here still.
from lineage_es.stores.connections import LOCK_TIMEOUT_ENV as LOCK_TIMEOUT_ENV  # noqa: PLC0414
from lineage_es.stores.connections import application_name as application_name  # noqa: PLC0414

#: SQLite's primary result codes for a lock another connection holds.
SQLITE_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED

#: PostgreSQL's SQLSTATE for a statement cancelled by ``lock_timeout``.
LOCK_NOT_AVAILABLE = "55P03"

#: How many of a lock's holders an error names.
HOLDERS_NAMED = 3

#: The sessions holding, in the store's schema, a lock on one of its tables that keeps another
#: session waiting: any but ``ACCESS SHARE`` (a read's, which blocks only ``ACCESS EXCLUSIVE``,
#: itself listed), the strongest per session first.
TABLE_HOLDERS_QUERY = """
SELECT a.pid, a.application_name, host(a.client_addr), a.state, a.state_change,
       l.mode, c.relname
FROM pg_locks l
JOIN pg_stat_activity a ON a.pid = l.pid
JOIN pg_class c ON c.oid = l.relation
WHERE l.granted AND l.locktype = 'relation' AND l.pid <> pg_backend_pid()
  AND l.mode <> 'AccessShareLock'
  AND c.relnamespace = to_regnamespace(%s) AND c.relname LIKE 'lineage%%'
"""

#: The session holding the advisory lock of two keys ``(%s, hashtext(%s))`` (pg_locks shows
#: the second key as an unsigned ``objid``).
ADVISORY_HOLDERS_QUERY = """
SELECT a.pid, a.application_name, host(a.client_addr), a.state, a.state_change,
       l.mode, NULL
FROM pg_locks l
JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.granted AND l.locktype = 'advisory' AND l.objsubid = 2 AND l.pid <> pg_backend_pid()
  AND l.classid::bigint = %s AND l.objid::bigint = (hashtext(%s)::bigint & 4294967295)
"""

#: PostgreSQL's table lock modes, weakest first: the strongest a session holds is named.
LOCK_MODES = (
    "AccessShareLock",
    "RowShareLock",
    "RowExclusiveLock",
    "ShareUpdateExclusiveLock",
    "ShareLock",
    "ShareRowExclusiveLock",
    "ExclusiveLock",
    "AccessExclusiveLock",
)


class LockTimedOut(PersistenceError):
    """A statement waited for another connection's lock for the whole lock timeout
    (``waited`` seconds, when known) and gave up; ``holder`` says who held it, when the
    database can tell. Nothing of the statement's transaction was written. Not an
    ``OperationalError``: the library's retry decorator must not wait all over again."""

    def __init__(self, reason: str, *, waited: float | None = None, holder: str | None = None):
        self.reason = reason.strip().split("\n", 1)[0]  # not the driver's SQL excerpt
        self.waited = waited
        self.holder = holder
        wait = f"after {waited:g} s " if waited is not None else ""
        held = holder or "another connection"
        super().__init__(f"{self.reason} (gave up {wait}waiting for a lock held by {held})")


class SQLiteLockTimedOut(LockTimedOut, OperationalError):
    """:class:`LockTimedOut` on SQLite, an ``OperationalError`` as the driver's was (no
    retry decorator runs there)."""


def is_lock_wait_error(exc: BaseException) -> bool:
    """Whether ``exc``, or an error it was raised from, is a driver's "another connection
    holds the lock" (SQLite ``SQLITE_BUSY``/``SQLITE_LOCKED``, PostgreSQL ``lock_timeout``)."""
    seen: BaseException | None = exc
    for _ in range(4):  # the driver's error sits at most a few causes down
        if seen is None:
            return False
        if isinstance(seen, LockTimedOut):
            return True
        if isinstance(seen, sqlite3.OperationalError):
            code = getattr(seen, "sqlite_errorcode", None)
            if code is not None and code & 0xFF in SQLITE_BUSY_CODES:
                return True
        if getattr(seen, "sqlstate", None) == LOCK_NOT_AVAILABLE:
            return True
        seen = seen.__cause__
    return False


def describe_holders(rows: Sequence[Sequence[Any]]) -> str | None:
    """Who holds a lock, from rows of :data:`TABLE_HOLDERS_QUERY` or
    :data:`ADVISORY_HOLDERS_QUERY`: each session once, its strongest lock first, at most
    :data:`HOLDERS_NAMED`; ``None`` for no rows (the holder let go meanwhile)."""
    strongest: dict[int, Sequence[Any]] = {}
    for row in rows:
        kept = strongest.get(row[0])
        if kept is None or _mode_rank(row[5]) > _mode_rank(kept[5]):
            strongest[row[0]] = row
    ordered = sorted(strongest.values(), key=lambda row: (-_mode_rank(row[5]), row[0]))
    if not ordered:
        return None
    named = [_describe_holder(row) for row in ordered[:HOLDERS_NAMED]]
    more = len(ordered) - len(named)
    return "; ".join(named) + (f"; and {more} more" if more else "")


def _mode_rank(mode: object) -> int:
    return LOCK_MODES.index(mode) if mode in LOCK_MODES else len(LOCK_MODES)


def _describe_holder(row: Sequence[Any]) -> str:
    """``pid 4242 ('lineage import' from 10.0.0.5), idle in transaction since 10:01:02 UTC,
    ExclusiveLock on lineage_events``."""
    pid, name, address, state, since, mode, relation = row[:7]
    who = f"pid {pid}"
    said = [f"'{name}'" if name else "", f"from {address}" if address else ""]
    if any(said):
        who += f" ({' '.join(part for part in said if part)})"
    if state:
        when = f" since {_moment(since)}" if isinstance(since, datetime) else ""
        who += f", {state}{when}"
    if mode:
        who += f", {mode}" + (f" on {relation}" if relation else "")
    return who


def _moment(at: datetime) -> str:
    """A server time as a person reads it: UTC, to the second."""
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def postgres_holders(connection: Any, query: str, params: Sequence[Any]) -> str | None:
    """Who holds the lock ``query`` (one of the ``*_HOLDERS_QUERY``) looks for, asked on
    ``connection`` (psycopg, autocommit); ``None`` when nobody does any more, or when the
    server will not say (then the error names no holder rather than fail otherwise)."""
    try:
        rows = connection.execute(query, tuple(params)).fetchall()
    except Exception:  # a best effort on a path that is failing already
        return None
    return describe_holders([tuple(row.values()) if isinstance(row, dict) else row for row in rows])
