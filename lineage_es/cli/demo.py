"""``lineage demo``: the demo recordings in a demo store of their own, and how to look at it.

The recordings are the ``replays/`` folder of a clone of lineage-es (the test suite's own
cases, real host payloads): found beside the package (a clone, or an editable install of
one), else in the current folder (a tool install run in its clone), else where ``--replays``
says. They go into ``./lineage-demo.sqlite`` unless ``--store`` names another store; never
into ``$LINEAGE_STORE`` or the default journal, where demo roots would stay among the
person's own (the command refuses to name either).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from lineage_es.cli.common import CommandFailed, reports_errors
from lineage_es.cli.output import write_out

#: The demo store's file, in the current folder, unless ``--store`` says otherwise.
DEMO_FILE = "lineage-demo.sqlite"

#: The hosts a ``replays`` folder holds one folder each for.
_HOST_FOLDERS = ("claude", "codex", "cursor")


@click.command()
@click.option(
    "--store",
    default=None,
    help=f"The demo store: sqlite:///PATH or postgresql://... [default: ./{DEMO_FILE}]. "
    "$LINEAGE_STORE is not read, and your own journal is refused: demo roots would stay in it.",
)
@click.option(
    "--replays",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The demo recordings: the replays/ folder of a clone of lineage-es [default: the "
    "one beside this package, else ./replays].",
)
@reports_errors
def demo(store: str | None, replays: Path | None) -> None:
    """Put the demo recordings into a demo store of their own, and say how to look at it.

    Nothing goes into your own journal: the demo store is ./lineage-demo.sqlite (or
    --store), and deleting that file takes the demo away. Running it again adds nothing.

    \b
    Examples:
      lineage demo && lineage tree --all --store sqlite:///lineage-demo.sqlite
      lineage demo --store sqlite:///$HOME/demo.sqlite --replays ~/src/lineage-es/replays
    """
    from lineage_es.engine.engine import open_engine
    from lineage_es.ingest import ingest

    url = demo_store(store)
    folder = replays or find_replays(Path.cwd())
    with open_engine(url) as engine:
        report = ingest(engine, [folder])
        roots = len(engine.forest(include_stopped=True))
    for failure in report.failures:
        click.echo(f"error: {failure}", err=True)
    quoted = shlex.quote(url)
    lines = [
        f"demo store: {url} ({report.rows} rows from {report.files} recordings of {folder}; "
        f"{roots} roots)",
        "look at it:",
        f"  lineage tree --all --store {quoted}",
        f"  lineage serve --store {quoted}    # then open http://127.0.0.1:7421/",
    ]
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///") :])
        lines.append(f"remove it: rm -r {shlex.quote(str(path))}*")
    write_out(("\n".join(lines) + "\n").encode())
    if report.failures:
        sys.exit(1)


def demo_store(given: str | None) -> str:
    """The demo store's URL: ``given``, else ``./lineage-demo.sqlite`` (absolute); refused
    (:class:`CommandFailed`) when it keeps nothing (``memory://``), cannot be parsed, or is
    the person's own journal (``$LINEAGE_STORE`` or the default one)."""
    import os

    from lineage_es.errors import StoreError
    from lineage_es.stores import parse_store_url
    from lineage_es.user_files import data_dir

    try:
        location = parse_store_url(given or f"sqlite:///{Path.cwd() / DEMO_FILE}")
    except StoreError as exc:
        raise CommandFailed(str(exc)) from None
    if location.kind == "memory":
        raise CommandFailed("memory:// keeps nothing to look at afterwards: give a SQLite path")
    own = [f"sqlite:///{Path(data_dir()) / 'journal.sqlite'}"]
    if os.environ.get("LINEAGE_STORE"):
        own.append(os.environ["LINEAGE_STORE"])
    for url in own:
        try:
            mine = parse_store_url(url)
        except StoreError:
            continue
        if (mine.kind, mine.url) == (location.kind, location.url):
            raise CommandFailed(
                f"{location.url} is your own journal: the demo goes in a store of its own "
                f"(default ./{DEMO_FILE})"
            )
    return location.url


def find_replays(cwd: Path) -> Path:
    """The demo recordings: ``replays/`` beside the package (in a clone), else in ``cwd``;
    :class:`CommandFailed` saying where to find them when neither holds them."""
    import lineage_es

    beside = Path(lineage_es.__file__).absolute().parent.parent / "replays"
    for folder in (beside, cwd / "replays"):
        if all((folder / host).is_dir() for host in _HOST_FOLDERS):
            return folder
    raise CommandFailed(
        f"no demo recordings beside this install ({beside}) nor here ({cwd / 'replays'}): "
        "they are the replays/ folder of a clone of lineage-es; run this in that clone, or "
        "give --replays PATH"
    )
