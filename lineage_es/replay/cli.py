"""``lineage-replay``: replay a recording and check, row by row, what the engine answers.

Thin over :mod:`lineage_es.replay`: parsing options and choosing exit codes live here, the
replay itself in :func:`~lineage_es.replay.run_replay`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from lineage_es.collector import fewer_collections
from lineage_es.errors import LineageError
from lineage_es.facts import HOSTS
from lineage_es.replay.report import FORMATS, Format

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2

EPILOG = """\b
Recordings (detected per file):
  - hook payloads, one native payload a line (host from --host, the
    expected file's `host:`, or each payload's own fields);
  - the recording form of `lineage hook --record`: {"host": H, "at": TIME, "payload": P}
    or {"host": H, "at": TIME, "mcp": {"tool": T, "_meta": M}};
  - a Claude Code session transcript (its <session>/subagents/ folder is read too);
  - a Codex rollout (rollout-*.jsonl).

\b
Examples:
  # what does the engine answer after each row?
  lineage-replay session.jsonl
  # check a recording against its expectations (exit 1 on a mismatch)
  lineage-replay session.jsonl --assert session.expected.yaml
  # write the expectations from what the engine observes, then review the diff
  lineage-replay session.jsonl --update session.expected.yaml
  # a CI report
  lineage-replay hooks.jsonl --host cursor --assert hooks.expected.yaml --format junit

\b
The expected file (YAML):
  version: 1
  host: claude                      # optional
  steps:
    - row: 5                        # or rows: [5, 6, 7]
      lineage: {conversation: a1, root: r1, parent: r1, depth: 1, resolution: inferred}
      tree: {siblings: [r1], children: [], roots: []}      # tree: null = no tree
      views: {r1: {children: [a1]}}                         # as r1 sees it now
    - row: 6
      lineage: null                 # a row with no requester (the host adapter ignores it)
  final:
    views: {r1: {siblings: [], children: [], roots: []}}

Only the keys given are compared; lists compare exactly, in order; an item is an id or a
mapping of peer fields. An unknown key is an error.

\b
Exit status: 0 every expectation held; 1 some failed (each printed as a diff);
2 the recording or the expected file is unusable (the message names file:line and why).
"""


@click.command(
    name="lineage-replay",
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.argument("transcript", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--assert",
    "assert_path",
    metavar="EXPECTED",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Check every step of this expected file; exit 1 when one fails.",
)
@click.option(
    "--update",
    "update_path",
    metavar="EXPECTED",
    type=click.Path(dir_okay=False, path_type=Path),
    help=(
        "Write this expected file from what the engine observes (refused when CI is set, "
        "unless to empty, 0 or false)."
    ),
)
@click.option(
    "--host",
    type=click.Choice(HOSTS),
    help="The host of bare hook payloads (default: the expected file's host, or detected).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--store",
    default="memory://",
    show_default=True,
    metavar="URL",
    help=(
        "Replay into this store instead of a fresh one: sqlite:///PATH (relative to the "
        "current folder; sqlite:////abs/path for an absolute one) or postgresql://..."
    ),
)
def main(
    transcript: Path,
    assert_path: Path | None,
    update_path: Path | None,
    host: str | None,
    fmt: Format,
    store: str,
) -> None:
    """Replay TRANSCRIPT, a recorded stream, into a fresh engine and check what it answers
    after each row. Without --assert or --update, print each row's answer."""
    if assert_path is not None and update_path is not None:
        raise click.UsageError("give --assert or --update, not both")
    try:
        with fewer_collections():
            code = _replay_or_update(transcript, assert_path, update_path, host, fmt, store)
    except LineageError as exc:
        code = _report_failure(str(exc), fmt, transcript)
    except Exception as exc:  # never a traceback: the reason, and the unusable-input status
        code = _report_failure(f"unexpected error: {type(exc).__name__}: {exc}", fmt, transcript)
    sys.exit(code)


def _replay_or_update(
    transcript: Path,
    assert_path: Path | None,
    update_path: Path | None,
    host: str | None,
    fmt: Format,
    store: str,
) -> int:
    from lineage_es.replay import run_replay, update_expected
    from lineage_es.replay.report import render, render_update

    if update_path is not None:
        folder = update_path.parent
        if not folder.is_dir():
            # Say so before replaying, naming the user's path, not the file written beside it.
            why = "is not a folder" if folder.exists() else "does not exist"
            raise LineageError(f"cannot write {update_path}: folder {folder} {why}")
        update = update_expected(transcript, update_path, host=host, store=store)
        click.echo(render_update(update, fmt))
        return EXIT_OK
    result = run_replay(transcript, expected=assert_path, host=host, store=store)
    click.echo(render(result, fmt))
    return EXIT_OK if result.ok else EXIT_FAILED


def _report_failure(message: str, fmt: Format, transcript: Path) -> int:
    from lineage_es.replay.report import render_error

    if fmt != "text":
        click.echo(render_error(message, fmt, str(transcript)))
    click.echo(render_error(message, "text"), err=True)
    return EXIT_UNUSABLE
