"""Incremental bookkeeping shared by the importers: what was read, kept in the journal.

One :class:`~lineage_es.domain.ledger.ImportLedger` aggregate per (host, folder) remembers, per
file, its size, mtime and the byte offset after the last complete line read, with the reader
state needed to go on from there. A re-import stats the folder, loads that one aggregate and reads
only files whose size or mtime moved, from their offset. Each run appends one ledger event
(or one per batch of files), so it works alike on memory, SQLite and PostgreSQL, survives
``lineage journal export``/``import`` and replays like everything else.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lineage_es.domain.ledger import ImportLedger
from lineage_es.importers.walk import Found

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

#: How many bytes before a file's saved offset its ledger entry keeps (``check``): they tell
#: a file appended to from one replaced since.
TAIL_CHECK_BYTES = 32


class Ledger:
    """The import ledger of one folder, with this run's changes until :meth:`save`."""

    def __init__(self, engine: Engine, host: str, folder: Path) -> None:
        self.store = engine.ledgers
        self.host = host
        self.folder = str(folder)
        self.aggregate = self.store.load(host, self.folder) or ImportLedger.open(host, self.folder)
        self._files: dict[str, Any] = {}
        self._groups: dict[str, Any] = {}

    @property
    def files(self) -> dict[str, Any]:
        """Every entry as last saved (this run's changes are not in it until saved)."""
        entries: dict[str, Any] = self.aggregate.files
        return entries

    def entry(self, rel: str) -> dict[str, Any] | None:
        """The entry of the file at ``rel`` with this run's changes; ``None`` if never read."""
        found = self._files.get(rel, self.aggregate.files.get(rel))
        return found if isinstance(found, dict) else None

    def group(self, key: str) -> dict[str, Any]:
        """The reader state kept under ``key`` with this run's changes (``{}`` if none)."""
        found = self._groups.get(key, self.aggregate.groups.get(key))
        return found if isinstance(found, dict) else {}

    def unchanged(self, found: Found) -> bool:
        """Whether the file has the size and mtime it had when last read."""
        entry = self.entry(found.rel)
        return entry is not None and (entry["size"], entry["mtime"]) == (found.size, found.mtime)

    def resume_offset(self, found: Found, *, resumable: bool = True) -> int:
        """Where reading ``found`` will start (for the progress bar's length): its saved
        offset, or 0 for a file read whole (not ``resumable``) or shrunk since."""
        entry = self.entry(found.rel)
        offset = int(entry.get("offset", 0)) if entry and resumable else 0
        return offset if offset <= found.size else 0

    def put(self, rel: str, entry: dict[str, Any]) -> None:
        self._files[rel] = entry

    def put_group(self, key: str, state: dict[str, Any]) -> None:
        self._groups[key] = state

    def save(self) -> None:
        """Journal this run's changes as one ledger event (a conflicting import's save
        raises :class:`~lineage_es.engine.ledgers.LedgerConflict`)."""
        self.aggregate.record(self._files, self._groups)
        self.store.save(self.aggregate)
        self._files, self._groups = {}, {}

    def forget(self, paths: Iterable[str]) -> None:
        """Journal that the files at ``paths`` are no longer tracked."""
        self.aggregate.forget(list(paths))
        self.store.save(self.aggregate)

    def other_folders(self) -> list[tuple[str, dict[str, Any]]]:
        """Every other folder imported for this ledger's host, with its ledger's entries."""
        found: list[tuple[str, dict[str, Any]]] = []
        for folder in self.store.other_folders(self.host, self.folder):
            other = self.store.load(self.host, folder)
            if other is not None:
                found.append((folder, other.files))
        return found


def tail_before(path: str, offset: int) -> bytes | None:
    """Up to :data:`TAIL_CHECK_BYTES` bytes just before ``offset`` of the file at ``path``
    (what its entry's ``check`` keeps); ``None`` when the file cannot be read."""
    if offset <= 0:
        return b""
    try:
        with open(path, "rb") as stream:
            stream.seek(max(0, offset - TAIL_CHECK_BYTES))
            return stream.read(min(TAIL_CHECK_BYTES, offset))
    except OSError:
        return None
