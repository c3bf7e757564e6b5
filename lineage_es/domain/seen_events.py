"""When a node was last heard of: the event that says so, and how often it is journaled.

Most facts about a node journal an event (it starts, stops, binds...), but a fact that changes
nothing in the tree (a tool call of a known, live subagent) journals none. So that the
journal still knows, to :data:`SEEN_INTERVAL`, the time of the latest fact about each node,
the root journals a :class:`Seen` for such a fact once that interval has passed since the
node's last recorded time: at most one event per node per interval of activity, and a replay
of the journal gives back the same times.

It sits beside :mod:`lineage_es.domain.events` (module level, an explicit stable topic,
carried by :class:`~lineage_es.domain.root.RootLineage` as an attribute) and changes nothing
in the tree but the node's last time, which every event of a node records
(:meth:`~lineage_es.domain.state.LineageState.heard`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lineage_es.domain.events import RootEvent
from lineage_es.domain.state import LineageState

#: How stale a node's recorded last time may grow before a fact that journals nothing else
#: journals a :class:`Seen`: ``last_seen`` is exact to this interval.
SEEN_INTERVAL = timedelta(seconds=60)


def seen_due(last: str | None, at: datetime) -> bool:
    """Whether a fact at ``at`` (in UTC) about a node last heard of at ``last`` (a UTC ISO
    stamp; ``None``: not known) journals a :class:`Seen`: when the interval has passed since.
    Compared as times (a stamp parses faster than a time is stamped), by their difference:
    ``at`` minus the interval would leave the datetime range in the first minute of year 1."""
    return last is None or at - datetime.fromisoformat(last) >= SEEN_INTERVAL


class Seen(RootEvent):
    """A fact about ``conversation`` (or, while pending, the child of ``spawn_key``) that
    changed nothing else arrived at this event's time."""

    TOPIC = "lineage:RootLineage.Seen"
    conversation: str | None
    spawn_key: str | None = None

    def change(self, aggregate: LineageState) -> None:
        """Nothing but the node's last time, which :meth:`RootEvent.apply` records."""
