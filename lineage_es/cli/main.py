"""The ``lineage`` command: see and keep your agents' history.

A thin layer over :mod:`lineage_es.engine.engine`: each command opens the store, asks one question
and prints the answer. Errors print their reason and exit with status 2, never a traceback.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import orjson

from lineage_es.errors import AmbiguousConversation, LineageError
from lineage_es.model import to_json
from lineage_es.read.render import (
    dumps_deep,
    forest_data,
    forest_dot,
    forest_json,
    forest_mermaid,
    forest_text,
    safe_id,
)

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

F = TypeVar("F", bound=Callable[..., Any])

STORE_HELP = (
    "Where the journal lives: memory://, sqlite:///PATH (relative to the current folder; "
    "sqlite:////abs/path for an absolute one) or postgresql://USER@HOST:PORT/DB. "
    "Default: $LINEAGE_STORE, else a SQLite file in your data dir "
    "(~/.local/share/lineage-es/journal.sqlite). A command that only reads refuses a SQLite "
    "file that does not exist rather than create it; the default journal, until something "
    "is journaled, reads as empty."
)

#: What to do about a journal named for reading that does not exist.
NO_JOURNAL_HINT = "check the path; `lineage ingest`, `import` or `hook` create one"


def store_option(func: F) -> F:
    return click.option("--store", envvar="LINEAGE_STORE", default=None, help=STORE_HELP)(func)


def host_option(func: F) -> F:
    return click.option(
        "--host",
        type=click.Choice(["claude", "codex", "cursor"]),
        default=None,
        help="Which host's conversation is meant, when an id is known under several.",
    )(func)


def reports_errors(func: F) -> F:
    """Turn every failure into its reason on stderr and exit status 2; a warning meant for
    the user into one plain line (no line of our source); a reader that stopped reading
    (``| head``) into a quiet exit 0, as when the output fitted in the pipe before it did."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning
                return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            _silence_stdout()
            raise click.exceptions.Exit(0) from None
        except AmbiguousConversation as exc:
            raise click.ClickException(
                f"{exc}: say which with --host {exc.hosts[0] if exc.hosts else 'HOST'}"
            ) from None
        except LineageError as exc:
            raise click.ClickException(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"{type(exc).__name__}: {exc}") from None

    return wrapper  # type: ignore[return-value]


_python_show_warning = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A ``UserWarning`` is advice for whoever runs the command (``chmod 600 …``): print it
    as such. Other categories are for developers and keep Python's form, location and all."""
    if issubclass(category, UserWarning):
        click.echo(f"warning: {message}", err=True)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


def _silence_stdout() -> None:
    """Point stdout at devnull: what is still buffered for the reader that left would fail
    again when Python flushes it at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file (a test runner's): nothing to flush
        pass


click.ClickException.exit_code = 2


def open_store(store: str | None, *, create: bool = True, waits: bool = False) -> Engine:
    """Open the journal ``store`` names (``--store`` or ``$LINEAGE_STORE``), else the
    default one in the data dir.

    Commands that write keep ``create=True``: a SQLite journal is created when missing.
    Commands that only read pass ``create=False``: a SQLite file named explicitly that does
    not exist is refused, naming the path (a mistyped path must not answer as an empty
    journal), and nothing is created. The default journal not existing yet is no mistake
    (nothing has been journaled on this machine): a one-shot reader answers from an empty
    journal, says so on stderr and creates nothing; a reader that ``waits`` for what hooks
    write next (``tree --watch``, ``serve``) creates it, so that it sees the first facts.
    """
    from lineage_es.engine.engine import open_engine
    from lineage_es.errors import NoJournal

    if create:
        return open_engine(store)
    try:
        return open_engine(store, create=False)
    except NoJournal as exc:
        if store:
            raise click.ClickException(f"{exc}: {NO_JOURNAL_HINT}") from None
        if waits:
            return open_engine(store)
        click.echo(
            f"note: no journal yet at {exc.path}: nothing has been journaled on this machine "
            "(`lineage install-hooks`, `ingest` or `import` start one)",
            err=True,
        )
        return open_engine("memory://")


def echo_json(value: Any) -> None:
    click.echo(orjson.dumps(to_json(value), option=orjson.OPT_INDENT_2).decode())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lineage-es")
def main() -> None:
    """See which AI coding agent spawned which, live and back in time.

    lineage_es keeps a journal of what Claude Code, Codex and Cursor hooks report, and
    answers from it: the live tree, any agent's lineage, relations and delegation chains.

    \b
    Examples:
      lineage tree                      the live forest, drawn in the terminal
      lineage tree --all --format json  every root, stopped nodes too, as JSON
      lineage tree --position 120       the forest as it was after journal entry 120
      lineage show 5f1c2e4a-...         one conversation's lineage and tree
      lineage chain a1000000000000001   its delegation chain up to the root
      lineage journal export -o j.jsonl keep a portable copy of the journal
    """


@main.command()
@click.argument("conversation", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "mermaid", "dot"]),
    default="text",
    show_default=True,
    help="text: a unicode tree; json: nested roots; mermaid/dot: a picture to render.",
)
@click.option("--all", "include_stopped", is_flag=True, help="Include stopped nodes.")
@click.option("--at", "at_time", default=None, help="Show the tree as of this ISO-8601 time.")
@click.option(
    "--position",
    type=click.IntRange(min=0),
    default=None,
    help="Show the tree as of journal position N (at most the journal's last position).",
)
@click.option("--watch", is_flag=True, help="Redraw whenever new facts arrive (Ctrl-C stops).")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    default=1.0,
    show_default=True,
    help="With --watch: seconds between looks at the journal.",
)
@host_option
@store_option
@reports_errors
def tree(
    conversation: str | None,
    fmt: str,
    include_stopped: bool,
    at_time: str | None,
    position: int | None,
    watch: bool,
    interval: float,
    host: str | None,
    store: str | None,
) -> None:
    """Draw the live forest, or the tree of CONVERSATION's root.

    Marks: ● live ○ stopped; ✓ confirmed, ✎ from a transcript, · from the registry,
    ? inferred by ordering; then depth, status and age. --at and --position travel back in
    time, ages counted from the moment shown (--at's time; for --position, the time the
    journal had reached there, else now); --watch keeps drawing the live forest as hooks
    report (JSON: one line per drawing).

    \b
    Examples:
      lineage tree --watch --all        keep the whole forest on screen, live
      lineage tree --format mermaid     a picture for a Markdown page
    """
    if watch and (at_time is not None or position is not None):
        raise click.UsageError("--watch draws the live forest; it cannot go with --at/--position")
    moment: datetime | None = None  # the moment ages are counted from; None: now
    with open_store(store, create=False, waits=watch) as engine:
        if watch:
            from lineage_es.cli.live import use_color, watch_loop

            color = use_color()

            def draw() -> None:
                forest = engine.forest(host, include_stopped=include_stopped, root=conversation)
                if color:
                    click.clear()
                _draw(forest, fmt, color=color, compact=True)

            watch_loop(engine.position, draw, interval=interval)
            return
        if at_time is not None or position is not None:
            when = _parse_time(at_time) if at_time is not None else None
            if position is not None and position > (last := engine.position()):
                raise click.BadParameter(
                    f"{position} is past the journal's end: its last position is {last}",
                    param_hint="'--position'",
                )
            queries = engine.as_of(position=position, time=when)
            forest = queries.forest(host, include_stopped=include_stopped, root=conversation)
            moment = when if when is not None else _position_time(engine, position or 0)
        else:
            forest = engine.forest(host, include_stopped=include_stopped, root=conversation)
    from lineage_es.cli.live import use_color

    _draw(forest, fmt, color=use_color(), now=moment)


def _position_time(engine: Engine, position: int) -> datetime | None:
    """The moment a tree as of journal ``position`` shows, for its ages: the latest time of
    the entries up to it (a page back at most; an index entry may carry an earlier time than
    the event before it). ``None`` when none has a time: ages are then counted from now."""
    stamp = ""
    for event in engine.journal(start=max(0, position - 100), stop=position):
        stamp = max(stamp, event.timestamp)
    return datetime.fromisoformat(stamp) if stamp else None


def _draw(
    forest: Any,
    fmt: str,
    *,
    color: bool = False,
    compact: bool = False,
    now: datetime | None = None,
) -> None:
    if fmt == "json":
        data = dumps_deep(forest_data(forest)) if compact else forest_json(forest)
        click.echo(data.decode())
    elif fmt == "mermaid":
        click.echo(forest_mermaid(forest))
    elif fmt == "dot":
        click.echo(forest_dot(forest))
    else:
        click.echo(forest_text(forest, now=now, color=color))
        if compact and not color:
            click.echo("")


def _parse_time(text: str) -> datetime:
    from lineage_es.hosts.base import parse_time

    moment = parse_time(text)
    if moment is None:
        raise click.BadParameter(f"{text!r} is not an ISO-8601 time", param_hint="--at")
    return moment


@main.command()
@click.argument("conversation")
@host_option
@store_option
@reports_errors
def show(conversation: str, host: str | None, store: str | None) -> None:
    """Print CONVERSATION's lineage (root, parent, depth, resolution) and its tree, as JSON.

    Fields: root and parent (null for a root), depth (0 for a root), resolution (how the
    parent is known: native, confirmed, transcript, registry, inferred), subagent (the host's
    own id and type for it), host, and tree (the live tree around it, children nested); name
    once renamed, and "ambiguous": true on a child (and a tree node) placed under its root
    with no parent edge.

    \b
    Examples:
      lineage show a1000000000000001
      lineage show 5f1c2e4a-... --host codex   when the id is known under several hosts
    """
    with open_store(store, create=False) as engine:
        echo_json(engine.lineage(conversation, host))


@main.command()
@click.argument("a")
@click.argument("b")
@host_option
@store_option
@reports_errors
def relation(a: str, b: str, host: str | None, store: str | None) -> None:
    """Say what A is to B: self, child, descendant, parent, ancestor, sibling, kin or
    unrelated. Stopped and deleted nodes count.

    kin: same root, neither above the other nor siblings; unrelated: different roots.

    \b
    Examples:
      lineage relation a1000000000000001 5f1c2e4a-...   prints e.g. child
      [ "$(lineage relation A B)" = descendant ] && echo "A works for B"
    """
    with open_store(store, create=False) as engine:
        click.echo(engine.relation(a, b, host))


@main.command()
@click.argument("conversation")
@click.option("--json", "as_json", is_flag=True, help="Print the chain as JSON.")
@host_option
@store_option
@reports_errors
def chain(conversation: str, as_json: bool, host: str | None, store: str | None) -> None:
    """Print CONVERSATION's delegation chain up to its root (at most 20 hops).

    Text: the chain as ``A > B > ROOT``, and a line saying why when it stops short. JSON:
    conversations (the chain, CONVERSATION first), complete (it reached a root), unresolved
    (the parent it names that the journal does not know, else null), cycle (it loops) and
    capped (more than 20 hops).

    \b
    Examples:
      lineage chain a1000000000000001          a1000000000000001 > 5f1c2e4a-...
      lineage chain a1000000000000001 --json
    """
    with open_store(store, create=False) as engine:
        found = engine.chain(conversation, host)
    if as_json:
        echo_json(found)
        return
    click.echo(" > ".join(safe_id(c) for c in found.conversations))
    if found.cycle:
        click.echo("(stopped: the chain loops)")
    elif found.capped:
        click.echo("(stopped: more than 20 hops)")
    elif found.unresolved:
        click.echo(f"(stopped: {safe_id(found.unresolved)} is not in the journal)")
    elif not found.complete:
        click.echo("(stopped: the parent is not known)")


@main.command()
@click.argument("sender")
@click.argument("recipient")
@host_option
@store_option
@reports_errors
def provenance(sender: str, recipient: str, host: str | None, store: str | None) -> None:
    """What a message from SENDER to RECIPIENT should carry, as JSON.

    Fields: sender, recipient, sender_relation (what SENDER is to RECIPIENT, as `lineage
    relation` says); unless SENDER is RECIPIENT's direct child, also chain (the delegation
    chain that explains the relation, SENDER first) and note (one sentence saying so, for a
    prompt).

    \b
    Example:
      lineage provenance a1000000000000001 5f1c2e4a-...
    """
    with open_store(store, create=False) as engine:
        echo_json(engine.provenance(sender, recipient, host))


def _members_table(members: tuple[Any, ...], with_relation: bool) -> None:
    """One line a member; a child placed ambiguous ends with `` ambiguous``, as ``tree``
    draws it, so its ``parent=-`` is not read as a root's."""
    for m in members:
        name = f' "{safe_id(m.name)}"' if m.name else ""
        rel = f"{m.relation:<10} " if with_relation else ""
        parent = safe_id(m.parent) if m.parent else "-"
        flag = " ambiguous" if m.ambiguous else ""
        click.echo(
            f"{rel}{'  ' * m.depth}{safe_id(m.conversation)}{name}  depth={m.depth} "
            f"status={m.status} parent={parent} resolution={m.resolution}{flag}"
        )


@main.command()
@click.argument("root")
@click.option("--json", "as_json", is_flag=True, help="Print the family as JSON.")
@host_option
@store_option
@reports_errors
def family(root: str, as_json: bool, host: str | None, store: str | None) -> None:
    """List every node of ROOT's family that is not deleted, with depth, name, status.

    One line a node, indented by depth: id, "name", depth, status, parent (- for the root)
    and resolution (how the parent is known), then "ambiguous" for a child placed under the
    root with no parent edge (JSON: "ambiguous": true). ROOT may be any node of the family.

    \b
    Examples:
      lineage family 5f1c2e4a-...
      lineage family 5f1c2e4a-... --json
    """
    with open_store(store, create=False) as engine:
        members = engine.family(root, host)
    if as_json:
        echo_json(members)
    else:
        _members_table(members, with_relation=False)


@main.command()
@click.option("--as", "as_", required=True, help="The conversation asking.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@host_option
@store_option
@reports_errors
def agents(as_: str, as_json: bool, host: str | None, store: str | None) -> None:
    """List every known agent with its relation to the one asking (an orchestrator's
    list_agents, as a tree rather than a flat list).

    One line a node: its relation to the one asking (self, child, parent, sibling, ...),
    then the fields `lineage family` prints.

    \b
    Examples:
      lineage agents --as a1000000000000001
      lineage agents --as a1000000000000001 --json
    """
    with open_store(store, create=False) as engine:
        members = engine.agents(as_, host)
    if as_json:
        echo_json(members)
    else:
        _members_table(members, with_relation=True)


@main.command()
@click.argument("conversation")
@click.argument("name")
@host_option
@store_option
@reports_errors
def rename(conversation: str, name: str, host: str | None, store: str | None) -> None:
    """Give CONVERSATION a display name (journaled; the last rename wins).

    The name shows in `lineage tree`, `family` and `agents`. The journal must exist already.

    \b
    Example:
      lineage rename a1000000000000001 "test runner"
    """
    if not name.strip():
        raise click.BadParameter("a name cannot be empty or only spaces", param_hint="'NAME'")
    with open_store(store, create=False) as engine:
        engine.rename(conversation, name, host=host)


@main.command()
@click.argument("conversation")
@click.option(
    "--reason",
    type=click.Choice(["user", "revoked", "gc"]),
    default="user",
    show_default=True,
    help="Why; each descendant is recorded as parent-teardown.",
)
@host_option
@store_option
@reports_errors
def delete(conversation: str, reason: str, host: str | None, store: str | None) -> None:
    """Delete CONVERSATION and its whole subtree (journaled, never silent), and say how
    many nodes that was. The journal must exist already.

    \b
    Examples:
      lineage delete a1000000000000001
      lineage delete 5f1c2e4a-... --reason gc     a whole root and its family
    """
    with open_store(store, create=False) as engine:
        before = len(engine.family(conversation, host))
        engine.delete(conversation, reason, host=host)
        deleted = before - len(engine.family(conversation, host))
    click.echo(f"deleted {deleted} node{'' if deleted == 1 else 's'}", err=True)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--host",
    type=click.Choice(["claude", "codex", "cursor"]),
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

    counter = [0]

    def tick() -> None:
        counter[0] += 1
        if not quiet and counter[0] % 500 == 0:
            click.echo(f"\r{counter[0]} rows", nl=False, err=True)

    with open_store(store) as engine:
        report = ingest_paths(engine, paths, host=host, on_row=tick)
    if not quiet and counter[0] >= 500:
        click.echo("", err=True)
    for failure in report.failures:
        click.echo(f"error: {failure}", err=True)
    summary = f"ingested {report.rows} rows from {report.files} recordings"
    if report.bad_lines:
        summary += f"; skipped {report.bad_lines} bad line{'' if report.bad_lines == 1 else 's'}"
    if unread := len(report.failures) - report.bad_lines:
        summary += f"; {unread} file{' was' if unread == 1 else 's were'} not read to the end"
    if report.skipped:
        count = sum(report.skipped.values())
        reasons = ", ".join(f"{why} ({n})" for why, n in sorted(report.skipped.items()))
        summary += f"; skipped {count} file{'' if count == 1 else 's'}: {reasons}"
    click.echo(summary, err=True)
    if report.failures:
        sys.exit(1)


@main.group()
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
            with output.open("wb") as out:
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

    All or nothing: every line is checked before anything is written, and everything is
    written in one transaction, so a refused import leaves the store empty. A torn final
    line (an interrupted export) and events of unknown types are skipped with a warning.

    \b
    Example:
      lineage journal export -o j.jsonl
      lineage journal import j.jsonl --store sqlite:///copy.sqlite
    """
    from lineage_es.journal import DEFAULT_MAX_TOTAL_BYTES, import_journal

    bound = DEFAULT_MAX_TOTAL_BYTES if max_size is None else max_size * 1024 * 1024
    with open_store(store) as engine:
        report = import_journal(engine, file, max_total=bound)
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
    """Throw the tree view away and rebuild it from the journal, with a progress bar.

    The new view is built apart and swapped in at once: other processes answer from the old
    one until then. A SQLite file that does not exist is refused, not created: a view is
    rebuilt from a journal that is there.

    \b
    Example:
      lineage journal rebuild --store sqlite:///journal.sqlite
    """
    with open_store(store, create=False) as engine:
        total = engine.position()
        with click.progressbar(length=total, label="rebuilding", file=sys.stderr) as bar:
            count = engine.rebuild(progress=bar.update)
    click.echo(f"rebuilt the view from {count} events", err=True)


from lineage_es.cli import live as cli_live  # noqa: E402 (its commands use the helpers above)

main.add_command(cli_live.hook)
main.add_command(cli_live.install_hooks)
main.add_command(cli_live.uninstall_hooks)
main.add_command(cli_live.serve)

from lineage_es.cli.imports import import_command  # noqa: E402  (it builds on the helpers above)

main.add_command(import_command)

if __name__ == "__main__":  # pragma: no cover
    main()
