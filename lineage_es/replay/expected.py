"""The expected file: load it, compare it with what a replay observed, rewrite it.

The file is YAML checked against ``expected.schema.json`` (shipped beside this module) with
``additionalProperties: false`` everywhere, so a typo is an error naming its line, never a key
that silently checks nothing. Reading the YAML with its lines is :mod:`.yaml_lines`, within the
bounds of :mod:`.yaml_bounds` (file size, nesting, alias expansion, number size); checking it
against the schema is :mod:`.schema_check`.
"""

from __future__ import annotations

import difflib
import gc
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lineage_es.hosts.base import parse_time
from lineage_es.model import AgentLineage, LineageTree, to_json
from lineage_es.replay.schema_check import TIME_KEYS, conforms, render_value, schema, validate
from lineage_es.replay.yaml_bounds import read_bounded
from lineage_es.replay.yaml_lines import KeyPath, LazyLines, nearest_line, parse_yaml

TREE_KEYS = ("siblings", "children", "roots")


@dataclass(frozen=True, slots=True)
class Step:
    """One entry of ``steps``: what must hold after each of its rows."""

    index: int
    rows: tuple[int, ...]
    line: int
    checks: Mapping[str, Any]

    @property
    def label(self) -> str:
        """``row 5`` or ``rows 5, 6, 7``: how reports name the step."""
        if len(self.rows) == 1:
            return f"row {self.rows[0]}"
        return "rows " + ", ".join(str(r) for r in self.rows)

    @property
    def views(self) -> Mapping[str, Any]:
        views: Mapping[str, Any] = self.checks.get("views", {})
        return views


@dataclass(frozen=True, slots=True)
class Expected:
    """A validated expected file, with the line of every key for messages."""

    path: Path
    host: str | None
    steps: tuple[Step, ...]
    final_views: Mapping[str, Any] | None = None
    final_line: int | None = None
    lines: Mapping[KeyPath, int] = field(default_factory=dict)

    def line_of(self, path: KeyPath) -> int:
        """The line of ``path``, or of its nearest enclosing key."""
        return nearest_line(self.lines, path)


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One expectation that did not hold: where, from whose perspective, and both values."""

    row: int | None
    perspective: str
    path: str
    expected: Any
    observed: Any
    line: int | None = None
    diff: tuple[str, ...] = ()


# -- loading -----------------------------------------------------------------------------------


def load_expected(path: str | Path) -> Expected:
    """Read, validate and index an expected file; :class:`InputError` names the line and why."""
    path = Path(path)
    text = read_bounded(path)
    with _collector_paused():
        data, lines = parse_yaml(text, path)
        del text
        validate(data, lines, path)
    if isinstance(lines, LazyLines):
        lines.detach()
    steps = []
    for i, raw in enumerate(data["steps"]):
        # The step's own mapping becomes its checks: no copy of the document is kept.
        # A row is an integer, which the schema lets YAML write as `3.0`: kept as the int it is.
        rows = tuple(int(r) for r in raw.pop("rows")) if "rows" in raw else (int(raw.pop("row")),)
        steps.append(Step(index=i, rows=rows, line=lines.get(("steps", i), 0), checks=raw))
    final = data.get("final")
    return Expected(
        path=path,
        host=data.get("host"),
        steps=tuple(steps),
        final_views=None if final is None else final["views"],
        final_line=lines.get(("final",)),
        lines=lines,
    )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a document is built and validated: it is a
    tree of fresh containers without cycles, so the collector finds nothing, yet on a
    25,000-step file its passes over them took a fifth of the load."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# -- comparing ---------------------------------------------------------------------------------


def perspective_of(conversation: str | None, *, view: bool = False) -> str:
    """How a report names whose answer is compared."""
    if conversation is None:
        return "requester (none)"
    return f"{'view of' if view else 'requester'} {json.dumps(conversation, ensure_ascii=False)}"


def compare_lineage(
    expected: Expected, step: Step, row: int, observed: AgentLineage | None
) -> list[Mismatch]:
    """The requester's own lineage and tree on ``row`` against ``step``'s expectations."""
    who = perspective_of(observed.conversation if observed is not None else None)
    base: KeyPath = ("steps", step.index)
    out: list[Mismatch] = []
    if "lineage" in step.checks:
        want = step.checks["lineage"]
        got = None if observed is None else lineage_data(observed)
        for path, exp, obs in _compare_value(want, got, ("lineage",)):
            out.append(_mismatch(expected, row, who, base + path, path, exp, obs))
    if "tree" in step.checks:
        tree = None if observed is None else observed.tree
        out.extend(compare_tree(expected, row, who, (*base, "tree"), step.checks["tree"], tree))
    return out


def compare_relations(
    expected: Expected, step: Step, row: int, observed: Mapping[str, str] | None
) -> list[Mismatch]:
    """The requester's relation to each agent ``step`` names under ``relations`` (what an
    MCP caller's ``list_agents`` gives) against what the replay observed on ``row``."""
    want = step.checks.get("relations")
    if want is None:
        return []
    who = perspective_of(None) if observed is None else "requester's list_agents"
    got = None if observed is None else {c: observed.get(c) for c in want}
    return [
        _mismatch(expected, row, who, ("steps", step.index, *path), path, exp, obs)
        for path, exp, obs in _compare_value(want, got, ("relations",))
    ]


def compare_tree(
    expected: Expected,
    row: int | None,
    who: str,
    where: KeyPath,
    want: Mapping[str, Any] | None,
    tree: LineageTree | None,
) -> list[Mismatch]:
    """A tree expectation (``tree:`` or one view, at key path ``where``) against the tree the
    engine answered."""
    if want is None or tree is None:
        if want is None and tree is None:
            return []
        got = None if tree is None else tree_data(tree)
        return [_mismatch(expected, row, who, where, ("tree",), want, got)]
    out: list[Mismatch] = []
    for key in TREE_KEYS:
        if key not in want:
            continue
        exp_items = want[key]
        peers = getattr(tree, key)
        # Most expectations list ids: compare those without turning every peer into data.
        if [peer.conversation for peer in peers] == exp_items:
            continue
        if len(exp_items) == len(peers) and all(
            want_item == peer.conversation
            if isinstance(want_item, str)
            else _item_matches(want_item, to_json(peer))
            for want_item, peer in zip(exp_items, peers, strict=True)
        ):
            continue
        obs_items = [to_json(peer) for peer in peers]
        out.append(
            Mismatch(
                row=row,
                perspective=who,
                path=f"tree.{key}",
                expected=exp_items,
                observed=obs_items,
                line=expected.line_of((*where, key)),
                diff=_list_diff(exp_items, obs_items),
            )
        )
    return out


def compare_view(
    expected: Expected,
    row: int | None,
    base: KeyPath,
    conversation: str,
    want: Mapping[str, Any] | None,
    tree: LineageTree | None,
) -> list[Mismatch]:
    """One entry of ``views`` under ``base`` (a step, or ``final``): the tree ``conversation``
    would be answered at that point."""
    who = perspective_of(conversation, view=True)
    return compare_tree(expected, row, who, (*base, "views", conversation), want, tree)


def _mismatch(
    expected: Expected,
    row: int | None,
    who: str,
    where: KeyPath,
    path: KeyPath,
    exp: Any,
    obs: Any,
) -> Mismatch:
    return Mismatch(
        row=row,
        perspective=who,
        path=".".join(str(p) for p in path),
        expected=exp,
        observed=obs,
        line=expected.line_of(where),
    )


def _compare_value(want: Any, got: Any, path: KeyPath) -> Iterable[tuple[KeyPath, Any, Any]]:
    """Differences of ``got`` from ``want``, comparing only the keys ``want`` gives; a time
    (:data:`TIME_KEYS`) is compared as the instant it names, however it is written."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            yield from _compare_value(value, got.get(key), (*path, key))
    elif _same_value(want, got):
        return
    elif not (path and path[-1] in TIME_KEYS and _same_instant(want, got)):
        yield path, want, got


def _same_value(want: Any, got: Any) -> bool:
    """Whether two values are equal as JSON data: numbers by value (``depth: 1.0`` is the
    integer 1, as the schema's ``integer`` takes it), anything else only as the same type
    (``true`` is not ``1``)."""
    if type(want) in (int, float) and type(got) in (int, float):
        return bool(want == got)
    return type(want) is type(got) and bool(want == got)


def _same_instant(want: Any, got: Any) -> bool:
    """Whether two written times name the same instant (``Z`` or ``+00:00``, with or without
    fractions of a second); ``False`` when either is not a time."""
    want_at, got_at = parse_time(want), parse_time(got)
    return want_at is not None and want_at == got_at


def _item_matches(want: Any, peer: Mapping[str, Any]) -> bool:
    if isinstance(want, str):
        return bool(want == peer["conversation"])
    return not any(True for _ in _compare_value(want, dict(peer), ()))


def _item_text(item: Any) -> str:
    if isinstance(item, str):
        return json.dumps(item, ensure_ascii=False)
    inner = ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in item.items())
    return "{" + inner + "}"


def _list_diff(want: Sequence[Any], got: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """A unified diff of two peer lists, each observed peer drawn in the shape expected of it."""
    fields: list[str] = []
    for item in want:
        if isinstance(item, dict):
            fields.extend(k for k in item if k not in fields)
    exp_lines = [_item_text(item) for item in want]
    obs_lines = []
    for peer in got:
        match = next((w for w in want if _item_matches(w, peer)), None)
        if match is not None:
            obs_lines.append(_item_text(match))
        elif fields:
            keys = ["conversation", *(f for f in fields if f != "conversation")]
            obs_lines.append(_item_text({k: peer.get(k) for k in keys}))
        else:
            obs_lines.append(_item_text(peer["conversation"]))
    context = max(len(exp_lines), len(obs_lines))
    diff = difflib.unified_diff(
        exp_lines, obs_lines, "expected", "observed", n=context, lineterm=""
    )
    lines = list(diff)
    return tuple(lines) if lines else ("(empty on both sides)",)


# -- writing -----------------------------------------------------------------------------------


def lineage_data(lineage: AgentLineage) -> dict[str, Any]:
    """A lineage as the expected file writes it: without its tree, subagent only when set."""
    data: dict[str, Any] = {
        "conversation": lineage.conversation,
        "root": lineage.root,
        "parent": lineage.parent,
        "depth": lineage.depth,
        "resolution": lineage.resolution,
    }
    if lineage.subagent is not None:
        data["subagent"] = to_json(lineage.subagent)
    return data


def tree_data(tree: LineageTree) -> dict[str, list[dict[str, Any]]]:
    """A tree as plain data (peers as full mappings)."""
    data: dict[str, list[dict[str, Any]]] = to_json(tree)
    return data


def tree_ids(tree: LineageTree | None) -> dict[str, list[str]] | None:
    """A tree with each peer written by its id, the shape ``--update`` writes."""
    if tree is None:
        return None
    return {key: [p.conversation for p in getattr(tree, key)] for key in TREE_KEYS}


__all__ = [
    "TREE_KEYS",
    "Expected",
    "KeyPath",
    "LazyLines",
    "Mismatch",
    "Step",
    "compare_lineage",
    "compare_relations",
    "compare_tree",
    "compare_view",
    "conforms",
    "lineage_data",
    "load_expected",
    "nearest_line",
    "parse_yaml",
    "perspective_of",
    "render_value",
    "schema",
    "tree_data",
    "tree_ids",
    "validate",
]
