"""The state of a root aggregate, the edits its events make to it, and the walks of its tree.

:class:`LineageState` is the base every part of :class:`~lineage_es.domain.root.RootLineage`
builds on: the events (:mod:`lineage_es.domain.events`) change it, the rules ask it questions.
It is a plain class, not an aggregate, so that the rule mixins and the events can be typed
against it without importing the aggregate (which imports them).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from lineage_es.domain.nodes import LIVE, Located, Node, stamp

#: A node below another, as (conversation, spawn key): one of the two is set.
Member = tuple[str | None, str | None]


class LineageState:
    """One root conversation and every node below it, as plain data.

    ``nodes`` maps a conversation to its node, ``pending`` maps the spawn key of a started
    child whose conversation is not known yet to its node, ``spawns`` keeps spawn requests
    (candidate owners of children that start without naming their parent; ``claimed`` names
    the child that took one), ``stated`` keeps the parent a fact stated for a child that
    could not be placed under it yet (an unknown parent, a depth contradiction).

    ``seen`` maps the idempotency key of each observation that changed this root to the
    ``lifetime`` it was last seen in (in the order first seen; 0 for a key taken from a root
    a subtree left, seen in an ended lifetime there). A lifetime ends whenever a node stops or
    resumes; ``began`` and ``latest`` keep, per lifetime, when it began and the last time a
    fact was seen in it (``None`` when not known). Each child node keeps ``joined``, how many
    keys ``seen`` held when it joined: the keys seen since go with it if it proves a root of
    its own (:meth:`~lineage_es.domain.subtree.SubtreeRules.move_subtree`).
    """

    host: str
    conversation: str
    workspace: list[str]
    nodes: dict[str, Node]
    stated: dict[str, dict[str, Any]]
    pending: dict[str, Node]
    spawns: dict[str, dict[str, Any]]
    spawn_seq: int
    lifetime: int
    seen: dict[str, int]
    began: list[str | None]
    latest: list[str | None]

    if TYPE_CHECKING:  # provided by eventsourcing's Aggregate, which RootLineage also is

        @property
        def created_on(self) -> datetime: ...

        def trigger_event(self, event_class: type[Any], **kwargs: Any) -> None: ...

    # -- questions the engine asks ----------------------------------------------------------

    def knows(self, conversation: str) -> bool:
        return conversation in self.nodes

    def node(self, conversation: str) -> Node | None:
        return self.nodes.get(conversation)

    def pending_keys(self) -> list[str]:
        """Spawn keys of started children whose conversation is not known, oldest first."""
        return [k for k, n in self.pending.items() if n["status"] == LIVE]

    def pending_parent(self, spawn_key: str) -> str | None:
        node = self.pending.get(spawn_key)
        return None if node is None else node["parent"]

    # -- edits the events make ----------------------------------------------------------------

    def saw(self, fact: str, at: datetime) -> None:
        """An event of the observation with key ``fact``, dated ``at``, was applied."""
        self.seen[fact] = self.lifetime
        moment = stamp(at)
        last = self.latest[-1]
        if last is None or moment > last:
            self.latest[-1] = moment

    def heard(self, event: Any) -> None:
        """An event naming a node was applied: its time is the node's last time, unless the
        node has a later one (a re-dated start). The node is the event's conversation, its
        spawn key while pending, or, for a spawn request, the parent that asked."""
        if hasattr(event, "conversation"):
            name = event.conversation or getattr(event, "spawn_key", None)
        else:
            name = getattr(event, "parent", None)
        if name is None:
            return
        moment = stamp(event.timestamp)
        times = self.heard_times()
        if name not in times or moment > times[name]:
            times[name] = moment

    def heard_times(self) -> dict[str, str]:
        """The last time an event named each node (:meth:`heard`). Made on first use: a
        snapshot older than these times holds none (a node's start stands in for it)."""
        times: dict[str, str] = self.__dict__.setdefault("heard_at", {})
        return times

    def tool_windows(self) -> dict[str, str]:
        """The MCP calls begun with no id and not returned yet (Cursor's windows), each with
        the key of the observation that opened it. Made on first use: a snapshot older than
        these windows holds none."""
        windows: dict[str, str] = self.__dict__.setdefault("open_tool_calls", {})
        return windows

    def next_lifetime(self, at: datetime) -> None:
        """A node of the root stopped or resumed at ``at``: a new lifetime begins."""
        self.lifetime += 1
        self.began.append(stamp(at))
        self.latest.append(None)

    def node_named(self, conversation: str | None, spawn_key: str | None) -> Node:
        """The node an event names: by its conversation, else (pending) by its spawn key."""
        if conversation is not None:
            return self.nodes[conversation]
        assert spawn_key is not None
        return self.pending[spawn_key]

    def add_node(self, conversation: str | None, spawn_key: str | None, node: Node) -> None:
        """A node joins: by its conversation, else (pending) by its spawn key, which it claims."""
        if conversation is None:
            assert spawn_key is not None
            self.pending[spawn_key] = node
        else:
            self.nodes[conversation] = node
        self.claim_spawn(spawn_key, conversation or "")

    def claim_spawn(self, spawn_key: str | None, claimant: str) -> None:
        """Mark spawn ``spawn_key`` taken by ``claimant`` (``""``: by a pending child)."""
        if spawn_key is None:
            return
        spawn = self.spawns.get(spawn_key)
        if spawn is not None:
            spawn["claimed"] = claimant or None

    def release_spawn(self, spawn_key: str | None, claimant: str) -> None:
        """Give a spawn back, unless another child has claimed it since."""
        spawn = self.spawns.get(spawn_key) if spawn_key is not None else None
        if spawn is not None and spawn["claimed"] == claimant:
            spawn["claimed"] = None

    # -- reading the tree ---------------------------------------------------------------------

    def _locate(self, conversation: str | None, spawn_key: str | None) -> Located | None:
        """The node named by conversation or spawn key (a pending child by either)."""
        if conversation is not None and conversation in self.nodes:
            return Located(conversation, None, self.nodes[conversation])
        if spawn_key is not None:
            if spawn_key in self.pending:
                return Located(None, spawn_key, self.pending[spawn_key])
            claimed = self.spawns.get(spawn_key, {}).get("claimed")
            if claimed and claimed in self.nodes:
                return Located(claimed, None, self.nodes[claimed])
            for name, node in self.nodes.items():
                if node["spawn"] == spawn_key:
                    return Located(name, None, node)
        if conversation is not None and conversation in self.pending:
            return Located(None, conversation, self.pending[conversation])
        return None

    def _located(self, member: Member) -> Located:
        """The node a tree walk listed (it is in the tree)."""
        found = self._locate(*member)
        assert found is not None
        return found

    def _start_of(self, conversation: str) -> str | None:
        """When a node started (its earliest placing fact); ``None`` when unknown (a child
        restored from a snapshot that kept no start)."""
        started: str | None = self.nodes[conversation].get("started")
        if started is None and conversation == self.conversation:
            return stamp(self.created_on)
        return started

    def _children(self) -> dict[str, list[Member]]:
        """The nodes directly below each node. A node with no parent edge other than the root
        (placed ambiguous: spawns of different parents were open, a depth contradiction, an
        unknown parent) hangs from the root: it is the root's descendant all the same, so a
        session end or a delete of the root reaches it."""
        children: dict[str, list[Member]] = {}
        for name, node in self.nodes.items():
            if node["parent"] is not None:
                children.setdefault(node["parent"], []).append((name, None))
            elif name != self.conversation:
                children.setdefault(self.conversation, []).append((name, None))
        for key, node in self.pending.items():
            if node["parent"] is not None:
                children.setdefault(node["parent"], []).append((None, key))
        return children

    def _subtree(self, top: str) -> list[Member]:
        """``top`` (a conversation, or a pending child's spawn key) and its descendants,
        parents before children."""
        children = self._children()
        first: Member = (top, None) if top in self.nodes else (None, top)
        order: list[Member] = []
        stack = [first]
        visited: set[Member] = set()
        while stack:
            item = stack.pop()
            if item in visited:
                continue
            visited.add(item)
            order.append(item)
            if item[0] is not None:
                stack.extend(reversed(children.get(item[0], [])))
        return order

    def _subtree_depths(self, top: str, depth: int) -> dict[str, int]:
        """The depth of ``top`` and of each conversation below it, with ``top`` at ``depth``."""
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

    def _emit(self, event_class: type[Any], at: datetime, fact: str, **kwargs: Any) -> None:
        """Trigger an event of this root at ``at`` for the observation with key ``fact``."""
        self.trigger_event(event_class, timestamp=at, fact=fact, **kwargs)
