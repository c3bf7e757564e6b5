"""``lineage tree``: the live forest, or one root's tree, drawn as text, JSON, Mermaid or
dot; back in time with ``--at``/``--position``, and kept on screen with ``--watch``.

The command a user runs most, so it imports only what drawing needs: a one-shot tree is
answered from the materialised view (:func:`~lineage_es.cli.common.open_reader`).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import click

from lineage_es.cli.common import (
    host_option,
    open_reader,
    reports_errors,
    resolve_ids,
    store_option,
    use_color,
)
from lineage_es.cli.output import write_out
from lineage_es.read.quiet import (
    QUIET_AFTER_ENV,
    QuietSplit,
    left_out_line,
    parse_duration,
    split_quiet,
)
from lineage_es.read.render import (
    dumps_deep,
    forest_data,
    forest_dot,
    forest_json,
    forest_mermaid,
    forest_text,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from lineage_es.engine.engine import Engine
    from lineage_es.model import ForestNode
    from lineage_es.read.answers import TreeReader
    from lineage_es.read.readonly import ViewReader


@click.command()
@click.argument("conversation", required=False)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "mermaid", "dot"]),
    default="text",
    show_default=True,
    help="text: a unicode tree; json: nested roots; mermaid/dot: a picture to render.",
)
@click.option(
    "--all", "include_stopped", is_flag=True, help="Include stopped nodes and quiet roots."
)
@click.option(
    "--quiet-after",
    "quiet_after",
    default="2h",
    show_default=True,
    envvar=QUIET_AFTER_ENV,
    show_envvar=True,
    metavar="DURATION",
    help="Leave out live roots whose tree has had no fact for this long (90s, 30m, 2h, 1d; "
    "off: none).",
)
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
    type=click.FloatRange(min=0.05, max=86400),
    callback=lambda ctx, param, value: _a_number(value),
    default=1.0,
    show_default=True,
    help="With --watch: seconds between looks at the journal (at most a day).",
)
@host_option
@store_option
@reports_errors
def tree(
    conversation: str | None,
    fmt: str,
    include_stopped: bool,
    quiet_after: str,
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

    A live root whose whole tree has had no fact for --quiet-after (default 2h, or
    LINEAGE_QUIET_AFTER) is left out, and a last line says how many were (on stderr for
    json, mermaid and dot); --all shows them, marked "quiet 3h". Quiet is counted up to the
    moment shown; nothing is stopped for being quiet (status stays live).

    \b
    Examples:
      lineage tree --watch --all        keep the whole forest on screen, live
      lineage tree --format mermaid     a picture for a Markdown page
    """
    if watch and (at_time is not None or position is not None):
        raise click.UsageError("--watch draws the live forest; it cannot go with --at/--position")
    after = _quiet_limit(quiet_after)
    moment: datetime | None = None  # the moment ages are counted from; None: now
    with open_reader(store, waits=watch) as engine:
        if conversation is not None:  # a unique prefix names it, as everywhere
            (conversation,) = resolve_ids(engine, host, conversation)
        if watch:
            from lineage_es.cli import live  # the watch loop's module: only --watch needs it

            color = use_color()

            def draw() -> None:
                forest = engine.forest(host, include_stopped=include_stopped, root=conversation)
                split = _split_quiet(engine, forest, None, after, include_stopped, conversation)
                if color:
                    click.clear()
                _print_forest(split.shown, fmt, color=color, compact=True, split=split, after=after)

            refresh = None if after is None else max(interval, QUIET_REFRESH)
            live.watch_loop(engine.position, draw, interval=interval, refresh=refresh)
            return
        reader: Engine | ViewReader | TreeReader = engine
        if at_time is not None or position is not None:
            when = _parse_time(at_time) if at_time is not None else None
            if position is not None and position > (last := engine.position()):
                raise click.BadParameter(
                    f"{position} is past the journal's end: its last position is {last}",
                    param_hint="'--position'",
                )
            reader = past = engine.as_of(position=position, time=when)
            forest = past.forest(host, include_stopped=include_stopped, root=conversation)
            moment = when if when is not None else _time_at_position(engine, position or 0)
        else:
            forest = engine.forest(host, include_stopped=include_stopped, root=conversation)
        split = _split_quiet(reader, forest, moment, after, include_stopped, conversation)
    _print_forest(split.shown, fmt, color=use_color(), now=moment, split=split, after=after)


#: With --watch and a quiet limit, the tree is drawn again at least this often (seconds), so
#: a root that goes quiet leaves it without waiting for a new fact.
QUIET_REFRESH = 30.0


def _quiet_limit(text: str) -> timedelta | None:
    """``--quiet-after``'s duration (``None``: off), or a usage error saying what it takes
    and where the value came from (the flag or :data:`QUIET_AFTER_ENV`)."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        source = click.get_current_context().get_parameter_source("quiet_after")
        from_env = source is click.core.ParameterSource.ENVIRONMENT
        hint = f"{QUIET_AFTER_ENV} (environment)" if from_env else "'--quiet-after'"
        raise click.BadParameter(str(exc), param_hint=hint) from None


def _split_quiet(
    reader: Engine | ViewReader | TreeReader,
    forest: tuple[ForestNode, ...],
    moment: datetime | None,
    after: timedelta | None,
    include_stopped: bool,
    conversation: str | None,
) -> QuietSplit:
    """``forest`` split by quietness at ``moment`` (now when ``None``): quiet roots left out
    unless ``--all`` or one root was asked for. The roots that look quiet by their drawn nodes
    are checked against every node of their families (stopped ones a live-only tree does not
    draw), read together."""

    def newest_of(roots: Sequence[ForestNode]) -> list[str | None]:
        families = reader.families([(root.conversation, root.host) for root in roots])
        return [max((m.last_seen for m in f if m.last_seen), default=None) for f in families]

    return split_quiet(
        forest,
        now=moment or datetime.now(UTC),
        after=after,
        keep=include_stopped or conversation is not None,
        newest_of=newest_of,
    )


def _time_at_position(engine: Engine | ViewReader, position: int) -> datetime | None:
    """The moment a tree as of journal ``position`` shows, for its ages: the latest time of
    the entries up to it (a page back at most; an index entry may carry an earlier time than
    the event before it). ``None`` when none has a time: ages are then counted from now."""
    stamp = ""
    for event in engine.journal(start=max(0, position - 100), stop=position):
        stamp = max(stamp, event.timestamp)
    return datetime.fromisoformat(stamp) if stamp else None


def _print_forest(
    forest: tuple[ForestNode, ...],
    fmt: str,
    *,
    color: bool = False,
    compact: bool = False,
    now: datetime | None = None,
    split: QuietSplit | None = None,
    after: timedelta | None = None,
) -> None:
    """Print ``forest`` in ``fmt``, all of it or an error (:func:`write_out`). ``compact`` is
    a ``--watch`` drawing: JSON on one line, and, without colour (no screen to clear), a
    blank line after each text drawing. ``split`` marks quiet roots in text and says how many
    were left out: a last line of the text, on stderr for the other formats (their output
    keeps its form: JSON stays ``{"roots": [...]}``)."""
    left_out = ""
    if split is not None and split.left_out and after is not None:
        left_out = left_out_line(split.left_out, after)
    if fmt == "json":
        data = dumps_deep(forest_data(forest)) if compact else forest_json(forest)
        write_out(data + b"\n")
        if left_out:
            click.echo(left_out, err=True)
        return
    if fmt == "mermaid":
        text = forest_mermaid(forest)
    elif fmt == "dot":
        text = forest_dot(forest)
    else:
        quiet = split.quiet if split is not None else None
        text = forest_text(forest, now=now, color=color, quiet=quiet)
        if left_out:
            text += "\n" + left_out
        left_out = ""
        if compact and not color:
            text += "\n"
    write_out(f"{text}\n".encode())
    if left_out:
        click.echo(left_out, err=True)


def _a_number(value: float) -> float:
    """``--interval`` as given, unless it is NaN (which every range check lets through)."""
    if math.isnan(value):
        raise click.BadParameter("nan is not a number of seconds", param_hint="--interval")
    return value


def _parse_time(text: str) -> datetime:
    """``--at``'s ISO-8601 time (no zone: UTC), as the hosts' own times are read."""
    from lineage_es.hosts.base import parse_time

    moment = parse_time(text)
    if moment is None:
        raise click.BadParameter(
            f"{text!r} is not an ISO-8601 time in the years 1 to 9999 (UTC)", param_hint="--at"
        )
    return moment
