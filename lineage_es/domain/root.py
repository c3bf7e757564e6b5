"""The domain: one ``RootLineage`` aggregate per root, and a conversation-to-root index.

The aggregate holds the rules of the lineage contract (placement, inference without guessing,
confirmation, correction, cascade). It is pure: no I/O and no clock other than each fact's
time, so the same facts always give the same events. Its state is plain JSON data so that
snapshots need no custom transcoding.

Every event names its subject by conversation, or by spawn key while a child is pending, and
carries everything the tree view needs, so the projection applies events without re-deriving
the rules.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate

from lineage_es.facts import RESOLUTION_STRENGTH

try:  # the builtin SHA-1: importing hashlib loads OpenSSL, some 3 ms of every hook process
    from _sha1 import sha1  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover (a Python built without it)
    from hashlib import sha1

#: ``uuid5(NAMESPACE_URL, "https://lineage-es.dev/ids")``: every id is a UUID 5 in it.
NAMESPACE = UUID("3477ccce-b6d6-5cc6-a05c-33f125580357")


def name_id(name: str) -> UUID:
    """``uuid.uuid5(NAMESPACE, name)``, computed without importing hashlib."""
    return UUID(bytes=sha1(NAMESPACE.bytes + name.encode("utf-8")).digest()[:16], version=5)


LIVE = "live"
STOPPED = "stopped"
DELETED = "deleted"

#: Why an edge is refused that a later fact can make good: the stated parent is not known
#: yet, or not yet at the depth the fact states (its own parent is not known yet).
WAITING_REASONS = frozenset({"unknown-parent", "depth"})


@lru_cache(maxsize=65536)
def root_id(host: str, conversation: str) -> UUID:
    """The aggregate id of the root ``conversation`` of ``host``: stable across machines."""
    return name_id(f"root\x00{host}\x00{conversation}")


@lru_cache(maxsize=65536)
def index_id(host: str, conversation: str) -> UUID:
    """The id of the index entry that routes ``conversation`` to its root."""
    return name_id(f"conversation\x00{host}\x00{conversation}")


class ConversationIndex(Aggregate):
    """Routes a conversation to the root it belongs to; saved with the root it names."""

    TOPIC = "lineage:ConversationIndex"

    class Event(Aggregate.Event):
        pass

    class Created(Event, Aggregate.Created):
        TOPIC = "lineage:ConversationIndex.Indexed"
        host: str
        conversation: str
        root: str

    class Moved(Event):
        TOPIC = "lineage:ConversationIndex.Moved"
        root: str

        def apply(self, aggregate: Any) -> None:
            aggregate.root = self.root

    def __init__(self, host: str, conversation: str, root: str) -> None:
        self.host = host
        self.conversation = conversation
        self.root = root

    @classmethod
    def create(cls, host: str, conversation: str, root: str, at: datetime) -> ConversationIndex:
        return cls._create(
            cls.Created,
            id=index_id(host, conversation),
            host=host,
            conversation=conversation,
            root=root,
            timestamp=at,
        )

    def move(self, root: str, at: datetime) -> None:
        if root != self.root:
            self.trigger_event(self.Moved, root=root, timestamp=at)


class RootLineage(Aggregate):
    """One root conversation and every node below it.

    State (plain data): ``nodes`` maps a conversation to its node, ``pending`` maps the spawn
    key of a started child whose conversation is not known yet to its node, ``spawns`` keeps
    spawn requests (candidate owners of children that start without naming their parent),
    ``seen`` maps the idempotency key of each observation that changed this root to the
    ``lifetime`` it was last seen in (in the order first seen; 0 for a key taken from a root
    a subtree left, seen in an ended lifetime there: :class:`SeenAdopted`). Each child node
    keeps ``joined``, how many keys ``seen`` held when it joined the root: the keys seen
    since then go with it if it proves a root of its own (:meth:`move_subtree`); a node
    restored from a snapshot without it gives every key.

    Lifetimes: a lifetime of the root ends whenever one of its nodes stops or resumes (the
    root's own session ending or resuming included), and ``lifetime`` counts them from 1. An
    observation that can recur (:attr:`Observation.recurs`, hook payloads) is a duplicate only
    if its key was seen in the current lifetime; any other only if it was ever seen: hook payloads
    carry no time, so a fact that truly happens again later (a session that ends the same way
    after a resume, a subagent that stops again after it was resumed) is byte-identical to the
    first. The lifetime is derived from the events alone (they carry no lifetime number), so
    replaying a journal, old or new, gives the same one. Trade-off accepted: a duplicate
    delivered late, after a node of its root stopped or resumed, cannot be told from the fact
    happening again unless it carries the time it was recorded (:meth:`has_seen`), and is
    applied again (a stale stop stops a resumed session; a stale placement may correct an
    edge back).

    Session ends: no node outlives its root's session end for good (a provisional stop is no
    end). The root's node keeps, under ``gaps``, each such end that a real resume followed,
    as ``[end, resume]``, and a node is held to the first end at or after the time in question
    whether the root has been resumed since or not (:meth:`RootLineage._final_end`). A snapshot
    taken before version 4 has no ``gaps``; the application replays such a root from its
    events instead of restoring it from that snapshot.

    Version 2 of the state (snapshots) adds ``lifetime``. Version 3 adds each node's
    ``started`` (the earliest time a fact placed it: a later fact with an earlier time re-dates
    it, once) and ``stated`` (the parent a fact stated for a child, kept while it could not be
    placed: an unknown parent, a depth contradiction; placed when the parent becomes known).
    Version 4 adds ``began``: when each lifetime began, so that a dated payload seen in a
    lifetime that ended after its date is known for a delivery again (:meth:`has_seen`).
    Version 5 adds ``latest``: the last time a fact was seen in each lifetime, so that a
    dated payload is known for a delivery again at the very instant its lifetime ended, or
    after a change dated back before it (:meth:`has_seen`).
    """

    TOPIC = "lineage:RootLineage"
    class_version = 5

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 snapshot kept every key seen as ``1`` and no lifetime: each of its keys
        counts as seen in the current lifetime, as before, until a node stops or resumes."""
        state.setdefault("lifetime", 1)
        state["seen"] = dict.fromkeys(state.get("seen", {}), state["lifetime"])

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A version-2 snapshot kept no start per node (a child's is then unknown: the next
        fact placing it with the same parent re-dates it, and the view keeps the earlier of
        the two times) and no stated parents: its rejections came from version-1
        ``EdgeRejected`` events, which did not keep what the fact stated."""
        state.setdefault("stated", {})

    @staticmethod
    def upcast_v3_v4(state: dict[str, Any]) -> None:
        """A version-3 snapshot kept no time for its lifetimes' beginnings: its keys count by
        lifetime alone (a recorded payload delivered again after its lifetime ended is applied
        again, as before)."""
        state["began"] = [None] * int(state.get("lifetime", 1))

    @staticmethod
    def upcast_v4_v5(state: dict[str, Any]) -> None:
        """A version-4 snapshot kept no last time for the facts of its lifetimes: its keys count
        by when the next lifetime began alone (a recorded payload delivered again at that very
        instant is applied again, as before); the lifetimes after it keep theirs."""
        state["latest"] = [None] * int(state.get("lifetime", 1))

    class Event(Aggregate.Event):
        fact: str

        def apply(self, aggregate: Any) -> None:
            self.change(aggregate)
            if self.fact:  # after ``change``: a stop's own key belongs to the lifetime it opens
                aggregate.saw(self.fact, self.timestamp)

        def change(self, aggregate: Any) -> None:
            """Mutate the aggregate's state; each event class says how."""

    class Created(Event, Aggregate.Created):
        TOPIC = "lineage:RootLineage.Started"
        host: str
        conversation: str
        workspace: list[str]
        source: str
        fact: str

        def change(self, aggregate: Any) -> None:
            aggregate.nodes[self.conversation]["started"] = _stamp(self.timestamp)

    class RootRedated(Event):
        """A fact of the root itself (its own header, read late) shows it started earlier
        than the fact that first created it (a child's, naming it as its root). It carries
        what the root's row needs, so a view replayed up to a time between the two has it."""

        TOPIC = "lineage:RootLineage.RootRedated"
        conversation: str
        host: str
        workspace: list[str]

        def change(self, aggregate: Any) -> None:
            aggregate.nodes[self.conversation]["started"] = _stamp(self.timestamp)

    class Resumed(Event):
        """A node resumed. Version 2 adds ``restores``: the end of a stop held in the past
        (:class:`Stopped` with ``until``, journaled just before it): it changes no node (the
        node is as its other events have it) and closes that stop in a view replayed up to a
        time (time travel). Version-1 events resumed their node."""

        TOPIC = "lineage:RootLineage.Resumed"
        class_version = 2
        conversation: str
        restores: bool = False

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 event resumed its node."""
            state.setdefault("restores", False)

        def change(self, aggregate: Any) -> None:
            if self.restores:  # a held stop ends: a lifetime begins, as at any resume
                aggregate.next_lifetime(self.timestamp)
                return
            # A pending child is named by its spawn key (it has no conversation yet).
            known = self.conversation in aggregate.nodes
            node = _node(aggregate, self.conversation if known else None, self.conversation)
            if self.conversation == aggregate.conversation and _final(node):
                # A real resume of the root: the end before it stays an end of its nodes.
                node["gaps"] = [*node.get("gaps", ()), [node["stopped"], _stamp(self.timestamp)]]
            node["status"] = LIVE
            for kept in ("stopped", "provisional", "cascade"):
                node.pop(kept, None)
            aggregate.next_lifetime(self.timestamp)

    class SpawnRequested(Event):
        TOPIC = "lineage:RootLineage.SpawnRequested"
        spawn_key: str
        parent: str
        agent_type: str | None
        description: str | None

        def change(self, aggregate: Any) -> None:
            aggregate.spawn_seq += 1
            aggregate.spawns[self.spawn_key] = {
                "parent": self.parent,
                "claimed": None,
                "seq": aggregate.spawn_seq,
                "agent_type": self.agent_type,
                "description": self.description,
            }

    class ChildPlaced(Event):
        """A child joins the tree, under its conversation or, while pending, its spawn key.

        Version 2 adds ``name``: the name the host gave the child as it started (a Claude
        teammate's ``name``, a Codex ``agent_nickname``), so a rename is not the only way a
        node gets one. Version 1 events had none.
        """

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

        def change(self, aggregate: Any) -> None:
            node = {
                "parent": self.parent,
                "depth": self.depth,
                "status": LIVE,
                "spawn": self.spawn_key,
                "resolution": self.resolution,
                "ambiguous": self.ambiguous,
                "started": _stamp(self.timestamp),
                "joined": len(aggregate.seen),
            }
            if self.conversation is None:
                aggregate.pending[self.spawn_key] = node
            else:
                aggregate.nodes[self.conversation] = node
            _claim(aggregate, self.spawn_key, self.conversation or "")

    class ChildRedated(Event):
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

        def change(self, aggregate: Any) -> None:
            aggregate.nodes[self.conversation]["started"] = _stamp(self.timestamp)

    class ChildBound(Event):
        """A pending child's own conversation became known."""

        TOPIC = "lineage:RootLineage.ChildBound"
        spawn_key: str
        conversation: str
        resolution: str

        def change(self, aggregate: Any) -> None:
            node = aggregate.pending.pop(self.spawn_key)
            node["resolution"] = self.resolution
            node["joined"] = len(aggregate.seen)  # the conversation joins the root now
            aggregate.nodes[self.conversation] = node
            _claim(aggregate, self.spawn_key, self.conversation)

    class BindingUndone(Event):
        """A bound child turned out to be someone else: it is pending again."""

        TOPIC = "lineage:RootLineage.BindingUndone"
        conversation: str
        spawn_key: str
        resolution: str

        def change(self, aggregate: Any) -> None:
            node = aggregate.nodes.pop(self.conversation)
            node["resolution"] = self.resolution
            aggregate.pending[self.spawn_key] = node
            _claim(aggregate, self.spawn_key, "")

    class SubtreeMoved(Event):
        """A child bound here by order proved a root of its own (``to``): the nodes placed
        under it by facts naming their parent leave this root with it (its own root adopts
        them, :class:`ChildAdopted`), with the spawn requests they and it made. Only its own
        place here was a guess (:meth:`RootLineage.move_subtree`)."""

        TOPIC = "lineage:RootLineage.SubtreeMoved"
        to: str
        conversations: list[str]
        spawn_keys: list[str]
        spawns: list[str]

        def change(self, aggregate: Any) -> None:
            for conversation in self.conversations:
                aggregate.nodes.pop(conversation, None)
                aggregate.stated.pop(conversation, None)
            for spawn_key in self.spawn_keys:
                aggregate.pending.pop(spawn_key, None)
            for spawn_key in self.spawns:
                aggregate.spawns.pop(spawn_key, None)

    class ChildAdopted(Event):
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

        def change(self, aggregate: Any) -> None:
            node = dict(self.node, joined=len(aggregate.seen))
            if self.conversation is None:
                aggregate.pending[self.spawn_key] = node
            else:
                aggregate.nodes[self.conversation] = node
            _claim(aggregate, self.spawn_key, self.conversation or "")

    class SeenAdopted(Event):
        """The idempotency keys of the facts seen in root ``origin`` since a child bound there
        by order joined it, when it proved this root's conversation (:meth:`RootLineage.adopt`):
        the payloads that placed or changed what left with it, delivered again, now reach this
        root, and are duplicates here as they were there. Those seen in ``origin``'s current
        lifetime (``current``) count as seen in this root's current one; those of its ended
        lifetimes (``earlier``), as seen in an ended lifetime (lifetime 0): a payload that
        can recur may happen again, one that cannot stays a duplicate."""

        TOPIC = "lineage:RootLineage.SeenAdopted"
        origin: str
        current: list[str]
        earlier: list[str]

        def change(self, aggregate: Any) -> None:
            for key in self.earlier:
                aggregate.seen.setdefault(key, 0)
            for key in self.current:
                aggregate.seen[key] = aggregate.lifetime

    class EdgeConfirmed(Event):
        """A fact confirmed a child's edge: a stronger resolution, or another spawn of the
        same parent (``spawn_key``, giving back ``released``).

        Version 2 adds what a child confirmed under another spawn is (``retyped``): that
        spawn's ``agent_type`` and ``description``, or those the fact itself stated. Version-1
        events kept the child's type and description as they were.
        """

        TOPIC = "lineage:RootLineage.EdgeConfirmed"
        class_version = 2
        conversation: str
        spawn_key: str | None
        resolution: str
        released: str | None
        agent_type: str | None = None
        description: str | None = None
        retyped: bool = False

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 event left the child's type and description as they were."""
            state.setdefault("agent_type", None)
            state.setdefault("description", None)
            state.setdefault("retyped", False)

        def change(self, aggregate: Any) -> None:
            node = aggregate.nodes[self.conversation]
            node["resolution"] = self.resolution
            if self.spawn_key is not None:
                _release(aggregate, self.released, self.conversation)
                node["spawn"] = self.spawn_key
                _claim(aggregate, self.spawn_key, self.conversation)
            aggregate.stated.pop(self.conversation, None)  # newer evidence for its edge

    class EdgeCorrected(Event):
        """A later fact contradicted a placement; ``depths`` re-places the moved subtree.
        ``spawn_key`` is the spawn the fact stated for the child (giving back ``released``).

        Version 2 adds, as :class:`EdgeConfirmed` does, what a child corrected under another
        spawn is (``retyped``: ``agent_type``, ``description``). Version-1 events kept them.

        Version 3: a fact that states no spawn still moves the child off a spawn its old
        parent requested (``released``, now given back on its own: the child keeps no spawn
        then, and the spawn is open again for its parent's next child), and the child takes
        the one spawn of its new parent still open, if exactly one is (``claimed``: by order,
        as an inference would; never stated by the fact). Version-2 events gave a spawn back
        only with a stated one, and took none.
        """

        TOPIC = "lineage:RootLineage.EdgeCorrected"
        class_version = 3
        conversation: str
        parent: str | None
        previous: str | None
        spawn_key: str | None
        released: str | None
        resolution: str
        depths: dict[str, int]
        agent_type: str | None = None
        description: str | None = None
        retyped: bool = False
        claimed: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 event left the child's type and description as they were."""
            state.setdefault("agent_type", None)
            state.setdefault("description", None)
            state.setdefault("retyped", False)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            """A version-2 event took no spawn by order, and gave one back only with a stated
            one (it never had ``released`` without ``spawn_key``)."""
            state.setdefault("claimed", None)
            if state.get("spawn_key") is None:
                state["released"] = None

        def change(self, aggregate: Any) -> None:
            node = aggregate.nodes[self.conversation]
            node["parent"] = self.parent
            node["resolution"] = self.resolution
            node["ambiguous"] = False
            for conversation, depth in self.depths.items():
                aggregate.nodes[conversation]["depth"] = depth
            for pending in aggregate.pending.values():  # started under a moved node, unbound
                if pending["parent"] in self.depths:
                    pending["depth"] = self.depths[pending["parent"]] + 1
            if self.released is not None:
                _release(aggregate, self.released, self.conversation)
                if node["spawn"] == self.released:
                    node["spawn"] = None
            spawn_key = self.spawn_key if self.spawn_key is not None else self.claimed
            if spawn_key is not None:
                node["spawn"] = spawn_key
                _claim(aggregate, spawn_key, self.conversation)
            aggregate.stated.pop(self.conversation, None)

    class EdgeRejected(Event):
        """A fact asked for an edge the rules refuse (a cycle, a depth contradiction, an
        unknown parent).

        Version 2 keeps what the fact stated (``depth``, ``resolution``, ``spawn_key``): a
        parent refused as unknown or at a contradicting depth is remembered, and the child is
        placed under it when it becomes known at a depth that fits
        (:meth:`RootLineage._settle`). Version-1 events kept none: ``resolution`` is then
        ``None`` and nothing is remembered.

        Version 3 keeps the child's ``agent_type`` and ``description`` the fact stated too
        (a Claude sidecar's ``agentType``), so that the child placed later is what it would
        have been had its parent been known in time. Version-2 events kept neither: a child
        they let in later is placed with the type its spawn gives it, as before.
        """

        TOPIC = "lineage:RootLineage.EdgeRejected"
        class_version = 3
        conversation: str
        parent: str
        reason: str
        detail: str
        depth: int | None = None
        resolution: str | None = None
        spawn_key: str | None = None
        agent_type: str | None = None
        description: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 event kept nothing of what the fact stated."""
            state.setdefault("depth", None)
            state.setdefault("resolution", None)
            state.setdefault("spawn_key", None)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            """A version-2 event kept no type or description of the child."""
            state.setdefault("agent_type", None)
            state.setdefault("description", None)

        def change(self, aggregate: Any) -> None:
            if self.reason not in WAITING_REASONS:
                # Refused for good (a cycle): the same parent is not tried again.
                if aggregate.stated.get(self.conversation, {}).get("parent") == self.parent:
                    del aggregate.stated[self.conversation]
            elif self.resolution is not None:
                aggregate.stated[self.conversation] = {
                    "parent": self.parent,
                    "depth": self.depth,
                    "resolution": self.resolution,
                    "spawn_key": self.spawn_key,
                    "agent_type": self.agent_type,
                    "description": self.description,
                }

    class Stopped(Event):
        """A node stopped. The node keeps when (``stopped``) and whether the stop was
        ``provisional`` (:attr:`lineage_es.facts.Stopped.provisional`): a fact dated before
        the stop does not resume it, and a provisional stop is taken back from its own time
        by a later fact showing the node went on. Nodes stopped before this was kept (old
        snapshots) have neither: they resume as they did.

        Version 2 adds ``provisional`` and ``cascade`` (the node stopped with its root's
        session, :meth:`RootLineage.end_session`); version-1 events were neither.

        Version 3 adds ``until``: a stop held in the past, learnt late (a child re-dated to
        before an end of its root's session, :meth:`RootLineage._hold`). It held from its time
        until ``until``, when the child's act that first placed it resumed it (the
        :class:`Resumed` with ``restores`` that follows it); it changes no node (what the node
        did from ``until`` on stands), and only a view replayed up to a time before ``until``
        (time travel) shows it. Version-2 events (``until`` ``None``) stop their node.
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

        def change(self, aggregate: Any) -> None:
            if self.until is not None:  # held in the past: a lifetime begins, as at any stop
                aggregate.next_lifetime(self.timestamp)
                return
            node = _node(aggregate, self.conversation, self.spawn_key)
            node["status"] = STOPPED
            node["stopped"] = _stamp(self.timestamp)
            node["provisional"] = self.provisional
            node["cascade"] = self.cascade
            aggregate.next_lifetime(self.timestamp)

    class Renamed(Event):
        """A node's display name. Version 2 adds ``spawn_key``: a pending child is renamed by
        its spawn key (``conversation`` is then ``None``), and keeps the name once bound.
        Version 1 events named a conversation only."""

        TOPIC = "lineage:RootLineage.Renamed"
        class_version = 2
        conversation: str | None
        name: str
        spawn_key: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """A version-1 event renamed a conversation."""
            state.setdefault("spawn_key", None)

    class WorkspaceLearned(Event):
        """A root first seen without its workspace (a host may leave the field out) learnt
        it from a later payload of its own. Journals written before this event existed have
        none: their roots keep the workspace of their first event."""

        TOPIC = "lineage:RootLineage.WorkspaceLearned"
        workspace: list[str]

        def change(self, aggregate: Any) -> None:
            aggregate.workspace = list(self.workspace)

    class Deleted(Event):
        TOPIC = "lineage:RootLineage.Deleted"
        conversation: str | None
        spawn_key: str | None
        reason: str

        def change(self, aggregate: Any) -> None:
            _node(aggregate, self.conversation, self.spawn_key)["status"] = DELETED
            if self.conversation is not None:
                aggregate.stated.pop(self.conversation, None)

    def __init__(
        self, host: str, conversation: str, workspace: list[str], source: str, fact: str
    ) -> None:
        self.host = host
        self.conversation = conversation
        self.workspace = list(workspace)
        self.nodes: dict[str, dict[str, Any]] = {
            conversation: {
                "parent": None,
                "depth": 0,
                "status": LIVE,
                "spawn": None,
                "resolution": "native",
                "ambiguous": False,
            }
        }
        #: The parent a fact stated for a child that could not be placed under it yet.
        self.stated: dict[str, dict[str, Any]] = {}
        self.pending: dict[str, dict[str, Any]] = {}
        self.spawns: dict[str, dict[str, Any]] = {}
        self.spawn_seq = 0
        self.lifetime = 1
        self.seen: dict[str, int] = {fact: self.lifetime} if fact else {}
        #: When each lifetime began (``began[n - 1]`` for lifetime ``n``; ``None`` when not
        #: known: the first, and those of snapshots from before version 4).
        self.began: list[str | None] = [None]
        #: The last time a fact was seen in each lifetime (``latest[n - 1]`` for lifetime
        #: ``n``; ``None`` when none was, or not known: snapshots from before version 5).
        self.latest: list[str | None] = [None]

    # -- creation -------------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        host: str,
        conversation: str,
        *,
        at: datetime,
        workspace: tuple[str, ...] = (),
        source: str = "",
        fact: str = "",
    ) -> RootLineage:
        return cls._create(
            cls.Created,
            id=root_id(host, conversation),
            host=host,
            conversation=conversation,
            workspace=list(workspace),
            source=source,
            fact=fact,
            timestamp=at,
        )

    # -- questions the engine asks ----------------------------------------------------------

    def has_seen(self, fact: str, *, recurs: bool = False, at: datetime | None = None) -> bool:
        """Whether an observation with key ``fact`` already changed this root: ever, or, for
        a payload that can recur (``recurs``), in its current lifetime (a duplicate delivery;
        one seen in an earlier lifetime may have happened again), or in an earlier lifetime
        whose facts it cannot have followed, by its time ``at``: a recorded payload delivered
        again (a recording ingested twice) keeps the time it was recorded, so it is that
        payload again when dated before the change that ended its lifetime, or no later than
        the last fact seen in that lifetime. At the very instant of the change, the payload
        seen then is the same payload at the same time; one seen earlier and now dated then is
        not a copy of its recording (that would carry the earlier time), and happens again.
        The last fact's time also holds when the change was dated back before it (a stop
        capped at its root's end). A live hook's time is when it was received, so its late
        duplicate still counts as happening again (a clock set back between the change and a
        true repeat would swallow the repeat)."""
        if not recurs:
            return fact in self.seen
        seen = self.seen.get(fact)
        if seen is None:
            return False
        if seen == self.lifetime:
            return True
        if at is None or not 0 < seen < len(self.began):
            return False  # lifetime 0: an ended lifetime of a root it left (:meth:`adopt`)
        moment = _stamp(at)
        ended = self.began[seen]  # when the lifetime after the one it was seen in began
        last = self.latest[seen - 1] if seen <= len(self.latest) else None
        return (ended is not None and moment < ended) or (last is not None and moment <= last)

    def saw(self, fact: str, at: datetime) -> None:
        """An event of the observation with key ``fact``, dated ``at``, was applied."""
        self.seen[fact] = self.lifetime
        moment = _stamp(at)
        last = self.latest[-1]
        if last is None or moment > last:
            self.latest[-1] = moment

    def next_lifetime(self, at: datetime) -> None:
        """A node of the root stopped or resumed at ``at``: a new lifetime begins."""
        self.lifetime += 1
        self.began.append(_stamp(at))
        self.latest.append(None)

    def knows(self, conversation: str) -> bool:
        return conversation in self.nodes

    def node(self, conversation: str) -> dict[str, Any] | None:
        return self.nodes.get(conversation)

    def pending_keys(self) -> list[str]:
        """Spawn keys of started children whose conversation is not known, oldest first."""
        return [k for k, n in self.pending.items() if n["status"] == LIVE]

    def pending_parent(self, spawn_key: str) -> str | None:
        node = self.pending.get(spawn_key)
        return None if node is None else node["parent"]

    # -- commands -------------------------------------------------------------------------

    def see_root(self, *, at: datetime, fact: str) -> None:
        """The root acted as a root again: resume it if it had stopped. A fact of the root
        itself earlier than its start (its own header, read after a child's fact created
        the root) re-dates it: each conversation starts at its first known fact."""
        self.resume(self.conversation, at=at, fact=fact)
        node = self.nodes[self.conversation]
        if node["status"] != DELETED and _earlier(at, self._started(self.conversation)):
            self._trigger(
                self.RootRedated,
                at,
                fact,
                conversation=self.conversation,
                host=self.host,
                workspace=list(self.workspace),
            )

    def resume(self, conversation: str, *, at: datetime, fact: str) -> None:
        """Resume a stopped node, found as :meth:`stop` finds it: a pending child by its
        spawn key (an import that read a file to where it then ended stopped it there, and
        takes it on when the file goes on). A fact dated before the stop (read late) resumes
        nothing; one at the stop's own time or after does, from the stop itself when that
        was provisional (the node went on: no gap).

        No node outlives its root's session end for good, even once the root is resumed: a
        descendant's fact dated while the session had ended resumes nothing (as it would have
        then); a provisional stop from before an end is taken back up to that end at most
        (:meth:`_cap`), and only a fact after the resume that followed it resumes the node
        again, from its own time; a node resumed before an end stops at it."""
        found = self._find(conversation, None)
        if found is None or found[2]["status"] != STOPPED:
            return
        node = found[2]
        stopped: str | None = node.get("stopped")  # unknown in nodes of old snapshots
        if stopped is not None and _stamp(at) < stopped:
            return  # a fact from before the stop, read late: it shows nothing went on after
        if found[0] != self.conversation and stopped is not None:
            self._resume_within_ends(found, conversation, stopped, at, fact)
            return
        if stopped is not None and node.get("provisional"):
            at = datetime.fromisoformat(stopped)  # it went on from where the record ended
        self._trigger(self.Resumed, at, fact, conversation=conversation)

    def _resume_within_ends(
        self,
        found: tuple[str | None, str | None, dict[str, Any]],
        name: str,
        stopped: str,
        at: datetime,
        fact: str,
    ) -> None:
        """Resume a descendant stopped at ``stopped`` by its own fact at ``at`` (not before
        the stop), within its root's session ends for good (:meth:`resume`)."""
        moment = _stamp(at)
        if self._while_ended(moment):
            return  # dated while its root's session had ended: it changes nothing, as then
        if found[2].get("provisional"):
            end = self._final_end(stopped)
            if end is None:  # it went on from where the record ended
                self._trigger(
                    self.Resumed, datetime.fromisoformat(stopped), fact, conversation=name
                )
                return
            self._cap(found, end, fact, reported=False)  # it went on, up to that end at most
            if moment <= end:
                return
        self._trigger(self.Resumed, at, fact, conversation=name)
        end = self._final_end(moment)
        if end is not None:  # resumed before an end its root has been resumed from since
            self._stop_with_root(found, end, fact)

    def learn_workspace(self, workspace: tuple[str, ...], *, at: datetime, fact: str) -> None:
        """A payload of the root itself names its workspace: learnt when it was unknown (the
        root was first seen without one). A workspace once known is kept: a payload naming
        another one changes nothing, so the roots a root is listed with, and the children
        bound to it by order, never move because a host sent a different one later."""
        if workspace and not self.workspace and self.nodes[self.conversation]["status"] != DELETED:
            self._trigger(self.WorkspaceLearned, at, fact, workspace=list(workspace))

    def request_spawn(
        self,
        parent: str,
        spawn_key: str,
        *,
        agent_type: str | None,
        description: str | None,
        at: datetime,
        fact: str,
    ) -> None:
        if spawn_key in self.spawns or parent not in self.nodes:
            return
        self._trigger(
            self.SpawnRequested,
            at,
            fact,
            spawn_key=spawn_key,
            parent=parent,
            agent_type=agent_type,
            description=description,
        )

    def start_pending(
        self,
        spawn_key: str,
        parent: str,
        *,
        agent_type: str | None,
        subagent_id: str | None,
        description: str | None,
        at: datetime,
        fact: str,
        resolution: str = "native",
    ) -> None:
        """A child started under ``parent``; its conversation will be learnt later."""
        parent_node = self.nodes.get(parent)
        if parent_node is None or parent_node["status"] == DELETED:
            return
        if spawn_key in self.pending or self._claimed(spawn_key):
            return
        self._trigger(
            self.ChildPlaced,
            at,
            fact,
            conversation=None,
            spawn_key=spawn_key,
            parent=parent,
            depth=parent_node["depth"] + 1,
            resolution=resolution,
            ambiguous=False,
            agent_type=agent_type or self._spawn_type(spawn_key),
            subagent_id=subagent_id or spawn_key,
            description=description,
        )

    def place_unknown_child(
        self,
        child: str,
        *,
        agent_type: str | None,
        subagent_id: str | None,
        description: str | None,
        at: datetime,
        fact: str,
    ) -> None:
        """A child started without naming its parent: place it by ordering alone.

        The most recent unclaimed spawn owns it when every unclaimed spawn has the same
        parent; with no unclaimed spawn the root owns it; spawns from different parents are
        never guessed between: the child goes under the root with no parent edge, ambiguous.
        """
        if child in self.nodes:
            self.resume(child, at=at, fact=fact)
            return
        open_spawns = [
            (s["seq"], key, s)
            for key, s in self.spawns.items()
            if s["claimed"] is None
            and key not in self.pending
            and self.nodes.get(s["parent"], {}).get("status") == LIVE
        ]
        parents = {s["parent"] for _, _, s in open_spawns}
        spawn_key: str | None = None
        ambiguous = False
        if not open_spawns:
            parent: str | None = self.conversation
        elif len(parents) == 1:
            _, spawn_key, spawn = max(open_spawns, key=lambda item: item[0])
            parent = spawn["parent"]
        else:
            parent = None
            ambiguous = True
        depth = self.nodes[parent]["depth"] + 1 if parent is not None else 1
        self._trigger(
            self.ChildPlaced,
            at,
            fact,
            conversation=child,
            spawn_key=spawn_key,
            parent=parent,
            depth=depth,
            resolution="inferred",
            ambiguous=ambiguous,
            agent_type=agent_type or (self._spawn_type(spawn_key) if spawn_key else None),
            subagent_id=subagent_id or child,
            description=description,
        )
        self._settle(at, fact)

    def bind_pending(self, spawn_key: str, child: str, *, at: datetime, fact: str) -> None:
        """A pending child's conversation became known by ordering alone."""
        if spawn_key in self.pending and child not in self.nodes:
            self._trigger(
                self.ChildBound,
                at,
                fact,
                spawn_key=spawn_key,
                conversation=child,
                resolution="inferred",
            )
            self._settle(at, fact)

    def place_ambiguous(self, child: str, *, at: datetime, fact: str) -> None:
        """A child of this root whose parent cannot be chosen without guessing."""
        if child not in self.nodes:
            self._place_ambiguous(child, at, fact)
            self._settle(at, fact)

    def _place_ambiguous(self, child: str, at: datetime, fact: str) -> None:
        self._trigger(
            self.ChildPlaced,
            at,
            fact,
            conversation=child,
            spawn_key=None,
            parent=None,
            depth=1,
            resolution="inferred",
            ambiguous=True,
            agent_type=None,
            subagent_id=child,
            description=None,
        )

    def move_subtree(self, child: str, *, at: datetime, fact: str) -> dict[str, list[Any]]:
        """``child``, bound here by order, proved to be a root of its own (:meth:`undo_binding`
        follows): the nodes placed under it by facts naming their parent (a start naming it,
        a child bound by order to such a start's spawn with it) leave this root for its own
        (:meth:`adopt`), with the spawn requests they and ``child`` made. Only ``child``'s
        place here was the guess. Returns what leaves, as it stood: ``nodes`` (parents first,
        each as ``conversation``, ``spawn_key``, ``node``: its state, depth counted below
        ``child``) and ``spawns`` (each request's ``spawn_key``, ``parent``, ``agent_type``,
        ``description``, oldest first); and, whatever leaves, the keys of the facts seen since
        ``child`` joined this root (every payload of it and of what was placed under it came
        since), seen in the current lifetime (``facts``) or an ended one (``earlier``): its own
        root takes them (:meth:`adopt`), so that they stay duplicates there. This root keeps
        them too."""
        leaving: dict[str, list[Any]] = {"nodes": [], "spawns": [], "facts": [], "earlier": []}
        top = self.nodes.get(child)
        if top is None or child == self.conversation or top["status"] == DELETED:
            return leaving
        # A node restored from a snapshot older than ``joined`` gives every key seen.
        for seen, lifetime in itertools.islice(self.seen.items(), top.get("joined", 0), None):
            leaving["facts" if lifetime == self.lifetime else "earlier"].append(seen)
        children = self._children()
        parents = [child]
        for parent in parents:  # grows as it goes: breadth first, parents before children
            for conversation, key in children.get(parent, []):
                found = self._find(conversation, key)
                assert found is not None
                node = found[2]
                if node["status"] == DELETED or node["parent"] != parent:
                    continue
                if node["resolution"] == "inferred" and node["spawn"] is None:
                    continue  # placed here by order alone: revoked with the binding
                if conversation is not None:
                    if conversation in parents:
                        continue
                    parents.append(conversation)
                moved = {k: v for k, v in node.items() if k != "joined"}
                moved["depth"] = node["depth"] - top["depth"]
                leaving["nodes"].append(
                    {"conversation": conversation, "spawn_key": node["spawn"], "node": moved}
                )
        members = set(parents)
        leaving["spawns"] = [
            {
                "spawn_key": key,
                "parent": spawn["parent"],
                "agent_type": spawn.get("agent_type"),
                "description": spawn.get("description"),
            }
            for key, spawn in sorted(self.spawns.items(), key=lambda item: item[1]["seq"])
            if spawn["parent"] in members and spawn["claimed"] in members | {None}
        ]
        if leaving["nodes"] or leaving["spawns"]:
            self._trigger(
                self.SubtreeMoved,
                at,
                fact,
                to=child,
                conversations=[n["conversation"] for n in leaving["nodes"] if n["conversation"]],
                spawn_keys=[n["spawn_key"] for n in leaving["nodes"] if not n["conversation"]],
                spawns=[spawn["spawn_key"] for spawn in leaving["spawns"]],
            )
        return leaving

    def adopt(
        self,
        origin: str,
        leaving: dict[str, list[Any]],
        shown: dict[str, dict[str, Any]],
        *,
        at: datetime,
        fact: str,
    ) -> None:
        """Take in what :meth:`move_subtree` moved out of root ``origin`` with this root's
        conversation: the spawn requests first, then the nodes, parents first, then the keys of
        the facts seen there since the conversation joined it (:class:`SeenAdopted`). ``shown``
        is what the tree view showed of each node, by how it was listed (its conversation, or
        its spawn key while pending): its type, id, description, name and times."""
        for spawn in leaving["spawns"]:
            if spawn["spawn_key"] not in self.spawns:
                self._trigger(self.SpawnRequested, at, fact, **spawn)
        for item in leaving["nodes"]:
            listed = item["conversation"] if item["conversation"] is not None else item["spawn_key"]
            row = shown.get(listed, {})
            self._trigger(
                self.ChildAdopted,
                at,
                fact,
                conversation=item["conversation"],
                spawn_key=item["spawn_key"],
                origin=origin,
                node=item["node"],
                agent_type=row.get("agent_type"),
                subagent_id=row.get("subagent_id"),
                description=row.get("description"),
                name=row.get("name"),
                started_at=row.get("started_at") or item["node"].get("started") or _stamp(at),
                stopped_at=row.get("stopped_at"),
            )
        current, earlier = leaving.get("facts", []), leaving.get("earlier", [])
        if current or earlier:
            self._trigger(
                self.SeenAdopted, at, fact, origin=origin, current=current, earlier=earlier
            )

    def undo_binding(self, child: str, *, at: datetime, fact: str) -> None:
        """``child`` proved to be a root of its own: its spawn is pending again, or, when it
        was placed without a spawn, it leaves this root. Whatever is still placed under it
        here (what :meth:`move_subtree` left: placed by order alone) was placed on a wrong
        guess and is revoked."""
        node = self.nodes.get(child)
        if node is None or child == self.conversation or node["status"] == DELETED:
            return
        for grandchild, key in self._children().get(child, []):
            self._delete(grandchild, key, "revoked", at, fact)
        if node["spawn"] is not None and node["spawn"] not in self.pending:
            self._trigger(
                self.BindingUndone,
                at,
                fact,
                conversation=child,
                spawn_key=node["spawn"],
                resolution="native",
            )
        else:
            self._delete(child, None, "revoked", at, fact)

    def identify_child(
        self,
        parent: str,
        child: str,
        *,
        resolution: str,
        spawn_key: str | None,
        depth: int | None,
        agent_type: str | None,
        subagent_id: str | None,
        description: str | None,
        at: datetime,
        fact: str,
    ) -> None:
        """A host fact names ``child`` as ``parent``'s child: place, confirm or correct. A
        known child under the same parent that the fact shows started earlier is re-dated.
        A parent that cannot be placed yet (unknown, or at a depth that contradicts the
        fact's) is remembered; whatever this fact placed may be the parent another child
        waits for (:meth:`_settle`)."""
        self._identify(
            parent,
            child,
            resolution=resolution,
            spawn_key=spawn_key,
            depth=depth,
            agent_type=agent_type,
            subagent_id=subagent_id,
            description=description,
            at=at,
            fact=fact,
        )
        self._settle(at, fact)

    def _identify(
        self,
        parent: str,
        child: str,
        *,
        resolution: str,
        spawn_key: str | None,
        depth: int | None,
        agent_type: str | None,
        subagent_id: str | None,
        description: str | None,
        at: datetime,
        fact: str,
        redate: bool = True,
    ) -> None:
        parent_node = self.nodes.get(parent)
        if parent_node is None or parent_node["status"] == DELETED:
            if child not in self.nodes:
                self._place_ambiguous(child, at, fact)
            self._trigger(
                self.EdgeRejected,
                at,
                fact,
                conversation=child,
                parent=parent,
                reason="unknown-parent",
                detail=f"{parent!r} is not a node of root {self.conversation!r}",
                depth=depth,
                resolution=resolution,
                spawn_key=spawn_key,
                agent_type=agent_type,
                description=description,
            )
            return
        expected_depth = parent_node["depth"] + 1
        if depth is not None and depth != expected_depth:
            self._reject_depth(
                parent,
                child,
                depth,
                expected_depth,
                at,
                fact,
                resolution,
                spawn_key,
                agent_type=agent_type,
                description=description,
            )
            return
        if spawn_key is not None and spawn_key in self.pending and child not in self.nodes:
            self._trigger(
                self.ChildBound,
                at,
                fact,
                spawn_key=spawn_key,
                conversation=child,
                resolution=resolution,
            )
            return
        node = self.nodes.get(child)
        if node is None:
            self._trigger(
                self.ChildPlaced,
                at,
                fact,
                conversation=child,
                spawn_key=spawn_key,
                parent=parent,
                depth=expected_depth,
                resolution=resolution,
                ambiguous=False,
                agent_type=agent_type
                or (self._spawn_type(spawn_key) if spawn_key is not None else None),
                subagent_id=subagent_id or child,
                description=description,
            )
            return
        if node["status"] == DELETED or child == self.conversation:
            return
        released = node["spawn"] if node["spawn"] != spawn_key else None
        new_key = spawn_key if spawn_key != node["spawn"] else None
        if node["parent"] == parent and not node["ambiguous"]:
            stronger = RESOLUTION_STRENGTH[resolution] > RESOLUTION_STRENGTH[node["resolution"]]
            if stronger or new_key is not None:
                self._trigger(
                    self.EdgeConfirmed,
                    at,
                    fact,
                    conversation=child,
                    spawn_key=new_key,
                    resolution=resolution if stronger else node["resolution"],
                    released=released if new_key is not None else None,
                    **self._retyped(new_key, agent_type, description),
                )
            if redate and _earlier(at, node.get("started")):
                self._trigger(
                    self.ChildRedated,
                    at,
                    fact,
                    conversation=child,
                    spawn_key=node["spawn"],
                    parent=parent,
                    depth=node["depth"],
                    resolution=node["resolution"],
                    ambiguous=False,
                    agent_type=agent_type
                    or (self._spawn_type(node["spawn"]) if node["spawn"] is not None else None),
                    subagent_id=subagent_id or child,
                    description=description,
                )
            return
        if RESOLUTION_STRENGTH[resolution] < RESOLUTION_STRENGTH[node["resolution"]]:
            return
        if self._is_ancestor(child, parent):
            self._trigger(
                self.EdgeRejected,
                at,
                fact,
                conversation=child,
                parent=parent,
                reason="cycle",
                detail=f"{parent!r} descends from {child!r}",
            )
            return
        claimed: str | None = None
        if new_key is None:  # no other spawn stated: none given back for one
            released = None
            if spawn_key is None:  # the fact states a parent, not a spawn
                released, claimed = self._respawned(node["spawn"], parent)
        self._trigger(
            self.EdgeCorrected,
            at,
            fact,
            conversation=child,
            parent=parent,
            previous=node["parent"],
            spawn_key=new_key,
            released=released,
            resolution=resolution,
            depths=self._subtree_depths(child, expected_depth),
            claimed=claimed,
            **self._retyped(new_key or claimed, agent_type, description, settled=not redate),
        )

    def _respawned(self, spawn_key: str | None, parent: str) -> tuple[str | None, str | None]:
        """The spawns of a child moved to ``parent`` by a fact stating no spawn, as
        (released, claimed). The spawn it holds (``spawn_key``, taken by order) is given back
        when another node requested it: the child is not that node's, so the spawn was never
        its own, and is open again for that node's next child. A child left with no spawn of
        ``parent`` takes the one spawn ``parent`` has open, if exactly one (a child of
        ``parent`` with no known spawn, and one spawn of it with no known child: the ordering
        rule's own reading, no guess); with several open it takes none (which one is its own
        cannot be told), and they stay open for the next child of ``parent``, as before."""
        held = self.spawns.get(spawn_key) if spawn_key is not None else None
        released = spawn_key if held is not None and held["parent"] != parent else None
        if held is not None and released is None:
            return None, None  # it holds a spawn of its new parent already
        if spawn_key is not None and held is None:
            return None, None  # a spawn this root never saw requested: nothing to give back
        open_spawns = [
            key
            for key, spawn in self.spawns.items()
            if spawn["parent"] == parent and spawn["claimed"] is None and key not in self.pending
        ]
        return released, open_spawns[0] if len(open_spawns) == 1 else None

    def stop(
        self,
        conversation: str | None,
        spawn_key: str | None,
        *,
        at: datetime,
        fact: str,
        provisional: bool = False,
        reported: bool = False,
    ) -> None:
        """Stop a live node (the root: its session ends).

        A node stopped provisionally (an import's stop where a file ended) moves its stop:
        to a later stop of its own, which shows it went on (it is resumed from the
        provisional stop first), unless the stop is ``reported`` by another node (a parent's
        result, a close: that says it was done by then, not that it ran until then); to an
        earlier stop when it stopped provisionally only with its root (its own record,
        read late, shows where it stopped). A node stopped for good stays as it stopped.

        No node outlives its root's session (LINEAGE.md): while the root is stopped for good
        (its session ended), a stop after that end is capped at it, for good, as the end would
        have stopped the node (:meth:`_cap`). A node stopped provisionally before an end
        for good its root has been resumed from since is held to that end all the same.

        A stop for good at the very time of a node's provisional stop replaces it: the real
        end wins."""
        found = self._find(conversation, spawn_key)
        if found is None:
            return
        node = found[2]
        later = not reported and _replaced(node, at, provisional)
        if found[0] == self.conversation:
            if node["status"] == LIVE or later:
                self.end_session(at=at, fact=fact, provisional=provisional)
            return
        end = self._ended()
        if node["status"] == STOPPED and node.get("provisional") and node.get("stopped"):
            end = self._final_end(node["stopped"]) or end  # the first end after its stop
        if end is not None and _stamp(at) > end and self._cap(found, end, fact, reported):
            return
        if later:
            self._take_back(found, fact)
        elif node["status"] != LIVE and not _with_root_after(node, at):
            return  # stopped for good, or by a stop of its own this one does not move
        self._stop_found(found, at, fact, provisional=provisional, cascade=False)

    def end_session(self, *, at: datetime, fact: str, provisional: bool = False) -> None:
        """The root's session ended: its live descendants stop with it, deepest first, as
        provisionally as the root (an import's stop at the session file's last row). A root
        stopped provisionally before went on to here: it is resumed from that stop first.

        An end for good (not provisional) also pulls back a descendant's provisional stop at
        or after the root's end (an import read its file to a later row first): the node is
        stopped again at the end, for good, as if the end had found it live. Its stop was
        provisional, so nothing showed it ran on without its root; the new stop's own time
        keeps every instant true (a view up to a time between the two has it stopped). A
        descendant's own stop for good after the end, journaled before the end was read, is
        left where it is: a resume of the root read later may show the node went on.

        An end for good at the very time of the root's provisional stop replaces that stop
        (the real end wins), and pulls back what stopped provisionally with it."""
        root = self.nodes[self.conversation]
        replaced = _replaced(root, at, provisional)
        ends = root["status"] == LIVE or replaced
        if replaced:
            self._take_back((self.conversation, None, root), fact)
        end = None if provisional else _stamp(at) if ends else self._ended()
        for conversation, spawn_key in reversed(self._subtree(self.conversation)):
            found = self._find(conversation, spawn_key)
            if found is None:
                continue
            node = found[2]
            if node["status"] == LIVE:
                self._stop_found(
                    found,
                    at,
                    fact,
                    provisional=provisional,
                    cascade=found[0] != self.conversation,
                )
            elif end is not None and found[0] != self.conversation and _past(node, end):
                self._stop_with_root(found, end, fact)

    def _ended(self) -> str | None:
        """When the root's session ended for good: its stop's time while it is stopped and the
        stop is not provisional. ``None`` while it is live (a resume after an end starts a new
        lifetime: its descendants may run again), stopped provisionally, or stopped before
        stops kept their time (old snapshots)."""
        root = self.nodes[self.conversation]
        if root["status"] != STOPPED or root.get("provisional", True):
            return None
        stopped: str | None = root.get("stopped")
        return stopped

    def _ends(self) -> list[tuple[str, str | None]]:
        """The root's session ends for good, each with the real resume that followed it
        (``None`` for the end it is stopped at now)."""
        root = self.nodes[self.conversation]
        ends: list[tuple[str, str | None]] = [
            (end, resumed) for end, resumed in root.get("gaps", ())
        ]
        current = self._ended()
        if current is not None:
            ends.append((current, None))
        return ends

    def _final_end(self, moment: str) -> str | None:
        """The first of the root's session ends for good at or after ``moment``, resumed
        since or not: a node live at ``moment`` did not run past it."""
        return min((end for end, _ in self._ends() if end >= moment), default=None)

    def _while_ended(self, moment: str) -> bool:
        """Whether ``moment`` falls after one of the root's session ends for good and before
        the real resume that followed it, if any."""
        return any(
            end < moment and (resumed is None or moment < resumed) for end, resumed in self._ends()
        )

    def _stop_placed_late(
        self,
        conversation: str | None,
        spawn_key: str | None,
        at: datetime,
        fact: str,
        went_on: str | None,
    ) -> None:
        """A child just placed or re-dated, starting at ``at``, under a root whose session
        had already ended by then (a start read late): it stops with its root, at the first
        end at or after its start, for good or provisionally as that end was
        (:meth:`end_session` would have stopped it there). A child starting after every end
        stays live while its root is (its stop is its own), and is stopped at its start while
        its root's session has ended for good, as a known child's late act changes nothing
        then. A re-dated child (known from ``went_on`` until now)
        is :meth:`_stop_redated`."""
        found = self._find(conversation, spawn_key)
        root = self.nodes[self.conversation]
        if found is None or root["status"] == DELETED:
            return
        if went_on is not None:
            self._stop_redated(found, _stamp(at), went_on, fact)
            return
        if found[2]["status"] != LIVE:
            return
        started = _stamp(at)
        end = self._final_end(started)
        if end is not None:
            self._stop_with_root(found, end, fact)
        elif (
            root["status"] == STOPPED
            and root.get("provisional")
            and root.get("stopped", "") >= started
        ):
            self._stop_found(found, root["stopped"], fact, provisional=True, cascade=True)
        elif _final(root):
            # Placed after its root's session ended for good, with no resume since: a start
            # delivered late (hooks run apart). It does not outlive the end: placed, stopped.
            self._stop_found(found, at, fact, provisional=False, cascade=True)

    def _stop_redated(
        self,
        found: tuple[str | None, str | None, dict[str, Any]],
        started: str,
        went_on: str,
        fact: str,
    ) -> None:
        """A child known from ``went_on`` was just re-dated to ``started``. Only an end for
        good between the two is new to it (it was placed after the others, or they stopped
        it then, and whatever it did since stands; after a provisional stop, it went on past
        it): it stops there, and ``went_on`` resumes it as its own fact then would
        (:meth:`_resume_within_ends`). When that act resumes it (it came after the root's
        resume), the stop is held in the past (:meth:`_hold`): what the child did from
        ``went_on`` on (its stops and resumes since, the root's later ends) stands as
        journaled. Otherwise it stays stopped at the end (its act came while the session had
        ended), and a child stopped before ``went_on`` is stopped again as that stop found
        it: its stop and its start give the same history in either order of arrival.

        Stops are journaled after the re-dating event, which alone places the child in a view
        up to a time before ``went_on`` (time travel,
        :meth:`lineage_es.engine.engine.Engine.as_of`): a stop of its own dated before ``went_on``
        is journaled again too, so that such a view has it stopped there, as the aggregate
        has it."""
        node = found[2]
        if node["status"] == DELETED:
            return
        stop: tuple[str, bool, bool] | None = None
        if node["status"] != LIVE:
            if "stopped" not in node:  # stopped before stops kept their time
                return
            stop = (node["stopped"], bool(node.get("provisional")), bool(node.get("cascade")))
        end = self._final_end(started)
        if end is not None and end < went_on:
            name = found[0] if found[0] is not None else found[1]
            assert name is not None
            if (stop is None or stop[0] >= went_on) and not self._while_ended(went_on):
                self._hold(found, name, end, went_on, fact)
                return
            self._stop_with_root(found, end, fact)
            self._resume_within_ends(found, name, end, datetime.fromisoformat(went_on), fact)
            if node["status"] != LIVE:
                return
        elif stop is None or stop[0] >= went_on:
            return
        if stop is not None:
            self._stop_found(found, stop[0], fact, provisional=stop[1], cascade=stop[2])

    def _hold(
        self,
        found: tuple[str | None, str | None, dict[str, Any]],
        name: str,
        end: str,
        went_on: str,
        fact: str,
    ) -> None:
        """A re-dated child, live or stopped since ``went_on``, was held to its root's session
        end ``end`` (for good, before ``went_on``) until its act at ``went_on`` resumed it,
        after the root's resume. Journaled as a stop held in the past (:class:`Stopped` with
        ``until``) and the resume that ends it (``restores``): neither changes the node, so
        every stop and resume it had from ``went_on`` on stands, in the current view and in
        a view replayed up to any time after ``went_on``; a view up to a time between the two
        has it stopped at the end."""
        self._stop_found(found, end, fact, provisional=False, cascade=True, until=went_on)
        self._trigger(
            self.Resumed, datetime.fromisoformat(went_on), fact, conversation=name, restores=True
        )

    def _cap(
        self,
        found: tuple[str | None, str | None, dict[str, Any]],
        end: str,
        fact: str,
        reported: bool,
    ) -> bool:
        """Stop a node of a root whose session ended for good at ``end`` there, not at a
        later stop: a live node that started by then; a node stopped provisionally before
        it, when the later stop is its own (it went on, up to the end at most: resumed from
        its stop first); a node stopped provisionally at or after the end (kept there).
        Whether the stop was dealt with (a reported stop leaves an earlier provisional stop
        where it was); ``False`` leaves it to :meth:`stop` (a node placed after the end, one
        stopped for good)."""
        node = found[2]
        moment = datetime.fromisoformat(end)
        if node["status"] == LIVE:
            if _earlier(moment, node.get("started")):
                return False  # started after its root's end: its stop is its own
        elif _later(node, moment):
            if reported:
                return True
            self._take_back(found, fact)
        elif not _past(node, end):
            return False
        self._stop_with_root(found, end, fact)
        return True

    def _stop_with_root(
        self, found: tuple[str | None, str | None, dict[str, Any]], end: str, fact: str
    ) -> None:
        """Stop a descendant for good at its root's session end ``end``."""
        self._stop_found(found, end, fact, provisional=False, cascade=True)

    def _stop_found(
        self,
        found: tuple[str | None, str | None, dict[str, Any]],
        at: datetime | str,
        fact: str,
        *,
        provisional: bool,
        cascade: bool,
        until: str | None = None,
    ) -> None:
        """Journal a stop of the node ``found`` (named by its conversation, or by its spawn key
        while pending) at ``at``."""
        self._trigger(
            self.Stopped,
            datetime.fromisoformat(at) if isinstance(at, str) else at,
            fact,
            conversation=found[0],
            spawn_key=found[1],
            provisional=provisional,
            cascade=cascade,
            until=until,
        )

    def _take_back(self, found: tuple[str | None, str | None, dict[str, Any]], fact: str) -> None:
        """Resume a node from its provisional stop, which a later stop moves."""
        conversation, spawn_key, node = found
        name = conversation if conversation is not None else spawn_key
        stopped = datetime.fromisoformat(node["stopped"])
        self._trigger(self.Resumed, stopped, fact, conversation=name)

    def rename(self, conversation: str, name: str, *, at: datetime, fact: str = "") -> None:
        """Name a node: a conversation, or a pending child by its spawn key (the name stays
        with the node when its conversation becomes known)."""
        found = self._find(conversation, None)
        if found is not None and found[2]["status"] != DELETED:
            self._trigger(
                self.Renamed, at, fact, conversation=found[0], spawn_key=found[1], name=name
            )

    def delete(self, conversation: str, reason: str, *, at: datetime, fact: str = "") -> None:
        """Delete a node and, recorded as ``parent-teardown``, its whole subtree."""
        node = self.nodes.get(conversation)
        if node is None:
            pending = self.pending.get(conversation)
            if pending is not None and pending["status"] != DELETED:
                self._delete(None, conversation, reason, at, fact)
            return
        if node["status"] != DELETED:
            self._delete(conversation, None, reason, at, fact)

    # -- internals ------------------------------------------------------------------------

    def _delete(
        self, conversation: str | None, spawn_key: str | None, reason: str, at: datetime, fact: str
    ) -> None:
        top = conversation if conversation is not None else spawn_key
        assert top is not None
        first = True
        for sub_conversation, sub_key in self._subtree(top):
            found = self._find(sub_conversation, sub_key)
            if found is None or found[2]["status"] == DELETED:
                continue
            self._trigger(
                self.Deleted,
                at,
                fact,
                conversation=found[0],
                spawn_key=found[1],
                reason=reason if first else "parent-teardown",
            )
            first = False

    def _settle(self, at: datetime, fact: str) -> None:
        """Place the children whose stated parent was refused (unknown, or at a depth that
        contradicted the fact's) and now fits: known in this root, not deleted, at the stated
        depth minus one. Each is given its remembered fact again, as if it arrived now (it
        may correct an edge no stronger than it; it starts nothing: no re-dating), so a
        child placed under its parent can let its own waiting children in, in turn."""
        tried: set[str] = set()
        while True:
            waiting = next(
                (
                    (child, stated)
                    for child, stated in self.stated.items()
                    if child not in tried and self._fits(child, stated)
                ),
                None,
            )
            if waiting is None:
                return
            child, stated = waiting
            tried.add(child)
            self._identify(
                stated["parent"],
                child,
                resolution=stated["resolution"],
                spawn_key=stated["spawn_key"],
                depth=stated["depth"],
                agent_type=stated.get("agent_type"),  # none kept before version 3 events
                subagent_id=None,
                description=stated.get("description"),
                at=at,
                fact=fact,
                redate=False,
            )

    def _fits(self, child: str, stated: dict[str, Any]) -> bool:
        """Whether a child's remembered parent can now be given to it."""
        node = self.nodes.get(child)
        parent = self.nodes.get(stated["parent"])
        if node is None or parent is None or DELETED in (node["status"], parent["status"]):
            return False
        if stated["depth"] is not None and stated["depth"] != parent["depth"] + 1:
            return False
        return bool(node["parent"] != stated["parent"] or node["ambiguous"])

    def _started(self, conversation: str) -> str | None:
        """When a node started (its earliest placing fact); ``None`` when unknown (a child
        restored from a version-2 snapshot)."""
        started: str | None = self.nodes[conversation].get("started")
        if started is None and conversation == self.conversation:
            return _stamp(self.created_on)
        return started

    def _reject_depth(
        self,
        parent: str,
        child: str,
        depth: int,
        expected: int,
        at: datetime,
        fact: str,
        resolution: str,
        spawn_key: str | None,
        *,
        agent_type: str | None,
        description: str | None,
    ) -> None:
        self._trigger(
            self.EdgeRejected,
            at,
            fact,
            conversation=child,
            parent=parent,
            reason="depth",
            detail=f"stated depth {depth}, but {parent!r} is at depth {expected - 1}",
            depth=depth,
            resolution=resolution,
            spawn_key=spawn_key,
            agent_type=agent_type,
            description=description,
        )
        if child not in self.nodes:
            self._trigger(
                self.ChildPlaced,
                at,
                fact,
                conversation=child,
                spawn_key=None,
                parent=None,
                depth=max(depth, 1),
                resolution="inferred",
                ambiguous=True,
                agent_type=None,
                subagent_id=child,
                description=None,
            )

    def _trigger(self, event_class: type[Any], at: datetime, fact: str, **kwargs: Any) -> None:
        placing = event_class in (self.ChildPlaced, self.ChildRedated)
        known = self.nodes.get(kwargs["conversation"] or "", {}) if placing else {}
        went_on: str | None = known.get("started")  # a re-dated child's start until now
        self.trigger_event(event_class, timestamp=at, fact=fact, **kwargs)
        if placing:  # no node outlives its root's session end
            self._stop_placed_late(kwargs["conversation"], kwargs["spawn_key"], at, fact, went_on)

    def _find(
        self, conversation: str | None, spawn_key: str | None
    ) -> tuple[str | None, str | None, dict[str, Any]] | None:
        """The node named by conversation or spawn key, as (conversation, pending key, node):
        exactly one of the first two is set."""
        if conversation is not None and conversation in self.nodes:
            return conversation, None, self.nodes[conversation]
        if spawn_key is not None:
            if spawn_key in self.pending:
                return None, spawn_key, self.pending[spawn_key]
            claimed = self.spawns.get(spawn_key, {}).get("claimed")
            if claimed and claimed in self.nodes:
                return claimed, None, self.nodes[claimed]
            for name, node in self.nodes.items():
                if node["spawn"] == spawn_key:
                    return name, None, node
        if conversation is not None and conversation in self.pending:
            return None, conversation, self.pending[conversation]
        return None

    def _claimed(self, spawn_key: str) -> bool:
        spawn = self.spawns.get(spawn_key)
        return bool(spawn and spawn["claimed"])

    def _spawn_type(self, spawn_key: str) -> str | None:
        spawn = self.spawns.get(spawn_key)
        return None if spawn is None else spawn.get("agent_type")

    def _retyped(
        self,
        spawn_key: str | None,
        agent_type: str | None,
        description: str | None,
        *,
        settled: bool = False,
    ) -> dict[str, Any]:
        """What a child moved to spawn ``spawn_key`` is: the type and description the fact
        states, else that spawn's (its request's; unknown for a spawn never requested, or
        requested before requests kept a description). Nothing when it keeps its spawn, but
        for a child ``settled`` under the parent its fact stated (:meth:`_settle`) that states
        a type or description with no spawn: it is what the fact states, as it would have
        been placed had its parent been known in time."""
        if spawn_key is None:
            if settled and (agent_type is not None or description is not None):
                return {"agent_type": agent_type, "description": description, "retyped": True}
            return {}
        spawn = self.spawns.get(spawn_key) or {}
        return {
            "agent_type": agent_type or spawn.get("agent_type"),
            "description": description or spawn.get("description"),
            "retyped": True,
        }

    def _children(self) -> dict[str, list[tuple[str | None, str | None]]]:
        """The nodes directly below each node, as (conversation, pending key). A node with no
        parent edge other than the root (placed ambiguous: spawns of different parents were
        open, a depth contradiction, an unknown parent) hangs from the root: it is the root's
        descendant all the same, so a session end or a delete of the root reaches it."""
        children: dict[str, list[tuple[str | None, str | None]]] = {}
        for name, node in self.nodes.items():
            if node["parent"] is not None:
                children.setdefault(node["parent"], []).append((name, None))
            elif name != self.conversation:
                children.setdefault(self.conversation, []).append((name, None))
        for key, node in self.pending.items():
            if node["parent"] is not None:
                children.setdefault(node["parent"], []).append((None, key))
        return children

    def _subtree(self, top: str) -> list[tuple[str | None, str | None]]:
        """``top`` and its descendants, parents before children, as (conversation, key)."""
        children = self._children()
        first: tuple[str | None, str | None] = (top, None) if top in self.nodes else (None, top)
        order: list[tuple[str | None, str | None]] = []
        stack = [first]
        seen: set[tuple[str | None, str | None]] = set()
        while stack:
            item = stack.pop()
            if item in seen:
                continue
            seen.add(item)
            order.append(item)
            if item[0] is not None:
                stack.extend(reversed(children.get(item[0], [])))
        return order

    def _subtree_depths(self, top: str, depth: int) -> dict[str, int]:
        children = self._children()
        depths: dict[str, int] = {}
        stack = [(top, depth)]
        while stack:
            name, d = stack.pop()
            if name in depths:
                continue
            depths[name] = d
            stack.extend((c, d + 1) for c, _ in children.get(name, []) if c is not None)
        return depths

    def _is_ancestor(self, ancestor: str, node: str) -> bool:
        current: str | None = node
        hops = 0
        while current is not None and hops <= len(self.nodes):
            if current == ancestor:
                return True
            current = self.nodes.get(current, {}).get("parent")
            hops += 1
        return False


def _stamp(moment: datetime) -> str:
    """A time as the aggregate keeps it: UTC ISO, so it compares as a time."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _later(node: dict[str, Any], at: datetime) -> bool:
    """Whether the node stopped provisionally before ``at``."""
    stopped = node.get("stopped")
    return (
        node["status"] == STOPPED
        and bool(node.get("provisional"))
        and stopped is not None
        and _stamp(at) > stopped
    )


def _with_root_after(node: dict[str, Any], at: datetime) -> bool:
    """Whether the node stopped provisionally with its root (its root's record ended), after
    ``at``: a stop of its own at ``at``, read late, comes first."""
    stopped = node.get("stopped")
    return (
        node["status"] == STOPPED
        and bool(node.get("provisional") and node.get("cascade"))
        and stopped is not None
        and _stamp(at) < stopped
    )


def _replaced(node: dict[str, Any], at: datetime, provisional: bool) -> bool:
    """Whether a stop at ``at`` replaces the node's provisional stop: a stop after it, or a
    stop for good at its very time (the real end wins)."""
    return _later(node, at) or (
        not provisional
        and node["status"] == STOPPED
        and bool(node.get("provisional"))
        and node.get("stopped") == _stamp(at)
    )


def _final(node: dict[str, Any]) -> bool:
    """Whether the node is stopped for good at a known time."""
    return node["status"] == STOPPED and not node.get("provisional") and "stopped" in node


def _past(node: dict[str, Any], end: str) -> bool:
    """Whether the node stopped provisionally at or after its root's session end ``end``."""
    stopped = node.get("stopped")
    return (
        node["status"] == STOPPED
        and bool(node.get("provisional"))
        and stopped is not None
        and stopped >= end
    )


def _earlier(moment: datetime, started: str | None) -> bool:
    """Whether ``moment`` is before a node's start; true when the start is unknown (the view
    keeps the earlier of the two)."""
    return started is None or _stamp(moment) < started


def _node(aggregate: Any, conversation: str | None, spawn_key: str | None) -> dict[str, Any]:
    if conversation is not None:
        node: dict[str, Any] = aggregate.nodes[conversation]
        return node
    pending: dict[str, Any] = aggregate.pending[spawn_key]
    return pending


def _release(aggregate: Any, spawn_key: str | None, claimant: str) -> None:
    """Give a spawn back, unless another child has claimed it since."""
    spawn = aggregate.spawns.get(spawn_key) if spawn_key is not None else None
    if spawn is not None and spawn["claimed"] == claimant:
        spawn["claimed"] = None


def _claim(aggregate: Any, spawn_key: str | None, claimant: str) -> None:
    if spawn_key is None:
        return
    spawn = aggregate.spawns.get(spawn_key)
    if spawn is not None:
        spawn["claimed"] = claimant or None


class _EventClasses(dict[str, type[Any]]):
    """The event class of each journal topic. The import ledger's classes
    (:mod:`lineage_es.domain.ledger`) are defined on first lookup of one of its topics: only
    ``lineage import`` writes those events, and a hook process need not build them."""

    def __contains__(self, topic: object) -> bool:
        return dict.__contains__(self, topic) or topic in LEDGER_TOPICS

    def __missing__(self, topic: str) -> type[Any]:
        if topic in LEDGER_TOPICS:
            import lineage_es.domain.ledger  # noqa: F401 (adds its classes here)

            if dict.__contains__(self, topic):
                return dict.__getitem__(self, topic)
        raise KeyError(topic)

    def get(self, topic: str, default: Any = None) -> Any:
        try:
            return self[topic]
        except KeyError:
            return default


#: The topics of :class:`lineage_es.domain.ledger.ImportLedger`'s events.
LEDGER_TOPICS = frozenset(
    (
        "lineage:ImportLedger.Opened",
        "lineage:ImportLedger.FilesRead",
        "lineage:ImportLedger.FilesForgotten",
    )
)

EVENT_CLASSES: dict[str, type[Any]] = _EventClasses(
    (cls.TOPIC, cls)
    for cls in (
        ConversationIndex.Created,
        ConversationIndex.Moved,
        RootLineage.Created,
        RootLineage.RootRedated,
        RootLineage.Resumed,
        RootLineage.SpawnRequested,
        RootLineage.ChildPlaced,
        RootLineage.ChildRedated,
        RootLineage.ChildBound,
        RootLineage.BindingUndone,
        RootLineage.SubtreeMoved,
        RootLineage.ChildAdopted,
        RootLineage.SeenAdopted,
        RootLineage.EdgeConfirmed,
        RootLineage.EdgeCorrected,
        RootLineage.EdgeRejected,
        RootLineage.Stopped,
        RootLineage.Renamed,
        RootLineage.Deleted,
        RootLineage.WorkspaceLearned,
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
