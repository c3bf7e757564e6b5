"""Store URLs: where a journal lives, and the eventsourcing settings that open it.

``memory://`` keeps everything in the process (replays, tests); ``sqlite:///PATH`` is the
embedded default, a private file in the user's data dir; ``postgresql://...`` lets several
machines share one journal.

The package keeps one concern per module: :mod:`~lineage_es.stores.locations` (URLs),
:mod:`~lineage_es.stores.sqlite_files` (the journal's SQLite file),
:mod:`~lineage_es.stores.settings` (eventsourcing's settings and factories),
:mod:`~lineage_es.stores.locks` (lock waits that run out, and who held the lock) and
:mod:`~lineage_es.stores.setup` (creating a PostgreSQL store's tables once); what callers use is
imported here.
"""

from __future__ import annotations

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
from lineage_es.stores.locks import LOCK_TIMEOUT_ENV, LockTimedOut, application_name
from lineage_es.stores.settings import (
    POSTGRES_LOCK_TIMEOUT,
    POSTGRES_LOCK_TIMEOUT_MS,
    POSTGRES_POOL,
    SQLITE_LOCK_TIMEOUT,
    SQLITE_LOCK_TIMEOUT_MS,
    DurableSQLiteFactory,
    application_env,
    lock_timeout_for,
)
from lineage_es.stores.setup import (
    SETUP_LOCK_CLASS,
    SetupHold,
    StoreNeeds,
    bounded_conninfo,
    setup_lock,
    store_needs,
)
from lineage_es.stores.sqlite_files import (
    JOURNAL_COLUMNS,
    JOURNAL_TABLE,
    JOURNAL_TOPIC_PREFIXES,
    SQLITE_HEADER,
    prepare_sqlite_file,
)

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
