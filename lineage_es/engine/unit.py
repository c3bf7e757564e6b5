"""The unit of work: the root aggregates one observation (or one batch) touches, loaded once,
changed by the rules, saved together with their new index entries in one transaction; the
one retry loop for a save another writer got in first; and the aggregate cache kept coherent
with what other writers journal.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, LRUCache
from eventsourcing.persistence import IntegrityError, Notification

from lineage_es.domain.ids import index_id, root_id
from lineage_es.domain.index import ConversationIndex
from lineage_es.domain.root import RootLineage
from lineage_es.engine.application import LineageApplication
from lineage_es.errors import ConcurrencyError
from lineage_es.facts import Host, Observation
from lineage_es.read.view import NodeRow, ViewStore

#: How often a unit is retried when another writer saved the same root first.
MAX_ATTEMPTS = 64

#: Past this many foreign journal entries, the aggregate cache is dropped, not scanned.
REFRESH_SCAN_LIMIT = 1000

#: The events that put a conversation in a root: it gets (or, moved, takes) an index entry.
INDEXED = (
    RootLineage.Created,
    RootLineage.ChildPlaced,
    RootLineage.ChildBound,
    RootLineage.ChildAdopted,
)

#: The events that place (or re-place) a conversation: what a unit reports as placed.
PLACING = (*INDEXED, RootLineage.EdgeCorrected, RootLineage.EdgeConfirmed)

#: Which root each ``(host, conversation)`` belongs to, as far as the engine remembers.
Routes = dict[tuple[str, str], str]

Result = TypeVar("Result")


@dataclass
class UnitOfWork:
    """The aggregates one observation (or one batch of them) touches, saved together in one
    transaction."""

    app: LineageApplication
    host: Host
    at: datetime
    key: str
    #: Whether the observation's payload can recur in a later lifetime of its root.
    recurs: bool = False
    roots: dict[UUID, RootLineage] = field(default_factory=dict)
    created: set[UUID] = field(default_factory=set)
    seen_before: set[UUID] = field(default_factory=set)
    #: Conversations whose index entry moves to another root (an undone binding), and to which.
    moves: dict[str, str] = field(default_factory=dict)
    moved: list[UUID] = field(default_factory=list)
    #: The engine's memory of which root each conversation belongs to (index entries only
    #: ever move when a wrong Cursor binding is undone, which updates it).
    routes: Routes = field(default_factory=dict)
    #: Conversations placed by earlier observations of the same batch, not yet indexed.
    placing: Routes = field(default_factory=dict)
    #: The tree view, current as of this unit's start (it answers "never indexed" quickly).
    view: ViewStore = field(kw_only=True)
    #: What the view listed for each conversation asked about: it does not change during the
    #: unit, and a batch asks about the same conversations again and again.
    viewed: dict[str, list[NodeRow]] = field(default_factory=dict)
    #: The journal entries this unit wrote, in order.
    written: list[Notification] = field(default_factory=list)
    #: Other aggregates saved in this unit's transaction (an inbox's ledger: the offset of
    #: the rows this unit journals), saved even when the rules change no root.
    also: tuple[Any, ...] = ()

    @property
    def positions(self) -> list[int]:
        """The journal positions this unit wrote."""
        return [entry.id for entry in self.written]

    def get_root(self, conversation: str) -> RootLineage | None:
        """The root aggregate of root conversation ``conversation``, loaded once per unit;
        ``None`` when it never started."""
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
            return not any(row.root_id == aggregate_id.hex for row in self._viewed(conversation))
        return False

    def _viewed(self, conversation: str) -> list[NodeRow]:
        """The view's rows for ``conversation`` as of this unit's start."""
        rows = self.viewed.get(conversation)
        if rows is None:
            rows = self.viewed[conversation] = self.view.find(conversation)
        return rows

    def start_root(self, conversation: str, source: str, workspace: tuple[str, ...]) -> RootLineage:
        """A new root aggregate for ``conversation``, saved with this unit."""
        root = RootLineage.start(
            self.host, conversation, at=self.at, workspace=workspace, source=source, fact=self.key
        )
        self.roots[root.id] = root
        self.created.add(root.id)
        return root

    def apply(self, observation: Observation, root: RootLineage) -> None:
        """Let ``root`` decide what ``observation`` does to it, at this unit's time and key,
        telling it which conversations other roots hold."""
        root.apply_observation(
            observation,
            at=self.at,
            fact=self.key,
            elsewhere=lambda conversation: self.held_elsewhere(conversation, root),
        )

    def held_elsewhere(self, conversation: str, root: RootLineage) -> bool:
        """Whether ``conversation`` already belongs to another root than ``root``: a
        conversation lives in one root only."""
        if any(other is not root and other.knows(conversation) for other in self.roots.values()):
            return True
        found = self.root_of(conversation)
        return found is not None and found != root.conversation

    def root_of(self, conversation: str) -> str | None:
        """The root conversation ``conversation`` belongs to: placed earlier in this unit
        (a batch), or routed by the index."""
        placed = self.placing.get((self.host, conversation))
        return placed if placed is not None else self._indexed_root(self.host, conversation)

    def _indexed_root(self, host: str, conversation: str) -> str | None:
        """The root the index puts ``conversation`` in, remembered in :attr:`routes`."""
        route = self.routes.get((host, conversation))
        if route is not None:
            return route
        entry = self.index_entry(conversation, host)
        if entry is None:
            return None
        self.routes[(host, conversation)] = entry.root
        return entry.root

    def index_entry(self, conversation: str, host: str | None = None) -> ConversationIndex | None:
        """The index entry of ``conversation`` (of this unit's host unless ``host``)."""
        host = host or self.host
        # The view is caught up before every unit and lists every conversation that was ever
        # indexed (deleted and re-rooted ones too): one it does not list has no entry, and a
        # first import asks that of nearly every conversation. (An entry another writer adds
        # meanwhile makes this unit's save conflict, and the retry sees it.)
        if not any(row.host == host for row in self._viewed(conversation)):
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
                if isinstance(event, PLACING):
                    placed.append(conversation)
                if isinstance(event, INDEXED) and (root.host, conversation) not in entries:
                    entry = self._entry_to_save(root.host, conversation, root.conversation, event)
                    if entry is not None:
                        entries[(root.host, conversation)] = entry
        also = [aggregate for aggregate in self.also if aggregate.pending_events]
        if entries or also or any(root.pending_events for root in self.roots.values()):
            aggregates = (*self.roots.values(), *entries.values(), *also)
            self.written = self.app.save_aggregates(*aggregates)
            for (host, conversation), entry in entries.items():
                self.routes[(host, conversation)] = entry.root
        return placed

    def _entry_to_save(
        self, host: str, conversation: str, root: str, event: Any
    ) -> ConversationIndex | None:
        """The index entry that ``event`` (placing ``conversation`` in ``root``) creates or
        moves; ``None`` when the index already has it where it belongs."""
        if conversation not in self.moves and self._indexed_root(host, conversation) is not None:
            return None
        existing = self.index_entry(conversation, host)
        if existing is None:
            return ConversationIndex.create(host, conversation, root, event.timestamp)
        if conversation in self.moves:
            existing.move(self.moves[conversation], self.at)
            self.moved.append(existing.id)
            return existing
        return None

    def evict_touched(self) -> None:
        """Drop cached copies of the touched aggregates, and the remembered routes: they may
        hold changes that were never saved."""
        cache = self.app.repository.cache
        if cache is None:
            return
        self.routes.clear()
        for aggregate_id in [*self.roots, *self.moved]:
            try:
                cache.get(aggregate_id, evict=True)
            except KeyError:
                continue


def save_with_retries(
    begin: Callable[[], UnitOfWork | None],
    work: Callable[[UnitOfWork], Result],
    *,
    nothing: Result,
) -> Result:
    """Run ``work`` on a fresh unit from ``begin`` until no other writer saved a root it
    touched first (the store refuses the save with ``IntegrityError``), at most
    :data:`MAX_ATTEMPTS` times; then :class:`ConcurrencyError`. ``begin`` returning ``None``
    means there is nothing to journal: ``nothing`` is returned.

    A unit that fails evicts what it touched from the cache. The wait after a lost race is
    jittered, so the contenders spread out instead of colliding again in lockstep. (A loop of
    a few lines rather than a retry library: the hook imports this on every host event.)

    Only a lost race is retried: a wait for another process's lock that ran out
    (:class:`~lineage_es.stores.LockTimedOut`) ends the unit at once, since another attempt
    would wait the whole lock timeout again.
    """
    for attempt in range(MAX_ATTEMPTS):
        unit = begin()
        if unit is None:
            return nothing
        try:
            return work(unit)
        except IntegrityError:
            unit.evict_touched()
            time.sleep(random.uniform(0, 0.002 * min(attempt + 1, 10)))
        except BaseException:
            unit.evict_touched()
            raise
    raise ConcurrencyError(
        f"gave up after {MAX_ATTEMPTS} attempts: other writers kept changing the same root"
    )


class CacheWatch:
    """Keeps the application's aggregate cache, and the remembered routes, coherent with the
    journal: what another writer journaled since this engine last looked is evicted before a
    unit starts, so a decision starts from current state. (A write racing this check still
    fails its version check and is retried from fresh state.)"""

    def __init__(self, app: LineageApplication) -> None:
        self.app = app
        #: Which root each conversation belongs to: shared by every unit of this engine.
        self.routes: Routes = {}
        #: The journal position up to which the cache is known to be current (it is empty
        #: yet), and the positions this engine wrote past it.
        self._position_seen = self.position()
        self._own_positions: set[int] = set()

    def position(self) -> int:
        """The journal's last position (0 when empty)."""
        return int(self.app.recorder.max_notification_id() or 0)

    def evict_foreign_changes(self) -> None:
        """Evict the cached aggregates and routes that another writer changed since this
        engine last looked."""
        latest = self.position()
        if latest <= self._position_seen:
            return
        cache = self.app.repository.cache
        if latest - self._position_seen > REFRESH_SCAN_LIMIT:
            if isinstance(cache, LRUCache):
                cache.clear()
            self.routes.clear()
        else:
            foreign = [
                notification
                for notification in self.app.recorder.select_notifications(
                    start=self._position_seen,
                    limit=latest - self._position_seen,
                    stop=latest,
                    inclusive_of_start=False,
                )
                if notification.id not in self._own_positions
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
                    self.routes.clear()
        self._own_positions.clear()
        self._position_seen = latest

    def note_own_writes(self, positions: list[int]) -> None:
        """Remember what this engine journaled, so :meth:`evict_foreign_changes` keeps it."""
        if (
            positions
            and positions[0] == self._position_seen + 1
            and positions[-1] == self._position_seen + len(positions)
        ):
            self._position_seen = positions[-1]
        else:
            self._own_positions.update(positions)
