"""Store URLs: where a journal lives (``memory://``, ``sqlite:///PATH``, ``postgresql://...``),
parsed into a :class:`StoreLocation`, and what a PostgreSQL store's own connections take."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, unquote, urlsplit

from lineage_es import user_files
from lineage_es.errors import StoreError

StoreKind = Literal["memory", "sqlite", "postgresql"]

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
    """The per-user data directory that holds the default journal (the rule lives in
    :mod:`lineage_es.user_files`, which the fast hook reads too)."""
    return Path(user_files.data_dir())


def default_store_url() -> str:
    """``$LINEAGE_STORE`` when set, else the SQLite journal in :func:`data_dir`."""
    return user_files.default_store_url()


#: The spellings of the in-memory store's URL.
MEMORY_URLS = user_files.MEMORY_URLS


def parse_store_url(url: str) -> StoreLocation:
    """Parse a store URL; :class:`StoreError` says what is wrong with a bad one."""
    if url in MEMORY_URLS:
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
            "port": str(_checked_port(parts.netloc) or 5432),
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


def _checked_port(netloc: str) -> int | None:
    """The port of a URL's ``netloc``, checked: urllib raises a bare ValueError for one out
    of range or not a number. The message shows the port alone, never the password."""
    host = netloc.rpartition("@")[2]
    raw = host.rpartition("]")[2].partition(":")[2]  # after an IPv6 address's brackets
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise StoreError(f"port {raw!r} of the store URL is not a number from 1 to 65535")
    return int(raw)


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
    # eventsourcing's InterfaceError, if the library is loaded (a process that never loaded it
    # has none to wrap: the view reader imports no eventsourcing).
    persistence = sys.modules.get("eventsourcing.persistence")
    reason: Any = exc
    if persistence is not None and isinstance(exc, persistence.InterfaceError) and exc.args:
        reason = exc.args[0]
    return StoreError(f"cannot open store {location.display}: {reason}")
