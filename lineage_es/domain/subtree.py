"""Moving a subtree between roots, undoing a wrong binding, and deleting a subtree.

A child bound to a root by order alone (a Cursor start with no parent named) may prove a root
of its own: what facts placed under it leaves with it (:meth:`SubtreeRules.move_subtree`, then
:meth:`SubtreeRules.adopt` on its own root), and its binding here is undone
(:meth:`SubtreeRules.undo_binding`).
"""

from __future__ import annotations

import itertools
from datetime import datetime
from typing import Any

from lineage_es.domain import events
from lineage_es.domain.nodes import DELETED, stamp
from lineage_es.domain.state import LineageState


class SubtreeRules(LineageState):
    """Moves, adoption, undoing a binding, and deletes."""

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
        # A node restored from a snapshot that kept no ``joined`` gives every key seen.
        for seen, lifetime in itertools.islice(self.seen.items(), top.get("joined", 0), None):
            leaving["facts" if lifetime == self.lifetime else "earlier"].append(seen)
        children = self._children()
        parents = [child]
        for parent in parents:  # grows as it goes: breadth first, parents before children
            for member in children.get(parent, []):
                conversation, node = member[0], self._located(member).node
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
            self._emit(
                events.SubtreeMoved,
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
        the facts seen there since the conversation joined it (``SeenAdopted``). ``shown``
        is what the tree view showed of each node, by how it was listed (its conversation, or
        its spawn key while pending): its type, id, description, name and times."""
        for spawn in leaving["spawns"]:
            if spawn["spawn_key"] not in self.spawns:
                self._emit(events.SpawnRequested, at, fact, **spawn)
        for item in leaving["nodes"]:
            listed = item["conversation"] if item["conversation"] is not None else item["spawn_key"]
            row = shown.get(listed, {})
            self._emit(
                events.ChildAdopted,
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
                started_at=row.get("started_at") or item["node"].get("started") or stamp(at),
                stopped_at=row.get("stopped_at"),
            )
        current, earlier = leaving.get("facts", []), leaving.get("earlier", [])
        if current or earlier:
            self._emit(
                events.SeenAdopted, at, fact, origin=origin, current=current, earlier=earlier
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
            self._delete_subtree(grandchild, key, "revoked", at, fact)
        if node["spawn"] is not None and node["spawn"] not in self.pending:
            self._emit(
                events.BindingUndone,
                at,
                fact,
                conversation=child,
                spawn_key=node["spawn"],
                resolution="native",
            )
        else:
            self._delete_subtree(child, None, "revoked", at, fact)

    def delete(self, conversation: str, reason: str, *, at: datetime, fact: str = "") -> None:
        """Delete a node (a pending child by its spawn key) and, recorded as
        ``parent-teardown``, its whole subtree."""
        node = self.nodes.get(conversation)
        if node is None:
            pending = self.pending.get(conversation)
            if pending is not None and pending["status"] != DELETED:
                self._delete_subtree(None, conversation, reason, at, fact)
            return
        if node["status"] != DELETED:
            self._delete_subtree(conversation, None, reason, at, fact)

    def _delete_subtree(
        self, conversation: str | None, spawn_key: str | None, reason: str, at: datetime, fact: str
    ) -> None:
        """Delete the node named and, as ``parent-teardown``, each node below it not deleted."""
        top = conversation if conversation is not None else spawn_key
        assert top is not None
        first = True
        for member in self._subtree(top):
            found = self._locate(*member)
            if found is None or found.node["status"] == DELETED:
                continue
            self._emit(
                events.Deleted,
                at,
                fact,
                conversation=found.conversation,
                spawn_key=found.spawn_key,
                reason=reason if first else "parent-teardown",
            )
            first = False
