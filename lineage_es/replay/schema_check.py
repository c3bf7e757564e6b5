"""Validate a document against the shipped ``expected.schema.json``, naming file and line.

Every file is checked, so the common case must be cheap: the schema is compiled into a yes/no
predicate. Only a document it refuses (or cannot judge) goes through jsonschema, which finds
every error; each becomes a ``file:line: reason`` message.
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

    A predicate compiled from the schema decides; only a document it refuses (or cannot judge)
    is run through jsonschema, which finds and explains every error.
    """
    if not conforms(data):
        _explain_refusal(data, lines, path)
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
    """Whether ``data`` certainly matches the schema: exactly jsonschema's verdict for plain
    data (mappings with string keys, lists, strings, numbers, booleans, null); ``False`` when
    the schema or the data holds anything the compiled predicate does not know."""
    check = _compiled_schema()
    if check is None:
        return False
    try:
        return check(data)
    except (_Undecided, RecursionError):
        return False


# -- the compiled schema -----------------------------------------------------------------------
#
# A small compiler for the part of JSON Schema (draft 2020-12) that expected.schema.json uses,
# with jsonschema's own semantics: a keyword applies only to instances of its type, `integer`
# takes a float with no fraction, `true` is not `1` in `enum`/`const`. A schema with any other
# keyword is not compiled (jsonschema validates every file), and a value of a type JSON has no
# name for (bytes, a date) makes the predicate give up. tests/replay/test_expected_loading.py
# checks that it agrees with jsonschema on many generated documents.

Check = Callable[[Any], bool]


class _Undecided(Exception):
    """The compiled predicate cannot judge this value: jsonschema does."""


class _Unsupported(Exception):
    """The schema uses a keyword the compiler does not know."""


_JSON_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})

_IGNORED = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description"})

_TYPES: dict[str, Check] = {
    "object": lambda x: type(x) is dict,
    "array": lambda x: type(x) is list,
    "string": lambda x: type(x) is str,
    "null": lambda x: x is None,
    "boolean": lambda x: type(x) is bool,
    "integer": lambda x: type(x) is int or (type(x) is float and x.is_integer()),
    "number": lambda x: type(x) is int or type(x) is float,
}


@cache
def _compiled_schema() -> Check | None:
    try:
        return _SchemaCompiler(schema()).compile(schema(), root=True)
    except Exception:  # a keyword it does not know, or a schema it cannot read: jsonschema judges
        return None


def _json_equal(a: Any, b: Any) -> bool:
    """jsonschema's equality of two scalars: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)


class _SchemaCompiler:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = root.get("$defs", {})
        self.done: dict[str, Check] = {}
        self.busy: set[str] = set()

    def ref(self, pointer: Any) -> Check:
        prefix = "#/$defs/"
        if not isinstance(pointer, str) or not pointer.startswith(prefix):
            raise _Unsupported(pointer)
        name = pointer[len(prefix) :]
        if name not in self.defs or any(c in name for c in "/~%"):
            raise _Unsupported(pointer)
        if name in self.busy:  # a recursive definition: look it up when called
            return lambda x: self.done[name](x)  # noqa: PLW0108 (not compiled yet)
        if name not in self.done:
            self.busy.add(name)
            self.done[name] = self.compile(self.defs[name])
            self.busy.discard(name)
        return self.done[name]

    def compile(self, sub: Any, *, root: bool = False) -> Check:
        if sub is True or sub == {}:
            return lambda x: True
        if sub is False:
            return lambda x: False
        if not isinstance(sub, dict):
            raise _Unsupported(sub)
        if not root and "$id" in sub:  # a new base for the `$ref`s inside
            raise _Unsupported(sub["$id"])
        checks: list[Check] = []
        keywords = {k: v for k, v in sub.items() if k not in _IGNORED and not k.startswith("x-")}
        if "$ref" in keywords:
            checks.append(self.ref(keywords.pop("$ref")))
        if "type" in keywords:
            checks.append(self.type_check(keywords.pop("type")))
        for name in ("enum", "const"):
            if name in keywords:
                value = keywords.pop(name)
                checks.append(self.enum(value if name == "enum" else [value]))
        props: dict[str, Check] = {
            key: self.compile(value) for key, value in keywords.pop("properties", {}).items()
        }
        if "additionalProperties" in keywords or props:
            checks.append(self.properties(props, keywords.pop("additionalProperties", True)))
        if "required" in keywords:
            required = tuple(keywords.pop("required"))
            checks.append(lambda x: type(x) is not dict or all(k in x for k in required))
        if "propertyNames" in keywords:
            name_check = self.compile(keywords.pop("propertyNames"))
            checks.append(lambda x: type(x) is not dict or all(map(name_check, x)))
        if "items" in keywords:
            item_check = self.compile(keywords.pop("items"))
            checks.append(lambda x: type(x) is not list or all(map(item_check, x)))
        if "minItems" in keywords:
            min_items = keywords.pop("minItems")
            checks.append(lambda x: type(x) is not list or len(x) >= min_items)
        if "minLength" in keywords:
            min_length = keywords.pop("minLength")
            checks.append(lambda x: type(x) is not str or len(x) >= min_length)
        if "minimum" in keywords:
            minimum = keywords.pop("minimum")
            checks.append(lambda x: type(x) not in (int, float) or not bool(x < minimum))
        if "oneOf" in keywords:
            branches = [self.compile(branch) for branch in keywords.pop("oneOf")]
            checks.append(lambda x: sum(1 for b in branches if b(x)) == 1)
        if keywords:
            raise _Unsupported(sorted(keywords))
        return _all_of(checks)

    @staticmethod
    def type_check(names: Any) -> Check:
        wanted = [names] if isinstance(names, str) else list(names)
        if not all(isinstance(n, str) and n in _TYPES for n in wanted):
            raise _Unsupported(names)
        tests = [_TYPES[n] for n in wanted]
        if len(tests) == 1:
            return tests[0]
        return lambda x: any(t(x) for t in tests)

    @staticmethod
    def enum(values: Any) -> Check:
        if not isinstance(values, list) or not all(
            type(v) in (str, int, float, bool, type(None)) for v in values
        ):
            raise _Unsupported(values)
        strings = frozenset(v for v in values if type(v) is str)
        others = [v for v in values if type(v) is not str]
        if not others:
            return lambda x: type(x) is str and x in strings
        return lambda x: x in strings if type(x) is str else any(_json_equal(x, v) for v in others)

    def properties(self, props: dict[str, Check], additional: Any) -> Check:
        if additional is True or additional == {}:

            def known_only(x: Any) -> bool:
                if type(x) is not dict:
                    return True
                for key, value in x.items():
                    check = props.get(key)
                    if check is not None and not check(value):
                        return False
                return True

            return known_only
        other = self.compile(additional)

        def every(x: Any) -> bool:
            if type(x) is not dict:
                return True
            for key, value in x.items():  # noqa: SIM110 (a loop is faster than all() here)
                if not props.get(key, other)(value):
                    return False
            return True

        return every


def _all_of(checks: list[Check]) -> Check:
    """One predicate for one schema: its value must be plain data, then pass every check."""
    json_types = _JSON_TYPES

    if len(checks) == 1:
        (only,) = checks

        def one(x: Any) -> bool:
            if type(x) not in json_types:
                raise _Undecided
            return only(x)

        return one

    if len(checks) == 2:
        first, second = checks

        def both(x: Any) -> bool:
            if type(x) not in json_types:
                raise _Undecided
            return first(x) and second(x)

        return both

    def every(x: Any) -> bool:
        if type(x) not in json_types:
            raise _Undecided
        for check in checks:  # noqa: SIM110 (a loop is faster than all() here)
            if not check(x):
                return False
        return True

    return every


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
    return f"<{type(value).__name__} {value!r}>"


__all__ = ["TIME_KEYS", "conforms", "render_value", "schema", "validate"]
