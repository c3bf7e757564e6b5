"""Journaling observations: each is routed to its root, decided by the rules and saved in a
unit of work, alone or with up to a batch of others in one transaction, retried from fresh
state when another writer got in first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from eventsourcing.persistence import Notification

from lineage_es.engine.application import LineageApplication
from lineage_es.engine.guards import check_storable
from lineage_es.engine.routing import Router
from lineage_es.engine.unit import INDEXED, CacheWatch, UnitOfWork, save_with_retries
from lineage_es.facts import Observation
from lineage_es.read.projection import Projector
from lineage_es.read.view import ViewStore

Clock = Callable[[], datetime]

#: Makes the aggregates saved with a batch, afresh for each attempt (a failed save takes
#: their pending events).
Also = Callable[[], Sequence[Any]]


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive one is taken to be UTC already."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class Journaler:
    """Journals observations into the application: one at a time (:meth:`record`) or a batch
    per transaction (:meth:`record_batch`). Every unit starts from a caught-up view and a
    cache without other writers' changes."""

    def __init__(
        self,
        app: LineageApplication,
        view: ViewStore,
        projector: Projector,
        router: Router,
        cache: CacheWatch,
        clock: Clock,
    ) -> None:
        self.app = app
        self.view = view
        self.projector = projector
        self.router = router
        self.cache = cache
        self.clock = clock

    def _fresh_unit(self, observation: Observation, at: datetime, *, recurs: bool) -> UnitOfWork:
        """A fresh unit starting with ``observation``, after evicting other writers'
        changes from the cache."""
        self.cache.evict_foreign_changes()
        return UnitOfWork(
            self.app,
            observation.host,
            at,
            observation.key,
            recurs=recurs,
            routes=self.cache.routes,
            view=self.view,
        )

    def record(
        self, observation: Observation, at: datetime
    ) -> tuple[list[str], list[Notification]]:
        """Journal ``observation`` at ``at`` in a transaction of its own; returns the
        conversations it placed, and the journal entries it wrote (none: it saved nothing)."""
        check_storable(observation)

        def begin() -> UnitOfWork | None:
            self.projector.catch_up()
            if self.router.only_live_nodes_acted(observation, at):
                return None
            return self._fresh_unit(observation, at, recurs=observation.recurs)

        def work(unit: UnitOfWork) -> tuple[list[str], list[Notification]]:
            root = self.router.route(observation, unit)
            if root is None:
                return [], []
            if root.id in unit.seen_before:
                unit.evict_touched()
                return [], []
            unit.apply(observation, root)
            placed = unit.save()
            self.cache.note_own_writes(unit.positions)
            return placed, unit.written

        nothing: tuple[list[str], list[Notification]] = ([], [])
        return save_with_retries(begin, work, nothing=nothing)

    def record_batch(self, observations: list[Observation], also: Also | None = None) -> None:
        """Journal ``observations`` (each naming its root, each checked storable) in order in
        one transaction, then bring the view up to date. ``also`` makes, for each attempt,
        aggregates saved in that same transaction (alone when there is no observation)."""
        if not observations:
            pending = [a for a in (also() if also is not None else ()) if a.pending_events]
            if pending:
                self.app.save_aggregates(*pending)
            return

        def begin() -> UnitOfWork:
            self.projector.catch_up()
            # each observation sets its own key, time and recurrence (:meth:`_apply_in_batch`)
            return self._fresh_unit(observations[0], self.clock(), recurs=False)

        def work(unit: UnitOfWork) -> list[Notification]:
            for observation in observations:
                self._apply_in_batch(observation, unit)
            if also is not None:
                unit.also = tuple(also())
            unit.save()
            self.cache.note_own_writes(unit.positions)
            return unit.written

        self.projector.catch_up_with(save_with_retries(begin, work, nothing=[]))

    def _apply_in_batch(self, observation: Observation, unit: UnitOfWork) -> None:
        """Route and decide one observation of a batch within the batch's ``unit``; what it
        places is remembered for the observations after it, before the index has it."""
        unit.host = observation.host
        unit.key = observation.key
        unit.recurs = observation.recurs
        unit.at = as_utc(observation.at or self.clock())
        created = set(unit.created)
        root = self.router.route(observation, unit)
        if root is None:
            return
        fresh = root.id in unit.created - created
        if not fresh and root.has_seen(observation.key, recurs=observation.recurs, at=unit.at):
            return
        already = 0 if fresh else len(root.pending_events)
        unit.apply(observation, root)
        for event in root.pending_events[already:]:
            conversation = getattr(event, "conversation", None)
            if conversation is not None and isinstance(event, INDEXED):
                unit.placing[(root.host, conversation)] = root.conversation
