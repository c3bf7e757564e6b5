"""Incremental bookkeeping shared by the importers: what was read, kept in the journal.

One :class:`~lineage_es.domain.ledger.ImportLedger` aggregate per (host, folder) remembers, per
file, its size, mtime and the byte offset after the last complete line read, with the reader
state needed to go on from there. A re-import stats the folder, loads that one aggregate and reads
only files whose size or mtime moved, from their offset. Each run appends one ledger event
(or one per batch of files), so it works alike on memory, SQLite and PostgreSQL, survives
``lineage journal export``/``import`` and replays like everything else.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from lineage_es.domain.ledger import ImportLedger, ledger_id
from lineage_es.errors import InputError, LineageError, UnknownConversation
from lineage_es.facts import Observation
from lineage_es.read.projection import PAGE_SIZE, decode

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

#: Why :func:`walk` passed over something below the folder (a file's rows are counted by the
#: readers, under the reasons of :mod:`lineage_es.importers.lines`).
UNREADABLE_FOLDER = "unreadable folder (its files are neither read nor counted as gone)"
DANGLING_LINK = "symbolic link to nothing (dangling, or a loop)"
NOT_REGULAR = "not a regular file (a FIFO, socket or device: never opened)"
UNREADABLE_ENTRY = "unreadable file"


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
    #: Observations the files read gave the engine (each a row's lineage facts), new or not.
    observations: int = 0
    #: Lineage events the engine wrote for them: observations it knew already write none.
    journaled: int = 0
    partial: int = 0
    internal: int = 0
    gone: int = 0
    roots: set[str] = field(default_factory=set)
    subagents: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)
    #: Whether ``--reconcile`` looked at the files gone from disk.
    reconciled: bool = False
    #: Conversations deleted as ``gc``: every file holding them is gone.
    deleted: list[str] = field(default_factory=list)
    #: Nodes the deletes took with them, below those (``parent-teardown``).
    cascaded: list[str] = field(default_factory=list)
    #: Conversations of gone files kept, as a file still on disk holds them.
    kept: list[str] = field(default_factory=list)
    #: Folders (relative to ``folder``) that could not be listed: their files are not gone.
    unlisted: set[str] = field(default_factory=set)

    def summary(self) -> list[str]:
        """The report as a few lines for a person."""
        lines = [
            f"{self.host} history in {self.folder}: {self.files} files, {self.read} read "
            f"({self.bytes:,} bytes), {self.unchanged} unchanged",
            f"{len(self.roots)} roots and {len(self.subagents)} subagents seen in the files "
            f"read; {self.observations} observations made of them, "
            f"{self.journaled} new lineage events journaled",
        ]
        if self.internal:
            lines.append(f"{self.internal} agent files of the host's own helpers (not children)")
        if self.partial:
            lines.append(f"{self.partial} partial last lines left for the next import")
        if self.gone and not self.reconciled:
            lines.append(
                f"{self.gone} files gone from disk; their conversations kept "
                "(use --reconcile to delete them)"
            )
        elif self.gone:
            line = (
                f"{self.gone} files gone from disk: deleted {len(self.deleted)} conversations "
                f"whose files are gone, and {len(self.cascaded)} below them"
            )
            if self.kept:
                line += f"; kept {len(self.kept)} still held by files on disk"
            lines.append(line)
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
    report: ImportReport | None = None,
) -> Iterator[Found]:
    """Every regular file below ``folder`` whose name ``keep`` accepts, with its size and
    mtime. With ``note`` (a test of names, a set), the path of every entry whose name passes
    the test, of whatever kind, is added to the set: what is not there needs no look on disk.

    What cannot be read is passed over and, with ``report``, counted in its ``skipped``: a
    folder that cannot be listed (its path also goes to ``report.unlisted``, so that its files
    are not taken for gone), a symbolic link to nothing, and a FIFO, socket or device with a
    history file's name (stat'ed, never opened: opening a FIFO would block).

    Plain ``os.scandir`` and string paths: a re-import with nothing changed is mostly this.
    """
    skips: Counter[str] = report.skipped if report is not None else Counter()
    base = str(folder)
    prefix = len(base) + 1
    stack = [base]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except FileNotFoundError:
            continue  # gone since its parent was listed
        except OSError:
            skips[UNREADABLE_FOLDER] += 1
            if report is not None:
                report.unlisted.add(current[prefix:].replace(os.sep, "/"))
            continue
        for entry in entries:
            if note is not None and note[0](entry.name):
                note[1].add(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
            except OSError:
                continue
            if not keep(entry.name):
                continue
            try:
                stat = entry.stat()  # follows a symbolic link; opens nothing
            except FileNotFoundError:
                if entry.is_symlink():
                    skips[DANGLING_LINK] += 1
                continue  # otherwise deleted since the folder was listed
            except OSError:
                skips[DANGLING_LINK if entry.is_symlink() else UNREADABLE_ENTRY] += 1
                continue
            if stat_module.S_ISREG(stat.st_mode):
                rel = entry.path[prefix:].replace(os.sep, "/")
                yield Found(rel, entry.path, stat.st_size, stat.st_mtime_ns)
            elif not stat_module.S_ISDIR(stat.st_mode):
                skips[NOT_REGULAR] += 1


def _listed(rel: str, unlisted: set[str]) -> bool:
    """Whether ``rel`` lies outside every folder that could not be listed (``""`` is the
    history folder itself)."""
    return not any(folder == "" or rel.startswith(folder + "/") for folder in unlisted)


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
    time and the rules see spawns before the children that answer them. ``report`` counts
    the observations made and the lineage events they wrote: the journal's position moved by
    that much (by more only when another process wrote to the same store meanwhile)."""
    timed.sort(key=lambda item: item[:3])
    observations = [item[3] for item in timed]
    before = engine.position()
    many = getattr(engine, "observe_many", None)
    if callable(many):  # a batched engine call, when the engine offers one
        # One transaction for all of them: a batch holds at most BATCH_BYTES' worth of
        # sessions, and each transaction costs the engine a catch-up and a commit.
        many(observations, batch=max(len(observations), 1))
    else:
        for observation in observations:
            engine.observe_observation(observation)
    report.observations += len(observations)
    report.journaled += engine.position() - before


def reconcile(
    engine: Engine,
    ledger: Ledger,
    present: set[str],
    report: ImportReport,
    *,
    moved_to: Sequence[Path] = (),
) -> None:
    """Delete, as ``gc``, each conversation every file holding it is gone from disk,
    journaled like any delete (so ``family()`` stops listing it); then drop the gone files
    from the ledger.

    A ledger entry's ``owns`` lists the conversations the file speaks for (its own rows:
    a session, an agent, a Codex thread and its continuations) and the children it names by
    their spawns. A file speaks for a conversation unless it also owns that conversation's
    parent. A file still on disk holds a conversation it speaks for, and one it only names
    that no file speaks for (a child with no transcript of its own): so a Codex thread stays
    while a continuation file remains, and a Claude agent whose own file is gone is deleted
    though its session's file, which names it, remains. A delete takes the subtree below
    (``parent-teardown``): a session whose own file is gone goes with its agents, even when
    their files remain (Claude Code's cleanup leaves ``subagents/`` behind). Deepest first,
    so each conversation of a gone file is recorded as ``gc`` itself.

    Files of the host's other imported folders hold conversations too, when still on disk:
    Codex archives a thread by moving its rollout to another folder, which is no delete.
    A gone file whose name lies in such a folder, not imported from there yet, holds what
    it held until it is; so does one whose name lies in a folder of ``moved_to`` (where the
    host's importer knows the host moves files), imported or not.
    """
    report.reconciled = True
    files = ledger.files
    unlisted = report.unlisted
    gone = [rel for rel in files if rel not in present and _listed(rel, unlisted)]
    if not gone:
        return
    engine.catch_up()
    others = _other_folders(engine, ledger)
    places = [*others, *((str(folder), {}) for folder in moved_to)]
    moved = {rel for rel in gone if _moved_to(rel, places)}
    # Each conversation of a gone file with every file that holds it, here or in another
    # folder of the host: what that file owns, and whether it is still on disk.
    holders: dict[str, list[tuple[Any, bool]]] = {}
    for rel in gone:
        for conversation in files[rel].get("owns") or ():
            holders.setdefault(conversation, [])
    for rel, entry in files.items():
        owns = entry.get("owns") or ()
        here = rel in present or rel in moved or not _listed(rel, unlisted)
        for conversation in owns:
            if conversation in holders:
                holders[conversation].append((owns, here))
    for folder, entries in others:
        for rel, entry in entries.items():
            owns = entry.get("owns") or ()
            wanted = [conversation for conversation in owns if conversation in holders]
            if wanted:
                there = _on_disk(os.path.join(folder, *rel.split("/")))
                for conversation in wanted:
                    holders[conversation].append((owns, there))
    doomed: list[tuple[int, str]] = []
    for conversation, held in holders.items():
        row = engine.queries.find(conversation, ledger.host)
        if row is None or row.status == "deleted":
            continue
        speakers = [h for h in held if row.parent not in h[0]]
        holding = speakers or held  # a child no file speaks for is held by those naming it
        if any(on_disk for _, on_disk in holding):
            report.kept.append(conversation)
        else:
            doomed.append((row.depth, conversation))
    doomed.sort(key=lambda item: (-item[0], item[1]))
    for _, conversation in doomed:
        row = engine.queries.find(conversation, ledger.host)
        if row is None or row.status == "deleted":
            continue  # taken with a parent already (depths can disagree with the files)
        before = engine.position()
        try:
            engine.delete(conversation, "gc", host=ledger.host)
        except UnknownConversation:
            continue
        report.deleted.append(conversation)
        for event in engine.journal(before):
            state = event.state
            if event.topic.endswith(".Deleted") and state.get("reason") == "parent-teardown":
                report.cascaded.append(str(state.get("conversation") or state.get("spawn_key")))
    taken = set(report.cascaded)
    report.kept = [conversation for conversation in report.kept if conversation not in taken]
    ledger.forget(gone)


def _other_folders(engine: Engine, ledger: Ledger) -> list[tuple[str, dict[str, Any]]]:
    """Every other folder imported for ``ledger``'s host, with its ledger's entries: a file
    moved there (Codex archives a thread by moving its rollout to ``archived_sessions``)
    still holds what it held. Found by the ledgers' opening events, the only record of
    which folders were imported."""
    recorder = engine.app.recorder
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
            break
        for notification in page:
            event = decode(notification)
            state = event.state if event is not None else {}
            folder = state.get("folder")
            if state.get("host") == ledger.host and folder not in (None, ledger.folder):
                folders.append(str(folder))
        position = page[-1].id
    found: list[tuple[str, dict[str, Any]]] = []
    for folder in folders:
        try:
            other: ImportLedger = engine.app.repository.get(ledger_id(ledger.host, folder))
        except AggregateNotFoundError:
            continue
        found.append((folder, other.files))
    return found


def _moved_to(rel: str, others: list[tuple[str, dict[str, Any]]]) -> bool:
    """Whether a file of that name lies in another imported folder, at the same path or at
    its top (``archived_sessions`` is flat), though not imported from there yet: until it
    is, it is taken to hold what the gone file held."""
    name = rel.rsplit("/", 1)[-1]
    return any(
        _on_disk(os.path.join(folder, name)) or _on_disk(os.path.join(folder, *rel.split("/")))
        for folder, _ in others
    )


def _on_disk(path: str) -> bool:
    """Whether ``path`` exists; a path that cannot be looked at (a folder without search
    permission) counts as there: only a file known gone lets its conversations go."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return True
    return True


def count_gone(ledger: Ledger, present: set[str], report: ImportReport) -> None:
    """How many files the ledger knows are gone from disk (those in folders that could not be
    listed may well be there)."""
    report.gone = sum(
        1 for rel in ledger.files if rel not in present and _listed(rel, report.unlisted)
    )
