"""Store URLs: where a journal lives, and the eventsourcing settings that open it.

``memory://`` keeps everything in the process (replays, tests); ``sqlite:///PATH`` is the
embedded default, a private file in the user's data dir; ``postgresql://...`` lets several
machines share one journal.
"""

from __future__ import annotations

import functools
import math
import os
import re
import sqlite3
import stat
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from eventsourcing.persistence import InterfaceError
from eventsourcing.sqlite import (
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteDatastore,
    SQLiteFactory,
)
from eventsourcing.utils import Environment, EnvType

from lineage_es.errors import NoJournal, StoreError

if TYPE_CHECKING:
    import psycopg

StoreKind = Literal["memory", "sqlite", "postgresql"]

#: How long a writer waits for another process's write lock before failing (seconds).
SQLITE_LOCK_TIMEOUT = 30

#: The same for PostgreSQL (seconds).
POSTGRES_LOCK_TIMEOUT = 10

#: The settings that carry the lock timeout to the millisecond: eventsourcing reads whole
#: seconds (and takes 0 as "its default" on SQLite, "wait forever" on PostgreSQL).
SQLITE_LOCK_TIMEOUT_MS = "SQLITE_LOCK_TIMEOUT_MS"
POSTGRES_LOCK_TIMEOUT_MS = "POSTGRES_LOCK_TIMEOUT_MS"

#: The first bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"

#: The journal's table in a SQLite file, and its columns as eventsourcing's SQLite recorder
#: creates them: what tells a journal (of any version of this project) from another
#: program's database.
JOURNAL_TABLE = "stored_events"
JOURNAL_COLUMNS = ("originator_id", "originator_version", "topic", "state")
#: How this project's event topics begin (``lineage:`` as registered; a module path for any
#: class not registered under a short name).
JOURNAL_TOPIC_PREFIXES = ("lineage:", "lineage_es.")

#: The journal's PostgreSQL connection pool: none opened in advance, one the first time the
#: journal is read or written, more (up to ``POSTGRES_MAX_OVERFLOW``) only while a thread
#: waits for one. A hook or a ``lineage`` command uses one at a time; a long-lived engine
#: following the journal holds one for ``LISTEN`` and pulls on another. eventsourcing's
#: defaults open five at once (``POSTGRES_POOL_SIZE``, and a sixth as the first is awaited)
#: and grow to fifteen: sixteen hooks at once had the server refuse clients. A ``POSTGRES_*``
#: setting in the environment wins over these.
POSTGRES_POOL: dict[str, str] = {"POSTGRES_POOL_SIZE": "0", "POSTGRES_MAX_OVERFLOW": "5"}

#: What a PostgreSQL ``?schema=`` may be: a plain SQL identifier (it is spliced into SQL), in
#: lower case: eventsourcing 9.5 quotes the schema where it creates its tables but cannot find
#: its composite type in a schema whose name has capitals.
SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]*")


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store URL."""

    kind: StoreKind
    url: str
    path: Path | None = None
    postgres: dict[str, str] = field(default_factory=dict)

    @property
    def display(self) -> str:
        """The URL without its password, fit to print."""
        if self.kind != "postgresql" or "password" not in self.postgres:
            return self.url
        parts = urlsplit(self.url)
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return parts._replace(netloc=netloc).geturl()


def data_dir() -> Path:
    """The per-user data directory that holds the default journal."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "lineage-es"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "lineage-es"


def default_store_url() -> str:
    """``$LINEAGE_STORE`` when set, else the SQLite journal in :func:`data_dir`."""
    return os.environ.get("LINEAGE_STORE") or f"sqlite:///{data_dir() / 'journal.sqlite'}"


def parse_store_url(url: str) -> StoreLocation:
    """Parse a store URL; :class:`StoreError` says what is wrong with a bad one."""
    if url in ("memory://", "memory:", "memory"):
        return StoreLocation(kind="memory", url="memory://")
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        # As SQLAlchemy spells it: sqlite:///relative/path, sqlite:////absolute/path.
        rest = unquote(url[len("sqlite://") :])
        if not rest.startswith("/") or len(rest) < 2:
            raise StoreError(f"{url!r}: a SQLite store needs a file path: sqlite:///PATH")
        if ":memory:" in rest:
            raise StoreError(f"{url!r}: use memory:// for an in-memory store")
        path = Path(rest[1:]).expanduser().absolute()
        return StoreLocation(kind="sqlite", url=f"sqlite:///{path}", path=path)
    if parts.scheme in ("postgresql", "postgres"):
        settings: dict[str, str] = {
            "dbname": unquote(parts.path.lstrip("/")) or "postgres",
            "host": parts.hostname or "127.0.0.1",
            "port": str(_port(parts.netloc) or 5432),
            "user": unquote(parts.username or os.environ.get("USER", "postgres")),
        }
        if parts.password:
            settings["password"] = unquote(parts.password)
        query = parse_qs(parts.query, keep_blank_values=True)
        if "schema" in query:
            schema = query["schema"][0]
            if not SCHEMA_NAME.fullmatch(schema):
                raise StoreError(
                    f"schema {schema!r} is not a lower-case SQL identifier: use lower-case "
                    "letters, digits and underscores, not starting with a digit"
                )
            settings["schema"] = schema
        return StoreLocation(kind="postgresql", url=url, postgres=settings)
    raise StoreError(
        f"{url!r} is not a store URL; use memory://, sqlite:///PATH or postgresql://HOST/DB"
    )


def _port(netloc: str) -> int | None:
    """The port of a URL's ``netloc``, checked: urllib raises a bare ValueError for one out
    of range or not a number. The message shows the port alone, never the password."""
    host = netloc.rpartition("@")[2]
    raw = host.rpartition("]")[2].partition(":")[2]  # after an IPv6 address's brackets
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise StoreError(f"port {raw!r} of the store URL is not a number from 1 to 65535")
    return int(raw)


def prepare_sqlite_file(path: Path, *, create: bool = True) -> None:
    """Create the journal's directory (0700) and file (0600), warning when an existing one
    is readable by others: agent history names every project a person works on. With
    ``create=False`` a missing file is :class:`NoJournal` and nothing is created.

    An existing database that is not a journal (:func:`_check_is_journal`) is refused before
    anything opens it to write: eventsourcing would add its tables to another program's file."""
    if not create and not path.exists():
        raise NoJournal(path)
    directory = path.parent
    try:
        if not directory.exists():
            directory.mkdir(mode=0o700, parents=True)
        elif directory == data_dir() and stat.S_IMODE(directory.stat().st_mode) & 0o077:
            warnings.warn(
                f"store directory {directory} is accessible to other users; "
                f"run: chmod 700 {directory}",
                stacklevel=3,
            )
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            os.close(fd)
        found = path.stat()
    except OSError as exc:
        raise StoreError(f"cannot create the store at {path}: {exc.strerror}") from None
    # What SQLite itself checks first: a database file is empty or starts with its header
    # string. Read that rather than open a connection only to check it (every hook opens one).
    try:
        with open(path, "rb") as probe:
            header = probe.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot open the store at {path}: {exc.strerror}") from None
    if header and header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a SQLite journal: file is not a database")
    if header:
        _check_is_journal(path)
    # The advice is for a journal the user can chmod: a regular file of their own (a folder,
    # another user's file or one that is no journal gets the error above, or none).
    owner = getattr(os, "getuid", lambda: found.st_uid)()
    if stat.S_ISREG(found.st_mode) and found.st_uid == owner and found.st_mode & 0o077:
        warnings.warn(
            f"store file {path} is readable by other users; run: chmod 600 {path}",
            stacklevel=3,
        )


def _check_is_journal(path: Path) -> None:
    """Refuse a SQLite database that has tables but no journal table of the shape
    eventsourcing creates, or one whose first event is not this project's (another
    event-sourced program's). Keyed on that table alone, not on every table a journal holds
    now: a journal of an older version (no view tables yet) still opens. The check only reads, on
    a connection of its own that it closes whatever happens."""
    try:
        with closing(sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True)) as db:
            names = [
                name
                for (name,) in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
                )
            ]
            columns = tuple(
                str(row[1]).lower() for row in db.execute(f"PRAGMA table_info({JOURNAL_TABLE})")
            )
            first = (
                db.execute(f"SELECT topic FROM {JOURNAL_TABLE} LIMIT 1").fetchone()
                if columns == JOURNAL_COLUMNS
                else None
            )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the store at {path}: {exc}") from None
    if not names or (columns == JOURNAL_COLUMNS and (first is None or _ours(str(first[0])))):
        return
    shown = ", ".join(names[:5]) + (f", and {len(names) - 5} more" if len(names) > 5 else "")
    raise StoreError(f"{path} is not a lineage journal: it holds other tables ({shown})")


def _ours(topic: str) -> bool:
    """Whether a stored event's topic is one this project journals: any other event-sourced
    program's ``stored_events`` has eventsourcing's shape too."""
    return topic.startswith(JOURNAL_TOPIC_PREFIXES)


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


class DurableSQLiteFactory(SQLiteFactory):
    """eventsourcing's SQLite factory, with durable commits."""

    def __init__(self, env: Environment | EnvType | None) -> None:
        super().__init__(env)
        original = self.datastore
        datastore = SQLiteDatastore.__new__(SQLiteDatastore)
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
    :data:`SQLITE_LOCK_TIMEOUT` or :data:`POSTGRES_LOCK_TIMEOUT`) bounds how long a write
    waits for another process's lock: 0 waits for none (1 ms on PostgreSQL, where 0 is
    "forever"), a fraction is kept to the millisecond. ``create_tables=False`` (a PostgreSQL
    store whose tables all exist: :attr:`SetupHold.ready`) has eventsourcing run none of its
    DDL."""
    env: dict[str, str] = {}
    if location.kind == "memory":
        env["PERSISTENCE_MODULE"] = "eventsourcing.popo"
    elif location.kind == "sqlite":
        assert location.path is not None
        seconds = SQLITE_LOCK_TIMEOUT if lock_timeout is None else lock_timeout
        env["PERSISTENCE_MODULE"] = f"{__name__}:DurableSQLiteFactory"
        env["SQLITE_DBNAME"] = str(location.path)
        # eventsourcing takes whole seconds (for its first statement); the pool sets the rest.
        env["SQLITE_LOCK_TIMEOUT"] = str(max(1, math.ceil(seconds)))
        env[SQLITE_LOCK_TIMEOUT_MS] = str(_millis(seconds, least=0))
    else:
        pg = location.postgres
        seconds = POSTGRES_LOCK_TIMEOUT if lock_timeout is None else lock_timeout
        env["PERSISTENCE_MODULE"] = _postgres_factory_topic()
        env["POSTGRES_DBNAME"] = pg["dbname"]
        env["POSTGRES_HOST"] = pg["host"]
        env["POSTGRES_PORT"] = pg["port"]
        env["POSTGRES_USER"] = pg["user"]
        env["POSTGRES_PASSWORD"] = pg.get("password", "")
        env["POSTGRES_CONNECT_TIMEOUT"] = "5"
        env["POSTGRES_LOCK_TIMEOUT"] = str(max(1, math.ceil(seconds)))
        env[POSTGRES_LOCK_TIMEOUT_MS] = str(_millis(seconds, least=1))
        if "schema" in pg:
            env["POSTGRES_SCHEMA"] = pg["schema"]
        if not create_tables:
            env["CREATE_TABLE"] = "n"
        # The Application reads os.environ under the settings passed to it: set only what
        # the user did not.
        env.update({k: v for k, v in POSTGRES_POOL.items() if k not in os.environ})
    return env


def _millis(seconds: float, *, least: int) -> int:
    """``seconds`` in whole milliseconds, at least ``least``; a wait asked for is never
    rounded down to no wait."""
    millis = round(seconds * 1000)
    return max(least, 1 if seconds > 0 else 0, millis)


@functools.cache
def _postgres_factory_topic() -> str:
    """The topic of eventsourcing's PostgreSQL factory with the lock timeout to the
    millisecond, made on first use: eventsourcing.postgres imports psycopg, which a SQLite
    store must not pay for on every hook."""
    from eventsourcing.postgres import PostgresFactory
    from eventsourcing.utils import register_topic

    class PreciseLockPostgresFactory(PostgresFactory):
        """eventsourcing spells the lock timeout ``'{seconds}s'``; a fraction of a second
        keeps its milliseconds there."""

        def __init__(self, env: Environment | EnvType | None) -> None:
            super().__init__(env)
            millis = self.env.get(POSTGRES_LOCK_TIMEOUT_MS)
            if millis:
                self.datastore.lock_timeout = int(millis) / 1000  # type: ignore[assignment]

    topic = f"{__name__}:{PreciseLockPostgresFactory.__name__}"
    register_topic(topic, PreciseLockPostgresFactory)
    return topic


def postgres_conninfo(settings: Mapping[str, str]) -> dict[str, Any]:
    """psycopg's connection arguments for a PostgreSQL store's own connections (the view's
    and the setup lock's), in the store's schema."""
    info: dict[str, Any] = {
        "dbname": settings["dbname"],
        "host": settings["host"],
        "port": int(settings["port"]),
        "user": settings["user"],
        "connect_timeout": 5,
    }
    if settings.get("password"):
        info["password"] = settings["password"]
    if settings.get("schema"):
        info["options"] = f"-c search_path={settings['schema']}"
    return info


def wrap_open_error(location: StoreLocation, exc: BaseException) -> StoreError:
    """A :class:`StoreError` that says which store failed to open and why."""
    reason: Any = exc
    if isinstance(exc, InterfaceError) and exc.args:
        reason = exc.args[0]
    return StoreError(f"cannot open store {location.display}: {reason}")


#: Any number that is ours: the class of the advisory lock held while a process creates a
#: store's tables (the lock's other key is the store's schema, so stores in other schemas of
#: one database do not wait for each other).
_SETUP_LOCK = 713555000

#: Whether every relation (``to_regclass``) and type (``to_regtype``) named exists, committed.
_ALL_EXIST = (
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


def _all_exist(connection: psycopg.Connection[Any], needs: StoreNeeds) -> bool:
    found = connection.execute(_ALL_EXIST, (list(needs.relations), list(needs.types))).fetchone()
    return found is not None and found[0] is True


@contextmanager
def setup_lock(
    location: StoreLocation, timeout: float | None = None, needs: StoreNeeds | None = None
) -> Iterator[SetupHold]:
    """Serialise table creation across processes opening one PostgreSQL store at once
    (concurrent ``CREATE ... IF NOT EXISTS`` and ``CREATE OR REPLACE FUNCTION`` collide),
    waiting at most ``timeout`` seconds (default :data:`SQLITE_LOCK_TIMEOUT`, as for SQLite):
    a hook must give up, and say so, before its host's deadline.

    With ``needs``, a store that has them all is :attr:`~SetupHold.ready` and no lock is
    taken: every hook but the first finds its tables with one query and waits for no other.
    A store missing any of them is locked, and looked at again once the lock is held (another
    process may have created them meanwhile: then the lock is let go at once).

    The lock's connection is the one the store's view goes on to use: the view opened under the
    lock takes it over (:meth:`SetupHold.take`); otherwise it is closed with the lock."""
    if location.kind != "postgresql":
        yield SetupHold()
        return
    import psycopg

    pg = location.postgres
    wait_ms = int(1000 * (SQLITE_LOCK_TIMEOUT if timeout is None else timeout))
    schema = pg.get("schema") or "public"
    unlock = "SELECT pg_advisory_unlock(%s, hashtext(%s))"
    try:
        connection = psycopg.connect(**postgres_conninfo(pg), autocommit=True)
    except psycopg.Error as exc:
        raise StoreError(f"cannot open store {location.display}: {exc}") from None
    kept = False
    locked = False
    try:
        try:
            ready = needs is not None and _all_exist(connection, needs)
            if not ready:
                # SET LOCAL: the wait bounds this lock alone, not the view's writes after it (a
                # session lock outlives the transaction that took it).
                with connection.transaction():
                    connection.execute(f"SET LOCAL lock_timeout = {max(wait_ms, 1)}")
                    connection.execute(
                        "SELECT pg_advisory_lock(%s, hashtext(%s))", (_SETUP_LOCK, schema)
                    )
                locked = True
                ready = needs is not None and _all_exist(connection, needs)
                if ready:
                    connection.execute(unlock, (_SETUP_LOCK, schema))
                    locked = False
        except psycopg.errors.LockNotAvailable:
            raise StoreError(
                f"cannot open store {location.display}: another process kept it locked for "
                f"more than {wait_ms / 1000:g} s while creating its tables"
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
                connection.execute(unlock, (_SETUP_LOCK, schema))
    finally:
        if not kept:
            connection.close()
