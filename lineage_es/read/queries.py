"""Queries: frozen answers read from a tree view.

A root's rows are loaded once and kept (:class:`~lineage_es.read.snapshots.RootSnapshot`)
until the view says that root changed; so a warm tree query costs a version check and a few
list filters, and does not grow with the journal.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Sequence

from lineage_es.errors import AmbiguousConversation, UnknownConversation
from lineage_es.model import (
    AgentLineage,
    Chain,
    ForestNode,
    LineageTree,
    Member,
    Peer,
    Provenance,
    Relation,
)
from lineage_es.read.peers import (
    ListedRoot,
    listed,
    listing_order,
    oldest_first,
    subagent_of,
    workspace_key,
)
from lineage_es.read.snapshots import RootSnapshot
from lineage_es.read.view import NodeRow, ViewStore
from lineage_es.vocabulary import Resolution

MAX_CHAIN_HOPS = 20
ROOT_CACHE_SIZE = 512


#: Which of the nodes listed under one key a lookup takes: live ones first, then the newest.
_STATUS_RANK = {"live": 0, "stopped": 1, "deleted": 2}


def _node_listed_as(conversation: str, rows: list[NodeRow], host: str | None) -> NodeRow | None:
    """The node listed as ``conversation`` among ``rows`` (those the view lists under it) of
    ``host`` (any host: ``None``, when only one has it, else :class:`AmbiguousConversation`)."""
    mine = [r for r in rows if host is None or r.host == host]
    if not mine:
        return None
    hosts = sorted({r.host for r in mine})
    if len(hosts) > 1:
        raise AmbiguousConversation(conversation, hosts)
    return min(mine, key=lambda r: (_STATUS_RANK.get(r.status, 3), -r.nid))


def _why_stopped(chain: Chain) -> str:
    """Why an incomplete chain stopped short of its root, as a note's clause."""
    if chain.capped:
        return f", capped at {MAX_CHAIN_HOPS} hops"
    if chain.cycle:
        return ", on a cycle"
    if chain.unresolved is not None:
        return f", whose parent {chain.unresolved} the journal cannot resolve"
    return ", placed ambiguous under its root (no certain parent)"


class Queries:
    """Every question the engine answers, over one view (live, or as of a past position).

    The engine's own tool: besides the answers it hands out view rows (:meth:`find`,
    :meth:`require`) and takes the rows the engine just wrote (:meth:`absorb`). Callers
    outside the engine ask a :class:`~lineage_es.read.answers.TreeReader`, which wraps it.
    """

    def __init__(self, view: ViewStore) -> None:
        self.view = view
        self._roots: OrderedDict[str, RootSnapshot] = OrderedDict()
        #: Rows absorbed into a cached root since it was built, with the position written.
        self._unmerged: dict[str, tuple[int, dict[int, NodeRow]]] = {}
        self._root_lists: dict[str, tuple[int, dict[tuple[str, ...], list[tuple[str, Peer]]]]] = {}
        self._listed_roots: dict[str, dict[int, ListedRoot]] = {}
        self._other_root_lists: dict[str, tuple[int, tuple[Peer, ...]]] = {}
        self._absorbed = -1

    def absorb(self, rows: Sequence[NodeRow], expected: int, position: int) -> None:
        """Take the rows this process just wrote, instead of reading them back: they patch
        the cached roots they belong to when those are next asked for (a root written many
        times between questions is merged once); when someone else wrote in between
        (``expected`` is not the last position absorbed), forget every cached root instead."""
        if expected != self._absorbed:
            self._roots.clear()
            self._unmerged.clear()
        else:
            for row in rows:
                if row.root_id in self._roots:
                    fresh = self._unmerged.setdefault(row.root_id, (position, {}))[1]
                    fresh[row.nid] = row.copy()
                    self._unmerged[row.root_id] = (position, fresh)
        self._absorbed = position

    # -- lookups --------------------------------------------------------------------------

    def snapshot(self, root_id: str) -> RootSnapshot:
        """The rows of ``root_id``, from cache while the view says it has not changed."""
        version = self.view.root_version(root_id)
        cached = self._cached(root_id, version)
        if cached is not None:
            return cached
        return self._keep(root_id, version, self.view.root_rows(root_id))

    def snapshots(self, root_ids: Sequence[str]) -> dict[str, RootSnapshot]:
        """:meth:`snapshot` of each of ``root_ids``, in two reads of the view in all (their
        versions, then the rows of those not cached) instead of up to two a root."""
        versions = self.view.root_versions(root_ids)
        found: dict[str, RootSnapshot] = {}
        missing: list[str] = []
        for root_id in root_ids:
            cached = self._cached(root_id, versions[root_id])
            if cached is not None:
                found[root_id] = cached
            else:
                missing.append(root_id)
        if missing:
            for root_id, rows in self.view.roots_rows(missing).items():
                found[root_id] = self._keep(root_id, versions[root_id], rows)
        return found

    def _cached(self, root_id: str, version: int) -> RootSnapshot | None:
        """The cached snapshot of ``root_id``, with the rows absorbed since merged in, when
        it is at ``version``."""
        cached = self._roots.get(root_id)
        unmerged = self._unmerged.pop(root_id, None)
        if cached is not None and unmerged is not None:
            written, fresh = unmerged
            merged = {row.nid: row for row in cached.rows}
            merged.update(fresh)
            cached = self._roots[root_id] = RootSnapshot(
                written, list(merged.values()), previous=cached
            )
        if cached is not None and cached.version == version:
            self._roots.move_to_end(root_id)
            return cached
        return None

    def _keep(self, root_id: str, version: int, rows: list[NodeRow]) -> RootSnapshot:
        """A new snapshot of ``root_id``'s ``rows`` at ``version``, cached (the least
        recently asked for root leaves a full cache)."""
        snapshot = RootSnapshot(version, rows, previous=self._roots.get(root_id))
        self._roots[root_id] = snapshot
        if len(self._roots) > ROOT_CACHE_SIZE:
            evicted, _ = self._roots.popitem(last=False)
            self._unmerged.pop(evicted, None)
        return snapshot

    def find(self, conversation: str, host: str | None = None) -> NodeRow | None:
        """The node listed as ``conversation`` (live ones first); ``None`` when unknown."""
        return _node_listed_as(conversation, self.view.find(conversation), host)

    def require(self, conversation: str, host: str | None = None) -> NodeRow:
        """The node listed as ``conversation``; :class:`UnknownConversation` when unknown."""
        row = self.find(conversation, host)
        if row is None:
            raise UnknownConversation(conversation)
        return row

    # -- lineage and trees ----------------------------------------------------------------

    def lineage_of(self, row: NodeRow, *, resolution: Resolution | None = None) -> AgentLineage:
        """The lineage of ``row``'s node (``resolution`` in place of the row's, when given),
        with its tree unless the node is deleted."""
        tree = None if row.status == "deleted" else self.tree_of(row)
        return AgentLineage(
            conversation=row.key,
            root=row.root,
            depth=row.depth,
            resolution=resolution or row.resolution,  # type: ignore[arg-type]
            parent=row.parent,
            subagent=subagent_of(row),
            tree=tree,
            host=row.host,
            name=row.name,
            ambiguous=row.ambiguous,
            last_seen=row.last_seen,
        )

    def tree_for(self, conversation: str, host: str | None = None) -> LineageTree | None:
        """The live tree as ``conversation`` sees it; ``None`` when it is unknown or deleted."""
        row = self.find(conversation, host)
        if row is None or row.status == "deleted":
            return None
        return self.tree_of(row)

    def tree_of(self, row: NodeRow) -> LineageTree:
        """The live tree around ``row``'s node: its root's other live nodes, its live
        children (none while it is pending) and the other live roots of its workspace."""
        snapshot = self.snapshot(row.root_id)
        key = row.key
        siblings = tuple(peer for peer in snapshot.live if peer.conversation != key)
        children = snapshot.children.get(key, ()) if row.conversation is not None else ()
        return LineageTree(siblings=siblings, children=children, roots=self._other_roots(row))

    def _other_roots(self, row: NodeRow) -> tuple[Peer, ...]:
        """The live roots of ``row``'s host and workspace but its own: the same for every
        node of a root until some root starts or stops, so kept per root until then."""
        version = self.view.roots_version()
        cached = self._other_root_lists.get(row.root_id)
        if cached is not None and cached[0] == version:
            return cached[1]
        workspace = workspace_key(self.snapshot(row.root_id).root.workspace)
        group = self._live_roots(row.host).get(workspace, ())
        roots = tuple(peer for root_id, peer in group if root_id != row.root_id)
        if len(self._other_root_lists) >= ROOT_CACHE_SIZE:
            self._other_root_lists.clear()
        self._other_root_lists[row.root_id] = (version, roots)
        return roots

    def _live_roots(self, host: str) -> dict[tuple[str, ...], list[tuple[str, Peer]]]:
        """The live roots of ``host``, oldest first, grouped by workspace (the same folders in
        any order are one workspace: :func:`same_workspace`); rebuilt when a root changes,
        reusing what was worked out for each root whose row did not."""
        version = self.view.roots_version()
        cached = self._root_lists.get(host)
        if cached is not None and cached[0] == version:
            return cached[1]
        previous = self._listed_roots.get(host, {})
        found: dict[int, ListedRoot] = {}
        for row in self.view.roots(host, live_only=True):
            known = previous.get(row.nid)
            # A memory view hands out the row it stores, and replaces it when it changes.
            if known is None or known.row is not row:
                known = listed(row, known)
            found[row.nid] = known
        groups: dict[tuple[str, ...], list[tuple[str, Peer]]] = {}
        for entry in sorted(found.values(), key=listing_order):
            groups.setdefault(entry.workspace, []).append((entry.row.root_id, entry.peer))
        self._listed_roots[host] = found
        self._root_lists[host] = (version, groups)
        return groups

    # -- relations and chains -------------------------------------------------------------

    def relation(self, a: str, b: str, host: str | None = None) -> Relation:
        """What ``a`` is to ``b``, over every node the journal knows (deleted ones too)."""
        row_a = self.find(a, host)
        row_b = self.find(b, host)
        if row_a is None or row_b is None or row_a.root_id != row_b.root_id:
            return "unrelated"
        if row_a.key == row_b.key:
            return "self"
        snapshot = self.snapshot(row_a.root_id)
        ancestors_a = self._ancestors(snapshot, row_a)
        ancestors_b = self._ancestors(snapshot, row_b)
        if row_a.parent is not None and row_a.parent == row_b.key:
            return "child"
        if row_b.key in ancestors_a:
            return "descendant"
        if row_b.parent is not None and row_b.parent == row_a.key:
            return "parent"
        if row_a.key in ancestors_b:
            return "ancestor"
        if row_a.parent is not None and row_a.parent == row_b.parent:
            return "sibling"
        return "kin"

    def _ancestors(self, snapshot: RootSnapshot, row: NodeRow) -> list[str]:
        """The keys above ``row``: its parent edges followed up as far as they go, then
        its root. Every node of a tree descends from its root, so the root is an ancestor
        even where the edges stop short of it (a node placed ambiguous under its root, or
        a descendant of one, has no parent edge up to it)."""
        ancestors: list[str] = []
        current = row.parent
        while current is not None and current not in ancestors and len(ancestors) < 1000:
            ancestors.append(current)
            parent_row = snapshot.by_key.get(current)
            current = None if parent_row is None else parent_row.parent
        if not row.is_root and row.root != row.key and row.root not in ancestors:
            ancestors.append(row.root)
        return ancestors

    def chain(self, conversation: str, host: str | None = None) -> Chain:
        """The delegation chain from ``conversation`` up to its root.

        It stops at the first ancestor the journal cannot resolve, on a cycle, or after
        20 hops, and says which.
        """
        row = self.require(conversation, host)
        snapshot = self.snapshot(row.root_id)
        names = [row.key]
        current = row
        while not current.is_root:
            if len(names) > MAX_CHAIN_HOPS:
                return Chain(tuple(names), complete=False, capped=True)
            parent = current.parent
            if parent is None:
                return Chain(tuple(names), complete=False)
            if parent in names:
                return Chain(tuple(names), complete=False, cycle=True)
            parent_row = snapshot.by_key.get(parent)
            if parent_row is None:
                return Chain(tuple(names), complete=False, unresolved=parent)
            names.append(parent)
            current = parent_row
        return Chain(tuple(names))

    def provenance(self, sender: str, recipient: str, host: str | None = None) -> Provenance:
        """What a message from ``sender`` to ``recipient`` carries: the relation and, unless
        the sender is the recipient's direct child, its delegation chain and a note."""
        relation = self.relation(sender, recipient, host)
        if relation in ("child", "self"):
            return Provenance(sender, recipient, relation)
        if self.find(sender, host) is None:
            return Provenance(sender, recipient, relation, note=f"{sender} is unknown")
        found = self.chain(sender, host)
        full = found.conversations
        if recipient in full:
            chain = full[: full.index(recipient) + 1]
            skipped = chain[1:-1]
            note = f"{sender} writes to its ancestor {recipient}, skipping {', '.join(skipped)}"
        elif relation == "descendant":
            # An ancestor the chain stopped short of: above a node placed ambiguous under
            # its root (no certain edge leads up to the root), an unresolved one, or the cap.
            chain = full
            note = (
                f"{sender} writes to its ancestor {recipient}; its chain stops at {full[-1]}"
                f"{_why_stopped(found)}: {' > '.join(chain)}"
            )
        else:
            chain = full
            note = f"{sender} ({relation}) writes to {recipient}; its chain: {' > '.join(chain)}"
        return Provenance(sender, recipient, relation, chain=chain, note=note)

    # -- families and lists ---------------------------------------------------------------

    def family(self, root: str, host: str | None = None) -> tuple[Member, ...]:
        """Every node of ``root``'s family that is not deleted, oldest first."""
        return self._members(self.snapshot(self.require(root, host).root_id))

    def families(self, roots: Sequence[tuple[str, str | None]]) -> list[tuple[Member, ...]]:
        """:meth:`family` of each ``(root, host)`` of ``roots``, in order, in three reads of
        the view in all (the nodes listed under the roots, the versions of their roots, then
        the rows of those not cached) instead of up to three a root."""
        found = self.view.find_many(list(dict.fromkeys(root for root, _ in roots)))
        rows: list[NodeRow] = []
        for root, host in roots:
            row = _node_listed_as(root, found[root], host)
            if row is None:
                raise UnknownConversation(root)
            rows.append(row)
        snapshots = self.snapshots(list(dict.fromkeys(row.root_id for row in rows)))
        return [self._members(snapshots[row.root_id]) for row in rows]

    def _members(self, snapshot: RootSnapshot) -> tuple[Member, ...]:
        return tuple(self._member_of(r) for r in snapshot.rows if r.status != "deleted")

    def agents(self, as_: str, host: str | None = None) -> tuple[Member, ...]:
        """Every known node of the caller's host, each with its relation to the caller."""
        me = self.require(as_, host)
        found = self.find(me.key, me.host)
        # A node is related to the caller only when the node listed under its key is of the
        # caller's root: a key no row of that root lists is unrelated without looking it up.
        kin = {row.key for row in self.snapshot(found.root_id).rows} if found else set()
        members: list[Member] = []
        for root in sorted(self.view.roots(me.host, live_only=False), key=oldest_first):
            snapshot = self.snapshot(root.root_id)
            for row in snapshot.rows:
                if row.status == "deleted":
                    continue
                relation: Relation = (
                    self.relation(row.key, me.key, me.host) if row.key in kin else "unrelated"
                )
                members.append(self._member_of(row, relation=relation))
        return tuple(members)

    def _member_of(self, row: NodeRow, relation: Relation | None = None) -> Member:
        return Member(
            conversation=row.key,
            root=row.root,
            depth=row.depth,
            status=row.status,  # type: ignore[arg-type]
            resolution=row.resolution,  # type: ignore[arg-type]
            started_at=row.started_at,
            parent=row.parent,
            name=row.name,
            subagent=subagent_of(row),
            stopped_at=row.stopped_at,
            relation=relation,
            ambiguous=row.ambiguous,
            last_seen=row.last_seen,
        )

    def forest(
        self, host: str | None = None, *, include_stopped: bool = False, root: str | None = None
    ) -> tuple[ForestNode, ...]:
        """The live forest (with stopped nodes too when asked), children nested, oldest
        first. A stopped node still shows when it has live descendants."""
        if root is not None:
            roots = [self.snapshot(self.require(root, host).root_id).root]
        else:
            roots = sorted(self.view.roots(host, live_only=not include_stopped), key=oldest_first)
        snapshots = self.snapshots([r.root_id for r in roots])
        return tuple(
            node
            for r in roots
            if (node := self._forest_node(snapshots[r.root_id], include_stopped)) is not None
        )

    def _forest_node(self, snapshot: RootSnapshot, include_stopped: bool) -> ForestNode | None:
        children: dict[str | None, list[NodeRow]] = {}
        for row in snapshot.rows:
            if row.status != "deleted" and not row.is_root:
                parent = row.parent if row.parent is not None else snapshot.root.key
                children.setdefault(parent, []).append(row)

        def node(row: NodeRow, kids: tuple[ForestNode, ...]) -> ForestNode | None:
            if row.status != "live" and not include_stopped and not kids:
                return None
            return ForestNode(
                conversation=row.key,
                host=row.host,
                depth=row.depth,
                status=row.status,  # type: ignore[arg-type]
                resolution=row.resolution,  # type: ignore[arg-type]
                started_at=row.started_at,
                subagent=subagent_of(row),
                name=row.name,
                ambiguous=row.ambiguous,
                children=kids,
                last_seen=row.last_seen,
            )

        root = snapshot.root
        if root.status == "deleted":
            return None
        # Depth first with an explicit stack (a chain of agents may be deeper than Python's
        # recursion limit): each frame holds a row, its children still to visit and the nodes
        # of those visited. A child whose key is already on the path (a cycle) is passed over.
        path = {root.key}
        stack: list[tuple[NodeRow, Iterator[NodeRow], list[ForestNode]]] = [
            (root, iter(children.get(root.key, ())), [])
        ]
        while True:
            row, pending, kids = stack[-1]
            child = next(pending, None)
            if child is not None:
                if child.key not in path:
                    path.add(child.key)
                    stack.append((child, iter(children.get(child.key, ())), []))
                continue
            stack.pop()
            path.discard(row.key)
            built = node(row, tuple(kids))
            if not stack:
                return built
            if built is not None:
                stack[-1][2].append(built)
