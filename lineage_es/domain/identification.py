"""A fact names a child's parent: place the child, confirm or correct its edge, or refuse it.

A weaker resolution never overrides a stronger one; an edge that would make a cycle is refused
for good; a parent that cannot be placed yet (unknown, or at a depth that contradicts the
fact's) is remembered, and the child is placed under it once it fits
(:meth:`IdentificationRules._place_waiting_children`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from lineage_es.domain import edge_events, events
from lineage_es.domain.nodes import DELETED, before_start
from lineage_es.domain.stops import StopRules
from lineage_es.facts import RESOLUTION_STRENGTH, ChildIdentified


class IdentificationRules(StopRules):
    """Placing, confirming, correcting and refusing the edges facts state."""

    def apply_identified(self, edge: ChildIdentified, *, at: datetime, fact: str) -> None:
        """A fact names a child's parent: place, confirm or correct. A known child under the
        same parent that the fact shows started earlier is re-dated. A parent that cannot be
        placed yet (unknown, or at a depth that contradicts the fact's) is remembered;
        whatever this fact placed may be the parent another child waits for
        (:meth:`_place_waiting_children`)."""
        self._identify(edge, at, fact)
        self._place_waiting_children(at, fact)

    def _identify(
        self, edge: ChildIdentified, at: datetime, fact: str, *, redate: bool = True
    ) -> None:
        """Apply one stated edge (``redate``: a child it shows started earlier is re-dated)."""
        parent, child = edge.parent, edge.child
        parent_node = self.nodes.get(parent)
        if parent_node is None or parent_node["status"] == DELETED:
            if child not in self.nodes:
                self._place_ambiguous(child, at, fact)
            detail = f"{parent!r} is not a node of root {self.conversation!r}"
            self._refuse_for_now(edge, "unknown-parent", detail, at, fact)
            return
        expected_depth = parent_node["depth"] + 1
        if edge.depth is not None and edge.depth != expected_depth:
            detail = f"stated depth {edge.depth}, but {parent!r} is at depth {expected_depth - 1}"
            self._refuse_for_now(edge, "depth", detail, at, fact)
            if child not in self.nodes:
                self._place_ambiguous(child, at, fact, depth=max(edge.depth, 1))
            return
        spawn_key = edge.spawn_key
        if spawn_key is not None and spawn_key in self.pending and child not in self.nodes:
            self._emit(
                events.ChildBound,
                at,
                fact,
                spawn_key=spawn_key,
                conversation=child,
                resolution=edge.resolution,
            )
            return
        node = self.nodes.get(child)
        if node is None:
            self._place(
                events.ChildPlaced,
                at,
                fact,
                conversation=child,
                spawn_key=spawn_key,
                parent=parent,
                depth=expected_depth,
                resolution=edge.resolution,
                ambiguous=False,
                agent_type=edge.agent_type or self._spawn_type(spawn_key),
                subagent_id=edge.subagent_id or child,
                description=edge.description,
            )
            return
        if node["status"] == DELETED or child == self.conversation:
            return
        if node["parent"] == parent and not node["ambiguous"]:
            self._confirm(edge, node, at, fact, redate=redate)
            return
        if RESOLUTION_STRENGTH[edge.resolution] < RESOLUTION_STRENGTH[node["resolution"]]:
            return
        if self._is_ancestor(child, parent):
            self._emit(
                edge_events.EdgeRejected,
                at,
                fact,
                conversation=child,
                parent=parent,
                reason="cycle",
                detail=f"{parent!r} descends from {child!r}",
            )
            return
        self._correct(edge, node, expected_depth, at, fact, settled=not redate)

    def _confirm(
        self, edge: ChildIdentified, node: dict[str, Any], at: datetime, fact: str, *, redate: bool
    ) -> None:
        """The fact states the child's edge as it stands: a stronger resolution or another
        spawn of the same parent confirms it; an earlier time re-dates the child."""
        child = edge.child
        new_key = edge.spawn_key if edge.spawn_key != node["spawn"] else None
        stronger = RESOLUTION_STRENGTH[edge.resolution] > RESOLUTION_STRENGTH[node["resolution"]]
        if stronger or new_key is not None:
            self._emit(
                edge_events.EdgeConfirmed,
                at,
                fact,
                conversation=child,
                spawn_key=new_key,
                resolution=edge.resolution if stronger else node["resolution"],
                released=node["spawn"] if new_key is not None else None,
                **self._retyped(new_key, edge.agent_type, edge.description),
            )
        if redate and before_start(at, node.get("started")):
            self._place(
                events.ChildRedated,
                at,
                fact,
                conversation=child,
                spawn_key=node["spawn"],
                parent=edge.parent,
                depth=node["depth"],
                resolution=node["resolution"],
                ambiguous=False,
                agent_type=edge.agent_type or self._spawn_type(node["spawn"]),
                subagent_id=edge.subagent_id or child,
                description=edge.description,
            )

    def _correct(
        self,
        edge: ChildIdentified,
        node: dict[str, Any],
        depth: int,
        at: datetime,
        fact: str,
        *,
        settled: bool,
    ) -> None:
        """The fact contradicts the child's edge, no weaker than it: the child moves under
        the stated parent at ``depth``, with its subtree."""
        new_key = edge.spawn_key if edge.spawn_key != node["spawn"] else None
        released = node["spawn"] if node["spawn"] != edge.spawn_key else None
        claimed: str | None = None
        if new_key is None:  # no other spawn stated: none given back for one
            released = None
            if edge.spawn_key is None:  # the fact states a parent, not a spawn
                released, claimed = self._respawned(node["spawn"], edge.parent)
        self._emit(
            edge_events.EdgeCorrected,
            at,
            fact,
            conversation=edge.child,
            parent=edge.parent,
            previous=node["parent"],
            spawn_key=new_key,
            released=released,
            resolution=edge.resolution,
            depths=self._subtree_depths(edge.child, depth),
            claimed=claimed,
            **self._retyped(new_key or claimed, edge.agent_type, edge.description, settled),
        )

    def _refuse_for_now(
        self, edge: ChildIdentified, reason: str, detail: str, at: datetime, fact: str
    ) -> None:
        """Refuse the stated parent for a reason a later fact can make good: the event keeps
        what the fact stated, so the child is placed under it once it fits."""
        self._emit(
            edge_events.EdgeRejected,
            at,
            fact,
            conversation=edge.child,
            parent=edge.parent,
            reason=reason,
            detail=detail,
            depth=edge.depth,
            resolution=edge.resolution,
            spawn_key=edge.spawn_key,
            agent_type=edge.agent_type,
            description=edge.description,
        )

    def _respawned(self, spawn_key: str | None, parent: str) -> tuple[str | None, str | None]:
        """The spawns of a child moved to ``parent`` by a fact stating no spawn, as
        (released, claimed). The spawn it holds (``spawn_key``, taken by order) is given back
        when another node requested it: the child is not that node's, so the spawn was never
        its own, and is open again for that node's next child. A child left with no spawn of
        ``parent`` takes the one spawn ``parent`` has open, if exactly one (a child of
        ``parent`` with no known spawn, and one spawn of it with no known child: the ordering
        rule's own reading, no guess); with several open it takes none (which one is its own
        cannot be told), and they stay open for the next child of ``parent``."""
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

    def _retyped(
        self,
        spawn_key: str | None,
        agent_type: str | None,
        description: str | None,
        settled: bool = False,
    ) -> dict[str, Any]:
        """What a child moved to spawn ``spawn_key`` is: the type and description the fact
        states, else that spawn's (its request's; unknown for a spawn never requested, or
        requested without a description). Nothing when it keeps its spawn, but for a child
        ``settled`` under the parent its fact stated (:meth:`_place_waiting_children`) that
        states a type or description with no spawn: it is what the fact states, as it would
        have been placed had its parent been known in time."""
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

    def _place_waiting_children(self, at: datetime, fact: str) -> None:
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
                    if child not in tried and self._stated_parent_fits(child, stated)
                ),
                None,
            )
            if waiting is None:
                return
            child, stated = waiting
            tried.add(child)
            edge = ChildIdentified(
                parent=stated["parent"],
                child=child,
                resolution=stated["resolution"],
                spawn_key=stated["spawn_key"],
                depth=stated["depth"],
                agent_type=stated.get("agent_type"),  # kept by newer rejections only
                subagent_id=None,
                description=stated.get("description"),
            )
            self._identify(edge, at, fact, redate=False)

    def _stated_parent_fits(self, child: str, stated: dict[str, Any]) -> bool:
        """Whether a child's remembered parent can now be given to it."""
        node = self.nodes.get(child)
        parent = self.nodes.get(stated["parent"])
        if node is None or parent is None or DELETED in (node["status"], parent["status"]):
            return False
        if stated["depth"] is not None and stated["depth"] != parent["depth"] + 1:
            return False
        return bool(node["parent"] != stated["parent"] or node["ambiguous"])

    def _place_ambiguous(self, child: str, at: datetime, fact: str, depth: int = 1) -> None:
        """Place ``child`` under the root with no parent edge: its parent cannot be told."""
        self._place(
            events.ChildPlaced,
            at,
            fact,
            conversation=child,
            spawn_key=None,
            parent=None,
            depth=depth,
            resolution="inferred",
            ambiguous=True,
            agent_type=None,
            subagent_id=child,
            description=None,
        )

    def _place(self, event_class: type[Any], at: datetime, fact: str, **kwargs: Any) -> None:
        """Journal a placing event (``ChildPlaced``, ``ChildRedated``); a child placed or
        re-dated to before its root's session ended stops with it: no node outlives its
        root's session end."""
        known = self.nodes.get(kwargs["conversation"] or "", {})
        went_on: str | None = known.get("started")  # a re-dated child's start until now
        self._emit(event_class, at, fact, **kwargs)
        self._stop_if_placed_after_end(
            kwargs["conversation"], kwargs["spawn_key"], at, fact, went_on
        )

    def _spawn_type(self, spawn_key: str | None) -> str | None:
        """The agent type spawn ``spawn_key`` was requested with, if known."""
        spawn = self.spawns.get(spawn_key) if spawn_key is not None else None
        return None if spawn is None else spawn.get("agent_type")
