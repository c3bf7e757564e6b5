"""What each tool of ``lineage mcp`` answers, with no MCP in it: the structured content and the
text an agent reads, built from the engine's own answers (``lineage show``, ``lineage agents
--as``, ``lineage provenance``), so the server and the CLI never disagree.

Each answer names its caller (``caller``: its lineage, as ``lineage show`` gives it) and how the
caller was identified (``resolution``: :mod:`lineage_es.engine.callers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from lineage_es.engine.callers import Identified
from lineage_es.errors import InvalidArgument
from lineage_es.model import AgentLineage, Member, Provenance, to_json
from lineage_es.read.render import safe_id

#: The tools the server offers: name -> (description, JSON Schema of the arguments).
TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "list_agents": (
        "Every agent of your family (your root's tree) that is not deleted, each with what it "
        "is to you: self, parent, ancestor, child, descendant, sibling or kin. Use it to tell "
        "your own child from a grandchild, or to see which siblings work next to you.",
        {"type": "object", "properties": {}},
    ),
    "lineage": (
        "Who you are: your root, parent, depth and how that placement is known, with the live "
        "tree around you (siblings, children, roots).",
        {"type": "object", "properties": {}},
    ),
    "provenance": (
        "What a message from you to another agent should carry: what you are to it, and the "
        "delegation chain that explains it.",
        {
            "type": "object",
            "properties": {"to": {"type": "string", "description": "The recipient's id."}},
            "required": ["to"],
        },
    ),
}


def caller_json(lineage: AgentLineage) -> dict[str, Any]:
    """The caller's lineage as ``lineage show`` prints it, without its tree."""
    data: dict[str, Any] = to_json(dataclasses.replace(lineage, tree=None))
    data.pop("tree", None)
    return data


def agent_json(member: Member) -> dict[str, Any]:
    """One agent of ``list_agents``: the fields an orchestrator reads (``last_seen``: the
    time of its latest fact, or when it stopped for a store whose view predates it)."""
    entry: dict[str, Any] = {
        "conversation": member.conversation,
        "name": member.name,
        "type": member.subagent.type if member.subagent else None,
        "status": member.status,
        "depth": member.depth,
        "parent": member.parent,
        "relation": member.relation,
    }
    last_seen = member.last_seen or member.stopped_at
    if last_seen:
        entry["last_seen"] = last_seen
    if member.ambiguous:
        entry["ambiguous"] = True
    return entry


def family_of(caller: AgentLineage, members: tuple[Member, ...]) -> list[Member]:
    """The members of ``lineage agents --as CALLER`` that belong to the caller's root."""
    return [m for m in members if m.root == caller.root]


def list_agents_answer(identified: Identified, members: list[Member]) -> tuple[dict[str, Any], str]:
    """``list_agents``: structured content and a short table, parents named."""
    caller = identified.lineage
    structured = {
        "caller": caller_json(caller),
        "resolution": identified.resolution,
        "agents": [agent_json(m) for m in members],
    }
    return structured, agents_table(caller, members)


def agents_table(caller: AgentLineage, members: list[Member]) -> str:
    """A table an orchestrator reads: one line an agent, its relation to the caller first,
    its parent named (its name or type beside its id)."""
    label = {m.conversation: _label(m) for m in members}
    lines = [f"You are {label.get(caller.conversation, safe_id(caller.conversation))}."]
    rows = [("relation", "agent", "status", "depth", "parent")]
    for m in members:
        parent = "-" if m.parent is None else label.get(m.parent, safe_id(m.parent))
        if m.ambiguous:
            parent = "? (ambiguous)"
        rows.append((m.relation or "", label[m.conversation], m.status, str(m.depth), parent))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[4]]).rstrip())
    return "\n".join(lines)


def _label(member: Member) -> str:
    """An agent's id with its name or type, as a table names it."""
    what = member.name or (member.subagent.type if member.subagent else None)
    if member.depth == 0:
        what = f"{what}, root" if what else "root"
    return (
        f"{safe_id(member.conversation)} ({safe_id(what)})"
        if what
        else safe_id(member.conversation)
    )


def lineage_answer(identified: Identified) -> tuple[dict[str, Any], str]:
    """``lineage``: the caller's lineage with its live tree, as ``lineage show`` gives it."""
    caller = identified.lineage
    structured = {"caller": to_json(caller), "resolution": identified.resolution}
    parent = "none (a root)" if caller.parent is None else safe_id(caller.parent)
    text = [
        f"You are {safe_id(caller.conversation)} ({caller.host}), depth {caller.depth}, "
        f"root {safe_id(caller.root) if caller.root is not None else 'not known yet'}, "
        f"parent {parent} ({caller.resolution}"
        f"{', ambiguous' if caller.ambiguous else ''}).",
    ]
    if caller.tree is not None:
        for title, peers in (
            ("Your live children", caller.tree.children),
            ("The other live agents of your root", caller.tree.siblings),
            ("The other live roots", caller.tree.roots),
        ):
            listed = ", ".join(safe_id(p.conversation) for p in peers) or "none"
            text.append(f"{title}: {listed}.")
    return structured, "\n".join(text)


def recipient_of(arguments: Mapping[str, Any] | None) -> str:
    """The ``to`` argument of ``provenance``; :class:`InvalidArgument` when it is missing."""
    to = (arguments or {}).get("to")
    if not isinstance(to, str) or not to:
        raise InvalidArgument("provenance needs 'to': the id of the agent the message is for")
    return to


def provenance_answer(identified: Identified, provenance: Provenance) -> tuple[dict[str, Any], str]:
    """``provenance``: what a message from the caller to ``to`` should carry."""
    data: dict[str, Any] = to_json(provenance)
    structured = {
        "caller": caller_json(identified.lineage),
        "resolution": identified.resolution,
        "provenance": data,
    }
    text = (
        f"You are the recipient's {data['sender_relation']}."
        if data["sender_relation"] != "unrelated"
        else "You and the recipient are unrelated."
    )
    if data.get("note"):
        text += f" {data['note']}"
    return structured, text
