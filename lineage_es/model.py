"""Frozen answers the engine gives: lineages, trees, relations, chains, families.

Every node an answer describes (:class:`Peer`, :class:`AgentLineage`, :class:`Member`,
:class:`ForestNode`) carries ``last_seen``: the time of the latest fact about it, to a minute
(``None`` when the engine answers from a claim it has not journaled). It is written last in
each node's JSON, so the keys before it keep their order.

Every value here is immutable, hashable, equal after pickling and after a JSON round trip
through :func:`to_json` and the class's ``from_json``, which reads the JSON back by the
dataclass's own fields and their types (:class:`Answer`).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import (
    Any,
    Literal,
    NamedTuple,
    Self,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from lineage_es.vocabulary import Resolution

Relation = Literal[
    "self", "child", "descendant", "parent", "ancestor", "sibling", "kin", "unrelated"
]
Status = Literal["live", "stopped", "deleted"]


class Answer:
    """What every answer shares: reading it back from the JSON :func:`to_json` wrote."""

    __slots__ = ()

    @overload
    @classmethod
    def from_json(cls, data: None) -> None: ...

    @overload
    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self: ...

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Self | None:
        """The answer ``data`` holds (``None`` for null): each field read by its type, a
        nested answer as its own class, a list as a tuple; a key left out takes the field's
        default, and one with no default raises :class:`KeyError`."""
        return None if data is None else _read_answer(cls, data)


@dataclass(frozen=True, slots=True)
class Subagent(Answer):
    """The host's own id for a subagent and its declared type."""

    id: str
    type: str | None = None


@dataclass(frozen=True, slots=True)
class Peer(Answer):
    """Another node as a caller sees it in its tree.

    ``conversation`` is the spawn key while the child's own conversation is not known yet.
    ``ambiguous``: placed under its root with no parent edge (spawns of different parents
    were open), so a reader can tell it from the root, whose ``parent`` is null too.
    """

    conversation: str
    depth: int
    started_at: str
    resolution: Resolution
    parent: str | None = None
    subagent: Subagent | None = None
    ambiguous: bool = False
    last_seen: str | None = None


@dataclass(frozen=True, slots=True)
class LineageTree(Answer):
    """The live tree around a caller: every other live node of its root (``siblings``), its
    direct live children, and the other live roots; each oldest first."""

    siblings: tuple[Peer, ...] = ()
    children: tuple[Peer, ...] = ()
    roots: tuple[Peer, ...] = ()


@dataclass(frozen=True, slots=True)
class AgentLineage(Answer):
    """Where a request stands: its conversation, root, parent, depth, how that is known, and
    the tree around it when the registry placed it (``tree`` is ``None`` otherwise); its
    display name once renamed, and whether it sits under its root with no parent edge
    (``ambiguous``, as the tree marks it). ``root`` is ``None`` while it is not known: a
    Cursor child not bound to its parent yet is no root, and its root is not known."""

    conversation: str
    root: str | None
    depth: int
    resolution: Resolution
    parent: str | None = None
    subagent: Subagent | None = None
    tree: LineageTree | None = None
    host: str | None = None
    name: str | None = None
    ambiguous: bool = False
    last_seen: str | None = None

    def __post_init__(self) -> None:
        """A lineage that names a parent is not ambiguous: an answer that takes a parent
        stated elsewhere over an ambiguous placement (``Engine.resolve``, by
        ``dataclasses.replace``) must not keep the flag."""
        if self.ambiguous and self.parent is not None:
            object.__setattr__(self, "ambiguous", False)


@dataclass(frozen=True, slots=True)
class Chain(Answer):
    """A delegation chain ``[a, parent(a), ..., root]``.

    ``complete`` is false when the chain stopped early: at an ancestor the journal cannot
    resolve (``unresolved`` names it), on a cycle (``cycle``), or at the hop cap (``capped``).
    """

    conversations: tuple[str, ...]
    complete: bool = True
    unresolved: str | None = None
    cycle: bool = False
    capped: bool = False


@dataclass(frozen=True, slots=True)
class Provenance(Answer):
    """What a message from ``sender`` to ``recipient`` should carry: how they are related and,
    for anything but a direct child writing to its parent, the delegation chain and a note."""

    sender: str
    recipient: str
    sender_relation: Relation
    chain: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Member(Answer):
    """One node of a family, as ``family(root)`` and ``agents(as_=X)`` list it;
    ``ambiguous`` as :class:`Peer` has it."""

    conversation: str
    root: str
    depth: int
    status: Status
    resolution: Resolution
    started_at: str
    parent: str | None = None
    name: str | None = None
    subagent: Subagent | None = None
    stopped_at: str | None = None
    relation: Relation | None = None
    ambiguous: bool = False
    last_seen: str | None = None


@dataclass(frozen=True, slots=True)
class ForestNode(Answer):
    """A node of the drawn forest, with its children nested the same way."""

    conversation: str
    host: str
    depth: int
    status: Status
    resolution: Resolution
    started_at: str
    subagent: Subagent | None = None
    name: str | None = None
    ambiguous: bool = False
    children: tuple[ForestNode, ...] = ()
    last_seen: str | None = None


class _FieldReading(NamedTuple):
    """How one field of an answer is read back from JSON."""

    name: str
    #: The answer class the value holds (or, with ``many``, each item holds); ``None``: plain.
    answer: type[Answer] | None
    #: Whether the value is a list, read back as a tuple.
    many: bool
    #: Whether the field has no default, so its key must be present.
    required: bool


def _field_readings(cls: type[Answer]) -> tuple[_FieldReading, ...]:
    """How each field of ``cls`` is read, from its type: ``X | None`` as ``X`` (null staying
    null), ``tuple[X, ...]`` as a list of ``X``, an :class:`Answer` class as a nested one.
    Worked out once per class."""
    known = _READINGS.get(cls)
    if known is not None:
        return known
    hints = get_type_hints(cls)
    readings = []
    for field in fields(cls):  # type: ignore[arg-type]
        hint = hints[field.name]
        if get_origin(hint) in (Union, types.UnionType):
            arms = [arm for arm in get_args(hint) if arm is not type(None)]
            hint = arms[0] if len(arms) == 1 else Any
        many = get_origin(hint) is tuple
        if many:
            hint = get_args(hint)[0]
        answer = hint if isinstance(hint, type) and issubclass(hint, Answer) else None
        required = field.default is MISSING and field.default_factory is MISSING
        readings.append(_FieldReading(field.name, answer, many, required))
    _READINGS[cls] = tuple(readings)
    return _READINGS[cls]


_READINGS: dict[type[Answer], tuple[_FieldReading, ...]] = {}


def _read_answer(cls: type[Answer], data: Mapping[str, Any]) -> Any:
    """``data`` read back as a ``cls``, its nested answers first.

    Written here rather than taken from a library (cattrs, dacite, pydantic): those read
    nested values by recursion, and a forest may be deeper than Python's recursion limit.
    So the nested objects are listed parent first with an explicit stack, then built in
    the reverse order, each child before the parent that holds it.
    """
    listed: list[tuple[type[Answer], Mapping[str, Any]]] = []
    stack: list[tuple[type[Answer], Mapping[str, Any]]] = [(cls, data)]
    while stack:
        kind, item = stack.pop()
        listed.append((kind, item))
        for reading in _field_readings(kind):
            nested = reading.answer
            value = item.get(reading.name) if nested is not None else None
            if nested is None or value is None:
                continue
            if reading.many:
                stack.extend((nested, child) for child in value)
            else:
                stack.append((nested, value))
    built: dict[tuple[type[Answer], int], Answer] = {}
    for kind, item in reversed(listed):
        values: dict[str, Any] = {}
        for reading in _field_readings(kind):
            if reading.name not in item:
                if reading.required:
                    raise KeyError(reading.name)
                continue
            value = item[reading.name]
            nested = reading.answer
            if reading.many:
                value = tuple(value if nested is None else (built[nested, id(v)] for v in value))
            elif nested is not None and value is not None:
                value = built[nested, id(value)]
            values[reading.name] = value
        built[kind, id(item)] = kind(**values)
    return built[cls, id(data)]


_SCALARS = frozenset({str, int, float, bool, type(None)})


def to_json(value: Any) -> Any:
    """Plain JSON data for any answer (dataclasses become objects, tuples lists)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    names = _FIELD_NAMES.get(kind)
    if names is not None:
        sparse = _SPARSE_FIELDS.get(kind, ())
        out: dict[str, Any] = {}
        for name in names:
            item = getattr(value, name)
            if name in sparse and (item is None or item is False):
                continue
            out[name] = item if type(item) in _SCALARS else to_json(item)
        return out
    if kind is tuple or kind is list:
        return [to_json(v) for v in value]
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: to_json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    raise TypeError(f"cannot convert {type(value).__name__} to JSON")


_FIELD_NAMES: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls))
    for cls in (Subagent, Peer, LineageTree, AgentLineage, Chain, Provenance, Member, ForestNode)
}

#: Fields written only when set (true, or not null), as the tree's JSON writes ``ambiguous``:
#: most answers lack them, and an answer without them keeps the JSON shape its readers expect
#: (``from_json`` reads a missing one as its default).
_SPARSE_FIELDS: dict[type, frozenset[str]] = {
    Peer: frozenset({"ambiguous"}),
    AgentLineage: frozenset({"name", "ambiguous"}),
    Member: frozenset({"ambiguous"}),
}
