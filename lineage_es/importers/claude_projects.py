"""Import a Claude Code projects folder (``~/.claude/projects``) into the journal.

A session and its agent files (which files those are: :mod:`.claude_layout`) are read
together, and their observations are journaled in the host's own time order
(:func:`~.driver.import_history` does what every host's import does).

Sessions are read apart from each other, so a large import reads them in forked worker
processes (:mod:`~lineage_es.importers.forked`) and takes what they found in order, journaling
one batch while they read the next: the journal is the same as one process makes.

This module finds the sessions that changed and drives their reading; the rest has a module
of its own:

- :mod:`.claude_layout`: which files make a session;
- :mod:`.claude_session`: reading one session's files (what rows say, each file's start);
- :mod:`.claude_markers`: which lines of a file to parse;
- :mod:`.claude_file_stops`: each file's stop, and agents acting after stops;
- :mod:`.claude_placement`: where the transcripts place an agent;
- :mod:`.claude_carryover`: what one import leaves the next about a session still being
  written;
- :mod:`.claude_fileless`: a session known only from its agents' files (its own is gone, or
  not there yet);
- :mod:`.claude_session_state`: the state those share, and how facts become observations
  in it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from lineage_es.hosts.claude import HOST
from lineage_es.hosts.claude_agent_files import AGENT_FILE
from lineage_es.importers.claude_layout import (
    SessionFiles,
    head_session,
    is_sidecar,
    is_transcript,
    nested_session,
)
from lineage_es.importers.claude_session import SessionOutcome, SessionReader
from lineage_es.importers.claude_session_state import SessionContext
from lineage_es.importers.driver import Batch, ImportRun, Plan, Timed, import_history
from lineage_es.importers.forked import in_order
from lineage_es.importers.lines import MAX_FILE_BYTES
from lineage_es.importers.report import SILENT, ImportReport, Progress
from lineage_es.importers.walk import Found, history_folder

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.importers.ledger import Ledger

DEFAULT_FOLDER = Path("~/.claude/projects")

#: Journal this many bytes' worth of sessions, then save the ledger: an interrupted import
#: keeps what it finished. Small enough that the journaling of one batch runs while the
#: reading processes read the next, and the last batch (journaled after the reading ends)
#: is short; large enough that each batch's transaction and ledger save cost little.
BATCH_BYTES = 64 * 1024 * 1024

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
    return import_history(
        engine,
        HOST,
        history_folder(folder, DEFAULT_FOLDER),
        _plan_sessions,
        wanted=is_transcript,
        noted=is_sidecar,
        reconcile_gone=reconcile_gone,
        progress=progress,
        max_file_bytes=max_file_bytes,
    )


def _plan_sessions(run: ImportRun, found: list[Found]) -> Plan:
    """Read the sessions any file of which changed, in key order, in batches of
    :data:`BATCH_BYTES`. What an earlier run held back waits for a change in the session's
    files: an import that finds none observes nothing (as the one before, it holds back)."""
    ledger = run.ledger
    todo: list[SessionFiles] = []
    sizes: list[int] = []
    for group in _sessions(ledger, found):
        files = [f for f in [group.main, *group.agents] if f is not None]
        changed = [f for f in files if not ledger.unchanged(f)]
        if changed:
            todo.append(group)
            sizes.append(sum(f.size - ledger.resume_offset(f) for f in changed))
    return Plan(sum(sizes), _read_in_batches(run, todo, sizes))


def _read_in_batches(run: ImportRun, todo: list[SessionFiles], sizes: list[int]) -> Iterator[Batch]:
    """What the sessions of ``todo`` gave, merged into the ledger and the report, as
    batches of :data:`BATCH_BYTES` read (the last one whatever is left, maybe nothing)."""
    timed: list[Timed] = []
    pending = 0
    for outcome in _read_sessions(run, todo, sizes):
        _merge_outcome(run.ledger, run.report, outcome)
        timed.extend(outcome.timed)
        pending += outcome.bytes
        if pending >= BATCH_BYTES:
            yield Batch(timed)
            timed, pending = [], 0
    yield Batch(timed)


def _read_sessions(
    run: ImportRun, todo: list[SessionFiles], sizes: list[int]
) -> Iterator[SessionOutcome]:
    """Each session of ``todo`` read, in order: here, or by forked workers while this
    process journals what they read before (the outcomes, and so the journal, are the
    same either way)."""
    context = SessionContext(run.ledger, str(run.folder), run.max_file_bytes, run.noted)
    workers = _workers(len(todo), sum(sizes))
    if workers < 2:
        for group in todo:
            yield SessionReader(context, group, run.progress).read()
        return

    def work(task: int) -> SessionOutcome:
        return SessionReader(context, todo[task], SILENT).read()

    for outcome in in_order(work, sizes, workers):
        run.progress.advance(outcome.advanced)
        yield outcome


def _merge_outcome(ledger: Ledger, report: ImportReport, outcome: SessionOutcome) -> None:
    """What one session's reading found goes into the ledger and the report: only what
    changed, so that an import that finds nothing new journals nothing, not even its
    ledger."""
    for rel, entry in outcome.entries.items():
        if entry != ledger.entry(rel):
            ledger.put(rel, entry)
    if outcome.state != ledger.group(outcome.key):
        ledger.put_group(outcome.key, outcome.state)
    report.add_reading(outcome.report)


def _sessions(ledger: Ledger, found: list[Found]) -> list[SessionFiles]:
    """The files found, grouped into sessions, in key order. A flat agent file belongs to
    the session its rows name; one that names none yet is its own group, and a stray of
    every session of its project (it may turn out to be one of theirs)."""
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
    for item in flat:
        entry = ledger.entry(item.rel)
        session = entry.get("session") if entry is not None else None
        # A file read before its first row was complete names its session only now.
        session = session or head_session(Path(item.path))
        project = item.rel.rsplit("/", 1)[0] if "/" in item.rel else ""
        if not session:
            strays.setdefault(project, []).append(item)
        key = f"{project}/{session}" if session else f"flat:{item.rel}"
        group(key.lstrip("/")).agents.append(item)
    for key, session_files in groups.items():
        if not key.startswith("flat:"):
            session_files.strays = strays.get(session_files.project, [])
    return [groups[k] for k in sorted(groups)]


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
