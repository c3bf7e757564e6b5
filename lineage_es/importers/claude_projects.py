"""Import a Claude Code projects folder (``~/.claude/projects``) into the journal.

A session and its agent files (which files those are: :mod:`.claude_layout`) are read
together, and their observations are journaled in the host's own time order.

Sessions are read apart from each other, so a large import reads them in forked worker
processes (:mod:`~lineage_es.importers.forked`) and takes what they found in order, journaling
one batch while they read the next: the journal is the same as one process makes.

This module finds the sessions that changed and drives their reading; the rest has a module
of its own:

- :mod:`.claude_layout`: which files make a session;
- :mod:`.claude_session`: reading one session's files (which lines to parse, what they say,
  each file's start and stop);
- :mod:`.claude_placement`: where the transcripts place an agent;
- :mod:`.claude_carryover`: what one import leaves the next about a session still being
  written;
- :mod:`.claude_fileless`: a session known only from its agents' files (its own is gone, or
  not there yet);
- :mod:`.claude_session_state`: the state those three share, and how facts become
  observations in it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_es.hosts.claude import HOST
from lineage_es.hosts.claude_transcript import AGENT_FILE
from lineage_es.importers.claude_layout import (
    SessionFiles,
    head_session,
    is_sidecar,
    is_transcript,
    nested_session,
)
from lineage_es.importers.claude_session import SessionOutcome, SessionReader
from lineage_es.importers.forked import in_order
from lineage_es.importers.ledger import (
    SILENT,
    Found,
    ImportReport,
    Ledger,
    Progress,
    Timed,
    count_gone,
    feed,
    history_folder,
    reconcile,
    walk,
)
from lineage_es.importers.lines import MAX_FILE_BYTES

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

DEFAULT_FOLDER = Path("~/.claude/projects")

#: Journal this many bytes' worth of sessions, then save the ledger: an interrupted import
#: keeps what it finished.
BATCH_BYTES = 256 * 1024 * 1024

#: Read sessions in forked worker processes when an import has at least this many bytes to
#: read (searching the bytes for markers is most of an import's own time, and holds the GIL).
PARALLEL_BYTES = 32 * 1024 * 1024

#: At most this many reading processes.
MAX_WORKERS = 4


def import_claude(
    engine: Engine,
    folder: Path | None = None,
    *,
    reconcile_gone: bool = False,
    progress: Progress = SILENT,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> ImportReport:
    """Import every session under ``folder`` (default ``~/.claude/projects``) that changed
    since the last import into ``engine``; with ``reconcile_gone``, delete (as ``gc``) the
    conversations whose transcript files are gone."""
    root = history_folder(folder, DEFAULT_FOLDER)
    return _Import(engine, root, progress, max_file_bytes).run(reconcile_gone)


# -- finding sessions ---------------------------------------------------------------------------


class _Import:
    def __init__(self, engine: Engine, folder: Path, progress: Progress, max_bytes: int) -> None:
        self.engine = engine
        self.folder = folder
        self.progress = progress
        self.max_bytes = max_bytes
        self.report = ImportReport(HOST, str(folder))
        self.ledger = Ledger(engine, HOST, folder)
        #: Every agent sidecar's path (found by the walk): an agent without one is not looked
        #: up on disk.
        self.sidecars: set[str] = set()

    def run(self, reconcile_gone: bool) -> ImportReport:
        found = list(
            walk(
                self.folder,
                is_transcript,
                note=(is_sidecar, self.sidecars),
                report=self.report,
            )
        )
        self.report.files = len(found)
        present = {f.rel for f in found}
        groups = self._groups(found)
        todo: list[SessionFiles] = []
        sizes: list[int] = []
        for group in groups:
            files = [f for f in [group.main, *group.agents] if f is not None]
            changed = [f for f in files if not self.ledger.unchanged(f)]
            self.report.unchanged += len(files) - len(changed)
            # What an earlier run held back waits for a change in the session's files:
            # an import that finds none observes nothing (as the one before, it holds back).
            if changed:
                todo.append(group)
                sizes.append(sum(f.size - self._offset(f) for f in changed))
        self.progress.begin(sum(sizes))
        timed: list[Timed] = []
        pending = 0
        for outcome in self._read(todo, sizes):
            self._merge(outcome)
            timed.extend(outcome.timed)
            pending += outcome.bytes
            if pending >= BATCH_BYTES:
                self._flush(timed)
                timed, pending = [], 0
        self._flush(timed)
        count_gone(self.ledger, present, self.report)
        if reconcile_gone:
            reconcile(self.engine, self.ledger, present, self.report)
        return self.report

    def _read(self, todo: list[SessionFiles], sizes: list[int]) -> Iterator[SessionOutcome]:
        """Each session of ``todo`` read, in order: here, or by forked workers while this
        process journals what they read before (the outcomes, and so the journal, are the
        same either way)."""
        workers = _workers(len(todo), sum(sizes))
        if workers < 2:
            for group in todo:
                yield SessionReader(self, group, self.progress).read()
            return

        def work(task: int) -> SessionOutcome:
            return SessionReader(self, todo[task], SILENT).read()

        for outcome in in_order(work, sizes, workers):
            self.progress.advance(outcome.advanced)
            yield outcome

    def _merge(self, outcome: SessionOutcome) -> None:
        """What one session's reading found goes into the ledger and the report."""
        # Only what changed: an import that finds nothing new journals nothing, not even
        # its ledger.
        for rel, entry in outcome.entries.items():
            if entry != self.ledger.entry(rel):
                self.ledger.put(rel, entry)
        if outcome.state != self.ledger.group(outcome.key):
            self.ledger.put_group(outcome.key, outcome.state)
        found, report = outcome.report, self.report
        report.read += found.read
        report.bytes += found.bytes
        report.partial += found.partial
        report.internal += found.internal
        report.roots |= found.roots
        report.subagents |= found.subagents
        report.skipped.update(found.skipped)

    def _offset(self, found: Found) -> int:
        """Where reading ``found`` will start (for the progress bar's length)."""
        entry = self.ledger.entry(found.rel)
        offset = int(entry.get("offset", 0)) if entry else 0
        return offset if offset <= found.size else 0

    def _flush(self, timed: list[Timed]) -> None:
        feed(self.engine, timed, self.report)
        self.ledger.save()

    def _groups(self, found: list[Found]) -> list[SessionFiles]:
        groups: dict[str, SessionFiles] = {}

        def group(key: str) -> SessionFiles:
            return groups.setdefault(key, SessionFiles(key))

        flat: list[Found] = []
        for item in found:
            nested = nested_session(item.rel)
            name = item.rel.rsplit("/", 1)[-1]
            if nested is not None:
                group(nested).agents.append(item)
            elif "/subagents/" in f"/{item.rel}":
                continue  # workflow agents and anything else below subagents/
            elif AGENT_FILE.fullmatch(name):
                flat.append(item)
            else:
                group(item.rel[: -len(".jsonl")]).main = item
        strays: dict[str, list[Found]] = {}
        for item in flat:  # flat agent files belong to the session their rows name
            entry = self.ledger.entry(item.rel)
            session = entry.get("session") if entry is not None else None
            # A file read before its first row was complete names its session only now.
            session = session or head_session(Path(item.path))
            project = item.rel.rsplit("/", 1)[0] if "/" in item.rel else ""
            if not session:
                strays.setdefault(project, []).append(item)
            key = f"{project}/{session}" if session else f"flat:{item.rel}"
            group(key.lstrip("/")).agents.append(item)
        for key, session in groups.items():
            if not key.startswith("flat:"):
                session.strays = strays.get(session.project, [])
        return [groups[k] for k in sorted(groups)]


# -- reading sessions ---------------------------------------------------------------------------


def _workers(sessions: int, total: int) -> int:
    """How many processes should read: one (this one) for a small import, where a single
    core is all there is, where ``fork`` is not the platform's safe default, and where other
    threads run (a forked child would inherit their locks held)."""
    if total < PARALLEL_BYTES or sessions < 2 or not sys.platform.startswith("linux"):
        return 1
    if threading.active_count() > 1:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return min(cores, MAX_WORKERS, sessions)
