"""Routing across roots: which root aggregate an observation belongs to.

A conversation lives in one root. An observation naming its root goes there (starting it when
new); one naming none is routed by the index, starts a root when it may, follows a parent it
names, or is bound by order to a pending start in its workspace. A conversation bound by order
that turns out to be a root is unbound and takes what was placed under it along. Routing reads
the tree view (caught up before every unit) to answer those questions across roots.
"""

from __future__ import annotations

from datetime import datetime

from lineage_es.domain.root import RootLineage
from lineage_es.domain.seen_events import seen_due
from lineage_es.engine.unit import UnitOfWork
from lineage_es.facts import Acted, ChildIdentified, Observation, RootSeen, SessionEnded
from lineage_es.read.peers import same_workspace
from lineage_es.read.queries import Queries
from lineage_es.read.view import ViewStore


def may_start_root(observation: Observation) -> bool:
    """Whether the observation may start a root for its requester when it names no root:
    only a root-only event may (a ``RootSeen`` of the requester, or its session's end). Any
    other observation from a conversation no root holds is a child not bound yet
    (:meth:`Router.bind_by_start_order`), not a root."""
    return any(
        isinstance(fact, (RootSeen, SessionEnded)) and fact.conversation == observation.requester
        for fact in observation.facts
    )


def root_of_named_parent(observation: Observation, unit: UnitOfWork) -> RootLineage | None:
    """The root of the parent an unrooted requester names for itself, when the journal knows
    that parent: a transcript header that states its own parent but not its root session (a
    grandchild's) is placed by that statement, never guessed by order or dropped."""
    for fact in observation.facts:
        if isinstance(fact, ChildIdentified) and fact.child == observation.requester:
            routed = unit.root_of(fact.parent)
            if routed is not None:
                return unit.get_root(routed)
    return None


class Router:
    """Routes observations to their root aggregates, reading the tree view for what lies
    outside any one root (pending starts in a workspace, which nodes are live)."""

    def __init__(self, view: ViewStore, queries: Queries) -> None:
        self.view = view
        #: The engine's queries over ``view``; the engine replaces them when it rebuilds.
        self.queries = queries

    def only_live_nodes_acted(self, observation: Observation, at: datetime) -> bool:
        """Whether the observation, at ``at``, only says that live nodes of its root acted,
        which journals nothing: then its root aggregate is not even loaded (most hook payloads
        are prompts and tool calls of live agents). The view was just caught up; a stop
        another writer journals meanwhile is simply ordered after this observation. A node
        not heard of for a while is due a ``Seen`` (:func:`seen_due`): the root decides."""
        acted = [fact for fact in observation.facts if isinstance(fact, Acted)]
        if not acted or len(acted) != len(observation.facts):
            return False
        anchor = observation.root if observation.root is not None else observation.requester
        assert anchor is not None
        anchor_row = self.queries.find(anchor, observation.host)
        if anchor_row is None:
            return False
        if (
            observation.workspace
            and not anchor_row.workspace
            and anchor_row.is_root
            and anchor_row.conversation == observation.requester
        ):
            return False  # a root learns the workspace it was first seen without
        for fact in acted:
            conversation = fact.conversation
            row = (
                anchor_row
                if conversation == anchor
                else self.queries.find(conversation, observation.host)
            )
            if (
                row is None
                or row.status != "live"
                or row.conversation != conversation
                or row.root_id != anchor_row.root_id
                or seen_due(row.last_seen, at)
            ):
                return False
        return True

    def route(self, observation: Observation, unit: UnitOfWork) -> RootLineage | None:
        """The root aggregate this observation belongs to, creating or re-binding as the
        rules say; ``None`` when it cannot be placed without guessing."""
        requester = observation.requester
        assert requester is not None
        seen = next(
            (
                f
                for f in observation.facts
                if isinstance(f, RootSeen) and f.conversation == requester
            ),
            None,
        )
        source = seen.source if seen is not None else "implied"
        if observation.root is not None:
            conversation = unit.root_of(observation.root) or observation.root
            return unit.get_root(conversation) or unit.start_root(
                conversation, source, observation.workspace
            )
        routed = unit.root_of(requester)
        if routed is not None:
            root = unit.get_root(routed)
            if root is not None and seen is not None and routed != requester:
                return self.unbind(root, requester, source, observation, unit)
            return root
        if seen is not None:
            return unit.start_root(requester, source, observation.workspace)
        if any(
            isinstance(f, SessionEnded) and f.conversation == requester for f in observation.facts
        ):
            return None  # the end of a session never seen: nothing to stop, nobody to bind
        named = root_of_named_parent(observation, unit)
        if named is not None:
            return named
        return self.bind_by_start_order(observation, unit)

    @staticmethod
    def unbind(
        root: RootLineage, requester: str, source: str, observation: Observation, unit: UnitOfWork
    ) -> RootLineage:
        """``requester``, bound in ``root`` by order, acted as a root: the binding is undone
        and it starts a root of its own. What facts placed under it by naming their parent
        moves with it, from ``root``'s aggregate to its own (the subtree leaves one with
        :meth:`RootLineage.move_subtree`, the other adopts it, and the index entries of its
        conversations move along); what was placed under it by order alone is revoked."""
        leaving = root.move_subtree(requester, at=unit.at, fact=unit.key)
        root.undo_binding(requester, at=unit.at, fact=unit.key)
        unit.moves[requester] = requester
        # Its root starts now, not at its first child's start: until this very fact it was
        # the other root's child, and a view as of any earlier time must show it so, once.
        own = unit.start_root(requester, source, observation.workspace)
        if any(leaving.values()):  # nodes, spawn requests, or the keys of facts seen since
            shown = {
                row.key: {
                    "agent_type": row.agent_type,
                    "subagent_id": row.subagent_id,
                    "description": row.description,
                    "name": row.name,
                    "started_at": row.started_at,
                    "stopped_at": row.stopped_at,
                }
                for row in unit.view.root_rows(root.id.hex)
                if row.status != "deleted"
            }
            own.adopt(root.conversation, leaving, shown, at=unit.at, fact=unit.key)
            for item in leaving["nodes"]:
                if item["conversation"] is not None:
                    unit.moves[item["conversation"]] = requester
        return own

    def bind_by_start_order(self, observation: Observation, unit: UnitOfWork) -> RootLineage | None:
        """An unknown conversation that may not start a root is a child of a pending start in
        its workspace, bound by order: when every pending start there has one parent, the
        parent is certain and it binds the one that started first (parallel children bind in
        start order). Pending starts of different parents under one root are never guessed
        between: it is placed there, ambiguous. With none, or several roots, it is not placed.

        Not placed, it journals nothing and stays unseen (HOSTS.md 3.2: no root holds it), so
        its first event after a start becomes pending binds it like any other: hooks run as
        separate processes, so a child's first event can be journaled before the parent's
        event that reports starting it. A root first seen mid-stream bound so is unbound by its
        first root-only event (:meth:`unbind`)."""
        requester = observation.requester
        assert requester is not None
        candidates = [
            row
            for row in self.view.pending(observation.host)
            if same_workspace(
                self.queries.snapshot(row.root_id).root.workspace, observation.workspace
            )
        ]
        if not candidates or len({row.root for row in candidates}) != 1:
            return None
        root = unit.get_root(candidates[0].root)
        if root is None:
            return None
        # A row keeps its ``nid`` (the position that placed it) through bindings and their
        # undoing, so it orders pending starts by when they started.
        live = set(root.pending_keys())
        keys = [
            row.spawn_key
            for row in sorted(candidates, key=lambda row: row.nid)
            if row.spawn_key in live
        ]
        if not keys:
            return None
        if len({root.pending_parent(key) for key in keys}) == 1:
            root.bind_pending(keys[0], requester, at=unit.at, fact=unit.key)
        else:
            root.place_ambiguous(requester, at=unit.at, fact=unit.key)
        return root
