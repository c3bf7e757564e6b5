"""Validate a document against the shipped ``expected.schema.json``, naming file and line.

Every file is checked, so the common case must be cheap: fastjsonschema compiles the schema to
Python once per process, and decides. Only a document it refuses goes through jsonschema, which
finds every error (fastjsonschema stops at the first) with its exact key path (fastjsonschema
gives a dotted text, ambiguous for an id holding a dot); each becomes a ``file:line: reason``
message.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import fastjsonschema

from lineage_es.errors import InputError
from lineage_es.replay.yaml_lines import KeyPath, nearest_line

if TYPE_CHECKING:
    import jsonschema


@cache
def schema() -> dict[str, Any]:
    """The JSON Schema of the expected file (package data)."""
    text = resources.files("lineage_es.replay").joinpath("expected.schema.json").read_text()
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def validate(data: Any, lines: Mapping[KeyPath, int], path: Path) -> None:
    """Check ``data`` against the schema, and that each time in it (:data:`TIME_KEYS`) is one;
    every error becomes ``file:line: reason``.

    The compiled validator decides; only a document it refuses is run through jsonschema,
    which finds and explains every error.
    """
    if not conforms(data):
        _explain_refusal(data, lines, path)
        _first_refusal(data, lines, path)
    _check_times(data, lines, path)


#: Peer fields holding a time: compared as the instant they name, so each must name one.
TIME_KEYS = frozenset({"started_at"})


def _check_times(data: Any, lines: Mapping[KeyPath, int], path: Path) -> None:
    """Refuse a time no reader could place: ``started_at: yesterday`` would never match."""
    from lineage_es.hosts.base import parse_time

    found = [
        (
            nearest_line(lines, at),
            f"{_key_path_text(at)}: expected an ISO-8601 time, got {render_value(v)}",
        )
        for at, v in (_peer_times(data) if isinstance(data, dict) else ())
        if parse_time(v) is None
    ]
    if found:
        first_line, first = found[0]
        more = [f"{path}:{line}: {reason}" for line, reason in found[1:]]
        raise InputError("\n".join([first, *more]), path=str(path), line=first_line)


def _peer_times(document: Any) -> Iterator[tuple[KeyPath, Any]]:
    """Every time a peer of the document gives (in ``tree`` and ``views`` of the steps and
    ``final``), with its key path, in document order."""
    trees: list[tuple[KeyPath, Any]] = []
    for index, step in enumerate(_list_items(document.get("steps"))):
        if isinstance(step, dict):
            trees.append((("steps", index, "tree"), step.get("tree")))
            trees.extend(_view_trees(("steps", index), step))
    final = document.get("final")
    if isinstance(final, dict):
        trees.extend(_view_trees(("final",), final))
    for at, tree in trees:
        for key in ("siblings", "children", "roots"):
            if not isinstance(tree, dict):
                break
            for index, peer in enumerate(_list_items(tree.get(key))):
                if not isinstance(peer, dict):
                    continue
                for field in TIME_KEYS & peer.keys():
                    yield (*at, key, index, field), peer[field]


def _view_trees(at: KeyPath, holder: Mapping[str, Any]) -> list[tuple[KeyPath, Any]]:
    views = holder.get("views")
    if not isinstance(views, dict):
        return []
    return [((*at, "views", conversation), tree) for conversation, tree in views.items()]


def _list_items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _explain_refusal(data: Any, lines: Mapping[KeyPath, int], path: Path) -> None:
    """Raise every error jsonschema finds in ``data`` (none found: the document stands)."""
    import jsonschema  # only to explain a refused document

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


def conforms(data: Any) -> bool:
    """Whether ``data`` matches the schema, by the compiled validator."""
    try:
        _compiled_validator()(data)
    except fastjsonschema.JsonSchemaValueException:
        return False
    except RecursionError:  # deeper than any expected file: jsonschema explains
        return False
    return True


@cache
def _compiled_validator() -> Callable[[Any], Any]:
    """The schema compiled to Python by fastjsonschema: once per process, on first use (about
    15 ms), so importing this module costs nothing."""
    return fastjsonschema.compile(schema(), use_default=False, use_formats=False)


def _first_refusal(data: Any, lines: Mapping[KeyPath, int], path: Path) -> None:
    """Raise the compiled validator's own reason for refusing ``data``: for a document jsonschema
    finds nothing wrong with, were the two ever to disagree."""
    try:
        _compiled_validator()(data)
    except fastjsonschema.JsonSchemaValueException as exc:
        at = _resolve(data, exc.path[1:])
        custom = (exc.definition or {}).get("x-messages", {}).get(exc.rule)
        reason = custom or exc.message.removeprefix(exc.name or "").strip()
        where = _key_path_text(at)
        raise InputError(
            f"{where}: {reason}" if where else reason, path=str(path), line=nearest_line(lines, at)
        ) from None


def _resolve(data: Any, parts: list[str]) -> KeyPath:
    """The key path of fastjsonschema's dotted ``parts`` inside ``data``: a key holding a dot or
    a bracket comes split in several parts, joined back here; as far as they lead."""
    at: list[str | int] = []
    node = data
    i = 0
    while i < len(parts):
        if isinstance(node, list) and parts[i].isdigit() and int(parts[i]) < len(node):
            at.append(int(parts[i]))
            node = node[int(parts[i])]
            i += 1
            continue
        if not isinstance(node, dict):
            break
        for j in range(len(parts), i, -1):
            key = ".".join(parts[i:j])
            if key in node:
                at.append(key)
                node = node[key]
                i = j
                break
        else:
            break
    return tuple(at)


def _explain(
    error: jsonschema.ValidationError, lines: Mapping[KeyPath, int]
) -> list[tuple[int, str]]:
    at: KeyPath = tuple(error.absolute_path)
    where = _key_path_text(at)
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


def _key_path_text(at: KeyPath) -> str:
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


def render_value(value: Any) -> str:
    """A value as one line of JSON: ids stay quoted and escaped (they may hold newlines)."""
    return json.dumps(value, ensure_ascii=False, default=_not_json)


def _not_json(value: Any) -> str:
    """A YAML value JSON has no type for (``!!binary``, ``!!set``...), drawn for a message."""
    try:
        text = repr(value)
    except ValueError:  # holds an integer too long to print (``!!set {0xfff...: }``)
        text = "(too large to print)"
    return f"<{type(value).__name__} {text}>"


__all__ = ["TIME_KEYS", "conforms", "render_value", "schema", "validate"]
