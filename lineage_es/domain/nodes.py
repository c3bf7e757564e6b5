"""A root's nodes as plain data, and what a node's status and stop say.

A node is a JSON-ready dict (so snapshots need no custom transcoding): ``parent``, ``depth``,
``status``, ``spawn``, ``resolution``, ``ambiguous``, ``started``, ``joined``, and once
stopped ``stopped``, ``provisional`` and ``cascade``; the root's node keeps ``gaps``.
Times are kept as UTC ISO strings (:func:`stamp`), which compare as times.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, NamedTuple, TypeAlias

LIVE = "live"
STOPPED = "stopped"
DELETED = "deleted"

#: Why an edge is refused that a later fact can make good: the stated parent is not known
#: yet, or not yet at the depth the fact states (its own parent is not known yet).
WAITING_REASONS = frozenset({"unknown-parent", "depth"})

Node: TypeAlias = dict[str, Any]


class Located(NamedTuple):
    """A node found by conversation or by spawn key: exactly one of the two names is set
    (a pending child has no conversation yet)."""

    conversation: str | None
    spawn_key: str | None
    node: Node

    @property
    def name(self) -> str:
        """How events name the node: its conversation, or its spawn key while pending."""
        name = self.conversation if self.conversation is not None else self.spawn_key
        assert name is not None
        return name


@lru_cache(maxsize=1024)
def stamp(moment: datetime) -> str:
    """A time as the aggregate keeps it: UTC ISO, so it compares as a time. Cached: one fact
    stamps the same moments several times (its own, and the interval before it)."""
    if moment.tzinfo is not UTC:
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.isoformat(timespec="microseconds")


def stopped_provisionally(node: Node) -> bool:
    """Whether the node is stopped provisionally at a known time."""
    return (
        node["status"] == STOPPED
        and bool(node.get("provisional"))
        and node.get("stopped") is not None
    )


def stopped_provisionally_before(node: Node, at: datetime) -> bool:
    """Whether the node stopped provisionally before ``at``."""
    return stopped_provisionally(node) and stamp(at) > node["stopped"]


def stopped_provisionally_since(node: Node, end: str) -> bool:
    """Whether the node stopped provisionally at or after its root's session end ``end``."""
    return stopped_provisionally(node) and node["stopped"] >= end


def stopped_with_root_after(node: Node, at: datetime) -> bool:
    """Whether the node stopped provisionally with its root (its root's record ended), after
    ``at``: a stop of its own at ``at``, read late, comes first."""
    return stopped_provisionally(node) and bool(node.get("cascade")) and stamp(at) < node["stopped"]


def stop_replaces_provisional(node: Node, at: datetime, provisional: bool) -> bool:
    """Whether a stop at ``at`` replaces the node's provisional stop: a stop after it, or a
    stop for good at its very time (the real end wins)."""
    return stopped_provisionally_before(node, at) or (
        not provisional and stopped_provisionally(node) and node["stopped"] == stamp(at)
    )


def stopped_for_good(node: Node) -> bool:
    """Whether the node is stopped for good at a known time."""
    return node["status"] == STOPPED and not node.get("provisional") and "stopped" in node


def before_start(moment: datetime, started: str | None) -> bool:
    """Whether ``moment`` is before a node's start; true when the start is unknown (the view
    keeps the earlier of the two)."""
    return started is None or stamp(moment) < started
