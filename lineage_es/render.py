"""Pictures of the forest: a terminal tree, JSON, Mermaid and Graphviz dot.

Ids are opaque and may hold newlines or other control characters (Cursor puts one inside
its spawn keys), so every id is escaped before it is printed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from lineage_es.facts import LOGICAL_EPOCH
from lineage_es.model import ForestNode, to_json

STATUS_MARK = {"live": "●", "stopped": "○", "deleted": "✕"}
RESOLUTION_MARK = {
    "native": "",
    "confirmed": " ✓",
    "transcript": " ✎",
    "registry": " ·",
    "inferred": " ?",
}


def safe_id(value: str) -> str:
    """``value`` with control and non-printable characters escaped, fit to print."""
    if value.isprintable():
        return value
    return value.encode("unicode_escape").decode("ascii")


def forest_json(forest: tuple[ForestNode, ...]) -> bytes:
    """``{"roots": [...]}`` with children nested the same way, each node with exactly the
    keys the tree's JSON contract names (names and flags are in ``family``/``show``). A node
    placed ambiguous under its root (no parent edge) is nested under the root and carries
    ``"ambiguous": true``; no other node has the key."""

    def node(n: ForestNode) -> dict[str, object]:
        out: dict[str, object] = {
            "conversation": n.conversation,
            "host": n.host,
            "depth": n.depth,
            "status": n.status,
            "resolution": n.resolution,
            "started_at": n.started_at,
            "subagent": to_json(n.subagent),
        }
        if n.ambiguous:
            out["ambiguous"] = True
        out["children"] = [node(c) for c in n.children]
        return out

    return orjson.dumps({"roots": [node(n) for n in forest]}, option=orjson.OPT_INDENT_2)


#: Start times this close after the logical epoch are row numbers, not moments.
LOGICAL_SPAN = 365 * 86400


def _age(started_at: str, now: datetime) -> str:
    """How long ago a node started; for a row replayed without a time of its own (the
    replay's logical clock), which row it was."""
    try:
        started = datetime.fromisoformat(started_at)
    except ValueError:
        return "?"
    logical = (started - LOGICAL_EPOCH).total_seconds()
    if 0 <= logical < LOGICAL_SPAN:
        return f"row {int(logical)}"
    seconds = int((now - started).total_seconds())
    if seconds < 0:
        return "0s"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


#: Terminal colours (click.style names) for status and resolution marks.
STATUS_COLOR = {"live": "green", "stopped": "bright_black", "deleted": "red"}
RESOLUTION_COLOR = {"confirmed": "green", "transcript": "cyan", "registry": "blue"}


def _paint(
    text: str,
    color: bool,
    *,
    fg: str | None = None,
    bold: bool | None = None,
    dim: bool | None = None,
) -> str:
    if not color or not text:
        return text
    import click

    return click.style(text, fg=fg, bold=bold, dim=dim)


def _label(n: ForestNode, now: datetime, color: bool = False) -> str:
    name = f' "{safe_id(n.name)}"' if n.name else ""
    kind = f" [{safe_id(n.subagent.type)}]" if n.subagent and n.subagent.type else ""
    flag = _paint(" ambiguous", color, fg="red") if n.ambiguous else ""
    host = f"{n.host} " if n.depth == 0 else ""
    mark = _paint(STATUS_MARK.get(n.status, "?"), color, fg=STATUS_COLOR.get(n.status))
    live = n.status == "live"
    ident = _paint(safe_id(n.conversation), color, bold=live or None, dim=(not live) or None)
    how = RESOLUTION_MARK.get(n.resolution, "")
    how = _paint(how, color, fg=RESOLUTION_COLOR.get(n.resolution, "yellow"))
    return (
        f"{mark} {host}{ident}{name}{kind}"
        f"  d{n.depth} {n.status} {_age(n.started_at, now)}"
        f"{how}{flag}"
    )


def forest_text(
    forest: tuple[ForestNode, ...], *, now: datetime | None = None, color: bool = False
) -> str:
    """A unicode tree, one node a line: status mark, id, type, depth, status, age and how
    its placement is known (✓ confirmed, ✎ transcript, · registry, ? inferred). ``color``
    adds terminal colours: the caller asks for them only when writing to a terminal."""
    moment = now or datetime.now(UTC)
    lines: list[str] = []

    def walk(n: ForestNode, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└─ " if last else "├─ ")
        lines.append(f"{prefix}{branch}{_label(n, moment, color)}")
        child_prefix = prefix if top else prefix + ("   " if last else "│  ")
        for i, child in enumerate(n.children):
            walk(child, child_prefix, i == len(n.children) - 1, False)

    for root in forest:
        walk(root, "", True, True)
    return "\n".join(lines) if lines else "(no live agents)"


def _graph_ids(forest: tuple[ForestNode, ...]) -> dict[int, str]:
    ids: dict[int, str] = {}

    def walk(n: ForestNode) -> None:
        ids[id(n)] = f"n{len(ids)}"
        for c in n.children:
            walk(c)

    for root in forest:
        walk(root)
    return ids


#: What the graphs write on the uncertain link from its root to a node placed ambiguous
#: under it: the root is certainly an ancestor, the parent is not known.
AMBIGUOUS_LABEL = "ambiguous"


def forest_mermaid(forest: tuple[ForestNode, ...]) -> str:
    """A Mermaid flowchart of the forest. A node placed ambiguous under its root is linked
    to it by a dotted, labelled arrow: never drawn as a parent edge."""
    ids = _graph_ids(forest)
    lines = ["flowchart TD"]

    def label(n: ForestNode) -> str:
        text = safe_id(n.conversation).replace('"', "#quot;")
        kind = f"<br/>{safe_id(n.subagent.type)}" if n.subagent and n.subagent.type else ""
        return f'{ids[id(n)]}["{text}{kind}<br/>{n.status}"]'

    def walk(n: ForestNode) -> None:
        lines.append(f"  {label(n)}")
        for c in n.children:
            walk(c)
            link = f"-. {AMBIGUOUS_LABEL} .->" if c.ambiguous else "-->"
            lines.append(f"  {ids[id(n)]} {link} {ids[id(c)]}")

    for root in forest:
        walk(root)
    return "\n".join(lines)


def forest_dot(forest: tuple[ForestNode, ...]) -> str:
    """A Graphviz digraph of the forest. A node placed ambiguous under its root is linked
    to it by a dashed, labelled edge: never drawn as a parent edge."""
    ids = _graph_ids(forest)
    lines = ["digraph lineage {", "  node [shape=box];"]

    def walk(n: ForestNode) -> None:
        text = safe_id(n.conversation).replace("\\", "\\\\").replace('"', '\\"')
        style = "" if n.status == "live" else ", style=dashed"
        lines.append(f'  {ids[id(n)]} [label="{text}\\n{n.status}"{style}];')
        for c in n.children:
            walk(c)
            link = f' [style=dashed, label="{AMBIGUOUS_LABEL}"]' if c.ambiguous else ""
            lines.append(f"  {ids[id(n)]} -> {ids[id(c)]}{link};")

    for root in forest:
        walk(root)
    lines.append("}")
    return "\n".join(lines)
