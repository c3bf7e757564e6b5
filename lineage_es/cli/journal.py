"""``lineage ingest`` and ``lineage journal``: put recorded streams into the journal, and keep
the journal itself (export, import, verify, rebuild).

Thin over :mod:`lineage_es.ingest` and :mod:`lineage_es.journal`: each command opens the store,
calls one of them and prints its report on stderr.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lineage_es.cli.common import (
    HOST_CHOICE,
    open_store,
    plural,
    reports_errors,
    store_option,
)

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

#: ``ingest`` shows how many rows went in every this many rows.
ROWS_PER_PROGRESS_LINE = 500


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--host",
    type=HOST_CHOICE,
    default=None,
    help="The host of bare hook payloads (detected per payload when absent).",
)
@click.option("--quiet", is_flag=True, help="No progress line.")
@store_option
@reports_errors
def ingest(paths: tuple[Path, ...], host: str | None, quiet: bool, store: str | None) -> None:
    """Journal recorded streams: hook captures, `lineage hook --record` files, Claude
    session transcripts (with their subagents folder) and Codex rollouts.

    PATHS are files or folders. A folder gives every file below it whose first row is in
    one of those forms, whatever its name (a Claude agent file is read with its session
    file, or on its own when that is absent); the summary counts the files passed over, by
    why. A bad line is named with its file, line and reason and skipped, and every other row
    still goes in: a transcript's or rollout's rows after it as if it were absent.

    A capture of bare hook payloads carries no time: its rows are dated by line number, from
    one logical start in every file. Join the captures of one session into one file, in
    order, before ingesting them.

    Exit status: 0 when every row went in; 1 when some lines (or files named) could not be
    read, the rest being journaled; 2 when nothing could be done (a bad store or option).

    \b
    Examples:
      lineage ingest replays/ && lineage tree --all
      lineage ingest capture.jsonl --host cursor --store sqlite:///team.sqlite
    """
    from lineage_es.ingest import ingest as ingest_paths

    rows = 0

    def count_row() -> None:
        nonlocal rows
        rows += 1
        if not quiet and rows % ROWS_PER_PROGRESS_LINE == 0:
            click.echo(f"\r{rows} rows", nl=False, err=True)

    with open_store(store) as engine:
        report = ingest_paths(engine, paths, host=host, on_row=count_row)
    if not quiet and rows >= ROWS_PER_PROGRESS_LINE:
        click.echo("", err=True)
    for failure in report.failures:
        click.echo(f"error: {failure}", err=True)
    nothing_new = report.rows > 0 and report.new_entries == 0
    verb = "read" if nothing_new else "ingested"
    summary = f"{verb} {report.rows} rows from {report.files} recordings"
    if report.bad_lines:
        summary += f"; skipped {plural(report.bad_lines, 'bad line')}"
    if unread := len(report.failures) - report.bad_lines:
        summary += f"; {unread} file{' was' if unread == 1 else 's were'} not read to the end"
    if report.skipped:
        count = sum(report.skipped.values())
        reasons = ", ".join(f"{why} ({n})" for why, n in sorted(report.skipped.items()))
        summary += f"; skipped {plural(count, 'file')}: {reasons}"
    summary += f"; {_new_in_words(report.new_entries, nothing_new)}"
    click.echo(summary, err=True)
    if report.failures:
        sys.exit(1)


def _new_in_words(new_entries: int, nothing_new: bool) -> str:
    """How much of what ``ingest`` read was new to the journal: its new entries, or, for
    recordings journaled before, that it added nothing (rows read are not facts added)."""
    if nothing_new:
        return "nothing new: the journal had all of it already"
    return "1 new journal entry" if new_entries == 1 else f"{new_entries} new journal entries"


@click.group()
def journal() -> None:
    """Keep the journal: export, import, verify, rebuild the view.

    The journal is the truth; the tree view every command answers from is built from it and
    can always be rebuilt. An export is portable JSONL with a versioned header.

    \b
    Examples:
      lineage journal export -o backup.jsonl
      lineage journal import backup.jsonl --store sqlite:///elsewhere.sqlite
      lineage journal verify
      lineage journal rebuild
    """


@journal.command("export")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file instead of standard output.",
)
@store_option
@reports_errors
def journal_export(output: Path | None, store: str | None) -> None:
    """Write the whole journal as JSONL with a versioned header (to standard output unless
    -o is given), for a backup or to move it to another store.

    \b
    Example:
      lineage journal export -o backup.jsonl --store postgresql://me@db:5432/lineage
    """
    from lineage_es.journal import export_journal

    with open_store(store, create=False) as engine:
        if output is None:
            count = export_journal(engine, sys.stdout.buffer)
        else:
            import os

            from lineage_es.private_files import open_private

            # The whole journal: a new file is as private as the store, whatever the umask.
            with os.fdopen(open_private(output, os.O_WRONLY | os.O_TRUNC), "wb") as out:
                count = export_journal(engine, out)
    click.echo(f"exported {count} events", err=True)


@journal.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--max-size",
    type=click.IntRange(min=1),
    default=None,
    metavar="MIB",
    help="Refuse a file larger than this many MiB (default 65536, i.e. 64 GiB; a line may "
    "hold at most 32 MiB whatever this says).",
)
@store_option
@reports_errors
def journal_import(file: Path, max_size: int | None, store: str | None) -> None:
    """Import an exported journal into an empty store and build its view.

    All or nothing: every line is decoded and checked against the domain's rules (types,
    times, ids, depths, topics, the header) before anything is written, and everything is
    written in one transaction, in batches under a progress bar, so a refused import names
    FILE:LINE and its reason, exits 2 and leaves the store empty. A torn final line (an
    interrupted export) and events of unknown types are skipped with a warning.

    \b
    Example:
      lineage journal export -o j.jsonl
      lineage journal import j.jsonl --store sqlite:///copy.sqlite
    """
    from lineage_es.errors import JournalFormatError
    from lineage_es.journal import DEFAULT_MAX_TOTAL_BYTES, import_journal

    bound = DEFAULT_MAX_TOTAL_BYTES if max_size is None else max_size * 1024 * 1024
    with open_store(store) as engine, contextlib.ExitStack() as bars:
        bar: ProgressBar[int] | None = None

        def written(events: int, total: int) -> None:
            nonlocal bar
            if bar is None:  # the total is known once the whole file is checked
                bar = bars.enter_context(
                    click.progressbar(length=total, label="importing", file=sys.stderr)
                )
            bar.update(events)

        try:
            report = import_journal(engine, file, max_total=bound, progress=written)
        except JournalFormatError as refused:
            where = file if refused.line is None else f"{file}:{refused.line}"
            raise JournalFormatError(f"{where}: {refused.reason}; nothing was imported") from None
    for message in report.warnings:
        click.echo(f"warning: {message}", err=True)
    click.echo(f"imported {report.imported} events", err=True)


@journal.command("verify")
@store_option
@reports_errors
def journal_verify(store: str | None) -> None:
    """Check the journal has no gaps and the view equals a rebuild; exit 1 on any
    difference (each named on stderr), 0 when all is well.

    \b
    Example:
      lineage journal verify || lineage journal rebuild
    """
    from lineage_es.journal import verify_journal

    with open_store(store, create=False) as engine:
        report = verify_journal(engine)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for problem in report.problems:
        click.echo(f"problem: {problem}", err=True)
    click.echo(
        f"{report.events} events, {report.aggregates} aggregates: "
        f"{'ok' if report.ok else f'{len(report.problems)} problems'}"
    )
    if not report.ok:
        sys.exit(1)


@journal.command("rebuild")
@store_option
@reports_errors
def journal_rebuild(store: str | None) -> None:
    """Throw the tree view away and rebuild it from the journal, with a progress bar, then
    the checkpoints time travel starts from (one every 2,000 positions).

    The new view is built apart and swapped in at once: other processes answer from the old
    one until then. A SQLite file that does not exist is refused, not created: a view is
    rebuilt from a journal that is there.

    \b
    Example:
      lineage journal rebuild --store sqlite:///journal.sqlite
    """
    from lineage_es.journal import rebuild_time_travel

    with open_store(store, create=False) as engine:
        total = engine.position()
        with click.progressbar(length=total, label="rebuilding", file=sys.stderr) as bar:
            count = engine.rebuild(progress=bar.update)
        checkpoints, size = rebuild_time_travel(engine)
    click.echo(f"rebuilt the view from {count} events", err=True)
    click.echo(f"made {checkpoints} time-travel checkpoints ({size / 1e6:.1f} MB)", err=True)
