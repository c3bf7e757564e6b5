"""lineage_es: knowing, at every moment, which AI coding agent spawned which.

Embed it::

    from lineage_es import open_engine

    engine = open_engine("memory://")       # or sqlite:///PATH, postgresql://HOST/DB
    lineage = engine.observe("claude", payload)
    print(lineage.root, lineage.depth, lineage.tree.siblings)
    print(engine.as_of(position=3).forest())   # a TreeReader: the same questions, back then
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lineage_es.errors import (
    AmbiguousConversation,
    ConcurrencyError,
    EngineClosed,
    InputError,
    InvalidArgument,
    JournalFormatError,
    LineageError,
    NoJournal,
    PayloadError,
    StoreError,
    UnknownConversation,
    UnknownHost,
)

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine, open_engine
    from lineage_es.model import (
        AgentLineage,
        Chain,
        ForestNode,
        LineageTree,
        Member,
        Peer,
        Provenance,
        Subagent,
    )
    from lineage_es.read.answers import TreeReader

__version__ = "0.2.0.dev0"


#: The answers' classes, exported from :mod:`lineage_es.model` when first asked for.
_MODEL_NAMES = frozenset(
    (
        "AgentLineage",
        "Chain",
        "ForestNode",
        "LineageTree",
        "Member",
        "Peer",
        "Provenance",
        "Subagent",
    )
)


def __getattr__(name: str) -> Any:
    # Every process imports this package first, and most never need these: the engine pulls
    # in eventsourcing; the model builds a dozen dataclasses, which a hook has no use for.
    if name in _MODEL_NAMES:
        from lineage_es import model

        return getattr(model, name)
    if name in ("Engine", "open_engine"):
        from lineage_es.engine import engine

        return getattr(engine, name)
    if name == "TreeReader":
        from lineage_es.read.answers import TreeReader

        return TreeReader
    raise AttributeError(f"module 'lineage_es' has no attribute {name!r}")


__all__ = [
    "AgentLineage",
    "AmbiguousConversation",
    "Chain",
    "ConcurrencyError",
    "Engine",
    "EngineClosed",
    "ForestNode",
    "InputError",
    "InvalidArgument",
    "JournalFormatError",
    "LineageError",
    "LineageTree",
    "Member",
    "NoJournal",
    "PayloadError",
    "Peer",
    "Provenance",
    "StoreError",
    "Subagent",
    "TreeReader",
    "UnknownConversation",
    "UnknownHost",
    "open_engine",
]
