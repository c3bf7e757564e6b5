"""What the engine refuses before it journals, and which failures are the store's.

Arguments of the wrong type, ids and names no store can keep are refused here, before
anything is journaled: a journaled value the view cannot hold would fail every later
projection. The store's own failures are told apart from a caller's mistakes, so that the
engine names the store for the first and leaves the second as it is.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime

from eventsourcing.persistence import (
    DataError,
    IntegrityError,
    NotSupportedError,
    PersistenceError,
    ProgrammingError,
)

from lineage_es.errors import InvalidArgument, PayloadError, StoreError, StoreLocked
from lineage_es.facts import Observation, Renamed
from lineage_es.stores import StoreKind
from lineage_es.stores.locks import LockTimedOut, is_lock_wait_error

#: The longest display name :meth:`Engine.rename` takes: a label on a tree line, not a text.
MAX_NAME_LENGTH = 256

#: What a display name may not hold: control characters (a name is one printable line, and
#: PostgreSQL text cannot hold NUL) and lone surrogates (no store can encode them).
UNFIT_IN_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

#: What the stores and their drivers raise; the engine names the store and the reason
#: instead, except for :data:`NOT_STORE_FAILURES`. PostgreSQL adds psycopg's, imported only
#: for it (:meth:`StoreFailures.of`).
STORE_FAILURES: tuple[type[Exception], ...] = (PersistenceError, sqlite3.Error)

#: Errors of those families that are no failure of the store but a caller's or this code's
#: fault (an id of the wrong type, a broken constraint, bad SQL): they stay what they are.
NOT_STORE_FAILURES: tuple[type[Exception], ...] = (
    IntegrityError,
    ProgrammingError,
    DataError,
    NotSupportedError,
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.DataError,
    sqlite3.NotSupportedError,
)

#: SQLSTATEs PostgreSQL files under its programming errors that are the store's state, not a
#: caller's mistake: no privilege, no such table, no such schema.
STORE_SIDE_STATES = frozenset({"42501", "42P01", "3F000"})

__all__ = [
    "MAX_NAME_LENGTH",
    "NOT_STORE_FAILURES",
    "STORE_FAILURES",
    "StoreFailures",
    "check_storable",
    "is_store_side",
    "name_problem",
    "require_moment",
    "require_observation",
]


def is_store_side(exc: BaseException) -> bool:
    """Whether an error of a caller-fault class is the store's doing all the same (a role
    that may only read, a table or schema dropped): by the driver's SQLSTATE."""
    return any(
        getattr(error, "sqlstate", None) in STORE_SIDE_STATES for error in (exc, exc.__cause__)
    )


@dataclass(frozen=True)
class StoreFailures:
    """The errors one kind of store fails with (``caught``), and those of their families
    that are a caller's fault (``callers``)."""

    caught: tuple[type[Exception], ...]
    callers: tuple[type[Exception], ...]

    @classmethod
    def of(cls, kind: StoreKind) -> StoreFailures:
        """The failures of a store of ``kind``: psycopg's too on PostgreSQL (imported only
        there: a SQLite hook must not pay for it)."""
        if kind != "postgresql":
            return cls(STORE_FAILURES, NOT_STORE_FAILURES)
        import psycopg

        return cls(
            (*STORE_FAILURES, psycopg.Error),
            (
                *NOT_STORE_FAILURES,
                psycopg.IntegrityError,
                psycopg.ProgrammingError,
                psycopg.DataError,
                psycopg.NotSupportedError,
            ),
        )

    def store_error(self, exc: Exception, store: str) -> StoreError | None:
        """The :class:`StoreError` to raise for ``exc``, caught from the store ``store`` (its
        display name), naming the store and the first line of the reason; ``None`` when
        ``exc`` is a caller's fault rather than the store's, to be raised as it is.

        A wait for another connection's lock that ran out is a :class:`StoreLocked`, naming
        how long it waited and who held the lock where the store could tell
        (:class:`~lineage_es.stores.locks.LockTimedOut`)."""
        if isinstance(exc, LockTimedOut):
            return StoreLocked(store, waited=exc.waited, holder=exc.holder)
        if is_lock_wait_error(exc):  # the view's own connection: no more is known
            return StoreLocked(store)
        if isinstance(exc, self.callers) and not is_store_side(exc):
            return None
        lines = str(exc).strip().splitlines()
        reason = lines[0] if lines else type(exc).__name__
        return StoreError(f"store {store}: {reason}")


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a display name; ``None`` when it can."""
    if not isinstance(name, str):
        return f"a name must be a str, not {type(name).__name__}"
    if not name.strip():
        return "a name cannot be empty or only spaces"
    if len(name) > MAX_NAME_LENGTH:
        return f"a name is at most {MAX_NAME_LENGTH} characters, not {len(name)}"
    if UNFIT_IN_NAME.search(name):
        return "a name cannot hold control characters or lone surrogates"
    return None


def require_moment(at: object, what: str = "at") -> None:
    """Refuse a time that is not a datetime (a string would fail only deep in a save), or
    whose UTC falls outside the years 1 to 9999 (``9999-12-31T23:00-05:00``): no datetime
    holds it, and converting it would fail as deep. Only a time in year 1 or 9999 can."""
    if at is None:
        return
    if not isinstance(at, datetime):
        raise InvalidArgument(f"{what} must be a datetime or None, not {type(at).__name__}")
    if at.year in (1, 9999) and at.tzinfo is not None:
        try:
            at.astimezone(UTC)
        except OverflowError:
            raise InvalidArgument(
                f"{what} is outside the years 1 to 9999 in UTC: {at.isoformat()}"
            ) from None


def require_observation(observation: object) -> Observation:
    """Refuse what is not an Observation before it is routed (a dict would fail deep inside);
    returns it, typed."""
    if not isinstance(observation, Observation):
        raise InvalidArgument(
            f"expected an Observation (a host adapter's), not {type(observation).__name__}"
        )
    require_moment(observation.at, "an observation's at")
    return observation


def check_storable(observation: Observation) -> None:
    """Refuse ids and names no store can keep (PostgreSQL text cannot hold NUL) before
    anything is journaled, whichever adapter or reader made the observation: a
    :class:`PayloadError` of its host."""
    for fact in observation.facts:
        for name in fact.__slots__:
            value = getattr(fact, name)
            if isinstance(value, str) and "\x00" in value:
                raise PayloadError(f"{name} holds a NUL character", host=observation.host)
        if isinstance(fact, Renamed):
            problem = name_problem(fact.name)
            if problem is not None:
                raise PayloadError(problem, host=observation.host)
    for value in (observation.requester, observation.root, *observation.workspace):
        if value is not None and "\x00" in value:
            raise PayloadError("an id holds a NUL character", host=observation.host)
