"""``lineage import``: turn the hosts' own history folders into the journal.

A thin layer over :mod:`lineage_es.importers`: it opens the store, draws click's progress bar
on stderr while files are read and prints the import's summary at the end.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lineage_es.cli.common import FC, open_store, reports_errors, store_option
from lineage_es.collector import fewer_collections

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

FOLDER_ARGUMENT = click.argument(
    "folder",
    required=False,
    type=click.Path(file_okay=False, path_type=Path),
)


class ImportProgressBar:
    """The importer's progress (``begin(total)``, ``advance(done)``) drawn as click's
    progress bar over the bytes read, on stderr; nothing at all when quiet.

    click's bar is a context manager sized up front, and an importer learns its total only
    once it has listed the folder: this opens the bar then, and :meth:`close` ends it.
    """

    def __init__(self, quiet: bool, label: str) -> None:
        self.quiet = quiet
        self.label = label
        self.bar: ProgressBar[int] | None = None

    def begin(self, total: int) -> None:
        if not self.quiet and total:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
            self.bar.__enter__()

    def advance(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


def import_options(func: FC) -> FC:
    """The options both ``import`` commands take."""
    func = click.option(
        "--reconcile",
        is_flag=True,
        help="Delete (journaled, reason gc) the conversations all of whose transcript files "
        "are gone from disk, with what is below them, so family() stops listing them.",
    )(func)
    func = click.option("--quiet", is_flag=True, help="No progress bar.")(func)
    func = click.option(
        "--max-file-size",
        type=click.IntRange(min=1),
        default=1024,
        show_default=True,
        help="Skip (and count) files larger than this many MiB.",
    )(func)
    return store_option(func)


def import_history(
    host: str,
    folder: Path | None,
    reconcile: bool,
    quiet: bool,
    max_file_size: int,
    store: str | None,
) -> None:
    """Import ``host``'s history folder into the store, then print the import's summary."""
    from lineage_es.importers import importer as host_importer  # loads only that host's

    importer = host_importer(host)
    bar = ImportProgressBar(quiet, f"reading {host} history")
    with open_store(store) as engine, fewer_collections():
        try:
            report = importer(
                engine,
                folder,
                reconcile_gone=reconcile,
                progress=bar,
                max_file_bytes=max_file_size * 1024 * 1024,
            )
        finally:
            bar.close()
    for line in report.summary():
        click.echo(line, err=True)


@click.group("import")
def import_command() -> None:
    """Import the hosts' own agent history: months of past sessions become journal
    events, so tree, family and time travel answer for the past too, and keep it after the
    hosts delete their transcripts (Claude Code after 30 days by default).

    Imports are incremental: a second run reads only what changed since the last one (kept
    in the store itself), and a transcript deleted from disk deletes nothing unless you
    pass --reconcile.

    \b
    Examples:
      lineage import claude                       ~/.claude/projects
      lineage import codex                        ~/.codex/sessions (.jsonl.zst too)
      lineage import claude ~/old-laptop/projects --store sqlite:///history.sqlite
      lineage import claude --reconcile --quiet   from cron: forget sessions gone from disk
      lineage tree --all --at 2026-09-03T10:00:00Z
    """


@import_command.command("claude")
@FOLDER_ARGUMENT
@import_options
@reports_errors
def import_claude_command(
    folder: Path | None, reconcile: bool, quiet: bool, max_file_size: int, store: str | None
) -> None:
    """Import a Claude Code projects folder (default ~/.claude/projects): session files,
    their subagents/ folders and the older flat agent-*.jsonl files.

    \b
    Example:
      lineage import claude && lineage tree --all
    """
    import_history("claude", folder, reconcile, quiet, max_file_size, store)


@import_command.command("codex")
@FOLDER_ARGUMENT
@import_options
@reports_errors
def import_codex_command(
    folder: Path | None, reconcile: bool, quiet: bool, max_file_size: int, store: str | None
) -> None:
    """Import a Codex sessions folder (default ~/.codex/sessions): rollout-*.jsonl and
    .jsonl.zst files, continuation files included.

    \b
    Example:
      lineage import codex ~/.codex/archived_sessions
    """
    import_history("codex", folder, reconcile, quiet, max_file_size, store)
