"""The topic registry: the event class of each journal topic, and upcasting stored events.

The journal tooling and the projection decode events by topic through :data:`EVENT_CLASSES`.
The import ledger's classes (:mod:`lineage_es.domain.ledger`) are looked up on first use of
one of its topics: only ``lineage import`` writes those events, and a hook process need not
build them. The ledger module does not import this one, so the two make no loop.

The registry sits below the aggregates (it imports the event classes, not the aggregates that
register their topics with eventsourcing): decoding an event by topic here needs no aggregate.
"""

from __future__ import annotations

from typing import Any

from lineage_es.domain import call_events, edge_events, events, seen_events
from lineage_es.domain.index import IndexCreated, IndexMoved

#: The topics of :class:`lineage_es.domain.ledger.ImportLedger`'s events.
LEDGER_TOPICS = frozenset(
    (
        "lineage:ImportLedger.Opened",
        "lineage:ImportLedger.FilesRead",
        "lineage:ImportLedger.FilesForgotten",
    )
)


class _EventClasses(dict[str, type[Any]]):
    """A topic-to-class dict that knows the ledger's topics before it holds their classes,
    and imports the ledger (adding its classes) on the first lookup of one."""

    def __contains__(self, topic: object) -> bool:
        return dict.__contains__(self, topic) or topic in LEDGER_TOPICS

    def __missing__(self, topic: str) -> type[Any]:
        if topic in LEDGER_TOPICS:
            from lineage_es.domain.ledger import LEDGER_EVENT_CLASSES

            self.update(LEDGER_EVENT_CLASSES)
            if dict.__contains__(self, topic):
                return dict.__getitem__(self, topic)
        raise KeyError(topic)

    def get(self, topic: str, default: Any = None) -> Any:
        try:
            return self[topic]
        except KeyError:
            return default


EVENT_CLASSES: dict[str, type[Any]] = _EventClasses(
    (cls.TOPIC, cls)
    for cls in (
        IndexCreated,
        IndexMoved,
        events.RootCreated,
        events.RootRedated,
        events.Resumed,
        events.SpawnRequested,
        events.ChildPlaced,
        events.ChildRedated,
        events.ChildBound,
        events.BindingUndone,
        events.SubtreeMoved,
        events.ChildAdopted,
        events.SeenAdopted,
        edge_events.EdgeConfirmed,
        edge_events.EdgeCorrected,
        edge_events.EdgeRejected,
        events.Stopped,
        events.Renamed,
        events.Deleted,
        events.WorkspaceLearned,
        call_events.ToolCallStarted,
        call_events.ToolCallEnded,
        seen_events.Seen,
    )
)


def upcast(topic: str, state: dict[str, Any]) -> None:
    """Bring a stored event's state up to its class's current version, in place, with the
    class's own ``upcast_vN_vN+1`` steps (the same ones eventsourcing's mapper runs)."""
    cls = EVENT_CLASSES[topic]
    version = state.pop("class_version", 1)
    target = getattr(cls, "class_version", 1)
    while version < target:
        getattr(cls, f"upcast_v{version}_v{version + 1}")(state)
        version += 1
