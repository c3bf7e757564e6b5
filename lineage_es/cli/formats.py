"""``--format text|json`` for the commands that answer a question, and their text answers.

Every query command takes ``--format``: ``text`` for a person, ``json`` for a script.
``chain``, ``family`` and ``agents`` had a ``--json`` flag: it still works, hidden from the
help (which names it as an alias of ``--format json``). ``show`` and ``provenance`` answered
only in JSON, as the README documents for ``show``; JSON stays their default, so scripts
that read them go on working, and ``--format text`` is there for a person.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from lineage_es.model import AgentLineage, Peer, Provenance
from lineage_es.read.render import safe_id

#: A click command function, as an option decorator takes and returns it.
FC = TypeVar("FC", bound=Callable[..., Any])

FORMATS = ("text", "json")


def format_option(default: str, *, json_alias: bool = False) -> Callable[[FC], FC]:
    """``--format text|json`` (``default`` when absent), handed to the command as ``fmt``;
    with ``json_alias``, also ``--json``, hidden, the same as ``--format json`` (the form
    those commands had first)."""

    def decorate(func: FC) -> FC:
        alias = " (--json is the same as --format json)" if json_alias else ""
        command = func
        if json_alias:

            @functools.wraps(func)
            def command(*args: Any, as_json: bool, fmt: str, **kwargs: Any) -> Any:
                return func(*args, fmt="json" if as_json else fmt, **kwargs)

            command = click.option(
                "--json", "as_json", is_flag=True, hidden=True, help="The same as --format json."
            )(command)
        return click.option(
            "--format",
            "fmt",
            type=click.Choice(FORMATS),
            default=default,
            show_default=True,
            help=f"text: lines for a person; json: for a script{alias}.",
        )(command)

    return decorate


def lineage_text(found: AgentLineage) -> str:
    """``show``'s answer for a person: one ``field: value`` line for each field the JSON
    holds, then the live tree around the conversation, one node a line."""
    lines = [f"conversation: {safe_id(found.conversation)}"]
    if found.name:
        lines.append(f'name: "{safe_id(found.name)}"')
    if found.host:
        lines.append(f"host: {found.host}")
    lines.append(f"root: {safe_id(found.root) if found.root is not None else '- (not known yet)'}")
    parent = safe_id(found.parent) if found.parent else "- (a root)" if found.depth == 0 else "-"
    lines.append(f"parent: {parent}{'  ambiguous' if found.ambiguous else ''}")
    lines.append(f"depth: {found.depth}")
    lines.append(f"resolution: {found.resolution}")
    if found.subagent:
        kind = f" [{safe_id(found.subagent.type)}]" if found.subagent.type else ""
        lines.append(f"subagent: {safe_id(found.subagent.id)}{kind}")
    tree = found.tree
    if tree is not None:
        for title, peers in (
            ("children", tree.children),
            ("other live nodes of its root", tree.siblings),
            ("other live roots", tree.roots),
        ):
            lines.append(f"{title}: {len(peers)}")
            lines.extend(f"  {_peer_text(p)}" for p in peers)
    return "\n".join(lines)


def _peer_text(peer: Peer) -> str:
    kind = f" [{safe_id(peer.subagent.type)}]" if peer.subagent and peer.subagent.type else ""
    parent = safe_id(peer.parent) if peer.parent else "-"
    flag = " ambiguous" if peer.ambiguous else ""
    return (
        f"{safe_id(peer.conversation)}{kind}  depth={peer.depth} parent={parent} "
        f"resolution={peer.resolution}{flag}"
    )


def provenance_text(found: Provenance) -> str:
    """``provenance``'s answer for a person: what the sender is to the recipient, the chain
    that explains it and the note, when there is one."""
    lines = [
        f"{safe_id(found.sender)} is {_article(found.sender_relation)} {safe_id(found.recipient)}"
    ]
    if found.chain:
        lines.append("chain: " + " > ".join(safe_id(c) for c in found.chain))
    if found.note:
        lines.append(f"note: {found.note}")
    return "\n".join(lines)


def _article(relation: str) -> str:
    """``the child of``, ``unrelated to``, ``itself (self)``: a relation read in a sentence."""
    if relation == "self":
        return "the same conversation as"
    if relation == "unrelated":
        return "unrelated to"
    if relation == "kin":
        return "kin to"
    return f"{'an' if relation[0] in 'aeiou' else 'a'} {relation} of"


def relation_json(a: str, b: str, relation: str) -> dict[str, str]:
    """``relation``'s answer for a script: both ids as given and the relation."""
    return {"a": a, "b": b, "relation": relation}
