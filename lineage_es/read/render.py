"""Pictures of the forest: a terminal tree, JSON, Mermaid and Graphviz dot.

Ids are opaque and may hold newlines or other control characters (Cursor puts one inside
its spawn keys), so every id is escaped before it is printed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta

import orjson

from lineage_es.model import ForestNode
from lineage_es.read.quiet import quiet_label
from lineage_es.vocabulary import LOGICAL_EPOCH

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
    ``"ambiguous": true``; no other node has the key. Every node has ``last_seen`` (the
    time of its latest fact; null for a row projected before views kept it), just before
    ``children``. Laid out as ``orjson``'s two-space
    indent lays it out, down to :data:`MAX_INDENT_LEVELS` levels (a node 30 agents deep);
    lines below are indented as at that level, so the text grows as the nodes do, not as
    the square of a chain's depth."""
    return dumps_deep(forest_data(forest), indent=True)


def forest_data(forest: tuple[ForestNode, ...]) -> dict[str, object]:
    """The plain data :func:`forest_json` writes."""
    return {"roots": nested(forest, _json_fields)}


def node_fields(node: ForestNode) -> dict[str, object]:
    """A node's own keys as ``lineage tree --format json`` writes them (not its children)."""
    subagent = node.subagent
    out: dict[str, object] = {
        "conversation": node.conversation,
        "host": node.host,
        "depth": node.depth,
        "status": node.status,
        "resolution": node.resolution,
        "started_at": node.started_at,
        "subagent": None if subagent is None else {"id": subagent.id, "type": subagent.type},
    }
    if node.ambiguous:
        out["ambiguous"] = True
    return out


def _json_fields(node: ForestNode) -> dict[str, object]:
    out = node_fields(node)
    out["last_seen"] = node.last_seen
    return out


def nested(
    forest: Iterable[ForestNode], fields: Callable[[ForestNode], dict[str, object]]
) -> list[dict[str, object]]:
    """The forest's trees as nested objects: each node's keys from ``fields``, then its
    ``children``. Built without recursion (a chain of agents may be deeper than Python's
    recursion limit)."""
    roots: list[dict[str, object]] = []
    stack: list[tuple[ForestNode, list[dict[str, object]]]] = [
        (n, roots) for n in reversed(tuple(forest))
    ]
    while stack:
        n, siblings = stack.pop()
        out = fields(n)
        children: list[dict[str, object]] = []
        out["children"] = children
        siblings.append(out)
        stack.extend((c, children) for c in reversed(n.children))
    return roots


#: How deep :func:`dumps_deep` indents: two spaces a level down to this many levels, and
#: no further. Indenting every level would make a chain N deep some 22*N^2 bytes (2 GB at
#: 10,000), each line carrying the whole depth in spaces; capped, a line's indent is bounded
#: and the text grows linearly with the data.
MAX_INDENT_LEVELS = 64


#: A line of indented JSON nested deeper than :data:`MAX_INDENT_LEVELS` (JSON strings escape
#: their newlines, so a newline byte in the text is always the layout's).
_TOO_DEEP_LINE = b"\n" + b"  " * MAX_INDENT_LEVELS + b" "


def dumps_deep(value: object, *, indent: bool = False) -> bytes:
    """``orjson.dumps(value)`` (with ``indent``: ``option=orjson.OPT_INDENT_2``), byte for
    byte, for plain JSON data of any depth (objects with string keys, lists and tuples,
    scalars): orjson refuses data nested deeper than 255 levels, and a tree of agents may
    be. With ``indent``, lines nested deeper than :data:`MAX_INDENT_LEVELS` are indented as
    at that level (the same JSON value; orjson's bytes for anything shallower).

    orjson writes it in one call wherever its bytes are these; only data nested deeper is
    walked, value by value (:func:`_dumps_walking`)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else None)
    except orjson.JSONEncodeError:
        return _dumps_walking(value, indent=indent)
    if indent and _TOO_DEEP_LINE in text:
        return _dumps_walking(value, indent=True)
    return text


def _dumps_walking(value: object, *, indent: bool) -> bytes:
    """:func:`dumps_deep`'s bytes for data of any depth: objects and arrays are walked with
    an explicit stack, every scalar and key is written by orjson."""
    parts: list[bytes] = []
    colon = b": " if indent else b":"
    # Each frame: the items still to write (key or None, value), its closing bracket, depth.
    stack: list[tuple[Iterator[tuple[str | None, object]], bytes, int]] = []
    first = True

    def begin(item: object, depth: int) -> bool:
        """Write ``item``, or open it and push its frame; whether a frame was pushed."""
        if isinstance(item, dict) and item:
            parts.append(b"{")
            stack.append((iter(item.items()), b"}", depth + 1))
            return True
        if isinstance(item, list | tuple) and item:
            parts.append(b"[")
            stack.append((((None, v) for v in item), b"]", depth + 1))
            return True
        parts.append(orjson.dumps(item))
        return False

    def newline(depth: int) -> bytes:
        return b"\n" + b"  " * min(depth, MAX_INDENT_LEVELS) if indent else b""

    first = begin(value, 0)
    while stack:
        items, closer, depth = stack[-1]
        entry = next(items, None)
        if entry is None:
            stack.pop()
            parts.append(newline(depth - 1) + closer)
            first = False
            continue
        if not first:
            parts.append(b",")
        parts.append(newline(depth))
        key, item = entry
        if key is not None:
            parts.append(orjson.dumps(key) + colon)
        first = begin(item, depth)
    return b"".join(parts)


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


#: How many levels :func:`forest_text` draws side by side before it starts again from the left.
MAX_DRAWN_LEVELS = 64


def forest_text(
    forest: tuple[ForestNode, ...],
    *,
    now: datetime | None = None,
    color: bool = False,
    quiet: Mapping[str, timedelta] | None = None,
) -> str:
    """A unicode tree, one node a line: status mark, id, type, depth, status, age and how
    its placement is known (✓ confirmed, ✎ transcript, · registry, ? inferred). Ages count
    up to ``now``: the moment the forest shows (a time-travelling tree's, not the clock's;
    default the current time). ``color`` adds terminal colours: the caller asks for them
    only when writing to a terminal. A root in ``quiet`` (by conversation) is marked with
    how long it has been quiet (``quiet 3h``, :mod:`lineage_es.read.quiet`).

    A node more than :data:`MAX_DRAWN_LEVELS` levels down is drawn from the left again,
    its line led by how many levels are not drawn (``…64 └─ ● …``): each line's indent is
    bounded, so the text grows as the nodes do, not as the square of a chain's depth."""
    moment = now or datetime.now(UTC)
    lines: list[str] = []

    # Depth first with an explicit stack, children in order: (node, prefix, levels not
    # drawn, last, top).
    stack = [(root, "", 0, True, True) for root in reversed(forest)]
    while stack:
        n, prefix, hidden, last, top = stack.pop()
        branch = "" if top else ("└─ " if last else "├─ ")
        lead = f"…{hidden} " if hidden else ""
        label = _label(n, moment, color)
        if top and quiet and n.conversation in quiet:
            label += "  " + _paint(quiet_label(quiet[n.conversation]), color, fg="yellow")
        lines.append(f"{lead}{prefix}{branch}{label}")
        child_prefix = prefix if top else prefix + ("   " if last else "│  ")
        child_hidden = hidden
        if len(child_prefix) >= 3 * MAX_DRAWN_LEVELS:  # three characters a level
            child_prefix, child_hidden = "", hidden + MAX_DRAWN_LEVELS
        count = len(n.children)
        stack.extend(
            (child, child_prefix, child_hidden, i == count - 1, False)
            for i, child in reversed(list(enumerate(n.children)))
        )
    return "\n".join(lines) if lines else "(no live agents)"


def _preorder(forest: tuple[ForestNode, ...]) -> Iterator[ForestNode]:
    """Every node of the forest, each before its children, children in order; with an
    explicit stack (a chain of agents may be deeper than Python's recursion limit)."""
    stack = list(reversed(forest))
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _graph_ids(forest: tuple[ForestNode, ...]) -> dict[int, str]:
    return {id(n): f"n{i}" for i, n in enumerate(_preorder(forest))}


def _graph_lines(
    forest: tuple[ForestNode, ...],
    node: Callable[[ForestNode], str],
    edge: Callable[[ForestNode, ForestNode], str],
) -> list[str]:
    """A node's line, then for each child its subtree's lines and the edge to it, as the
    graphs have always been written; with an explicit stack."""
    lines: list[str] = []
    stack: list[tuple[ForestNode, ForestNode | None]] = [(n, None) for n in reversed(forest)]
    while stack:
        n, parent = stack.pop()
        if parent is not None:
            lines.append(edge(parent, n))
            continue
        lines.append(node(n))
        for c in reversed(n.children):
            stack.append((c, n))  # the edge, once the child's subtree is written
            stack.append((c, None))
    return lines


#: What the graphs write on the uncertain link from its root to a node placed ambiguous
#: under it: the root is certainly an ancestor, the parent is not known.
AMBIGUOUS_LABEL = "ambiguous"


#: What a Mermaid label cannot hold raw, and the entity code Mermaid writes it with: ``#``
#: first (it begins every code), then the label's quote and what HTML would read as markup.
MERMAID_CODES = (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"), ("&", "#amp;"))


def mermaid_text(value: str) -> str:
    """``value`` fit for a quoted Mermaid label: control characters escaped
    (:func:`safe_id`), then every character that could end the label or add markup to it
    written as an entity code, so no id or type can draw a node or an edge of its own."""
    text = safe_id(value)
    for raw, code in MERMAID_CODES:
        text = text.replace(raw, code)
    return text


def dot_text(value: str) -> str:
    """``value`` fit for a quoted Graphviz label: control characters escaped
    (:func:`safe_id`), then backslashes and quotes."""
    return safe_id(value).replace("\\", "\\\\").replace('"', '\\"')


def _kind(n: ForestNode) -> str:
    """What a graph's label names on its second line: a root's host, a child's subagent
    type (empty when the host did not say)."""
    if n.depth == 0:
        return n.host
    return n.subagent.type if n.subagent and n.subagent.type else ""


def forest_mermaid(forest: tuple[ForestNode, ...]) -> str:
    """A Mermaid flowchart of the forest. Each node's label names its id, then its host (a
    root) or subagent type (a child), then its status, as ``dot``'s does. A node placed
    ambiguous under its root is linked to it by a dotted, labelled arrow: never drawn as a
    parent edge. Every part of a label is escaped (:func:`mermaid_text`)."""
    ids = _graph_ids(forest)

    def label(n: ForestNode) -> str:
        text = mermaid_text(n.conversation)
        kind = f"<br/>{mermaid_text(_kind(n))}" if _kind(n) else ""
        return f'  {ids[id(n)]}["{text}{kind}<br/>{mermaid_text(n.status)}"]'

    def edge(parent: ForestNode, child: ForestNode) -> str:
        link = f"-. {AMBIGUOUS_LABEL} .->" if child.ambiguous else "-->"
        return f"  {ids[id(parent)]} {link} {ids[id(child)]}"

    return "\n".join(["flowchart TD", *_graph_lines(forest, label, edge)])


#: How ``dot`` lays the forest out: left to right, a tree's depth across and its nodes down,
#: each root's tree in a box of its own (a cluster), the boxes one under another. Drawn top
#: to bottom with every root side by side, 25 roots made a picture 47 times wider than tall,
#: unreadable once shrunk to fit a page; this way its width is that of the deepest tree, and
#: more roots make it longer, not smaller. (``pack``/``packmode`` grids of the boxes came out
#: no narrower than a page allows, and ``dot`` 2.43 lays them out unevenly.)
DOT_GRAPH = "rankdir=LR, nodesep=0.15, ranksep=0.4"


def forest_dot(forest: tuple[ForestNode, ...]) -> str:
    """A Graphviz digraph of the forest, one cluster (a box) per root, read left to right
    and top to bottom (:data:`DOT_GRAPH`). Each node's label names its id, then its host (a
    root) or subagent type (a child), then its status; a stopped node is dashed. A node
    placed ambiguous under its root is linked to it by a dashed, labelled edge: never drawn
    as a parent edge. Every part of a label is escaped (:func:`dot_text`).

    ``dot`` draws a left-to-right graph's clusters, and a rank's nodes, from the bottom up
    in the order they are written: they are written last first, so that the first root,
    and a node's first child, come out on top."""
    ids = _graph_ids(forest)

    def label(n: ForestNode) -> str:
        style = "" if n.status == "live" else ", style=dashed"
        kind = _kind(n)
        parts = [n.conversation, *([kind] if kind else []), n.status]
        text = "\\n".join(dot_text(part) for part in parts)
        return f'    {ids[id(n)]} [label="{text}"{style}];'

    def edge(parent: ForestNode, child: ForestNode) -> str:
        link = f' [style=dashed, label="{AMBIGUOUS_LABEL}"]' if child.ambiguous else ""
        return f"  {ids[id(parent)]} -> {ids[id(child)]}{link};"

    lines = ["digraph lineage {", f"  graph [{DOT_GRAPH}];", "  node [shape=box];"]
    for number in reversed(range(len(forest))):
        lines.append(f"  subgraph cluster_{number} {{")
        lines.append('    graph [style=rounded, color=gray, label=""];')
        nodes = list(_preorder(forest[number : number + 1]))
        lines.extend(label(n) for n in reversed(nodes))
        lines.append("  }")
    lines.extend(line for line in _graph_lines(forest, lambda n: "", edge) if line)
    lines.append("}")
    return "\n".join(lines)
