"""Incremental bookkeeping shared by the importers: what was read, kept in the journal.

One :class:`~lineage_es.import_ledger.ImportLedger` aggregate per (host, folder) remembers, per
file, its size, mtime and the byte offset after the last complete line read, with the reader
state needed to go on from there. A re-import stats the folder, loads that one aggregate and reads
only files whose size or mtime moved, from their offset. Each run appends one ledger event
(or one per batch of files), so it works alike on memory, SQLite and PostgreSQL, survives
``lineage journal export``/``import`` and replays like everything else.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from lineage_es.errors import InputError, LineageError, UnknownConversation
from lineage_es.facts import Observation
from lineage_es.import_ledger import ImportLedger, ledger_id

if TYPE_CHECKING:
    from lineage_es.engine import Engine


class Progress(Protocol):
    """Told how many bytes an import will read, then each step of the way."""

    def begin(self, total: int) -> None: ...

    def advance(self, done: int) -> None: ...


class _Silent:
    def begin(self, total: int) -> None:
        pass

    def advance(self, done: int) -> None:
        pass


SILENT: Progress = _Silent()


@dataclass
class ImportReport:
    """What one import did: files found, read and left alone, what was placed, and every
    skipped row or file counted by reason."""

    host: str
    folder: str
    files: int = 0
    read: int = 0
    unchanged: int = 0
    bytes: int = 0
    observations: int = 0
    partial: int = 0
    internal: int = 0
    gone: int = 0
    roots: set[str] = field(default_factory=set)
    subagents: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)
    deleted: list[str] = field(default_factory=list)

    def summary(self) -> list[str]:
        """The report as a few lines for a person."""
        lines = [
            f"{self.host} history in {self.folder}: {self.files} files, {self.read} read "
            f"({self.bytes:,} bytes), {self.unchanged} unchanged",
            f"{len(self.roots)} roots and {len(self.subagents)} subagents seen, "
            f"{self.observations} observations journaled",
        ]
        if self.internal:
            lines.append(f"{self.internal} agent files of the host's own helpers (not children)")
        if self.partial:
            lines.append(f"{self.partial} partial last lines left for the next import")
        if self.gone:
            verb = "deleted" if self.deleted else "kept (use --reconcile to delete them)"
            lines.append(
                f"{self.gone} files gone from disk; their conversations {verb}"
                + (f": {len(self.deleted)} conversations" if self.deleted else "")
            )
        for reason, count in sorted(self.skipped.items()):
            lines.append(f"skipped {count}: {reason}")
        return lines


class Found(NamedTuple):
    """A history file on disk: its path relative to the folder (with ``/``), its full
    path, size and mtime."""

    rel: str
    path: str
    size: int
    mtime: int


def history_folder(folder: Path | None, default: Path) -> Path:
    """The folder an import reads: the one given or the host's default, made absolute;
    :class:`InputError` when it is not a folder."""
    root = (folder or default).expanduser().resolve()
    if not root.is_dir():
        raise InputError("not a folder", path=str(root))
    return root


def walk(
    folder: Path,
    keep: Callable[[str], bool],
    note: tuple[Callable[[str], bool], set[str]] | None = None,
) -> Iterator[Found]:
    """Every file below ``folder`` whose name ``keep`` accepts, with its size and mtime;
    unreadable folders are passed over (their files cannot be read either). With ``note``
    (a test of names, a set), the path of every entry whose name passes the test, of
    whatever kind, is added to the set: what is not there needs no look on disk.

    Plain ``os.scandir`` and string paths: a re-import with nothing changed is mostly this.
    """
    prefix = len(str(folder)) + 1
    stack = [str(folder)]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if note is not None and note[0](entry.name):
                note[1].add(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif keep(entry.name) and entry.is_file():
                    stat = entry.stat()
                    rel = entry.path[prefix:].replace(os.sep, "/")
                    yield Found(rel, entry.path, stat.st_size, stat.st_mtime_ns)
            except OSError:
                continue


class Ledger:
    """The import ledger of one folder, with this run's changes until :meth:`save`."""

    def __init__(self, engine: Engine, host: str, folder: Path) -> None:
        self.engine = engine
        self.host = host
        self.folder = str(folder)
        try:
            self.aggregate: ImportLedger = engine.app.repository.get(ledger_id(host, self.folder))
        except AggregateNotFoundError:
            self.aggregate = ImportLedger.open(host, self.folder)
        self._files: dict[str, Any] = {}
        self._groups: dict[str, Any] = {}

    @property
    def files(self) -> dict[str, Any]:
        """Every entry as last saved (this run's changes are not in it until saved)."""
        entries: dict[str, Any] = self.aggregate.files
        return entries

    def entry(self, rel: str) -> dict[str, Any] | None:
        found = self._files.get(rel, self.aggregate.files.get(rel))
        return found if isinstance(found, dict) else None

    def group(self, key: str) -> dict[str, Any]:
        found = self._groups.get(key, self.aggregate.groups.get(key))
        return found if isinstance(found, dict) else {}

    def unchanged(self, found: Found) -> bool:
        entry = self.entry(found.rel)
        return entry is not None and (entry["size"], entry["mtime"]) == (found.size, found.mtime)

    def put(self, rel: str, entry: dict[str, Any]) -> None:
        self._files[rel] = entry

    def put_group(self, key: str, state: dict[str, Any]) -> None:
        self._groups[key] = state

    def save(self) -> None:
        """Journal this run's changes as one ledger event."""
        self.aggregate.record(self._files, self._groups)
        self._commit()
        self._files, self._groups = {}, {}

    def forget(self, paths: Iterable[str]) -> None:
        self.aggregate.forget(list(paths))
        self._commit()

    def _commit(self) -> None:
        if not self.aggregate.pending_events:
            return
        try:
            self.engine.app.save(self.aggregate)
        except IntegrityError:
            raise LineageError(
                f"another import of {self.folder} saved its ledger first; run this one again "
                "(what it journaled is kept, and is not journaled twice)"
            ) from None


Timed = tuple[datetime, int, int, Observation]
"""An observation with where it sorts: the host's time, then the file's rank and line."""


def feed(engine: Engine, timed: list[Timed], report: ImportReport) -> None:
    """Observe ``timed`` in the hosts' time order, so every event carries the host's own
    time and the rules see spawns before the children that answer them."""
    timed.sort(key=lambda item: item[:3])
    observations = [item[3] for item in timed]
    many = getattr(engine, "observe_many", None)
    if callable(many):  # a batched engine call, when the engine offers one
        # One transaction for all of them: a batch holds at most BATCH_BYTES' worth of
        # sessions, and each transaction costs the engine a catch-up and a commit.
        many(observations, batch=max(len(observations), 1))
    else:
        for observation in observations:
            engine.observe_observation(observation)
    report.observations += len(observations)


def reconcile(engine: Engine, ledger: Ledger, present: set[str], report: ImportReport) -> None:
    """Delete, as ``gc``, the conversations of files that are gone from disk, journaled like
    any delete (so ``family()`` stops listing them); then drop those files from the ledger.
    Agent files go first, so each subagent whose own file is gone is recorded as ``gc``."""
    gone = [rel for rel in ledger.files if rel not in present]
    gone.sort(key=lambda rel: (ledger.files[rel].get("kind") == "main", rel))
    engine.catch_up()
    for rel in gone:
        for conversation in ledger.files[rel].get("owns") or ():
            row = engine.queries.find(conversation, ledger.host)
            if row is None or row.status == "deleted":
                continue
            try:
                engine.delete(conversation, "gc", host=ledger.host)
            except UnknownConversation:
                continue
            report.deleted.append(conversation)
    ledger.forget(gone)


def count_gone(ledger: Ledger, present: set[str], report: ImportReport) -> None:
    report.gone = sum(1 for rel in ledger.files if rel not in present)
