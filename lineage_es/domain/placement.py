"""Spawn requests, pending children, and placing a child by ordering alone.

A spawn request is a candidate owner for the next child that starts without naming its
parent; a child started under a known parent whose own conversation is not known yet is
pending, named by its spawn key, until a fact (or the order of events) binds it. Where
spawns of different parents are open, nothing is guessed: the child hangs from the root,
ambiguous.
"""

from __future__ import annotations

from datetime import datetime

from lineage_es.domain import events
from lineage_es.domain.identification import IdentificationRules
from lineage_es.domain.nodes import DELETED, LIVE


class PlacementRules(IdentificationRules):
    """Spawns, pending children, binding, and placement by order."""

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
        """``parent`` asked for a child (a request of a node this root does not hold, or one
        already known, changes nothing)."""
        if spawn_key in self.spawns or parent not in self.nodes:
            return
        self._emit(
            events.SpawnRequested,
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
        if spawn_key in self.pending or self._spawn_claimed(spawn_key):
            return
        self._place(
            events.ChildPlaced,
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
        self._place(
            events.ChildPlaced,
            at,
            fact,
            conversation=child,
            spawn_key=spawn_key,
            parent=parent,
            depth=depth,
            resolution="inferred",
            ambiguous=ambiguous,
            agent_type=agent_type or self._spawn_type(spawn_key or None),
            subagent_id=subagent_id or child,
            description=description,
        )
        self._place_waiting_children(at, fact)

    def bind_pending(self, spawn_key: str, child: str, *, at: datetime, fact: str) -> None:
        """A pending child's conversation became known by ordering alone."""
        if spawn_key in self.pending and child not in self.nodes:
            self._emit(
                events.ChildBound,
                at,
                fact,
                spawn_key=spawn_key,
                conversation=child,
                resolution="inferred",
            )
            self._place_waiting_children(at, fact)

    def place_ambiguous(self, child: str, *, at: datetime, fact: str) -> None:
        """A child of this root whose parent cannot be chosen without guessing."""
        if child not in self.nodes:
            self._place_ambiguous(child, at, fact)
            self._place_waiting_children(at, fact)

    def _spawn_claimed(self, spawn_key: str) -> bool:
        """Whether a child has taken spawn ``spawn_key``."""
        spawn = self.spawns.get(spawn_key)
        return bool(spawn and spawn["claimed"])
