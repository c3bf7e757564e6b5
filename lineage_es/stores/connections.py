"""What a store's own connections take, with no eventsourcing: how long a statement waits for
another process's lock, and the name a PostgreSQL connection shows other sessions.

Kept apart from :mod:`~lineage_es.stores.settings` and :mod:`~lineage_es.stores.locks` (both
import eventsourcing) so that a process that only reads the tree view
(:mod:`lineage_es.read.readonly`) does not pay for the event library's start-up.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lineage_es.errors import InvalidArgument, StoreError
from lineage_es.stores.locations import StoreKind, postgres_conninfo

#: The environment variable that sets how long a command waits for another process's lock
#: (seconds), where the caller sets no ``lock_timeout`` of its own.
LOCK_TIMEOUT_ENV = "LINEAGE_LOCK_TIMEOUT"

#: How long a writer waits for another process's write lock before failing (seconds).
SQLITE_LOCK_TIMEOUT = 30

#: The same for PostgreSQL (seconds).
POSTGRES_LOCK_TIMEOUT = 10

#: PostgreSQL keeps the first 63 bytes of ``application_name``.
APPLICATION_NAME_BYTES = 63


#: The longest lock timeout (seconds): SQLite's ``busy_timeout`` and PostgreSQL's
#: ``lock_timeout`` are both milliseconds in a 32-bit int (24.8 days).
MAX_LOCK_TIMEOUT = (2**31 - 1) / 1000


#: What a lock timeout must be, as the refusals say it.
_LOCK_TIMEOUT_RANGE = f"expected a number of seconds from 0 to {int(MAX_LOCK_TIMEOUT):,} (24 days)"


def _fits_lock_timeout(seconds: object) -> bool:
    """Whether ``seconds`` can be a lock timeout: a finite number in range (not a bool)."""
    return (
        isinstance(seconds, (int, float))
        and not isinstance(seconds, bool)
        and math.isfinite(seconds)
        and 0 <= seconds <= MAX_LOCK_TIMEOUT
    )


def check_lock_timeout(lock_timeout: float | None) -> None:
    """Refuse a chosen lock timeout (``None``: not chosen) that is no number of seconds from
    0 to :data:`MAX_LOCK_TIMEOUT`, as an :class:`~lineage_es.errors.InvalidArgument`."""
    if lock_timeout is not None and not _fits_lock_timeout(lock_timeout):
        raise InvalidArgument(f"lock_timeout={lock_timeout!r}: {_LOCK_TIMEOUT_RANGE}")


def env_lock_timeout() -> float | None:
    """The lock timeout :data:`LOCK_TIMEOUT_ENV` sets (seconds), ``None`` when unset; a
    value that is no number of seconds from 0 to :data:`MAX_LOCK_TIMEOUT` is refused,
    naming the variable."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not raw:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not _fits_lock_timeout(seconds):
        raise StoreError(f"{LOCK_TIMEOUT_ENV}={raw!r}: {_LOCK_TIMEOUT_RANGE}")
    return seconds


def lock_timeout_for(kind: StoreKind, lock_timeout: float | None = None) -> float:
    """How long (seconds) a statement on a store of ``kind`` waits for another connection's
    lock: ``lock_timeout`` when the caller chose one, else ``$LINEAGE_LOCK_TIMEOUT`` when
    set, else :data:`SQLITE_LOCK_TIMEOUT` or :data:`POSTGRES_LOCK_TIMEOUT` (a chosen one is
    checked: :func:`check_lock_timeout`)."""
    if lock_timeout is not None:
        check_lock_timeout(lock_timeout)
        return lock_timeout
    from_env = env_lock_timeout()
    if from_env is not None:
        return from_env
    return POSTGRES_LOCK_TIMEOUT if kind == "postgresql" else SQLITE_LOCK_TIMEOUT


def postgres_lock_timeout_ms(lock_timeout: float | None = None) -> int:
    """PostgreSQL's ``lock_timeout`` (ms) for a store opened with ``lock_timeout`` (seconds,
    default :func:`lock_timeout_for`): at least 1, PostgreSQL's 0 being "forever"."""
    return whole_millis(lock_timeout_for("postgresql", lock_timeout), least=1)


def whole_millis(seconds: float, *, least: int) -> int:
    """``seconds`` in whole milliseconds, at least ``least``; a wait asked for is never
    rounded down to no wait."""
    millis = round(seconds * 1000)
    return max(least, 1 if seconds > 0 else 0, millis)


def application_name(argv: Sequence[str] | None = None) -> str:
    """What this process's PostgreSQL connections call themselves (``application_name``, in
    ``pg_stat_activity``): ``lineage <command>`` for the ``lineage`` command, ``lineage hook
    <host>`` for a hook, ``lineage_es (<program>)`` for a program embedding the engine; so a
    process kept waiting for a lock can be told which one holds it."""
    args = list(sys.argv if argv is None else argv)
    program = Path(args[0]) if args else Path("python")
    words: list[str] = []
    for arg in args[1:3]:
        if not re.fullmatch(r"[a-z][a-z0-9_-]*", arg):
            break
        words.append(arg)
    if program.parent.name == "lineage_es" and program.name == "hook.py":
        name = " ".join(["lineage hook", *words[:1]])
    elif program.name == "lineage" or (
        program.parent.name == "lineage_es" and program.name == "__main__.py"
    ):
        name = " ".join(["lineage", *words])
    elif program.name.startswith("lineage"):
        name = program.name
    else:
        name = f"lineage_es ({program.name})"
    printable = "".join(char if " " <= char <= "~" else "?" for char in name)
    return printable.encode()[:APPLICATION_NAME_BYTES].decode()


def bounded_conninfo(settings: Mapping[str, str], lock_timeout: float | None) -> dict[str, Any]:
    """psycopg's connection arguments for a PostgreSQL store's own connection (the view's):
    :func:`~lineage_es.stores.postgres_conninfo`, its every statement waiting for another
    session's lock at most ``lock_timeout`` seconds (default :func:`lock_timeout_for`), as
    the journal's do, and naming this process (:func:`application_name`)."""
    conninfo = postgres_conninfo(settings)
    bound = f"-c lock_timeout={postgres_lock_timeout_ms(lock_timeout)}"
    conninfo["options"] = " ".join(filter(None, (conninfo.get("options"), bound)))
    conninfo["application_name"] = application_name()
    return conninfo
