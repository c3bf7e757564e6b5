"""The body every host's import shares: find the folder's files, load its ledger, journal
what the host's reader makes of them batch by batch (the ledger saved after each), count and
reconcile the files gone, and report.

A host's importer supplies only what is its own: which files are history
(``wanted``), how to read them (``plan``: how many bytes it will read, then its batches)
and where the host moves files it archives (``moved_to``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from lineage_es.facts import Observation
from lineage_es.importers.ledger import Ledger
from lineage_es.importers.reconcile import count_gone, reconcile
from lineage_es.importers.report import ImportReport, Progress
from lineage_es.importers.walk import Found, walk

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine


class Importer(Protocol):
    """A host's import of its history folder (``import_claude``, ``import_codex``)."""

    def __call__(
        self,
        engine: Engine,
        folder: Path | None = None,
        *,
        reconcile_gone: bool = False,
        progress: Progress = ...,
        max_file_bytes: int = ...,
    ) -> ImportReport: ...


Timed = tuple[datetime, int, int, Observation]
"""An observation with where it sorts: the host's time, then the file's rank and line."""


@dataclass
class ImportRun:
    """One import of one folder, as a host's reader sees it."""

    engine: Engine
    folder: Path
    ledger: Ledger
    report: ImportReport
    progress: Progress
    max_file_bytes: int
    #: The path of every entry below the folder whose name the host's ``noted`` test passed
    #: (Claude's agent sidecars): what is not here needs no look on disk.
    noted: set[str] = field(default_factory=set)


@dataclass
class Batch:
    """Observations to journal together, then save the ledger.

    ``timed`` is sorted in place, into the order it is journaled in, before ``journaled`` is
    called with the journal position before the batch (for a reader that must see what the
    engine journaled of it before the ledger is saved)."""

    timed: list[Timed]
    journaled: Callable[[int], None] | None = None


@dataclass
class Plan:
    """How a host's reader will read the files that changed: how many bytes in all (for the
    progress bar), then its batches, read lazily as they are journaled."""

    bytes: int
    batches: Iterator[Batch]


def import_history(
    engine: Engine,
    host: str,
    folder: Path,
    plan: Callable[[ImportRun, list[Found]], Plan],
    *,
    wanted: Callable[[str], bool],
    noted: Callable[[str], bool] | None = None,
    reconcile_gone: bool = False,
    moved_to: Sequence[Path] = (),
    progress: Progress,
    max_file_bytes: int,
) -> ImportReport:
    """Import ``host``'s history ``folder`` into ``engine``: the files whose names pass
    ``wanted``, as ``plan`` reads them; with ``reconcile_gone``, delete (as ``gc``) the
    conversations whose files are gone (``moved_to``: folders the host moves its files to,
    which is no delete)."""
    report = ImportReport(host, str(folder))
    run = ImportRun(engine, folder, Ledger(engine, host, folder), report, progress, max_file_bytes)
    note = (noted, run.noted) if noted is not None else None
    found = list(walk(folder, wanted, note=note, report=report))
    report.files = len(found)
    report.unchanged = sum(1 for f in found if run.ledger.unchanged(f))
    reading = plan(run, found)
    progress.begin(reading.bytes)
    for batch in reading.batches:
        before = journal_in_host_order(engine, batch.timed, report)
        if batch.journaled is not None:
            batch.journaled(before)
        run.ledger.save()
    present = {f.rel for f in found}
    count_gone(run.ledger, present, report)
    if reconcile_gone:
        reconcile(engine, run.ledger, present, report, moved_to=moved_to)
    return report


def journal_in_host_order(engine: Engine, timed: list[Timed], report: ImportReport) -> int:
    """Observe ``timed`` in the hosts' time order (sorting it in place), so every event
    carries the host's own time and the rules see spawns before the children that answer
    them; returns the journal position before. ``report`` counts the observations made and
    the lineage events they wrote: the journal's position moved by that much (by more only
    when another process wrote to the same store meanwhile)."""
    timed.sort(key=lambda item: item[:3])
    observations = [item[3] for item in timed]
    before = engine.position()
    # One transaction for all of them: a batch holds at most a host's batch size' worth of
    # files, and each transaction costs the engine a catch-up and a commit.
    engine.observe_many(observations, batch=max(len(observations), 1))
    report.observations += len(observations)
    report.journaled += engine.position() - before
    return before
