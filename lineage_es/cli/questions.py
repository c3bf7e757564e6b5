"""The ``lineage`` commands that ask the journal about conversations it knows: show,
relation, chain, provenance, family and agents (``tree`` draws the forest, in
:mod:`lineage_es.cli.main`).

Each opens the store, reads each id it was given (whole, or as a unique prefix of 4
characters or more, as git reads a commit's), asks the engine one question and prints the
answer as ``--format`` says: text for a person, JSON for a script (:mod:`.formats`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from lineage_es.cli.common import (
    echo_json,
    host_option,
    open_reader,
    reports_errors,
    resolve_ids,
    store_option,
)
from lineage_es.cli.formats import format_option, lineage_text, provenance_text, relation_json
from lineage_es.read.render import safe_id

if TYPE_CHECKING:
    from lineage_es.model import Member


@click.command()
@click.argument("conversation")
@format_option("json")
@host_option
@store_option
@reports_errors
def show(conversation: str, fmt: str, host: str | None, store: str | None) -> None:
    """Print CONVERSATION's lineage (root, parent, depth, resolution) and its tree, as JSON
    (--format text: the same, a field a line, for a person).

    Fields: root and parent (null for a root), depth (0 for a root), resolution (how the
    parent is known: native, confirmed, transcript, registry, inferred), subagent (the host's
    own id and type for it), host, and tree (the live tree around it, children nested); name
    once renamed, and "ambiguous": true on a child (and a tree node) placed under its root
    with no parent edge.

    \b
    Examples:
      lineage show a1000000000000001
      lineage show 5f1c2e4a --format text      an id's first characters are enough
      lineage show 5f1c2e4a-... --host codex   when the id is known under several hosts
    """
    with open_reader(store) as engine:
        (conversation,) = resolve_ids(engine, host, conversation)
        found = engine.lineage(conversation, host)
    if fmt == "json":
        echo_json(found)
    else:
        click.echo(lineage_text(found))


@click.command()
@click.argument("a")
@click.argument("b")
@format_option("text")
@host_option
@store_option
@reports_errors
def relation(a: str, b: str, fmt: str, host: str | None, store: str | None) -> None:
    """Say what A is to B: self, child, descendant, parent, ancestor, sibling, kin or
    unrelated. Stopped and deleted nodes count.

    kin: same root, neither above the other nor siblings; unrelated: different roots.

    \b
    Examples:
      lineage relation a1000000000000001 5f1c2e4a-...   prints e.g. child
      [ "$(lineage relation A B)" = descendant ] && echo "A works for B"
      lineage relation a100 5f1c --format json   {"a": ..., "b": ..., "relation": ...}
    """
    with open_reader(store) as engine:
        a, b = resolve_ids(engine, host, a, b)
        found = engine.relation(a, b, host)
    if fmt == "json":
        echo_json(relation_json(a, b, found))
    else:
        click.echo(found)


@click.command()
@click.argument("conversation")
@format_option("text", json_alias=True)
@host_option
@store_option
@reports_errors
def chain(conversation: str, fmt: str, host: str | None, store: str | None) -> None:
    """Print CONVERSATION's delegation chain up to its root (at most 20 hops).

    Text: the chain as ``A > B > ROOT``, and a line saying why when it stops short. JSON:
    conversations (the chain, CONVERSATION first), complete (it reached a root), unresolved
    (the parent it names that the journal does not know, else null), cycle (it loops) and
    capped (more than 20 hops).

    \b
    Examples:
      lineage chain a1000000000000001          a1000000000000001 > 5f1c2e4a-...
      lineage chain a1000000000000001 --format json
    """
    with open_reader(store) as engine:
        (conversation,) = resolve_ids(engine, host, conversation)
        found = engine.chain(conversation, host)
    if fmt == "json":
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


@click.command()
@click.argument("sender")
@click.argument("recipient")
@format_option("json")
@host_option
@store_option
@reports_errors
def provenance(sender: str, recipient: str, fmt: str, host: str | None, store: str | None) -> None:
    """What a message from SENDER to RECIPIENT should carry, as JSON (--format text: in
    words, for a person).

    Fields: sender, recipient, sender_relation (what SENDER is to RECIPIENT, as `lineage
    relation` says); unless SENDER is RECIPIENT's direct child, also chain (the delegation
    chain that explains the relation, SENDER first) and note (one sentence saying so, for a
    prompt).

    \b
    Example:
      lineage provenance a1000000000000001 5f1c2e4a-...
    """
    with open_reader(store) as engine:
        sender, recipient = resolve_ids(engine, host, sender, recipient)
        found = engine.provenance(sender, recipient, host)
    if fmt == "json":
        echo_json(found)
    else:
        click.echo(provenance_text(found))


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


@click.command()
@click.argument("root")
@format_option("text", json_alias=True)
@host_option
@store_option
@reports_errors
def family(root: str, fmt: str, host: str | None, store: str | None) -> None:
    """List every node of ROOT's family that is not deleted, with depth, name, status.

    One line a node, indented by depth: id, "name", depth, status, parent (- for the root)
    and resolution (how the parent is known), then "ambiguous" for a child placed under the
    root with no parent edge (JSON: "ambiguous": true). ROOT may be any node of the family.

    \b
    Examples:
      lineage family 5f1c2e4a-...
      lineage family 5f1c2e4a-... --format json
    """
    with open_reader(store) as engine:
        (root,) = resolve_ids(engine, host, root)
        members = engine.family(root, host)
    if fmt == "json":
        echo_json(members)
    else:
        _print_members(members, with_relation=False)


@click.command()
@click.option("--as", "as_", required=True, help="The conversation asking.")
@format_option("text", json_alias=True)
@host_option
@store_option
@reports_errors
def agents(as_: str, fmt: str, host: str | None, store: str | None) -> None:
    """List every known agent with its relation to the one asking (an orchestrator's
    list_agents, as a tree rather than a flat list).

    One line a node: its relation to the one asking (self, child, parent, sibling, ...),
    then the fields `lineage family` prints.

    \b
    Examples:
      lineage agents --as a1000000000000001
      lineage agents --as a1000000000000001 --format json
    """
    with open_reader(store) as engine:
        (as_,) = resolve_ids(engine, host, as_)
        members = engine.agents(as_, host)
    if fmt == "json":
        echo_json(members)
    else:
        _print_members(members, with_relation=True)
