"""Creating a PostgreSQL store's tables once, however many processes open it at once: an
advisory lock, taken only when a table is missing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lineage_es.errors import StoreError, StoreLocked
from lineage_es.stores.connections import SQLITE_LOCK_TIMEOUT, env_lock_timeout
from lineage_es.stores.connections import bounded_conninfo as bounded_conninfo  # noqa: PLC0414
from lineage_es.stores.locations import StoreLocation
from lineage_es.stores.locks import (
    ADVISORY_HOLDERS_QUERY,
    postgres_holders,
)

if TYPE_CHECKING:
    import psycopg

#: store's tables (the lock's other key is the store's schema, so stores in other schemas of
#: one database do not wait for each other).
SETUP_LOCK_CLASS = 713555000

#: Whether every relation (``to_regclass``) and type (``to_regtype``) named exists, committed.
ALL_EXIST_QUERY = (
    "SELECT coalesce((SELECT bool_and(to_regclass(name) IS NOT NULL)"
    " FROM unnest(%s::text[]) AS name), true)"
    " AND coalesce((SELECT bool_and(to_regtype(name) IS NOT NULL)"
    " FROM unnest(%s::text[]) AS name), true)"
)


@dataclass(frozen=True)
class StoreNeeds:
    """What a PostgreSQL store's journal and view need to exist, as ``to_regclass`` and
    ``to_regtype`` take their names: an unqualified name is looked up on the store's
    ``search_path``, as the view's statements are."""

    relations: tuple[str, ...]
    types: tuple[str, ...] = ()


def store_needs(location: StoreLocation, journal: str, view: Sequence[str]) -> StoreNeeds:
    """Every relation and type that the journal of the eventsourcing application named
    ``journal`` and the ``view`` tables need, in the store's schema.

    eventsourcing creates them in separate transactions (the event type; the events table
    with its index and insert function; the snapshots table), and the view's tables in one
    more: a store holding all of them is complete, whatever a process creating it is doing."""
    schema = location.postgres.get("schema") or "public"  # as eventsourcing defaults it

    def qualified(name: str) -> str:  # as eventsourcing spells it: Identifier(schema)
        return f'"{schema}"."{name}"'

    return StoreNeeds(
        relations=(
            qualified(f"{journal}_events"),
            qualified(f"{journal}_events_notification_id_idx"),
            qualified(f"{journal}_snapshots"),
            *view,
        ),
        types=(qualified("stored_event_uuid"),),
    )


@dataclass
class SetupHold:
    """What :func:`setup_lock` holds: on PostgreSQL, the lock's connection, which the store's
    view goes on to use (:meth:`take`) rather than opening another, and whether the store's
    tables all exist (:attr:`ready`: then no lock is held and nothing is to be created)."""

    connection: psycopg.Connection[Any] | None = None
    ready: bool = False

    def take(self) -> psycopg.Connection[Any] | None:
        """The lock's connection, for the caller to keep and close; ``None`` when there is
        none (another kind of store) or it was taken already."""
        connection, self.connection = self.connection, None
        return connection


def _all_exist_in(connection: psycopg.Connection[Any], needs: StoreNeeds) -> bool:
    found = connection.execute(
        ALL_EXIST_QUERY, (list(needs.relations), list(needs.types))
    ).fetchone()
    return found is not None and found[0] is True


@contextmanager
def setup_lock(
    location: StoreLocation, timeout: float | None = None, needs: StoreNeeds | None = None
) -> Iterator[SetupHold]:
    """Serialise table creation across processes opening one PostgreSQL store at once
    (concurrent ``CREATE ... IF NOT EXISTS`` and ``CREATE OR REPLACE FUNCTION`` collide),
    waiting at most ``timeout`` seconds (default ``$LINEAGE_LOCK_TIMEOUT``, else
    :data:`SQLITE_LOCK_TIMEOUT`, as for SQLite): a hook must give up, and say so, before its
    host's deadline; the :class:`StoreLocked` it raises then names the process creating the
    tables.

    With ``needs``, a store that has them all is :attr:`~SetupHold.ready` and no lock is
    taken: every hook but the first finds its tables with one query and waits for no other.
    A store missing any of them is locked, and looked at again once the lock is held (another
    process may have created them meanwhile: then the lock is let go at once).

    The lock's connection is the one the store's view goes on to use: the view opened under the
    lock takes it over (:meth:`SetupHold.take`); otherwise it is closed with the lock. It is
    opened with :func:`bounded_conninfo`: its statements wait for a lock no longer than the
    journal's."""
    if location.kind != "postgresql":
        yield SetupHold()
        return
    import psycopg

    pg = location.postgres
    conninfo = bounded_conninfo(pg, timeout)
    if timeout is None:
        timeout = env_lock_timeout()
    wait_ms = int(1000 * (SQLITE_LOCK_TIMEOUT if timeout is None else timeout))
    schema = pg.get("schema") or "public"
    unlock = "SELECT pg_advisory_unlock(%s, hashtext(%s))"
    try:
        connection = psycopg.connect(**conninfo, autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot open store {location.display}: {exc}") from None
    kept = False
    locked = False
    try:
        try:
            ready = needs is not None and _all_exist_in(connection, needs)
            if not ready:
                # SET LOCAL: the wait bounds this lock alone, not the view's writes after it (a
                # session lock outlives the transaction that took it).
                with connection.transaction():
                    connection.execute(f"SET LOCAL lock_timeout = {max(wait_ms, 1)}")
                    connection.execute(
                        "SELECT pg_advisory_lock(%s, hashtext(%s))", (SETUP_LOCK_CLASS, schema)
                    )
                locked = True
                ready = needs is not None and _all_exist_in(connection, needs)
                if ready:
                    connection.execute(unlock, (SETUP_LOCK_CLASS, schema))
                    locked = False
        except psycopg.errors.LockNotAvailable:
            holder = postgres_holders(
                connection, ADVISORY_HOLDERS_QUERY, (SETUP_LOCK_CLASS, schema)
            )
            raise StoreLocked(
                location.display,
                waited=wait_ms / 1000,
                holder=holder,
                message=f"cannot open store {location.display}: another process kept it locked "
                f"for more than {wait_ms / 1000:g} s while creating its tables"
                + (f" (held by {holder})" if holder else ""),
            ) from None
        except psycopg.Error as exc:
            raise StoreError(f"cannot open store {location.display}: {exc}") from None
        hold = SetupHold(connection, ready=ready)
        try:
            yield hold
        finally:
            kept = hold.connection is None
            hold.connection = None
            if locked and not connection.closed:
                connection.execute(unlock, (SETUP_LOCK_CLASS, schema))
    finally:
        if not kept:
            connection.close()
