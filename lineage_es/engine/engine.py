"""The engine a runtime embeds: observe host payloads, answer lineage questions.

``observe`` routes an observation's facts to the aggregate of their root, applies the rules,
saves the root and any new index entries in one transaction, brings the tree view up to date
and answers the requester's lineage; ``observe_many`` journals a batch per transaction and
answers nothing. Everything else reads the view, through one :class:`TreeReader`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn

from lineage_es import hosts
from lineage_es.engine.guards import (
    StoreFailures,
    check_storable,
    name_problem,
    require_moment,
    require_observation,
)
from lineage_es.engine.history import journal_entries, past_reader, require_past
from lineage_es.engine.journaling import Also, Clock, Journaler, as_utc
from lineage_es.engine.opening import open_store
from lineage_es.engine.routing import Router
from lineage_es.errors import EngineClosed, InvalidArgument
from lineage_es.facts import DELETE_REASONS, Deleted, Fact, Observation, Renamed
from lineage_es.model import AgentLineage, Chain, ForestNode, LineageTree, Member, Provenance
from lineage_es.model import Relation as RelationName
from lineage_es.read.arguments import require_id
from lineage_es.read.decoding import JournalEvent
from lineage_es.read.projection import Progress, Projector
from lineage_es.read.queries import Queries
from lineage_es.read.view import NodeRow
from lineage_es.stores import StoreLocation, default_store_url, parse_store_url
from lineage_es.stores.connections import check_lock_timeout

if TYPE_CHECKING:
    from lineage_es.engine.ledgers import LedgerStore
    from lineage_es.read.answers import TreeReader


class Engine:
    """Observe host facts into a journal and answer lineage questions from its tree view.

    Open one with :func:`open_engine` (``create=False``: refuse a SQLite journal that does
    not exist rather than create it). Thread-safe: one lock serialises writes and reads.

    Every public call raises :class:`~lineage_es.errors.StoreError` naming the store and the
    reason when the store fails (a lock held past ``lock_timeout``, a read-only file, a dropped
    connection; the driver's error is its ``__cause__``), :class:`EngineClosed` once
    :meth:`close` ran, and :class:`InvalidArgument` for an argument of the wrong type or one
    the journal cannot keep, before anything is journaled.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        clock: Clock | None = None,
        create: bool = True,
        lock_timeout: float | None = None,
    ) -> None:
        # before anything opens: open_store reports whatever fails as a StoreError
        check_lock_timeout(lock_timeout)
        self.location: StoreLocation = parse_store_url(url or default_store_url())
        self._clock: Clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.RLock()
        self._closed = False
        self._failures = StoreFailures.of(self.location.kind)
        self.app, self.view, cache = open_store(
            self.location, create=create, lock_timeout=lock_timeout
        )
        self.queries = Queries(self.view)
        self.projector = Projector(self.app.recorder, self.view, self._absorb)
        self._router = Router(self.view, self.queries)
        self._journaler = Journaler(
            self.app, self.view, self.projector, self._router, cache, self._clock
        )
        self._ledgers: LedgerStore | None = None

    @functools.cached_property
    def _reader(self) -> TreeReader:
        """The answerer of this engine's read methods, made on the first question: a hook
        that answers nothing never loads it."""
        from lineage_es.read.answers import TreeReader

        return TreeReader.opening(self._caught_up)

    @property
    def ledgers(self) -> LedgerStore:
        """The journal's import ledgers, for the importers, each call under this engine's
        guard. Made on first use: a hook process never loads the ledger's code."""
        with self._lock:
            if self._ledgers is None:
                from lineage_es.engine.ledgers import LedgerStore

                self._ledgers = LedgerStore(self.app, self._guarded)
            return self._ledgers

    def _failed(self, exc: Exception) -> NoReturn:
        """Raise the store's own error as a :class:`StoreError` naming the store, ``exc`` its
        cause (:class:`EngineClosed` on a closed engine); one that is a caller's fault
        (:class:`~lineage_es.engine.guards.StoreFailures`) is raised as it is. Called while
        handling ``exc``."""
        if self._closed:
            raise EngineClosed(self.location.display) from exc
        named = self._failures.store_error(exc, self.location.display)
        if named is None:
            raise exc
        raise named from exc

    def _absorb(self, rows: Sequence[NodeRow], expected: int, position: int) -> None:
        self.queries.absorb(rows, expected, position)

    # -- writing --------------------------------------------------------------------------

    def observe(
        self,
        host: str,
        payload: Mapping[str, Any] | Observation,
        *,
        at: datetime | None = None,
        answer: bool = True,
    ) -> AgentLineage | None:
        """Journal what one hook payload says and answer its sender's lineage.

        ``payload`` is the host's payload, read by ``host``'s adapter (``at``, when given, is
        when it arrived), or an :class:`Observation` a transcript reader already made, of
        ``host`` (``at`` is its time when it has none). Returns only after the events are
        durable and the view is current: the sender's lineage, or ``None`` when the adapter
        ignores the payload or ``answer`` is false (a hook that prints nothing: the answer is
        not even built). Raises :class:`~lineage_es.errors.PayloadError` (nothing journaled)
        for a payload the adapter cannot understand.
        """
        require_moment(at)
        if isinstance(payload, Observation):
            if payload.host != host:
                raise InvalidArgument(
                    f"an observation of host {payload.host!r} given as one of {host!r}"
                )
            observation = require_observation(payload)
        else:
            observation = hosts.adapter(host).observe(payload, at=at)
        return self._observe(observation, at, answer=answer)

    def _observe(
        self, observation: Observation, at: datetime | None, *, answer: bool
    ) -> AgentLineage | None:
        """Journal one checked observation in a transaction of its own; its requester's
        lineage when ``answer``."""
        with self._guarded():
            if observation.requester is None:
                return None
            when = as_utc(observation.at or at or self._clock())
            placed, written = self._journaler.record(observation, when)
            if written:
                self.projector.catch_up_with(written)
            if not answer:
                return None
            # here, not at import: a hook that answers nothing never loads the answers' code
            from lineage_es.engine.answering import answer_observation

            return answer_observation(self.queries, observation, placed)

    def observe_many(
        self, observations: Iterable[Observation], *, batch: int = 1000, also: Also | None = None
    ) -> int:
        """Journal many observations in order, up to ``batch`` of them per transaction, and
        answer nothing: for importers and ingest, where one durable commit per payload
        would dominate. Returns how many observations had a requester. ``also`` makes (per
        attempt) aggregates saved in the last transaction: an inbox's read offset.

        An observation that names no root (Cursor's) is routed through the view, so the
        batch before it is saved first and it is observed on its own. An item that is not an
        :class:`Observation` is refused before its batch is saved (batches before it stay).
        """
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InvalidArgument(f"batch must be a positive int, not {batch!r}")
        count = 0
        chunk: list[Observation] = []
        with self._guarded():
            for item in observations:
                observation = require_observation(item)
                if observation.requester is None:
                    continue
                count += 1
                if observation.root is None:
                    self._journaler.record_batch(chunk)
                    chunk = []
                    self._observe(observation, None, answer=False)
                    continue
                check_storable(observation)
                chunk.append(observation)
                if len(chunk) >= batch:
                    self._journaler.record_batch(chunk)
                    chunk = []
            self._journaler.record_batch(chunk, also)
        return count

    def resolve(self, host: str, meta: Mapping[str, Any]) -> AgentLineage | None:
        """The lineage of an MCP tool call from its ``_meta``; journals nothing (REPLAY.md: an
        MCP call is resolved, never journaled).

        A caller the journal knows is answered from the registry, with its tree; one it
        never saw start is answered from what ``_meta`` itself states, with no tree. Where the
        registry placed the caller by order alone (``inferred``, or ambiguous with no parent
        edge) and ``_meta`` natively states another parent, a node of the caller's root, the
        answer takes that parent (``native``, its depth below it) and keeps the caller's tree
        (:func:`~lineage_es.engine.answering.stated_parent`): the host's own statement is never
        answered against.
        """
        claim = hosts.adapter(host).claim(meta)
        with self._guarded():
            if claim is None:
                return None
            self.projector.catch_up()
            from lineage_es.engine.answering import resolve_claim  # as in :meth:`_observe`

            return resolve_claim(self.queries, claim)

    def rename(self, conversation: str, name: str, *, host: str | None = None) -> None:
        """Give a node a display name; the last rename wins. A pending child is named by its
        spawn key and keeps the name once its conversation is bound.

        The name is one printable line of at most
        :data:`~lineage_es.engine.guards.MAX_NAME_LENGTH` characters, not blank: anything else
        is :class:`InvalidArgument`, and nothing is journaled.
        """
        problem = name_problem(name)
        if problem is not None:
            raise InvalidArgument(problem)
        self._command(conversation, host, Renamed(conversation, name))

    def delete(self, conversation: str, reason: str = "user", *, host: str | None = None) -> None:
        """Delete a node and its whole subtree (each descendant as ``parent-teardown``)."""
        if not isinstance(reason, str) or reason not in DELETE_REASONS:
            raise InvalidArgument(
                f"unknown delete reason {reason!r}; expected one of {', '.join(DELETE_REASONS)}"
            )
        self._command(conversation, host, Deleted(conversation, reason))

    def _command(self, conversation: str, host: str | None, fact: Fact) -> None:
        """Journal a user's command about a known node
        (:class:`~lineage_es.errors.UnknownConversation` for an unknown one), as an observation
        of the node's own host and root."""
        require_id(conversation, "a conversation")
        require_id(host, "a host", optional=True)
        with self._guarded():
            self.projector.catch_up()
            row = self.queries.require(conversation, host)
            observation = Observation(
                host=row.host,  # type: ignore[arg-type]
                requester=row.key,
                key="",
                facts=(fact,),
                root=row.root,
            )
            _, written = self._journaler.record(observation, as_utc(self._clock()))
            self.projector.catch_up_with(written)

    # -- reading --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _guarded(self, *, locked: bool = True) -> Iterator[None]:
        """On an open engine (else :class:`EngineClosed`), under the lock unless ``locked`` is
        false, with the store's own failures named (:meth:`_failed`): every public call."""
        with self._lock if locked else contextlib.nullcontext():
            if self._closed:
                raise EngineClosed(self.location.display)
            try:
                yield
            except self._failures.caught as exc:
                self._failed(exc)

    @contextlib.contextmanager
    def _caught_up(self) -> Iterator[Queries]:
        """The queries, the view caught up with the journal, :meth:`_guarded`: what the
        engine's :class:`TreeReader` answers each question from (its ids checked first)."""
        with self._guarded():
            self.projector.catch_up()
            yield self.queries

    def lineage(self, conversation: str, host: str | None = None) -> AgentLineage:
        """The current lineage of a known conversation (raises for an unknown one)."""
        return self._reader.lineage(conversation, host)

    def tree_for(self, conversation: str, host: str | None = None) -> LineageTree | None:
        """The live tree as ``conversation`` sees it; ``None`` when it is unknown."""
        return self._reader.tree_for(conversation, host)

    def relation(self, a: str, b: str, host: str | None = None) -> RelationName:
        """What ``a`` is to ``b`` (``"unrelated"`` when either is unknown)."""
        return self._reader.relation(a, b, host)

    def chain(self, conversation: str, host: str | None = None) -> Chain:
        """The delegation chain from ``conversation`` up to its root."""
        return self._reader.chain(conversation, host)

    def provenance(self, sender: str, recipient: str, host: str | None = None) -> Provenance:
        """What a message from ``sender`` to ``recipient`` should carry."""
        return self._reader.provenance(sender, recipient, host)

    def family(self, root: str, host: str | None = None) -> tuple[Member, ...]:
        """Every node of ``root``'s family that is not deleted, oldest first."""
        return self._reader.family(root, host)

    def families(self, roots: Iterable[tuple[str, str | None]]) -> tuple[tuple[Member, ...], ...]:
        """:meth:`family` of each ``(root, host)`` of ``roots``, in order, read together."""
        return self._reader.families(roots)

    def agents(self, as_: str, host: str | None = None) -> tuple[Member, ...]:
        """Every known node of the caller's host, each with its relation to the caller."""
        return self._reader.agents(as_, host)

    def forest(
        self, host: str | None = None, *, include_stopped: bool = False, root: str | None = None
    ) -> tuple[ForestNode, ...]:
        """The live forest (stopped nodes too when asked), or only ``root``'s tree."""
        return self._reader.forest(host, include_stopped=include_stopped, root=root)

    def as_of(self, *, position: int | None = None, time: datetime | None = None) -> TreeReader:
        """The tree view as it was at a journal position or a time, answering the same
        questions as the engine (time travel: the journal keeps every step), from a view of
        its own: the engine's may move meanwhile.

        ``position`` is an int (0 or more), ``time`` a datetime: anything else is
        :class:`InvalidArgument`."""
        require_past(position, time)
        with self._guarded(locked=False):  # its own view: the engine's may move meanwhile
            end = self._journaler.cache.position()
            return past_reader(self.app.recorder, self.view, end, position=position, time=time)

    # -- the journal ----------------------------------------------------------------------

    def position(self) -> int:
        """The journal's last position (0 when empty)."""
        with self._guarded(locked=False):
            return self._journaler.cache.position()

    def journal(self, start: int = 0, stop: int | None = None) -> Iterator[JournalEvent]:
        """Every journal entry after ``start``, decoded, in order."""
        if self._closed:
            raise EngineClosed(self.location.display)
        caught = self._failures.caught
        return journal_entries(self.app.recorder, start, stop, caught, self._failed)

    def catch_up(self, progress: Progress | None = None) -> int:
        """Bring the view up to date with the journal (other processes may have written)."""
        with self._guarded():
            return self.projector.catch_up(progress=progress)

    def rebuild(self, progress: Progress | None = None) -> int:
        """Throw the view away and replay the whole journal into it."""
        with self._guarded():
            self.queries = Queries(self.view)
            self._router.queries = self.queries
            return self.projector.rebuild(progress=progress)

    def close(self) -> None:
        """Let the store's connections go; any later call raises :class:`EngineClosed` (a
        closed engine must not answer from a stale view, nor reconnect). Closing twice is
        closing once."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self.view.close()
            finally:
                self.app.close()

    def __enter__(self) -> Engine:
        if self._closed:
            raise EngineClosed(self.location.display)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_engine(
    url: str | None = None,
    *,
    clock: Clock | None = None,
    create: bool = True,
    lock_timeout: float | None = None,
    fold: bool = True,
) -> Engine:
    """Open the engine on a store URL (default: ``$LINEAGE_STORE`` or the SQLite journal in
    the user's data dir). ``memory://`` keeps everything in the process.

    A SQLite journal that does not exist yet is created (its folder too), unless
    ``create=False``: then a missing file raises :class:`~lineage_es.stores.NoJournal` (a
    :class:`StoreError`) and nothing is created, for a caller that only means to read.
    ``lock_timeout`` bounds, in seconds, how long a write waits for another process's lock
    (default :data:`~lineage_es.stores.SQLITE_LOCK_TIMEOUT` on SQLite, 10 on PostgreSQL): a
    hook, which a host runs with a deadline, waits less. Rows waiting in the store's inbox
    are journaled first unless ``fold`` is false (:func:`lineage_es.inbox.fold_first`).
    """
    from lineage_es.inbox import fold_first

    def opening(waiting: bool) -> Engine:
        return Engine(url, clock=clock, create=create or waiting, lock_timeout=lock_timeout)

    return fold_first(url or default_store_url(), opening, fold=fold)


__all__ = ["Engine", "open_engine"]
