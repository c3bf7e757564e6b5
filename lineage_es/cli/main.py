"""The ``lineage`` command: see and keep your agents' history.

This module holds the ``lineage`` group and the commands that ask the journal a question
(tree, show, relation, chain, provenance, family, agents) or correct it (rename, delete); the
other commands live in :mod:`lineage_es.cli.journal`, :mod:`lineage_es.cli.imports` and
:mod:`lineage_es.cli.live`, and are registered here. Each command is thin over
:mod:`lineage_es.engine.engine`: it opens the store, asks one question and prints the answer.
Errors print their reason and exit with status 2, never a traceback.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

import click

from lineage_es.cli import imports, journal, live, mcp, mcp_install
from lineage_es.cli.common import (
    echo_json,
    host_option,
    open_store,
    plural,
    reports_errors,
    store_option,
    use_color,
)
from lineage_es.cli.output import write_out
from lineage_es.facts import DELETE_REASONS
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
    from lineage_es.model import ForestNode, Member

#: The reasons a user may give for a delete (a descendant's, parent-teardown, is the
#: journal's own).
USER_DELETE_REASONS = tuple(r for r in DELETE_REASONS if r != "parent-teardown")


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
            color = use_color()

            def draw() -> None:
                forest = engine.forest(host, include_stopped=include_stopped, root=conversation)
                if color:
                    click.clear()
                _print_forest(forest, fmt, color=color, compact=True)

            live.watch_loop(engine.position, draw, interval=interval)
            return
        if at_time is not None or position is not None:
            when = _parse_time(at_time) if at_time is not None else None
            if position is not None and position > (last := engine.position()):
                raise click.BadParameter(
                    f"{position} is past the journal's end: its last position is {last}",
                    param_hint="'--position'",
                )
            past = engine.as_of(position=position, time=when)
            forest = past.forest(host, include_stopped=include_stopped, root=conversation)
            moment = when if when is not None else _time_at_position(engine, position or 0)
        else:
            forest = engine.forest(host, include_stopped=include_stopped, root=conversation)
    _print_forest(forest, fmt, color=use_color(), now=moment)


def _time_at_position(engine: Engine, position: int) -> datetime | None:
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
) -> None:
    """Print ``forest`` in ``fmt``, all of it or an error (:func:`write_out`). ``compact`` is
    a ``--watch`` drawing: JSON on one line, and, without colour (no screen to clear), a
    blank line after each text drawing."""
    if fmt == "json":
        data = dumps_deep(forest_data(forest)) if compact else forest_json(forest)
        write_out(data + b"\n")
        return
    if fmt == "mermaid":
        text = forest_mermaid(forest)
    elif fmt == "dot":
        text = forest_dot(forest)
    else:
        text = forest_text(forest, now=now, color=color)
        if compact and not color:
            text += "\n"
    write_out(f"{text}\n".encode())


def _parse_time(text: str) -> datetime:
    """``--at``'s ISO-8601 time (no zone: UTC), as the hosts' own times are read."""
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


def _print_members(members: tuple[Member, ...], with_relation: bool) -> None:
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
        _print_members(members, with_relation=False)


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
        _print_members(members, with_relation=True)


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
    type=click.Choice(USER_DELETE_REASONS),
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
    click.echo(f"deleted {plural(deleted, 'node')}", err=True)


main.add_command(journal.ingest)
main.add_command(journal.journal)
main.add_command(imports.import_command)
main.add_command(live.hook)
main.add_command(live.install_hooks)
main.add_command(live.uninstall_hooks)
main.add_command(mcp_install.install_mcp)
main.add_command(mcp_install.uninstall_mcp)
main.add_command(live.serve)
main.add_command(mcp.mcp)

if __name__ == "__main__":  # pragma: no cover
    main()
