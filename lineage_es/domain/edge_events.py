"""The events of a root that settle a child's edge after it was placed: a fact confirmed it
(:class:`EdgeConfirmed`), contradicted it (:class:`EdgeCorrected`, the subtree moved) or asked
for one the rules refuse (:class:`EdgeRejected`, remembered while its parent may still come).

They sit beside :mod:`lineage_es.domain.events` (module level, explicit stable topics, carried
by :class:`~lineage_es.domain.root.RootLineage` as attributes), each with its
``class_version`` and ``upcast_vN_vN+1`` steps.
"""

from __future__ import annotations

from typing import Any

from lineage_es.domain.events import RootEvent
from lineage_es.domain.nodes import WAITING_REASONS
from lineage_es.domain.state import LineageState


def _kept_type(state: dict[str, Any]) -> None:
    """Upcast a version-1 edge event: it left the child's type and description as they were."""
    state.setdefault("agent_type", None)
    state.setdefault("description", None)
    state.setdefault("retyped", False)


class EdgeConfirmed(RootEvent):
    """A fact confirmed a child's edge: a stronger resolution, or another spawn of the
    same parent (``spawn_key``, giving back ``released``). A child confirmed under another
    spawn takes what that spawn is (``retyped``: its ``agent_type`` and ``description``, or
    those the fact itself stated)."""

    TOPIC = "lineage:RootLineage.EdgeConfirmed"
    class_version = 2
    conversation: str
    spawn_key: str | None
    resolution: str
    released: str | None
    agent_type: str | None = None
    description: str | None = None
    retyped: bool = False

    upcast_v1_v2 = staticmethod(_kept_type)

    def change(self, aggregate: LineageState) -> None:
        node = aggregate.nodes[self.conversation]
        node["resolution"] = self.resolution
        if self.spawn_key is not None:
            aggregate.release_spawn(self.released, self.conversation)
            node["spawn"] = self.spawn_key
            aggregate.claim_spawn(self.spawn_key, self.conversation)
        aggregate.stated.pop(self.conversation, None)  # newer evidence for its edge


class EdgeCorrected(RootEvent):
    """A later fact contradicted a placement; ``depths`` re-places the moved subtree.

    ``spawn_key`` is the spawn the fact stated for the child, giving back ``released``; a
    child corrected under another spawn takes what that spawn is (``retyped``, as
    :class:`EdgeConfirmed`). A fact that states no spawn still moves the child off a spawn
    its old parent requested (``released``, given back on its own: the child keeps no spawn,
    and the spawn is open again for its parent's next child), and the child takes the one
    spawn of its new parent still open, if exactly one is (``claimed``: by order, as an
    inference would; never stated by the fact).
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

    upcast_v1_v2 = staticmethod(_kept_type)

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A version-2 event took no spawn by order, and gave one back only with a stated
        one (it never had ``released`` without ``spawn_key``)."""
        state.setdefault("claimed", None)
        if state.get("spawn_key") is None:
            state["released"] = None

    def change(self, aggregate: LineageState) -> None:
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
            aggregate.release_spawn(self.released, self.conversation)
            if node["spawn"] == self.released:
                node["spawn"] = None
        spawn_key = self.spawn_key if self.spawn_key is not None else self.claimed
        if spawn_key is not None:
            node["spawn"] = spawn_key
            aggregate.claim_spawn(spawn_key, self.conversation)
        aggregate.stated.pop(self.conversation, None)


class EdgeRejected(RootEvent):
    """A fact asked for an edge the rules refuse (a cycle, a depth contradiction, an
    unknown parent). It keeps what the fact stated (``depth``, ``resolution``,
    ``spawn_key``, the child's ``agent_type`` and ``description``): a parent refused as
    unknown or at a contradicting depth is remembered, and the child is placed under it, as
    the fact would have placed it, when the parent becomes known at a depth that fits. An
    event with no ``resolution`` remembers nothing."""

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

    def change(self, aggregate: LineageState) -> None:
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
