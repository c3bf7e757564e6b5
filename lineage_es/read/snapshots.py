"""A root's rows as the queries keep them between questions, with its live peers.

The peers (what another caller sees of each live node: its siblings, children and roots
lists) are built when an answer first asks for them, reusing those of the root's previous
snapshot for rows that did not change; a forest or a family reads the rows alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lineage_es.model import Peer
from lineage_es.read.peers import oldest_first, peer_of, peer_signature
from lineage_es.read.view import NodeRow


@dataclass
class RootSnapshot:
    """One root's rows, ordered oldest first. Its live peers (:attr:`live`, :attr:`children`)
    are built when first asked for, reusing the peers of the previous snapshot of the same
    root for rows that did not change: a forest or a family never asks for them."""

    version: int
    rows: list[NodeRow]
    previous: RootSnapshot | None = None
    by_key: dict[str, NodeRow] = field(init=False)
    peers: dict[int, tuple[tuple[object, ...], Peer]] = field(init=False)
    _listing: tuple[tuple[Peer, ...], dict[str, tuple[Peer, ...]]] | None = field(
        init=False, default=None
    )

    def _peer_reusing_previous(self, row: NodeRow) -> Peer:
        signature = peer_signature(row)
        known = self.previous.peers.get(row.nid) if self.previous is not None else None
        peer = known[1] if known is not None and known[0] == signature else peer_of(row)
        self.peers[row.nid] = (signature, peer)
        return peer

    def __post_init__(self) -> None:
        self.peers = {}
        self.rows.sort(key=oldest_first)
        self.by_key = {}
        for row in self.rows:
            if row.key not in self.by_key or self.by_key[row.key].status == "deleted":
                self.by_key[row.key] = row
        if self.previous is not None and self.previous._listing is None:
            self.previous = None  # it has no peers to reuse (and keeps no older snapshot)

    @property
    def live(self) -> tuple[Peer, ...]:
        """The live nodes' peers, oldest first."""
        return self._listed()[0]

    @property
    def children(self) -> dict[str, tuple[Peer, ...]]:
        """The live nodes' peers by their parent's key."""
        return self._listed()[1]

    def _listed(self) -> tuple[tuple[Peer, ...], dict[str, tuple[Peer, ...]]]:
        if self._listing is None:
            live_rows = [row for row in self.rows if row.status == "live"]
            live = tuple(self._peer_reusing_previous(row) for row in live_rows)
            self.previous = None
            children: dict[str, list[Peer]] = {}
            for row, peer in zip(live_rows, live, strict=True):
                if row.parent is not None:
                    children.setdefault(row.parent, []).append(peer)
            self._listing = (live, {parent: tuple(peers) for parent, peers in children.items()})
        return self._listing

    @property
    def root(self) -> NodeRow:
        """The root's own row."""
        return next(row for row in self.rows if row.is_root)
