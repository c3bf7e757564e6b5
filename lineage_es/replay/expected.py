"""The expected file: load and validate it, compare it with what a replay observed, rewrite it.

The file is YAML checked against ``expected.schema.json`` (shipped beside this module) with
``additionalProperties: false`` everywhere, so a typo is an error naming its line, never a key
that silently checks nothing.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from lineage_es.errors import InputError
from lineage_es.model import AgentLineage, LineageTree, to_json

#: A key path inside the expected file: mapping keys and list indices from the top.
KeyPath = tuple[str | int, ...]

TREE_KEYS = ("siblings", "children", "roots")


if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml parses large expected files ten times faster, with the same marks
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """A safe loader that keeps times as text: ``started_at: 2000-01-01T00:00:00Z`` is a string
    to compare, not a datetime to misread."""

    yaml_implicit_resolvers = {  # noqa: RUF012 (PyYAML's own class-level table)
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


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


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of the expected file (package data)."""
    text = resources.files("lineage_es.replay").joinpath("expected.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def load_expected(path: str | Path) -> Expected:
    """Read, validate and index an expected file; :class:`InputError` names the line and why."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the expected file: {exc}", path=str(path)) from None
    data, lines = parse_yaml(text, path)
    validate(data, lines, path)
    steps = tuple(
        Step(
            index=i,
            rows=tuple(raw["rows"]) if "rows" in raw else (raw["row"],),
            line=lines.get(("steps", i), 0),
            checks={k: v for k, v in raw.items() if k not in ("row", "rows")},
        )
        for i, raw in enumerate(data["steps"])
    )
    final = data.get("final")
    return Expected(
        path=path,
        host=data.get("host"),
        steps=steps,
        final_views=None if final is None else final["views"],
        final_line=lines.get(("final",)),
        lines=lines,
    )


def parse_yaml(text: str, path: Path) -> tuple[Any, dict[KeyPath, int]]:
    """The YAML document in ``text`` as plain data, and the 1-based line of every key path."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise InputError("the expected file is empty", path=str(path), line=1)
        lines: dict[KeyPath, int] = {}
        data = _build(loader, node, (), lines, path, set())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        raise InputError(f"not valid YAML: {reason}", path=str(path), line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}", path=str(path)) from None
    finally:
        loader.dispose()
    return data, lines


def _build(
    loader: _Loader, node: Node, at: KeyPath, lines: dict[KeyPath, int], path: Path, seen: set[int]
) -> Any:
    lines.setdefault(at, node.start_mark.line + 1)
    if id(node) in seen:
        raise InputError("an alias refers to itself", path=str(path), line=lines[at])
    if isinstance(node, MappingNode):
        loader.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise InputError(
                    f"key {key!r} must be a string: quote it", path=str(path), line=line
                )
            if key in out:
                raise InputError(f"duplicate key {key!r}", path=str(path), line=line)
            lines[(*at, key)] = line
            out[key] = _build(loader, value_node, (*at, key), lines, path, seen | {id(node)})
        return out
    if isinstance(node, SequenceNode):
        return [
            _build(loader, item, (*at, i), lines, path, seen | {id(node)})
            for i, item in enumerate(node.value)
        ]
    return loader.construct_object(node, deep=True)


def validate(data: Any, lines: Mapping[KeyPath, int], path: Path) -> None:
    """Check ``data`` against the schema; every error becomes ``file:line: reason``."""
    validator = jsonschema.Draft202012Validator(schema())
    found: list[tuple[int, str]] = []
    for error in validator.iter_errors(data):
        found.extend(_explain(error, lines))
    if not found:
        return
    found.sort(key=lambda item: item[0])
    first_line, first = found[0]
    more = [f"{path}:{line}: {reason}" for line, reason in found[1:]]
    raise InputError("\n".join([first, *more]), path=str(path), line=first_line)


def _explain(
    error: jsonschema.ValidationError, lines: Mapping[KeyPath, int]
) -> list[tuple[int, str]]:
    at: KeyPath = tuple(error.absolute_path)
    where = _where(at)
    line = nearest_line(lines, at)
    sub = error.schema if isinstance(error.schema, dict) else {}
    instance: Any = error.instance
    value: Any = error.validator_value
    custom = sub.get("x-messages", {}).get(error.validator)
    if custom:
        return [(line, f"{where}: {custom}" if where else custom)]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = list(sub.get("properties", {}))
        out = []
        for key in instance:
            if key in known:
                continue
            hint = difflib.get_close_matches(key, known, n=1)
            reason = f"unknown key {key!r}" + (f" in {where}" if where else "")
            reason += f" (did you mean {hint[0]!r}?)" if hint else ""
            reason += f"; known keys: {', '.join(known)}"
            out.append((nearest_line(lines, (*at, key)), reason))
        return out
    if error.validator == "required":
        missing = [k for k in value if k not in instance]
        return [(line, f"{where or 'the file'}: missing key {', '.join(map(repr, missing))}")]
    if error.validator == "type":
        names = " or ".join(_TYPE_NAMES[t] for t in ([value] if isinstance(value, str) else value))
        return [(line, f"{where}: expected {names}, got {render_value(instance)}")]
    if error.validator == "enum":
        options = ", ".join(map(str, value))
        return [(line, f"{where}: must be one of {options}, not {render_value(instance)}")]
    if error.validator == "minimum":
        return [(line, f"{where}: must be at least {value}")]
    if error.validator in ("minItems", "minLength"):
        return [(line, f"{where}: must not be empty")]
    return [(line, f"{where}: {error.message}" if where else error.message)]


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "null": "null",
    "number": "a number",
    "boolean": "true or false",
}


def _where(at: KeyPath) -> str:
    """``steps[0].views["a\\nb"].children``: a key path as a reader would write it."""
    text = ""
    for part in at:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(part):
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
        else:
            text += f".{part}" if text else part
    return text


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")


def nearest_line(lines: Mapping[KeyPath, int], at: KeyPath) -> int:
    """The line of key path ``at``, or of its nearest enclosing key (line 1 for none)."""
    while at and at not in lines:
        at = at[:-1]
    return lines.get(at, 1)


# -- comparing ---------------------------------------------------------------------------------


def render_value(value: Any) -> str:
    """A value as one line of JSON: ids stay quoted and escaped (they may hold newlines)."""
    return json.dumps(value, ensure_ascii=False)


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
    got = None if tree is None else tree_data(tree)
    if want is None or got is None:
        if want is None and got is None:
            return []
        return [_mismatch(expected, row, who, where, ("tree",), want, got)]
    out: list[Mismatch] = []
    for key in TREE_KEYS:
        if key not in want:
            continue
        exp_items, obs_items = want[key], got[key]
        if len(exp_items) == len(obs_items) and all(
            _item_matches(e, o) for e, o in zip(exp_items, obs_items, strict=True)
        ):
            continue
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
    """Differences of ``got`` from ``want``, comparing only the keys ``want`` gives."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            yield from _compare_value(value, got.get(key), (*path, key))
    elif want != got or type(want) is not type(got):
        yield path, want, got


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


def refresh_view(want: Mapping[str, Any] | None, tree: LineageTree | None) -> Any:
    """A hand-written view rewritten with what was observed: the same keys, and list items in the
    same shape (ids, or mappings of the peer fields the author chose), refreshed values."""
    if tree is None:
        return None
    if not want:
        return tree_ids(tree)
    got = tree_data(tree)
    out: dict[str, Any] = {}
    for key in TREE_KEYS:
        if key not in want:
            continue
        fields: list[str] = []
        for item in want[key]:
            if isinstance(item, dict):
                fields.extend(k for k in item if k not in fields)
        if not fields:
            out[key] = [p["conversation"] for p in got[key]]
            continue
        keys = ["conversation", *(f for f in fields if f != "conversation")]
        out[key] = [_FlowMap({k: p.get(k) for k in keys}) for p in got[key]]
    return out


class _FlowMap(dict[str, Any]):
    """A mapping written on one line (a peer in a list)."""


class _Dumper(yaml.SafeDumper):
    """Readable, stable YAML: nested lists indented, short lists of ids on one line, and any
    string a YAML reader could take for something else quoted."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def check_simple_key(self) -> bool:
        # A double-quoted id escapes its newlines, so it stays a one-line key (`"a\nb": null`)
        # instead of PyYAML's complex-key form.
        event = self.event
        if isinstance(event, yaml.ScalarEvent) and event.style == '"' and not event.anchor:
            return len(event.value) < 128
        return bool(super().check_simple_key())


_NUMBERISH = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?$|^0[xob]")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if not data.isprintable() or "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style='"')
    if _NUMBERISH.match(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="'")
    return dumper.represent_str(data)


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.SequenceNode:
    flow = all(not isinstance(item, (dict, list)) for item in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_flow_map(dumper: yaml.SafeDumper, data: _FlowMap) -> yaml.MappingNode:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data, flow_style=True)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(_FlowMap, _represent_flow_map)


def dump_expected(document: Mapping[str, Any], transcript: str) -> str:
    """The YAML text of an expected file, with a header saying how to regenerate it."""
    header = (
        f"# Expected lineage for {transcript}, written by lineage-replay --update.\n"
        "# Hand-written `views` are kept; comments are not. Check with --assert.\n"
    )
    body = yaml.dump(
        dict(document),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=1_000_000,
    )
    return header + body


def updated_document(
    answers: Mapping[int, AgentLineage | None],
    views: Mapping[int, Mapping[str, LineageTree | None]],
    final_views: Mapping[str, LineageTree | None] | None,
    *,
    host: str | None,
    existing: Expected | None,
) -> dict[str, Any]:
    """The expected file ``--update`` writes: a step at every row where the requester's lineage
    or tree changed since that requester's previous answer, plus the existing file's views
    (same conversations and keys, observed values) at their rows and in ``final``."""
    wanted_views: dict[int, dict[str, Any]] = {}
    for step in existing.steps if existing is not None else ():
        for row in step.rows:
            wanted_views.setdefault(row, {}).update(step.views)
    previous: dict[tuple[str | None, str], Any] = {}
    steps: list[dict[str, Any]] = []
    for row in sorted(set(answers) | set(wanted_views)):
        entry: dict[str, Any] = {}
        lineage = answers.get(row)
        if lineage is not None:
            key = (lineage.host, lineage.conversation)
            current = to_json(lineage)
            if previous.get(key) != current:
                entry = {"lineage": lineage_data(lineage), "tree": tree_ids(lineage.tree)}
            previous[key] = current
        if row in wanted_views:
            entry["views"] = {
                conversation: refresh_view(want, views[row][conversation])
                for conversation, want in wanted_views[row].items()
            }
        if entry:
            steps.append({"row": row, **entry})
    document: dict[str, Any] = {"version": 1}
    if host is not None:
        document["host"] = host
    document["steps"] = steps
    if existing is not None and existing.final_views is not None and final_views is not None:
        document["final"] = {
            "views": {
                conversation: refresh_view(want, final_views[conversation])
                for conversation, want in existing.final_views.items()
            }
        }
    return document
