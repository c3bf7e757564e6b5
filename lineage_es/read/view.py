"""The tree view: one row per node, and the port every view store implements.

The projection is the only writer of a view; queries only read it. A view remembers the
journal position it has applied, and writes a page of changes together with the new
position, refusing the write when another writer moved the position first (exactly once).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Protocol


@dataclass(slots=True)
class NodeRow:
    """A node as the view stores it. ``nid`` is the journal position of the event that
    placed the node: a stable id, and the tie-break for "oldest first". ``last_seen`` is the
    time of the latest event that named or changed it: a node's facts that change nothing
    else journal a ``Seen`` at most once a minute
    (:data:`~lineage_es.domain.seen_events.SEEN_INTERVAL`), so it is exact to that."""

    nid: int
    root_id: str
    host: str
    root: str
    conversation: str | None
    spawn_key: str | None
    parent: str | None
    depth: int
    status: str
    resolution: str
    started_at: str
    ambiguous: bool = False
    agent_type: str | None = None
    subagent_id: str | None = None
    description: str | None = None
    name: str | None = None
    stopped_at: str | None = None
    delete_reason: str | None = None
    workspace: tuple[str, ...] = field(default_factory=tuple)
    #: The time of the latest event that named or changed the node (``None``: a row made
    #: before rows kept it, until the view is rebuilt).
    last_seen: str | None = None

    @property
    def key(self) -> str:
        """How the node is listed: its conversation, or its spawn key while pending."""
        key = self.conversation if self.conversation is not None else self.spawn_key
        assert key is not None
        return key

    @property
    def is_root(self) -> bool:
        return self.depth == 0 and self.conversation == self.root

    def copy(self) -> NodeRow:
        """A row of the same values (a shallow copy: the workspace tuple is shared)."""
        return NodeRow(*_values(self))


#: A row's values in field order, as ``__init__`` takes them positionally.
_values = attrgetter(*(f.name for f in fields(NodeRow)))


class ViewStore(Protocol):
    """Where the tree view lives: in memory, in SQLite or in PostgreSQL."""

    def position(self) -> int:
        """The last journal position applied (0 for an empty view)."""
        ...

    def roots_version(self) -> int:
        """The last position at which any root row changed (caches of root lists use it)."""
        ...

    def root_version(self, root_id: str) -> int:
        """The last position at which a node of ``root_id`` changed; 0 when unknown."""
        ...

    def root_rows(self, root_id: str) -> list[NodeRow]:
        """Every node of a root, whatever its status. Rows a view returns are its own:
        callers read them and copy before they change anything."""
        ...

    def root_versions(self, root_ids: Sequence[str]) -> dict[str, int]:
        """:meth:`root_version` of each of ``root_ids`` in one read (a forest asks about
        every root at once: a SQL view answers in one statement, not one per root)."""
        ...

    def roots_rows(self, root_ids: Sequence[str]) -> dict[str, list[NodeRow]]:
        """:meth:`root_rows` of each of ``root_ids`` in one read."""
        ...

    def find(self, conversation: str) -> list[NodeRow]:
        """Every node listed as ``conversation`` (its conversation, or its pending spawn key)."""
        ...

    def find_many(self, keys: Sequence[str]) -> dict[str, list[NodeRow]]:
        """:meth:`find` of each of ``keys`` in one read."""
        ...

    def roots(self, host: str | None, *, live_only: bool) -> list[NodeRow]:
        """Root rows of ``host`` (every host when ``None``)."""
        ...

    def all_rows(self) -> list[NodeRow]:
        """Every row, in ``nid`` order (verification compares whole views)."""
        ...

    def pending(self, host: str) -> list[NodeRow]:
        """Live children of ``host`` whose own conversation is not known yet."""
        ...

    def write(self, rows: Sequence[NodeRow], expected: int, position: int) -> bool:
        """Store changed rows and move the position from ``expected`` to ``position``, as
        one transaction; ``False`` (and nothing written) when the position was not
        ``expected``."""
        ...

    def replace(self, rows: Sequence[NodeRow], position: int, *, force: bool = False) -> bool:
        """Put ``rows`` in place of every row, at ``position``, as one transaction (a rebuild):
        readers see the old view or the new one, never one emptied or half rebuilt. Unless
        ``force``, nothing changes, and the answer is ``False``, when the view is already past
        ``position`` (another writer projected newer entries meanwhile: the rows would take
        them back)."""
        ...

    def close(self) -> None: ...


class RootReads(Protocol):
    """The one-key reads a view held in the process answers its bulk reads from."""

    def root_version(self, root_id: str) -> int: ...

    def root_rows(self, root_id: str) -> list[NodeRow]: ...

    def find(self, conversation: str) -> list[NodeRow]: ...


class ReadsOneByOne:
    """:meth:`ViewStore.root_versions`, :meth:`ViewStore.roots_rows` and
    :meth:`ViewStore.find_many` for a view held in the process, where one read costs no more
    than a dict lookup: key by key."""

    def root_versions(self: RootReads, root_ids: Sequence[str]) -> dict[str, int]:
        return {root_id: self.root_version(root_id) for root_id in root_ids}

    def roots_rows(self: RootReads, root_ids: Sequence[str]) -> dict[str, list[NodeRow]]:
        return {root_id: self.root_rows(root_id) for root_id in root_ids}

    def find_many(self: RootReads, keys: Sequence[str]) -> dict[str, list[NodeRow]]:
        return {key: self.find(key) for key in keys}


class MemoryView(ReadsOneByOne):
    """A view held in the process: for ``memory://`` stores and for time travel."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self._position = 0
        self._roots_version = 0
        self._rows: dict[int, NodeRow] = {}
        self._by_root: dict[str, dict[int, NodeRow]] = {}
        self._by_key: dict[str, dict[int, NodeRow]] = {}
        self._root_versions: dict[str, int] = {}
        #: Root rows, and rows listed under their spawn key: what ``roots`` and ``pending``
        #: scan, kept apart so neither walks every node.
        self._root_nodes: dict[int, NodeRow] = {}
        self._unbound: dict[int, NodeRow] = {}
        #: The live roots, kept as rows change: every tree answer lists them (a replay asks
        #: for one at each asserted row), and most roots of a long journal have ended.
        self._live_roots: dict[int, NodeRow] = {}

    def replace(self, rows: Sequence[NodeRow], position: int, *, force: bool = False) -> bool:
        if self._position > position and not force:
            return False
        self._clear()
        self.apply(rows, position)
        self._roots_version = position
        return True

    def position(self) -> int:
        return self._position

    def roots_version(self) -> int:
        return self._roots_version

    def root_version(self, root_id: str) -> int:
        return self._root_versions.get(root_id, 0)

    def root_rows(self, root_id: str) -> list[NodeRow]:
        return list(self._by_root.get(root_id, {}).values())

    def find(self, conversation: str) -> list[NodeRow]:
        return list(self._by_key.get(conversation, {}).values())

    def roots(self, host: str | None, *, live_only: bool) -> list[NodeRow]:
        if live_only:
            return [row for row in self._live_roots.values() if host is None or row.host == host]
        return [
            row
            for row in self._root_nodes.values()
            if (host is None or row.host == host) and row.status != "deleted"
        ]

    def all_rows(self) -> list[NodeRow]:
        return [self._rows[nid] for nid in sorted(self._rows)]

    def pending(self, host: str) -> list[NodeRow]:
        return [row for row in self._unbound.values() if row.status == "live" and row.host == host]

    def write(self, rows: Sequence[NodeRow], expected: int, position: int) -> bool:
        if self._position != expected:
            return False
        self.apply(rows, position)
        return True

    def apply(self, rows: Iterable[NodeRow], position: int) -> None:
        for row in rows:
            old = self._rows.get(row.nid)
            if old is not None:
                self._by_key.get(old.key, {}).pop(row.nid, None)
            stored = row.copy()
            self._rows[row.nid] = stored
            self._by_root.setdefault(row.root_id, {})[row.nid] = stored
            self._by_key.setdefault(stored.key, {})[row.nid] = stored
            _index_if(self._root_nodes, stored, stored.is_root)
            _index_if(self._live_roots, stored, stored.is_root and stored.status == "live")
            _index_if(self._unbound, stored, stored.conversation is None)
            self._root_versions[row.root_id] = position
            if stored.depth == 0 or (old is not None and old.depth == 0):
                self._roots_version = position
        self._position = position

    def close(self) -> None:
        """Nothing to release."""


def _index_if(index: dict[int, NodeRow], row: NodeRow, belongs: bool) -> None:
    """Keep ``row`` in ``index`` when it ``belongs`` there, and take it out when not."""
    if belongs:
        index[row.nid] = row
    else:
        index.pop(row.nid, None)
