"""The domain: the rules of lineage, pure (no I/O, no view, no clock but a fact's time).

The public names below are loaded on first use (PEP 562), not on import of the package: a hook
process imports :mod:`lineage_es.domain.ids` without eventsourcing, and never builds the import
ledger's event classes.

- :mod:`~lineage_es.domain.ids`: the uuid5 ids of roots, index entries and ledgers.
- :mod:`~lineage_es.domain.nodes`: node statuses and what a node's stop says.
- :mod:`~lineage_es.domain.state`: the root's plain-data state and its tree walks.
- :mod:`~lineage_es.domain.events`: every root event, under explicit stable topics.
- :mod:`~lineage_es.domain.lifetimes`, :mod:`~lineage_es.domain.stops`,
  :mod:`~lineage_es.domain.identification`, :mod:`~lineage_es.domain.placement`,
  :mod:`~lineage_es.domain.subtree`: the rules, one concern each.
- :mod:`~lineage_es.domain.root`: ``RootLineage``, assembled from them; it decides what each
  fact does (``apply_observation``).
- :mod:`~lineage_es.domain.index`: ``ConversationIndex``; :mod:`~lineage_es.domain.ledger`:
  ``ImportLedger``; :mod:`~lineage_es.domain.topics`: the topic registry and upcasting.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineage_es.domain.ids import NAMESPACE, index_id, ledger_id, name_id, root_id
    from lineage_es.domain.index import ConversationIndex
    from lineage_es.domain.ledger import ImportLedger
    from lineage_es.domain.nodes import DELETED, LIVE, STOPPED
    from lineage_es.domain.root import RootLineage
    from lineage_es.domain.topics import EVENT_CLASSES, LEDGER_TOPICS, upcast

#: Where each public name lives.
_HOMES = {
    "NAMESPACE": "ids",
    "index_id": "ids",
    "ledger_id": "ids",
    "name_id": "ids",
    "root_id": "ids",
    "ConversationIndex": "index",
    "ImportLedger": "ledger",
    "DELETED": "nodes",
    "LIVE": "nodes",
    "STOPPED": "nodes",
    "RootLineage": "root",
    "EVENT_CLASSES": "topics",
    "LEDGER_TOPICS": "topics",
    "upcast": "topics",
}

__all__ = [
    "DELETED",
    "EVENT_CLASSES",
    "LEDGER_TOPICS",
    "LIVE",
    "NAMESPACE",
    "STOPPED",
    "ConversationIndex",
    "ImportLedger",
    "RootLineage",
    "index_id",
    "ledger_id",
    "name_id",
    "root_id",
    "upcast",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
