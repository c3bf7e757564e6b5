"""Explicit exceptions: every failure a caller can act on has its own type."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


class LineageError(Exception):
    """Base of every error lineage_es raises on purpose."""


class PayloadError(LineageError):
    """A host payload cannot be understood: not an object, a missing or mistyped field,
    too large or too deep. Nothing is journaled from it."""

    def __init__(self, reason: str, *, host: str | None = None) -> None:
        self.host = host
        self.reason = reason
        super().__init__(f"{host}: {reason}" if host else reason)


class UnknownHost(PayloadError):
    """No host adapter recognises the payload, or the host name is not one we know."""


class StoreError(LineageError):
    """A store URL cannot be opened or is not one we support."""


class NoJournal(StoreError):
    """A store opened only to read names a SQLite file that does not exist: nothing has
    been journaled there, and nothing is created (a mistyped path must not answer as an
    empty journal)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"no journal at {path}")


class StoreLocked(StoreError):
    """Another connection held a lock the store needed for longer than the lock timeout: the
    call gave up after one wait (``waited`` seconds, when known) and was not retried; the
    statement that waited wrote nothing (what the call journaled before it stays journaled,
    and the view catches up on the next call). ``holder`` names who held the lock when the
    database can tell (PostgreSQL: pid, ``application_name``, client address, since when);
    SQLite cannot."""

    def __init__(
        self,
        store: str,
        *,
        waited: float | None = None,
        holder: str | None = None,
        message: str | None = None,
    ) -> None:
        self.store = store
        self.waited = waited
        self.holder = holder
        if message is None:
            wait = f"gave up after {waited:g} s" if waited is not None else "gave up"
            held = holder or "another connection (the database does not say which)"
            message = f"store {store} is locked: {wait} waiting for a lock held by {held}"
        super().__init__(message)


class EngineClosed(StoreError):
    """A call on an engine after its ``close()``: its connections are gone, and a closed
    engine must neither answer nor journal."""

    def __init__(self, store: str) -> None:
        self.store = store
        super().__init__(f"the engine is closed ({store})")


class InvalidArgument(LineageError):
    """A call's argument is of the wrong type or holds what the journal cannot keep (a blank
    name, a control character). Refused before anything is journaled: a journaled value the
    view cannot hold would fail every later projection."""


class ConcurrencyError(LineageError):
    """Other writers kept winning the race for the same root; the observation was not saved
    (each lost race is retried from fresh state, a bounded number of times)."""


class UnknownConversation(LineageError):
    """A query or command names a conversation the journal has never seen."""

    def __init__(self, conversation: str) -> None:
        self.conversation = conversation
        super().__init__(f"unknown conversation {conversation!r}")


class AmbiguousConversation(LineageError):
    """A conversation id is known under several hosts; say which host is meant."""

    def __init__(self, conversation: str, hosts: list[str]) -> None:
        self.conversation = conversation
        self.hosts = hosts
        super().__init__(
            f"conversation {conversation!r} is known under several hosts: {', '.join(hosts)}"
        )


class JournalFormatError(LineageError):
    """An exported journal cannot be imported: names the line and the reason."""

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}" if line is not None else reason)


class InputError(LineageError):
    """A recorded stream or expected file is unusable: names the file, the line and why."""

    def __init__(self, reason: str, *, path: str | None = None, line: int | None = None) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        where = f"{path}:{line}" if path and line else (path or (f"line {line}" if line else ""))
        super().__init__(f"{where}: {reason}" if where else reason)
