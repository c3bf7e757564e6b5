"""Every event of a root aggregate, at module level, each under an explicit, stable topic.

The topics (and each class's ``class_version`` with its ``upcast_vN_vN+1`` steps) are what the
journal stores. :class:`~lineage_es.domain.root.RootLineage` carries the classes as attributes
(``RootLineage.ChildPlaced``...), where eventsourcing registers the topics. Each event names
its subject by conversation, or by spawn key while a child is pending, and carries all the
tree view needs, so the projection applies it without re-deriving the rules.

The events that settle a child's edge after it was placed are in
:mod:`lineage_es.domain.edge_events`, those of MCP tool calls in
:mod:`lineage_es.domain.call_events`, and the ``Seen`` events in
:mod:`lineage_es.domain.seen_events`.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate

from lineage_es.domain.nodes import DELETED, LIVE, STOPPED, stamp, stopped_for_good
from lineage_es.domain.state import LineageState


class RootEvent(Aggregate.Event):
    """An event of a root, applied for the observation with key ``fact`` (``""``: none, a
    command such as a rename)."""

    fact: str

    def apply(self, aggregate: Any) -> None:
        self.change(aggregate)
        aggregate.heard(self)
        if self.fact:  # after ``change``: a stop's own key belongs to the lifetime it opens
            aggregate.saw(self.fact, self.timestamp)

    def change(self, aggregate: LineageState) -> None:
        """Mutate the aggregate's state; each event class says how."""


class RootCreated(RootEvent, Aggregate.Created):
    """A root conversation started (or was first named, as its root, by a child's fact)."""

    TOPIC = "lineage:RootLineage.Started"
    host: str
    conversation: str
    workspace: list[str]
    source: str
    fact: str

    def change(self, aggregate: LineageState) -> None:
        aggregate.nodes[self.conversation]["started"] = stamp(self.timestamp)


class RootRedated(RootEvent):
    """A fact of the root itself (its own header, read late) shows it started earlier
    than the fact that first created it (a child's, naming it as its root). It carries
    what the root's row needs, so a view replayed up to a time between the two has it."""

    TOPIC = "lineage:RootLineage.RootRedated"
    conversation: str
    host: str
    workspace: list[str]

    def change(self, aggregate: LineageState) -> None:
        aggregate.nodes[self.conversation]["started"] = stamp(self.timestamp)


class Resumed(RootEvent):
    """A node resumed (a pending child named by its spawn key). With ``restores``, it is
    instead the end of a stop held in the past (:class:`Stopped` with ``until``, journaled
    just before it): it changes no node (the node is as its other events have it) and closes
    that stop in a view replayed up to a time (time travel)."""

    TOPIC = "lineage:RootLineage.Resumed"
    class_version = 2
    conversation: str
    restores: bool = False

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 event resumed its node."""
        state.setdefault("restores", False)

    def change(self, aggregate: LineageState) -> None:
        if self.restores:  # a held stop ends: a lifetime begins, as at any resume
            aggregate.next_lifetime(self.timestamp)
            return
        known = self.conversation in aggregate.nodes
        node = aggregate.node_named(
            self.conversation if known else None, None if known else self.conversation
        )
        if self.conversation == aggregate.conversation and stopped_for_good(node):
            # A real resume of the root: the end before it stays an end of its nodes.
            node["gaps"] = [*node.get("gaps", ()), [node["stopped"], stamp(self.timestamp)]]
        node["status"] = LIVE
        for kept in ("stopped", "provisional", "cascade"):
            node.pop(kept, None)
        aggregate.next_lifetime(self.timestamp)


class SpawnRequested(RootEvent):
    """``parent`` asked for a child, known so far by ``spawn_key``: a candidate owner of the
    next child that starts without naming its parent."""

    TOPIC = "lineage:RootLineage.SpawnRequested"
    spawn_key: str
    parent: str
    agent_type: str | None
    description: str | None

    def change(self, aggregate: LineageState) -> None:
        aggregate.spawn_seq += 1
        aggregate.spawns[self.spawn_key] = {
            "parent": self.parent,
            "claimed": None,
            "seq": aggregate.spawn_seq,
            "agent_type": self.agent_type,
            "description": self.description,
        }


class ChildPlaced(RootEvent):
    """A child joins the tree, under its conversation or, while pending, its spawn key.
    ``name`` is the name the host gave the child as it started (a Claude teammate's
    ``name``, a Codex ``agent_nickname``), if any."""

    TOPIC = "lineage:RootLineage.ChildPlaced"
    class_version = 2
    conversation: str | None
    spawn_key: str | None
    parent: str | None
    depth: int
    resolution: str
    ambiguous: bool
    agent_type: str | None
    subagent_id: str | None
    description: str | None
    name: str | None = None

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 event named no child: its ``name`` is unknown."""
        state.setdefault("name", None)

    def change(self, aggregate: LineageState) -> None:
        node = {
            "parent": self.parent,
            "depth": self.depth,
            "status": LIVE,
            "spawn": self.spawn_key,
            "resolution": self.resolution,
            "ambiguous": self.ambiguous,
            "started": stamp(self.timestamp),
            "joined": len(aggregate.seen),
        }
        aggregate.add_node(self.conversation, self.spawn_key, node)


class ChildRedated(RootEvent):
    """A later fact placing a known child under the same parent (its own header, read
    late) has an earlier time than the one that placed it: the child started then. It
    carries the whole placement, so a view replayed up to a time between the two (which
    leaves the original ``ChildPlaced`` out) places the child on its own."""

    TOPIC = "lineage:RootLineage.ChildRedated"
    conversation: str
    spawn_key: str | None
    parent: str | None
    depth: int
    resolution: str
    ambiguous: bool
    agent_type: str | None
    subagent_id: str | None
    description: str | None

    def change(self, aggregate: LineageState) -> None:
        aggregate.nodes[self.conversation]["started"] = stamp(self.timestamp)


class ChildBound(RootEvent):
    """A pending child's own conversation became known."""

    TOPIC = "lineage:RootLineage.ChildBound"
    spawn_key: str
    conversation: str
    resolution: str

    def change(self, aggregate: LineageState) -> None:
        node = aggregate.pending.pop(self.spawn_key)
        node["resolution"] = self.resolution
        node["joined"] = len(aggregate.seen)  # the conversation joins the root now
        aggregate.nodes[self.conversation] = node
        aggregate.claim_spawn(self.spawn_key, self.conversation)


class BindingUndone(RootEvent):
    """A bound child turned out to be someone else: it is pending again."""

    TOPIC = "lineage:RootLineage.BindingUndone"
    conversation: str
    spawn_key: str
    resolution: str

    def change(self, aggregate: LineageState) -> None:
        node = aggregate.nodes.pop(self.conversation)
        node["resolution"] = self.resolution
        aggregate.pending[self.spawn_key] = node
        aggregate.claim_spawn(self.spawn_key, "")


class SubtreeMoved(RootEvent):
    """A child bound here by order proved a root of its own (``to``): the nodes placed
    under it by facts naming their parent leave this root with it (its own root adopts
    them, :class:`ChildAdopted`), with the spawn requests they and it made. Only its own
    place here was a guess."""

    TOPIC = "lineage:RootLineage.SubtreeMoved"
    to: str
    conversations: list[str]
    spawn_keys: list[str]
    spawns: list[str]

    def change(self, aggregate: LineageState) -> None:
        for conversation in self.conversations:
            aggregate.nodes.pop(conversation, None)
            aggregate.stated.pop(conversation, None)
        for spawn_key in self.spawn_keys:
            aggregate.pending.pop(spawn_key, None)
        for spawn_key in self.spawns:
            aggregate.spawns.pop(spawn_key, None)


class ChildAdopted(RootEvent):
    """A node that left root ``origin`` with this root's conversation (:class:`SubtreeMoved`)
    joins this root as it stood there: ``node`` is its state (parent, depth below this
    root, status, spawn, resolution, ...); the rest is what the tree view showed of it.
    Named by its conversation, or by its spawn key while pending."""

    TOPIC = "lineage:RootLineage.ChildAdopted"
    conversation: str | None
    spawn_key: str | None
    origin: str
    node: dict[str, Any]
    agent_type: str | None
    subagent_id: str | None
    description: str | None
    name: str | None
    started_at: str
    stopped_at: str | None

    def change(self, aggregate: LineageState) -> None:
        node = dict(self.node, joined=len(aggregate.seen))
        aggregate.add_node(self.conversation, self.spawn_key, node)


class SeenAdopted(RootEvent):
    """The idempotency keys of the facts seen in root ``origin`` since a child bound there
    by order joined it, when it proved this root's conversation: the payloads that placed or
    changed what left with it, delivered again, now reach this root, and are duplicates here
    as they were there. Those seen in ``origin``'s current lifetime (``current``) count as
    seen in this root's current one; those of its ended lifetimes (``earlier``), as seen in
    an ended lifetime (lifetime 0): a payload that can recur may happen again, one that
    cannot stays a duplicate."""

    TOPIC = "lineage:RootLineage.SeenAdopted"
    origin: str
    current: list[str]
    earlier: list[str]

    def change(self, aggregate: LineageState) -> None:
        for key in self.earlier:
            aggregate.seen.setdefault(key, 0)
        for key in self.current:
            aggregate.seen[key] = aggregate.lifetime


class Stopped(RootEvent):
    """A node stopped. The node keeps when (``stopped``) and whether the stop was
    ``provisional`` (:attr:`lineage_es.facts.Stopped.provisional`): a fact dated before
    the stop does not resume it, and a provisional stop is taken back from its own time
    by a later fact showing the node went on. ``cascade``: the node stopped with its root's
    session.

    With ``until``, the stop is held in the past, learnt late (a child re-dated to before an
    end of its root's session): it held from its time until ``until``, when the child's act
    that first placed it resumed it (the :class:`Resumed` with ``restores`` that follows
    it). It changes no node (what the node did from ``until`` on stands); only a view
    replayed up to a time before ``until`` (time travel) shows it.
    """

    TOPIC = "lineage:RootLineage.Stopped"
    class_version = 3
    conversation: str | None
    spawn_key: str | None
    provisional: bool = False
    cascade: bool = False
    until: str | None = None

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 stop was a stop for good, whatever stopped it."""
        state.setdefault("provisional", False)
        state.setdefault("cascade", False)

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A version-2 stop stopped its node from its time on."""
        state.setdefault("until", None)

    def change(self, aggregate: LineageState) -> None:
        if self.until is not None:  # held in the past: a lifetime begins, as at any stop
            aggregate.next_lifetime(self.timestamp)
            return
        node = aggregate.node_named(self.conversation, self.spawn_key)
        node["status"] = STOPPED
        node["stopped"] = stamp(self.timestamp)
        node["provisional"] = self.provisional
        node["cascade"] = self.cascade
        aggregate.next_lifetime(self.timestamp)


class Renamed(RootEvent):
    """A node's display name: a conversation's, or a pending child's by its spawn key
    (``conversation`` is then ``None``; the name stays with it once bound)."""

    TOPIC = "lineage:RootLineage.Renamed"
    class_version = 2
    conversation: str | None
    name: str
    spawn_key: str | None = None

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 event renamed a conversation."""
        state.setdefault("spawn_key", None)


class WorkspaceLearned(RootEvent):
    """A root first seen without its workspace (a host may leave the field out) learnt
    it from a later payload of its own."""

    TOPIC = "lineage:RootLineage.WorkspaceLearned"
    workspace: list[str]

    def change(self, aggregate: LineageState) -> None:
        aggregate.workspace = list(self.workspace)


class Deleted(RootEvent):
    """A node was deleted (``reason``: ``user``, ``gc``, ``revoked``, or
    ``parent-teardown`` for each node below the one deleted)."""

    TOPIC = "lineage:RootLineage.Deleted"
    conversation: str | None
    spawn_key: str | None
    reason: str

    def change(self, aggregate: LineageState) -> None:
        aggregate.node_named(self.conversation, self.spawn_key)["status"] = DELETED
        if self.conversation is not None:
            aggregate.stated.pop(self.conversation, None)
