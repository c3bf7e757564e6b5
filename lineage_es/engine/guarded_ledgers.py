"""The engine's import ledgers: :class:`~lineage_es.engine.ledgers.LedgerStore` with every
call under the engine's guard (its lock, a closed engine refused, the store's failures
named), as every public call of the engine is. Loaded only when an import asks for it."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from lineage_es.domain.ledger import ImportLedger
from lineage_es.engine.application import LineageApplication
from lineage_es.engine.ledgers import LedgerStore


class GuardedLedgerStore(LedgerStore):
    """A :class:`LedgerStore` whose calls run inside ``guard()``."""

    def __init__(
        self, app: LineageApplication, guard: Callable[[], AbstractContextManager[None]]
    ) -> None:
        super().__init__(app)
        self._guard = guard

    def load(self, host: str, folder: str) -> ImportLedger | None:
        with self._guard():
            return super().load(host, folder)

    def save(self, ledger: ImportLedger) -> None:
        with self._guard():
            super().save(ledger)

    def other_folders(self, host: str, folder: str) -> list[str]:
        with self._guard():
            return super().other_folders(host, folder)
