"""The public, read-only answerer: every lineage question, over one tree view.

:class:`TreeReader` is what the engine hands out for a past moment (``Engine.as_of``) and
what its own read methods answer through, so a question asked of the live engine and of a
moment answers alike: the same signatures, the same argument checks, the same errors. It
holds its :class:`~lineage_es.read.queries.Queries` privately: callers get frozen answers,
never the rows, caches or view behind them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext

from lineage_es.model import AgentLineage, Chain, ForestNode, LineageTree, Member, Provenance
from lineage_es.model import Relation as RelationName
from lineage_es.read.arguments import require_ids
from lineage_es.read.queries import Queries

#: Opens the queries to answer one question from: a context, so that a caller (the engine)
#: can bring its view up to date and hold its lock while the answer is read.
QueriesSource = Callable[[], AbstractContextManager[Queries]]


class TreeReader:
    """Answers lineage questions over one tree view, read-only.

    Every id is checked before anything is read: a conversation, root or host that is not a
    str, or that holds NUL, raises :class:`~lineage_es.errors.InvalidArgument` (a host may be
    ``None``: any host). A conversation the view does not know raises
    :class:`~lineage_es.errors.UnknownConversation`, except where the answer has a name for
    it (``tree_for`` answers ``None``, ``relation`` ``"unrelated"``, ``provenance`` a note).
    """

    __slots__ = ("_source",)

    def __init__(self, queries: Queries) -> None:
        """A reader over ``queries``, which it keeps to itself."""
        self._source: QueriesSource = lambda: nullcontext(queries)

    @classmethod
    def opening(cls, source: QueriesSource) -> TreeReader:
        """A reader that opens its queries anew for each question, after checking the
        arguments: the engine's, whose ``source`` catches its view up under its lock (and
        yields the queries it has then, which a rebuild replaces)."""
        reader = cls.__new__(cls)
        reader._source = source
        return reader

    def lineage(self, conversation: str, host: str | None = None) -> AgentLineage:
        """The lineage of a known conversation, with the tree around it."""
        require_ids((conversation, "conversation"), (host, "host"))
        with self._source() as queries:
            return queries.lineage_of(queries.require(conversation, host))

    def tree_for(self, conversation: str, host: str | None = None) -> LineageTree | None:
        """The live tree as ``conversation`` sees it; ``None`` when it is unknown or deleted."""
        require_ids((conversation, "conversation"), (host, "host"))
        with self._source() as queries:
            return queries.tree_for(conversation, host)

    def relation(self, a: str, b: str, host: str | None = None) -> RelationName:
        """What ``a`` is to ``b`` (``"unrelated"`` when either is unknown)."""
        require_ids((a, "a conversation"), (b, "a conversation"), (host, "host"))
        with self._source() as queries:
            return queries.relation(a, b, host)

    def chain(self, conversation: str, host: str | None = None) -> Chain:
        """The delegation chain from ``conversation`` up to its root."""
        require_ids((conversation, "conversation"), (host, "host"))
        with self._source() as queries:
            return queries.chain(conversation, host)

    def provenance(self, sender: str, recipient: str, host: str | None = None) -> Provenance:
        """What a message from ``sender`` to ``recipient`` should carry."""
        require_ids((sender, "sender"), (recipient, "recipient"), (host, "host"))
        with self._source() as queries:
            return queries.provenance(sender, recipient, host)

    def family(self, root: str, host: str | None = None) -> tuple[Member, ...]:
        """Every node of ``root``'s family that is not deleted, oldest first."""
        require_ids((root, "root"), (host, "host"))
        with self._source() as queries:
            return queries.family(root, host)

    def families(self, roots: Iterable[tuple[str, str | None]]) -> tuple[tuple[Member, ...], ...]:
        """:meth:`family` of each ``(root, host)`` of ``roots``, in order: one question, read
        in a few reads of the view however many roots it names (a tree's quiet check asks
        about every root that looks quiet)."""
        asked = list(roots)
        for root, host in asked:
            require_ids((root, "root"), (host, "host"))
        with self._source() as queries:
            return tuple(queries.families(asked))

    def agents(self, as_: str, host: str | None = None) -> tuple[Member, ...]:
        """Every known node of the caller's host, each with its relation to the caller."""
        require_ids((as_, "as_"), (host, "host"))
        with self._source() as queries:
            return queries.agents(as_, host)

    def forest(
        self, host: str | None = None, *, include_stopped: bool = False, root: str | None = None
    ) -> tuple[ForestNode, ...]:
        """The live forest (stopped nodes too when asked), or only ``root``'s tree."""
        ids: list[tuple[object, str]] = [(host, "host")]
        if root is not None:
            ids.append((root, "root"))
        require_ids(*ids)
        with self._source() as queries:
            return queries.forest(host, include_stopped=include_stopped, root=root)


__all__ = ["QueriesSource", "TreeReader"]
