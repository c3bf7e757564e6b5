"""The ids of the journal's aggregates: UUID 5 names in one namespace, stable across machines
and releases, so that a conversation always routes to the same root and index entry.

Cheap to import (no eventsourcing, no hashlib): a hook process derives ids on every payload.
"""

from __future__ import annotations

from functools import lru_cache
from uuid import UUID

try:  # the builtin SHA-1: importing hashlib loads OpenSSL, some 3 ms of every hook process
    from _sha1 import sha1  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover (a Python built without it)
    from hashlib import sha1

#: ``uuid5(NAMESPACE_URL, "https://lineage-es.dev/ids")``: every id is a UUID 5 in it.
NAMESPACE = UUID("3477ccce-b6d6-5cc6-a05c-33f125580357")


def name_id(name: str) -> UUID:
    """``uuid.uuid5(NAMESPACE, name)``, computed here rather than with :func:`uuid.uuid5`,
    which imports hashlib (and with it OpenSSL) on its first call."""
    return UUID(bytes=sha1(NAMESPACE.bytes + name.encode("utf-8")).digest()[:16], version=5)


@lru_cache(maxsize=65536)
def root_id(host: str, conversation: str) -> UUID:
    """The aggregate id of the root ``conversation`` of ``host``."""
    return name_id(f"root\x00{host}\x00{conversation}")


@lru_cache(maxsize=65536)
def index_id(host: str, conversation: str) -> UUID:
    """The id of the index entry that routes ``conversation`` to its root."""
    return name_id(f"conversation\x00{host}\x00{conversation}")


def ledger_id(host: str, folder: str) -> UUID:
    """The id of the import ledger of one host's history folder (an absolute path)."""
    return name_id(f"import-ledger\x00{host}\x00{folder}")
