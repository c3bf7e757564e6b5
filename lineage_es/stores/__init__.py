"""Store URLs: where a journal lives, and the eventsourcing settings that open it.

``memory://`` keeps everything in the process (replays, tests); ``sqlite:///PATH`` is the
embedded default, a private file in the user's data dir; ``postgresql://...`` lets several
machines share one journal.

The package keeps one concern per module: :mod:`~lineage_es.stores.locations` (URLs),
:mod:`~lineage_es.stores.sqlite_files` (the journal's SQLite file),
:mod:`~lineage_es.stores.settings` (eventsourcing's settings and factories),
:mod:`~lineage_es.stores.connections` (lock waits and connection names, without eventsourcing),
:mod:`~lineage_es.stores.locks` (lock waits that run out, and who held the lock) and
:mod:`~lineage_es.stores.setup` (creating a PostgreSQL store's tables once); what callers use is
imported here; what imports eventsourcing, only when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from lineage_es.stores.connections import (
    LOCK_TIMEOUT_ENV,
    POSTGRES_LOCK_TIMEOUT,
    SQLITE_LOCK_TIMEOUT,
    application_name,
    bounded_conninfo,
    lock_timeout_for,
)
from lineage_es.stores.locations import (
    SCHEMA_NAME,
    StoreKind,
    StoreLocation,
    data_dir,
    default_store_url,
    parse_store_url,
    postgres_conninfo,
    wrap_open_error,
)
from lineage_es.stores.sqlite_files import (
    JOURNAL_COLUMNS,
    JOURNAL_TABLE,
    JOURNAL_TOPIC_PREFIXES,
    SQLITE_HEADER,
    prepare_sqlite_file,
)

if TYPE_CHECKING:
    from lineage_es.stores.locks import LockTimedOut
    from lineage_es.stores.settings import (
        POSTGRES_LOCK_TIMEOUT_MS,
        POSTGRES_POOL,
        SQLITE_LOCK_TIMEOUT_MS,
        DurableSQLiteFactory,
        application_env,
    )
    from lineage_es.stores.setup import (
        SETUP_LOCK_CLASS,
        SetupHold,
        StoreNeeds,
        setup_lock,
        store_needs,
    )

#: The names imported on first use, and their modules: these import eventsourcing, which a
#: process that only reads the tree view (:mod:`lineage_es.read.readonly`) never loads.
_LAZY = {
    "LockTimedOut": "locks",
    "POSTGRES_LOCK_TIMEOUT_MS": "settings",
    "POSTGRES_POOL": "settings",
    "SQLITE_LOCK_TIMEOUT_MS": "settings",
    "DurableSQLiteFactory": "settings",
    "application_env": "settings",
    "SETUP_LOCK_CLASS": "setup",
    "SetupHold": "setup",
    "StoreNeeds": "setup",
    "setup_lock": "setup",
    "store_needs": "setup",
}


def __getattr__(name: str) -> Any:
    """A name of :data:`_LAZY`, from its module, imported now (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "JOURNAL_COLUMNS",
    "JOURNAL_TABLE",
    "JOURNAL_TOPIC_PREFIXES",
    "LOCK_TIMEOUT_ENV",
    "POSTGRES_LOCK_TIMEOUT",
    "POSTGRES_LOCK_TIMEOUT_MS",
    "POSTGRES_POOL",
    "SCHEMA_NAME",
    "SETUP_LOCK_CLASS",
    "SQLITE_HEADER",
    "SQLITE_LOCK_TIMEOUT",
    "SQLITE_LOCK_TIMEOUT_MS",
    "DurableSQLiteFactory",
    "LockTimedOut",
    "SetupHold",
    "StoreKind",
    "StoreLocation",
    "StoreNeeds",
    "application_env",
    "application_name",
    "bounded_conninfo",
    "data_dir",
    "default_store_url",
    "lock_timeout_for",
    "parse_store_url",
    "postgres_conninfo",
    "prepare_sqlite_file",
    "setup_lock",
    "store_needs",
    "wrap_open_error",
]
