"""The engine a runtime embeds: observe host payloads, answer lineage questions.

``observe`` routes an observation's facts to the aggregate of their root, applies the rules,
saves the root and any new index entries in one transaction, brings the tree view up to date
and answers the requester's lineage. Everything else reads the view.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import random
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn
from uuid import UUID

from eventsourcing.application import (
    AggregateNotFoundError,
    Application,
    LRUCache,
    ProcessingEvent,
    project_aggregate,
)
from eventsourcing.domain import Aggregate, Snapshot
from eventsourcing.persistence import (
    DataError,
    IntegrityError,
    NotSupportedError,
    PersistenceError,
    ProgrammingError,
    Transcoder,
)

from lineage_es import hosts
from lineage_es.domain.root import ConversationIndex, RootLineage, index_id, root_id
from lineage_es.engine.deciding import decide
from lineage_es.errors import (
    EngineClosed,
    InvalidArgument,
    LineageError,
    PayloadError,
    StoreError,
    UnknownConversation,
)
from lineage_es.facts import (
    DELETE_REASONS,
    Acted,
    ChildIdentified,
    Claim,
    Deleted,
    Fact,
    Host,
    Observation,
    Renamed,
    RootSeen,
    SessionEnded,
)
from lineage_es.model import AgentLineage, Chain, ForestNode, LineageTree, Member, Provenance
from lineage_es.model import Relation as RelationName
from lineage_es.read.projection import JournalEvent, Progress, Projector, iso, read_journal
from lineage_es.read.queries import Queries, same_workspace
from lineage_es.read.view import MemoryView, NodeRow, ViewStore
from lineage_es.stores import (
    SQLITE_LOCK_TIMEOUT,
    SetupHold,
    StoreLocation,
    StoreNeeds,
    application_env,
    default_store_url,
    parse_store_url,
    prepare_sqlite_file,
    setup_lock,
    store_needs,
    wrap_open_error,
)
from lineage_es.transcoder import OrjsonTranscoder

#: How often an observation is retried when another writer saved the same root first.
MAX_ATTEMPTS = 64

#: Past this many foreign journal entries, the aggregate cache is dropped, not scanned.
REFRESH_SCAN_LIMIT = 1000

Clock = Callable[[], datetime]

#: The events that put a conversation in a root: it gets (or, moved, takes) an index entry.
INDEXED = (
    RootLineage.Created,
    RootLineage.ChildPlaced,
    RootLineage.ChildBound,
    RootLineage.ChildAdopted,
)


class LineageApplication(Application[UUID]):
    """The eventsourcing application that owns the journal."""

    name = "lineage"
    snapshotting_intervals = {RootLineage: 200}  # noqa: RUF012 (the library's own shape)
    env = {  # noqa: RUF012
        "AGGREGATE_CACHE_MAXSIZE": "1024",
        "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
        # The engine keeps its cache coherent from the notification log (``Engine._refresh``)
        # instead of asking the store for newer events on every ``get``.
        "AGGREGATE_CACHE_FASTFORWARD": "n",
    }

    def construct_transcoder(self) -> Transcoder:
        return OrjsonTranscoder()

    def save_aggregates(self, *aggregates: Aggregate) -> list[int]:
        """Save aggregates in one transaction; returns the journal positions written.

        The library's ``save`` checks every object against runtime Protocols, which on
        Python 3.11 costs more than the rest of a small save; these are always aggregates.
        """
        processing_event: ProcessingEvent[UUID] = ProcessingEvent()
        for aggregate in aggregates:
            processing_event.events.extend(aggregate.collect_events())
            processing_event.aggregates[aggregate.id] = aggregate
        recordings = self._record(processing_event)
        self._snapshot_saved(processing_event)
        self._notify(recordings)
        return [recording.notification.id for recording in recordings]

    def _snapshot_saved(self, processing_event: ProcessingEvent[UUID]) -> None:
        """Snapshot each root this save carried past a multiple of its interval, once, as it
        stands saved. (The library takes one snapshot per multiple crossed, each of the root
        read back from its previous snapshot and events: an import's batch of thousands of
        events for one large root made that quadratic in the root's size.)"""
        if self.snapshots is None:
            return
        interval = self.snapshotting_intervals[RootLineage]
        first: dict[UUID, int] = {}
        for event in processing_event.events:
            first.setdefault(event.originator_id, event.originator_version)
        for aggregate_id, aggregate in processing_event.aggregates.items():
            start = first.get(aggregate_id)
            if (
                isinstance(aggregate, RootLineage)
                and start is not None
                and aggregate.version // interval > (start - 1) // interval
            ):
                self.snapshots.put([RootLineage.Snapshot.take(aggregate)])

    def root(self, aggregate_id: UUID) -> RootLineage:
        """A root as its events make it: from its latest snapshot when that snapshot keeps all
        the state the events imply, else from every event (:meth:`_project_root`)."""
        root: RootLineage = self.repository.get(aggregate_id, projector_func=self._project_root)
        return root

    def _project_root(
        self, aggregate: RootLineage | None, events: Iterable[Any]
    ) -> RootLineage | None:
        """Snapshots are a cache, and one taken by an older version of the root lacks state its
        events imply (the session ends a resume followed, when each lifetime began): a root
        restored from it would decide later facts otherwise than one replayed from its events
        (a copy of the store made by ``journal export``, which keeps no snapshots). So such a
        snapshot is passed over and the root is replayed from its first event; the next
        snapshot taken of it is whole again."""
        stream = iter(events)
        first = next(stream, None)
        if first is None:
            return aggregate
        if (
            aggregate is None
            and isinstance(first, Snapshot)
            and first.state.get("class_version", 1) < RootLineage.class_version
        ):
            before = self.repository.event_store.get(
                first.originator_id, lte=first.originator_version
            )
            return project_aggregate(None, itertools.chain(before, stream))
        return project_aggregate(aggregate, itertools.chain((first,), stream))

    def take_snapshot(
        self,
        aggregate_id: UUID,
        version: int | None = None,
        projector_func: Any = project_aggregate,
    ) -> None:
        """A snapshot of the root as its events make it (never one restored from an older
        snapshot: :meth:`_project_root`)."""
        super().take_snapshot(aggregate_id, version, self._project_root)


class ConcurrencyError(LineageError):
    """Other writers kept winning the race for the same root; the observation was not saved."""


#: The longest display name :meth:`Engine.rename` takes: a label on a tree line, not a text.
MAX_NAME_LENGTH = 256

#: What a display name may not hold: control characters (a name is one printable line, and
#: PostgreSQL text cannot hold NUL) and lone surrogates (no store can encode them).
_UNFIT_IN_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")

#: What the stores and their drivers raise; the engine names the store and the reason
#: instead (:meth:`Engine._failed`), except for :data:`_NOT_STORE_FAILURES`. PostgreSQL adds
#: psycopg's, imported only for it.
_STORE_FAILURES: tuple[type[Exception], ...] = (PersistenceError, sqlite3.Error)

#: Errors of those families that are no failure of the store but a caller's or this code's
#: fault (an id of the wrong type, a broken constraint, bad SQL): they stay what they are.
_NOT_STORE_FAILURES: tuple[type[Exception], ...] = (
    IntegrityError,
    ProgrammingError,
    DataError,
    NotSupportedError,
    sqlite3.IntegrityError,
    sqlite3.ProgrammingError,
    sqlite3.DataError,
    sqlite3.NotSupportedError,
)


#: SQLSTATEs PostgreSQL files under its programming errors that are the store's state, not a
#: caller's mistake: no privilege, no such table, no such schema.
_STORE_SIDE_STATES = frozenset({"42501", "42P01", "3F000"})


def _store_side(exc: BaseException) -> bool:
    """Whether an error of a caller-fault class is the store's doing all the same (a role
    that may only read, a table or schema dropped): by the driver's SQLSTATE."""
    for error in (exc, exc.__cause__):
        if getattr(error, "sqlstate", None) in _STORE_SIDE_STATES:
            return True
    return False


def _name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a display name; ``None`` when it can."""
    if not isinstance(name, str):
        return f"a name must be a str, not {type(name).__name__}"
    if not name.strip():
        return "a name cannot be empty or only spaces"
    if len(name) > MAX_NAME_LENGTH:
        return f"a name is at most {MAX_NAME_LENGTH} characters, not {len(name)}"
    if _UNFIT_IN_NAME.search(name):
        return "a name cannot hold control characters or lone surrogates"
    return None


def _require_id(value: object, what: str, *, optional: bool = False) -> None:
    """Refuse an id no store can look up alike: not a str (each driver fails its own way),
    or holding NUL (PostgreSQL text cannot hold it; the others would answer unknown)."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidArgument(f"{what} cannot hold a NUL character")


def _require_moment(at: object, what: str = "at") -> None:
    """Refuse a time that is not a datetime (a string would fail only deep in a save)."""
    if at is not None and not isinstance(at, datetime):
        raise InvalidArgument(f"{what} must be a datetime or None, not {type(at).__name__}")


def _require_observation(observation: object) -> None:
    """Refuse what is not an Observation before it is routed (a dict failed deep inside)."""
    if not isinstance(observation, Observation):
        raise InvalidArgument(
            f"expected an Observation (a host adapter's), not {type(observation).__name__}"
        )
    _require_moment(observation.at, "an observation's at")


def _check_ids(observation: Observation) -> None:
    """Refuse ids no store can keep (PostgreSQL text cannot hold NUL) before anything is
    journaled, whichever adapter or reader made the observation."""
    for fact in observation.facts:
        for name in fact.__slots__:
            value = getattr(fact, name)
            if isinstance(value, str) and "\x00" in value:
                raise PayloadError(f"{name} holds a NUL character", host=observation.host)
        if isinstance(fact, Renamed):
            problem = _name_problem(fact.name)
            if problem is not None:
                raise PayloadError(problem, host=observation.host)
    for value in (observation.requester, observation.root, *observation.workspace):
        if value is not None and "\x00" in value:
            raise PayloadError("an id holds a NUL character", host=observation.host)


def _may_start_root(observation: Observation) -> bool:
    """Whether the observation may start a root for its requester when it names no root:
    only a root-only event may (a ``RootSeen`` of the requester, or its session's end). Any
    other observation from a conversation no root holds is a child not bound yet
    (:meth:`Engine._bind_by_order`), not a root."""
    return any(
        isinstance(fact, (RootSeen, SessionEnded)) and fact.conversation == observation.requester
        for fact in observation.facts
    )


def _named_parent_root(observation: Observation, unit: _Unit) -> RootLineage | None:
    """The root of the parent an unrooted requester names for itself, when the journal knows
    that parent: a header stating its own parent (a Codex depth-2 rollout from before
    ``session_id``) is placed by that statement, never guessed by order or dropped."""
    for fact in observation.facts:
        if isinstance(fact, ChildIdentified) and fact.child == observation.requester:
            routed = unit.root_of(fact.parent)
            if routed is not None:
                return unit.get_root(routed)
    return None


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


@dataclass
class _Unit:
    """The aggregates one observation touches, saved together in one transaction."""

    app: LineageApplication
    host: Host
    at: datetime
    key: str
    #: Whether the observation's payload can recur in a later lifetime of its root.
    recurs: bool = False
    roots: dict[UUID, RootLineage] = field(default_factory=dict)
    created: set[UUID] = field(default_factory=set)
    seen_before: set[UUID] = field(default_factory=set)
    moves: dict[str, str] = field(default_factory=dict)
    moved: list[UUID] = field(default_factory=list)
    #: The engine's memory of which root each conversation belongs to (index entries only
    #: ever move when a wrong Cursor binding is undone, which updates it).
    routes: dict[tuple[str, str], str] = field(default_factory=dict)
    #: Conversations placed by earlier observations of the same batch, not yet indexed.
    placing: dict[tuple[str, str], str] = field(default_factory=dict)
    #: The tree view, current as of this unit's start (it answers "never indexed" quickly).
    view: ViewStore = field(kw_only=True)
    saved: bool = False
    #: Journal positions this unit wrote.
    positions: list[int] = field(default_factory=list)

    def get_root(self, conversation: str) -> RootLineage | None:
        aggregate_id = root_id(self.host, conversation)
        if aggregate_id in self.roots:
            return self.roots[aggregate_id]
        if self._never_started(aggregate_id, conversation):
            return None
        try:
            root = self.app.root(aggregate_id)
        except AggregateNotFoundError:
            return None
        self.roots[aggregate_id] = root
        if self.key and root.has_seen(self.key, recurs=self.recurs, at=self.at):
            self.seen_before.add(aggregate_id)
        return root

    def _never_started(self, aggregate_id: UUID, conversation: str) -> bool:
        """Whether the caught-up view shows no root ``conversation`` (every root that ever
        started has its row there), so there is no aggregate to look for in the store."""
        cache = self.app.repository.cache
        if cache is None:
            return False
        try:
            cache.get(aggregate_id)
        except KeyError:
            return not any(row.root_id == aggregate_id.hex for row in self.view.find(conversation))
        return False

    def start_root(self, conversation: str, source: str, workspace: tuple[str, ...]) -> RootLineage:
        root = RootLineage.start(
            self.host, conversation, at=self.at, workspace=workspace, source=source, fact=self.key
        )
        self.roots[root.id] = root
        self.created.add(root.id)
        return root

    def elsewhere(self, conversation: str, root: RootLineage) -> bool:
        """Whether ``conversation`` already belongs to another root: a conversation lives
        in one root only."""
        if any(other is not root and other.knows(conversation) for other in self.roots.values()):
            return True
        found = self.root_of(conversation)
        return found is not None and found != root.conversation

    def root_of(self, conversation: str) -> str | None:
        """The root conversation ``conversation`` belongs to: placed earlier in this unit
        (a batch), or routed by the index."""
        placed = self.placing.get((self.host, conversation))
        return placed if placed is not None else self._indexed(self.host, conversation)

    def _indexed(self, host: str, conversation: str) -> str | None:
        route = self.routes.get((host, conversation))
        if route is not None:
            return route
        entry = self.index(conversation, host)
        if entry is None:
            return None
        self.routes[(host, conversation)] = entry.root
        return entry.root

    def index(self, conversation: str, host: str | None = None) -> ConversationIndex | None:
        host = host or self.host
        # The view is caught up before every unit and lists every conversation that was ever
        # indexed (deleted and re-rooted ones too): one it does not list has no entry, and a
        # first import asks that of nearly every conversation. (An entry another writer adds
        # meanwhile makes this unit's save conflict, and the retry sees it.)
        if not any(row.host == host for row in self.view.find(conversation)):
            return None
        try:
            entry: ConversationIndex = self.app.repository.get(index_id(host, conversation))
        except AggregateNotFoundError:
            return None
        return entry

    def save(self) -> list[str]:
        """Save every touched root with index entries for the conversations it placed;
        returns the conversations placed or re-placed by this unit."""
        entries: dict[tuple[str, str], ConversationIndex] = {}
        placed: list[str] = []
        for root in self.roots.values():
            for event in root.pending_events:
                conversation = getattr(event, "conversation", None)
                if conversation is None:
                    continue
                if isinstance(
                    event,
                    (
                        RootLineage.Created,
                        RootLineage.ChildPlaced,
                        RootLineage.ChildBound,
                        RootLineage.ChildAdopted,
                        RootLineage.EdgeCorrected,
                        RootLineage.EdgeConfirmed,
                    ),
                ):
                    placed.append(conversation)
                if isinstance(event, INDEXED) and (root.host, conversation) not in entries:
                    entry = self._entry_for(root.host, conversation, root.conversation, event)
                    if entry is not None:
                        entries[(root.host, conversation)] = entry
        if entries or any(root.pending_events for root in self.roots.values()):
            self.positions = self.app.save_aggregates(*self.roots.values(), *entries.values())
            self.saved = True
            for (host, conversation), entry in entries.items():
                self.routes[(host, conversation)] = entry.root
        return placed

    def _entry_for(
        self, host: str, conversation: str, root: str, event: Any
    ) -> ConversationIndex | None:
        if conversation not in self.moves and self._indexed(host, conversation) is not None:
            return None
        existing = self.index(conversation, host)
        if existing is None:
            return ConversationIndex.create(host, conversation, root, event.timestamp)
        if conversation in self.moves:
            existing.move(self.moves[conversation], self.at)
            self.moved.append(existing.id)
            return existing
        return None

    def forget(self) -> None:
        """Drop cached copies of the touched aggregates: they hold unsaved changes."""
        cache = self.app.repository.cache
        if cache is None:
            return
        self.routes.clear()
        for aggregate_id in [*self.roots, *self.moved]:
            try:
                cache.get(aggregate_id, evict=True)
            except KeyError:
                continue


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
        self.location: StoreLocation = parse_store_url(url or default_store_url())
        self._clock: Clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.RLock()
        self._closed = False
        self._failures = _STORE_FAILURES
        self._not_failures = _NOT_STORE_FAILURES
        if self.location.kind == "postgresql":
            import psycopg

            self._failures = (*_STORE_FAILURES, psycopg.Error)
            self._not_failures = (
                *_NOT_STORE_FAILURES,
                psycopg.IntegrityError,
                psycopg.ProgrammingError,
                psycopg.DataError,
                psycopg.NotSupportedError,
            )
        if self.location.kind == "sqlite":
            assert self.location.path is not None
            prepare_sqlite_file(self.location.path, create=create)
        try:
            with setup_lock(self.location, lock_timeout, self._needs()) as hold:
                # A store whose tables all exist runs none of the library's DDL, and holds
                # no lock: hooks opening it at once do not wait for each other.
                env = application_env(
                    self.location, lock_timeout=lock_timeout, create_tables=not hold.ready
                )
                self.app = LineageApplication(env=env)
                #: The journal position up to which the aggregate cache is known to be
                #: current (it is empty yet), and the positions this engine wrote past it.
                self._seen = self._position()
                self.view: ViewStore = self._open_view(lock_timeout, hold)
        except BaseException as exc:
            app = self.__dict__.get("app")
            if app is not None:  # opened before what failed: its connections are let go now
                with contextlib.suppress(Exception):
                    app.close()
            if isinstance(exc, StoreError) or not isinstance(exc, Exception):
                raise
            # every driver has its own errors; name the store
            raise wrap_open_error(self.location, exc) from None
        self.queries = Queries(self.view)
        self.projector = Projector(self.app.recorder, self.view, self._absorb)
        self._routes: dict[tuple[str, str], str] = {}
        self._own: set[int] = set()

    def _failed(self, exc: Exception) -> NoReturn:
        """Raise the store's own error as a :class:`StoreError` naming the store, ``exc`` its
        cause (:class:`EngineClosed` on a closed engine); one that is no failure of the store
        (:data:`_NOT_STORE_FAILURES`) is raised as it is. Called while handling ``exc``."""
        if self._closed:
            raise EngineClosed(self.location.display) from exc
        if isinstance(exc, self._not_failures) and not _store_side(exc):
            raise exc
        lines = str(exc).strip().splitlines()
        reason = lines[0] if lines else type(exc).__name__
        raise StoreError(f"store {self.location.display}: {reason}") from exc

    def _refresh(self) -> None:
        """Evict the cached aggregates and routes that another writer changed since this
        engine last looked, so a decision starts from current state. (A write racing this
        check still fails its version check and is retried from fresh state.)"""
        latest = self._position()
        if latest <= self._seen:
            return
        cache = self.app.repository.cache
        if latest - self._seen > REFRESH_SCAN_LIMIT:
            if isinstance(cache, LRUCache):
                cache.clear()
            self._routes.clear()
        else:
            foreign = [
                notification
                for notification in self.app.recorder.select_notifications(
                    start=self._seen,
                    limit=latest - self._seen,
                    stop=latest,
                    inclusive_of_start=False,
                )
                if notification.id not in self._own
            ]
            for notification in foreign:
                originator = notification.originator_id
                if cache is not None:
                    with contextlib.suppress(KeyError):
                        cache.get(
                            originator if isinstance(originator, UUID) else UUID(originator),
                            evict=True,
                        )
                if notification.topic.startswith(ConversationIndex.TOPIC):
                    self._routes.clear()
        self._own.clear()
        self._seen = latest

    def _wrote(self, positions: list[int]) -> None:
        """Remember what this engine journaled, so :meth:`_refresh` keeps its own writes."""
        if (
            positions
            and positions[0] == self._seen + 1
            and positions[-1] == self._seen + len(positions)
        ):
            self._seen = positions[-1]
        else:
            self._own.update(positions)

    def _absorb(self, rows: Sequence[NodeRow], expected: int, position: int) -> None:
        self.queries.absorb(rows, expected, position)

    def _needs(self) -> StoreNeeds | None:
        """What the journal and view need on PostgreSQL; ``None`` on another store."""
        if self.location.kind != "postgresql":
            return None
        from lineage_es.read.sqlview import VIEW_TABLES

        return store_needs(self.location, LineageApplication.name, VIEW_TABLES)

    def _open_view(self, lock_timeout: float | None, hold: SetupHold) -> ViewStore:
        if self.location.kind == "memory":
            return MemoryView()
        if self.location.kind == "sqlite":
            from lineage_es.read.sqlview import SQLiteView

            assert self.location.path is not None
            timeout = SQLITE_LOCK_TIMEOUT if lock_timeout is None else lock_timeout
            return SQLiteView(self.location.path, timeout=timeout)
        from lineage_es.read.sqlview import PostgresView

        return PostgresView(self.location.postgres, connection=hold.take(), tables_exist=hold.ready)

    # -- writing --------------------------------------------------------------------------

    def observe(
        self, host: str, payload: Mapping[str, Any], *, at: datetime | None = None
    ) -> AgentLineage | None:
        """Journal what one hook payload says and answer its sender's lineage.

        Returns only after the events are durable. ``None`` when the host adapter ignores
        the payload. Raises :class:`~lineage_es.errors.PayloadError` (nothing journaled)
        for a payload it cannot understand.
        """
        _require_moment(at)
        observation = hosts.adapter(host).observe(payload, at=at)
        return self._observe(observation, at, answer=True)

    def record(self, host: str, payload: Mapping[str, Any], *, at: datetime | None = None) -> None:
        """Like :meth:`observe`, without building the answer: for a hook that prints
        nothing, returning as soon as the events are durable and the view is current."""
        _require_moment(at)
        observation = hosts.adapter(host).observe(payload, at=at)
        self._observe(observation, at, answer=False)

    def observe_many(self, observations: Iterable[Observation], *, batch: int = 1000) -> int:
        """Journal many observations in order, up to ``batch`` of them per transaction, and
        answer nothing: for importers and ingest, where one durable commit per payload
        would dominate. Returns how many observations had a requester.

        An observation that names no root (Cursor's) is routed through the view, so the
        batch before it is saved first and it is observed on its own. An item that is not an
        :class:`Observation` is refused before its batch is saved (batches before it stay).
        """
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InvalidArgument(f"batch must be a positive int, not {batch!r}")
        count = 0
        chunk: list[Observation] = []
        with self._guarded():
            for observation in observations:
                _require_observation(observation)
                if observation.requester is None:
                    continue
                count += 1
                if observation.root is None:
                    self._record_batch(chunk)
                    chunk = []
                    self._observe(observation, None, answer=False)
                    continue
                _check_ids(observation)
                chunk.append(observation)
                if len(chunk) >= batch:
                    self._record_batch(chunk)
                    chunk = []
            self._record_batch(chunk)
        return count

    def _record_batch(self, observations: list[Observation]) -> None:
        if not observations:
            return
        for attempt in range(MAX_ATTEMPTS):
            self.projector.catch_up()
            self._refresh()
            first = observations[0]
            unit = _Unit(
                self.app, first.host, self._clock(), first.key, routes=self._routes, view=self.view
            )
            try:
                for observation in observations:
                    self._batch_one(observation, unit)
                unit.save()
                self._wrote(unit.positions)
                break
            except IntegrityError:
                unit.forget()
                time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
            except BaseException:
                unit.forget()
                raise
        else:
            raise ConcurrencyError(
                f"gave up after {MAX_ATTEMPTS} attempts: other writers kept changing the same root"
            )
        self.projector.catch_up()

    def _batch_one(self, observation: Observation, unit: _Unit) -> None:
        unit.host = observation.host
        unit.key = observation.key
        unit.recurs = observation.recurs
        unit.at = _utc(observation.at or self._clock())
        created = set(unit.created)
        root = self._route(observation, unit)
        if root is None:
            return
        fresh = root.id in unit.created - created
        if not fresh and root.has_seen(observation.key, recurs=observation.recurs, at=unit.at):
            return
        already = 0 if fresh else len(root.pending_events)
        decide(root, observation, at=unit.at, key=unit.key, elsewhere=unit.elsewhere)
        for event in root.pending_events[already:]:
            conversation = getattr(event, "conversation", None)
            if conversation is not None and isinstance(event, INDEXED):
                unit.placing[(root.host, conversation)] = root.conversation

    def observe_observation(
        self, observation: Observation, *, at: datetime | None = None
    ) -> AgentLineage | None:
        """Like :meth:`observe`, for an observation a transcript reader already made."""
        _require_observation(observation)
        _require_moment(at)
        return self._observe(observation, at, answer=True)

    def record_observation(self, observation: Observation, *, at: datetime | None = None) -> None:
        """Like :meth:`observe_observation`, without building the answer."""
        _require_observation(observation)
        _require_moment(at)
        self._observe(observation, at, answer=False)

    def _observe(
        self, observation: Observation, at: datetime | None, *, answer: bool
    ) -> AgentLineage | None:
        with self._guarded():
            if observation.requester is None:
                return None
            when = _utc(observation.at or at or self._clock())
            placed, saved = self._record(observation, when)
            if saved:
                self.projector.catch_up()
            return self._answer(observation, placed) if answer else None

    def resolve(self, host: str, meta: Mapping[str, Any]) -> AgentLineage | None:
        """The lineage of an MCP tool call from its ``_meta``; journals nothing (REPLAY.md: an
        MCP call is resolved, never journaled).

        A caller the journal knows is answered from the registry, with its tree; one it
        never saw start is answered from what ``_meta`` itself states, with no tree. Where the
        registry placed the caller by order alone (``inferred``, or ambiguous with no parent
        edge) and ``_meta`` natively states another parent, a node of the caller's root, the
        answer takes that parent (``native``, its depth below it) and keeps the caller's tree
        (:meth:`_meta_parent`): the host's own statement is never answered against.
        """
        claim = hosts.adapter(host).claim(meta)
        with self._guarded():
            if claim is None:
                return None
            self.projector.catch_up()
            known = self.queries.find(claim.conversation, claim.host)
            if known is not None:
                answer = self.queries.lineage_of(known, resolution=self._registry(known.resolution))
                stated = self._meta_parent(claim, known)
                if stated is None:
                    return answer
                return dataclasses.replace(
                    answer,
                    parent=stated.conversation,
                    depth=stated.depth + 1,
                    resolution="native",
                )
            parent = None if claim.parent is None else self.queries.find(claim.parent, claim.host)
        depth = claim.depth if claim.depth is not None else (1 if claim.parent else 0)
        root = claim.root or claim.conversation
        if parent is not None:  # a known parent gives its depth plus one and its root
            depth, root = parent.depth + 1, parent.root
        return AgentLineage(
            conversation=claim.conversation,
            root=root,
            depth=depth,
            resolution="native",
            parent=claim.parent,
            host=claim.host,
        )

    def _meta_parent(self, claim: Claim, known: NodeRow) -> NodeRow | None:
        """The parent ``_meta`` states for ``known``, when it places ``known`` better than the
        registry does; ``None`` when it agrees, or cannot be followed.

        Only a placement by order alone gives way (LINEAGE.md: a later fact corrects an
        inference, and places a child left ambiguous); a stated, confirmed, transcript or
        spawn-key placement stands, as does one ``_meta`` agrees with. The stated parent must
        be a node of the caller's root, neither deleted nor below the caller (a cycle). A
        ``_meta`` naming another root than the caller's is not followed either.
        """
        parent = claim.parent
        if (
            parent is None
            or known.conversation != claim.conversation
            or known.is_root
            or known.status == "deleted"
            or known.resolution != "inferred"
            or (known.parent == parent and not known.ambiguous)
            or claim.root not in (known.root, claim.conversation)  # unnamed: the thread itself
        ):
            return None
        stated = self.queries.find(parent, claim.host)
        if (
            stated is None
            or stated.conversation != parent
            or stated.root_id != known.root_id
            or stated.status == "deleted"
            or self.queries.relation(parent, claim.conversation, claim.host)
            in ("self", "child", "descendant")
        ):
            return None
        return stated

    def rename(self, conversation: str, name: str, *, host: str | None = None) -> None:
        """Give a node a display name; the last rename wins. A pending child is named by its
        spawn key and keeps the name once its conversation is bound.

        The name is one printable line of at most :data:`MAX_NAME_LENGTH` characters, not
        blank: anything else is :class:`InvalidArgument`, and nothing is journaled.
        """
        problem = _name_problem(name)
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
        _require_id(conversation, "a conversation")
        _require_id(host, "a host", optional=True)
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
            self._record(observation, _utc(self._clock()))
            self.projector.catch_up()

    def _record(self, observation: Observation, at: datetime) -> tuple[list[str], bool]:
        """Journal the observation; the conversations it placed, and whether it saved."""
        _check_ids(observation)
        for attempt in range(MAX_ATTEMPTS):
            self.projector.catch_up()
            if self._changes_nothing(observation):
                return [], False
            self._refresh()
            unit = _Unit(
                self.app,
                observation.host,
                at,
                observation.key,
                recurs=observation.recurs,
                routes=self._routes,
                view=self.view,
            )
            try:
                root = self._route(observation, unit)
                if root is None:
                    return [], False
                if root.id in unit.seen_before:
                    unit.forget()
                    return [], False
                decide(root, observation, at=unit.at, key=unit.key, elsewhere=unit.elsewhere)
                placed = unit.save()
                self._wrote(unit.positions)
                return placed, unit.saved
            except IntegrityError:
                unit.forget()
                # Another writer saved this root first: wait a little, jittered, so the
                # contenders spread out instead of colliding again in lockstep.
                time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
                continue
            except BaseException:
                unit.forget()
                raise
        raise ConcurrencyError(
            f"gave up after {MAX_ATTEMPTS} attempts: other writers kept changing the same root"
        )

    def _changes_nothing(self, observation: Observation) -> bool:
        """Whether the observation only says that live nodes of its root acted, which journals
        nothing: then its root aggregate is not even loaded (most hook payloads are prompts
        and tool calls of live agents). The view was just caught up; a stop another writer
        journals meanwhile is simply ordered after this observation."""
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
            ):
                return False
        return True

    def _route(self, observation: Observation, unit: _Unit) -> RootLineage | None:
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
                return self._unbind(root, requester, source, observation, unit)
            return root
        if seen is not None:
            return unit.start_root(requester, source, observation.workspace)
        if any(
            isinstance(f, SessionEnded) and f.conversation == requester for f in observation.facts
        ):
            return None  # the end of a session never seen: nothing to stop, nobody to bind
        named = _named_parent_root(observation, unit)
        if named is not None:
            return named
        return self._bind_by_order(observation, unit)

    @staticmethod
    def _unbind(
        root: RootLineage, requester: str, source: str, observation: Observation, unit: _Unit
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

    def _bind_by_order(self, observation: Observation, unit: _Unit) -> RootLineage | None:
        """An unknown conversation that may not start a root is a child of a pending start in
        its workspace, bound by order: when every pending start there has one parent, the
        parent is certain and it binds the one that started first (parallel children bind in
        start order). Pending starts of different parents under one root are never guessed
        between: it is placed there, ambiguous. With none, or several roots, it is not placed.

        Not placed, it journals nothing and stays unseen (HOSTS.md 3.2: no root holds it), so
        its first event after a start becomes pending binds it like any other: hooks run as
        separate processes, so a child's first event can be journaled before its parent's
        ``subagentStart``. A root first seen mid-stream bound so is unbound by its first
        root-only event (:meth:`_unbind`)."""
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

    # -- answering ------------------------------------------------------------------------

    @staticmethod
    def _registry(resolution: str) -> Any:
        """A placement made by earlier events and not contradicted since is ``registry``,
        unless a host fact confirmed or stated it."""
        return "registry" if resolution == "inferred" else resolution

    def _answer(self, observation: Observation, placed: list[str]) -> AgentLineage:
        requester = observation.requester
        assert requester is not None
        row = self.queries.find(requester, observation.host)
        if row is None and observation.root is None and not _may_start_root(observation):
            # A child not bound yet (Cursor quirk 7), never a root: only its depth is known,
            # at least 1; its parent and root are not, so its chain resolves to itself alone.
            return AgentLineage(
                conversation=requester,
                root=requester,
                depth=1,
                resolution="inferred",
                host=observation.host,
            )
        if row is None:
            root = observation.root or requester
            return AgentLineage(
                conversation=requester,
                root=root,
                depth=0 if root == requester else 1,
                resolution="native",
                host=observation.host,
            )
        resolution = None if requester in placed else self._registry(row.resolution)
        return self.queries.lineage_of(row, resolution=resolution)

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
            except self._failures as exc:
                self._failed(exc)

    @contextlib.contextmanager
    def _reading(self, *ids: tuple[object, str]) -> Iterator[Queries]:
        """The queries, caught up, :meth:`_guarded`; ``ids`` (value, what it is) are checked
        first. A host may be None."""
        for value, what in ids:
            _require_id(value, what, optional=what == "host")
        with self._guarded():
            self.projector.catch_up()
            yield self.queries

    def lineage(self, conversation: str, host: str | None = None) -> AgentLineage:
        """The current lineage of a known conversation (raises for an unknown one)."""
        with self._reading((conversation, "conversation"), (host, "host")) as queries:
            return queries.lineage_of(queries.require(conversation, host))

    def tree_for(self, conversation: str, host: str | None = None) -> LineageTree | None:
        """The live tree as ``conversation`` sees it; ``None`` when it is unknown."""
        with self._reading((conversation, "conversation"), (host, "host")) as queries:
            return queries.tree_for(conversation, host)

    def relation(self, a: str, b: str, host: str | None = None) -> RelationName:
        with self._reading((a, "a conversation"), (b, "a conversation"), (host, "host")) as q:
            return q.relation(a, b, host)

    def chain(self, conversation: str, host: str | None = None) -> Chain:
        with self._reading((conversation, "conversation"), (host, "host")) as queries:
            return queries.chain(conversation, host)

    def provenance(self, sender: str, recipient: str, host: str | None = None) -> Provenance:
        with self._reading((sender, "sender"), (recipient, "recipient"), (host, "host")) as q:
            return q.provenance(sender, recipient, host)

    def family(self, root: str, host: str | None = None) -> tuple[Member, ...]:
        with self._reading((root, "root"), (host, "host")) as queries:
            return queries.family(root, host)

    def agents(self, as_: str, host: str | None = None) -> tuple[Member, ...]:
        with self._reading((as_, "as_"), (host, "host")) as queries:
            return queries.agents(as_, host)

    def forest(
        self, host: str | None = None, *, include_stopped: bool = False, root: str | None = None
    ) -> tuple[ForestNode, ...]:
        ids: list[tuple[object, str]] = [(host, "host")]
        if root is not None:
            ids.append((root, "root"))
        with self._reading(*ids) as queries:
            return queries.forest(host, include_stopped=include_stopped, root=root)

    def as_of(self, *, position: int | None = None, time: datetime | None = None) -> Queries:
        """The tree view as it was at a journal position or a time, answering the same
        questions as the engine (time travel: the journal keeps every step).

        ``position`` is an int (0 or more), ``time`` a datetime: anything else is
        :class:`InvalidArgument`."""
        if position is not None and (
            isinstance(position, bool) or not isinstance(position, int) or position < 0
        ):
            raise InvalidArgument(f"position must be an int, 0 or more, not {position!r}")
        _require_moment(time, "time")
        view = MemoryView()
        with self._guarded(locked=False):  # its own view: the engine's may move meanwhile
            projector = Projector(self.app.recorder, view)
            if time is None:
                projector.catch_up(stop=position)
            else:
                cutoff = iso(_utc(time))
                events = [e for e in self.journal(stop=position) if e.timestamp <= cutoff]
                projector.apply_events(events, position=events[-1].position if events else 0)
        return Queries(view)

    # -- the journal ----------------------------------------------------------------------

    def position(self) -> int:
        """The journal's last position (0 when empty)."""
        with self._guarded(locked=False):
            return self._position()

    def _position(self) -> int:
        return int(self.app.recorder.max_notification_id() or 0)

    def journal(self, start: int = 0, stop: int | None = None) -> Iterator[JournalEvent]:
        """Every journal entry after ``start``, decoded, in order."""
        if self._closed:
            raise EngineClosed(self.location.display)
        return self._journal(start, stop)

    def _journal(self, start: int, stop: int | None) -> Iterator[JournalEvent]:
        """:func:`read_journal`, its store errors named (it reads page by page as it goes)."""
        try:
            yield from read_journal(self.app.recorder, start, stop)
        except self._failures as exc:
            self._failed(exc)

    def catch_up(self, progress: Progress | None = None) -> int:
        """Bring the view up to date with the journal (other processes may have written)."""
        with self._guarded():
            return self.projector.catch_up(progress=progress)

    def rebuild(self, progress: Progress | None = None) -> int:
        """Throw the view away and replay the whole journal into it."""
        with self._guarded():
            self.queries = Queries(self.view)
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
) -> Engine:
    """Open the engine on a store URL (default: ``$LINEAGE_STORE`` or the SQLite journal in
    the user's data dir). ``memory://`` keeps everything in the process.

    A SQLite journal that does not exist yet is created (its folder too), unless
    ``create=False``: then a missing file raises :class:`~lineage_es.stores.NoJournal` (a
    :class:`StoreError`) and nothing is created, for a caller that only means to read.
    ``lock_timeout`` bounds, in seconds, how long a write waits for another process's lock
    (default :data:`~lineage_es.stores.SQLITE_LOCK_TIMEOUT` on SQLite, 10 on PostgreSQL): a
    hook, which a host runs with a deadline, waits less.
    """
    return Engine(url, clock=clock, create=create, lock_timeout=lock_timeout)


__all__ = [
    "ConcurrencyError",
    "Engine",
    "EngineClosed",
    "InvalidArgument",
    "LineageApplication",
    "UnknownConversation",
    "open_engine",
]
