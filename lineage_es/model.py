"""Frozen answers the engine gives: lineages, trees, relations, chains, families.

Every value here is immutable, hashable, equal after pickling and after a JSON round trip
through :func:`to_json` / the ``from_json`` class methods.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

from lineage_es.facts import Resolution

Relation = Literal[
    "self", "child", "descendant", "parent", "ancestor", "sibling", "kin", "unrelated"
]
Status = Literal["live", "stopped", "deleted"]


@dataclass(frozen=True, slots=True)
class Subagent:
    """The host's own id for a subagent and its declared type."""

    id: str
    type: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Subagent | None:
        return None if data is None else cls(id=data["id"], type=data.get("type"))


@dataclass(frozen=True, slots=True)
class Peer:
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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Peer:
        return cls(
            conversation=data["conversation"],
            depth=data["depth"],
            started_at=data["started_at"],
            resolution=data["resolution"],
            parent=data.get("parent"),
            subagent=Subagent.from_json(data.get("subagent")),
            ambiguous=data.get("ambiguous", False),
        )


@dataclass(frozen=True, slots=True)
class LineageTree:
    """The live tree around a caller: every other live node of its root (``siblings``), its
    direct live children, and the other live roots; each oldest first."""

    siblings: tuple[Peer, ...] = ()
    children: tuple[Peer, ...] = ()
    roots: tuple[Peer, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> LineageTree | None:
        if data is None:
            return None
        return cls(
            siblings=tuple(Peer.from_json(p) for p in data["siblings"]),
            children=tuple(Peer.from_json(p) for p in data["children"]),
            roots=tuple(Peer.from_json(p) for p in data["roots"]),
        )


@dataclass(frozen=True, slots=True)
class AgentLineage:
    """Where a request stands: its conversation, root, parent, depth, how that is known, and
    the tree around it when the registry placed it (``tree`` is ``None`` otherwise); its
    display name once renamed, and whether it sits under its root with no parent edge
    (``ambiguous``, as the tree marks it)."""

    conversation: str
    root: str
    depth: int
    resolution: Resolution
    parent: str | None = None
    subagent: Subagent | None = None
    tree: LineageTree | None = None
    host: str | None = None
    name: str | None = None
    ambiguous: bool = False

    def __post_init__(self) -> None:
        """A lineage that names a parent is not ambiguous: an answer that takes a parent
        stated elsewhere over an ambiguous placement (``Engine.resolve``, by
        ``dataclasses.replace``) must not keep the flag."""
        if self.ambiguous and self.parent is not None:
            object.__setattr__(self, "ambiguous", False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentLineage:
        return cls(
            conversation=data["conversation"],
            root=data["root"],
            depth=data["depth"],
            resolution=data["resolution"],
            parent=data.get("parent"),
            subagent=Subagent.from_json(data.get("subagent")),
            tree=LineageTree.from_json(data.get("tree")),
            host=data.get("host"),
            name=data.get("name"),
            ambiguous=data.get("ambiguous", False),
        )


@dataclass(frozen=True, slots=True)
class Chain:
    """A delegation chain ``[a, parent(a), ..., root]``.

    ``complete`` is false when the chain stopped early: at an ancestor the journal cannot
    resolve (``unresolved`` names it), on a cycle (``cycle``), or at the hop cap (``capped``).
    """

    conversations: tuple[str, ...]
    complete: bool = True
    unresolved: str | None = None
    cycle: bool = False
    capped: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Chain:
        return cls(
            conversations=tuple(data["conversations"]),
            complete=data["complete"],
            unresolved=data.get("unresolved"),
            cycle=data.get("cycle", False),
            capped=data.get("capped", False),
        )


@dataclass(frozen=True, slots=True)
class Provenance:
    """What a message from ``sender`` to ``recipient`` should carry: how they are related and,
    for anything but a direct child writing to its parent, the delegation chain and a note."""

    sender: str
    recipient: str
    sender_relation: Relation
    chain: tuple[str, ...] = ()
    note: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Provenance:
        return cls(
            sender=data["sender"],
            recipient=data["recipient"],
            sender_relation=data["sender_relation"],
            chain=tuple(data.get("chain", ())),
            note=data.get("note"),
        )


@dataclass(frozen=True, slots=True)
class Member:
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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Member:
        return cls(
            conversation=data["conversation"],
            root=data["root"],
            depth=data["depth"],
            status=data["status"],
            resolution=data["resolution"],
            started_at=data["started_at"],
            parent=data.get("parent"),
            name=data.get("name"),
            subagent=Subagent.from_json(data.get("subagent")),
            stopped_at=data.get("stopped_at"),
            relation=data.get("relation"),
            ambiguous=data.get("ambiguous", False),
        )


@dataclass(frozen=True, slots=True)
class ForestNode:
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

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ForestNode:
        """A node and its whole subtree (built from the leaves up: a forest may be deeper
        than Python's recursion limit)."""
        order: list[dict[str, Any]] = []
        stack = [data]
        while stack:
            item = stack.pop()
            order.append(item)
            stack.extend(item.get("children", ()))
        built: dict[int, ForestNode] = {}
        for item in reversed(order):
            built[id(item)] = cls(
                conversation=item["conversation"],
                host=item["host"],
                depth=item["depth"],
                status=item["status"],
                resolution=item["resolution"],
                started_at=item["started_at"],
                subagent=Subagent.from_json(item.get("subagent")),
                name=item.get("name"),
                ambiguous=item.get("ambiguous", False),
                children=tuple(built[id(child)] for child in item.get("children", ())),
            )
        return built[id(data)]


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

#: Fields written only when set (true, or not null), as the tree's JSON writes
#: ``ambiguous``: a flag most nodes lack, added after answers had their shape, so every
#: answer without it reads as it always did.
_SPARSE_FIELDS: dict[type, frozenset[str]] = {
    Peer: frozenset({"ambiguous"}),
    AgentLineage: frozenset({"name", "ambiguous"}),
    Member: frozenset({"ambiguous"}),
}
