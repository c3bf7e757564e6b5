"""The import ledgers in the journal: what ``lineage import`` read of each host folder.

:class:`LedgerStore` is the one door the importers go through to the journal's
:class:`~lineage_es.domain.ledger.ImportLedger` aggregates: load one by host and folder, save
one, list the other folders imported for a host. The importers never see the eventsourcing
application behind it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from lineage_es.domain.ids import ledger_id
from lineage_es.domain.ledger import ImportLedger
from lineage_es.errors import LineageError
from lineage_es.read.decoding import PAGE_SIZE, decode

if TYPE_CHECKING:
    from uuid import UUID

    from eventsourcing.application import Application


class LedgerConflict(LineageError):
    """Another import of the same folder saved its ledger between this one's load and save."""

    def __init__(self, folder: str) -> None:
        super().__init__(
            f"another import of {folder} saved its ledger first; run this one again "
            "(what it journaled is kept, and is not journaled twice)"
        )
        self.folder = folder


class LedgerStore:
    """Loads and saves the import ledgers of one journal. Every call runs inside ``guard()``:
    the engine passes its own guard (its lock, a closed engine refused, the store's failures
    named), as for every public call of the engine."""

    def __init__(
        self,
        app: Application[UUID],
        guard: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.app = app
        self._guard = guard

    def load(self, host: str, folder: str) -> ImportLedger | None:
        """The ledger of ``host``'s history folder ``folder`` (an absolute path); ``None``
        when that folder was never imported. Read from the store, never the aggregate cache:
        another process may have saved it since this engine last did (an inbox's folder and
        its readers take turns on one ledger)."""
        with self._guard():
            aggregate_id = ledger_id(host, folder)
            cache = self.app.repository.cache
            if cache is not None:
                with contextlib.suppress(KeyError):
                    cache.get(aggregate_id, evict=True)
            try:
                ledger: ImportLedger = self.app.repository.get(aggregate_id)
            except AggregateNotFoundError:
                return None
            return ledger

    def save(self, ledger: ImportLedger) -> None:
        """Journal the ledger's pending events (none: nothing is written). Raises
        :class:`LedgerConflict` when another import saved the same ledger meanwhile: the
        ledger's version check is the only lock two imports of one folder share."""
        if not ledger.pending_events:
            return
        with self._guard():
            try:
                self.app.save(ledger)
            except IntegrityError:
                raise LedgerConflict(ledger.folder) from None

    def other_folders(self, host: str, folder: str) -> list[str]:
        """Every folder imported for ``host`` except ``folder``, in the order first imported.
        Found by the ledgers' opening events (read by topic, a page at a time): they are the
        only record of which folders were imported."""
        with self._guard():
            return self._folders_other_than(host, folder)

    def _folders_other_than(self, host: str, folder: str) -> list[str]:
        recorder = self.app.recorder
        folders: list[str] = []
        position = 0
        while True:
            page = recorder.select_notifications(
                start=position,
                limit=PAGE_SIZE,
                topics=[ImportLedger.Created.TOPIC],
                inclusive_of_start=False,
            )
            if not page:
                return folders
            for notification in page:
                event = decode(notification)
                state = event.state if event is not None else {}
                other = state.get("folder")
                if state.get("host") == host and other not in (None, folder):
                    folders.append(str(other))
            position = page[-1].id
