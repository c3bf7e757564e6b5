"""The eventsourcing application that owns the journal: its settings, its transcoder, how it
saves many aggregates at once and how it snapshots and loads a root."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any
from uuid import UUID

from eventsourcing.application import Application, ProcessingEvent, project_aggregate
from eventsourcing.domain import Aggregate, Snapshot
from eventsourcing.persistence import Notification, Transcoder

from lineage_es.domain.root import RootLineage
from lineage_es.transcoder import OrjsonTranscoder


class LineageApplication(Application[UUID]):
    """The eventsourcing application that owns the journal."""

    name = "lineage"
    snapshotting_intervals = {RootLineage: 200}  # noqa: RUF012 (the library's own shape)
    env = {  # noqa: RUF012
        "AGGREGATE_CACHE_MAXSIZE": "1024",
        "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
        # The engine keeps its cache coherent from the notification log
        # (``lineage_es.engine.unit.CacheWatch``) instead of asking the store for newer
        # events on every ``get``.
        "AGGREGATE_CACHE_FASTFORWARD": "n",
    }

    def construct_transcoder(self) -> Transcoder:
        return OrjsonTranscoder()

    def save_aggregates(self, *aggregates: Aggregate) -> list[Notification]:
        """Save aggregates in one transaction; returns the journal entries written, in order
        (what the notification log gives back when read, so the writer's view can apply them
        without reading them back).

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
        return [recording.notification for recording in recordings]

    def _snapshot_saved(self, processing_event: ProcessingEvent[UUID]) -> None:
        """Snapshot each root this save carried past a multiple of its interval, once, as it
        stands saved. The library would take one snapshot per multiple crossed, each of the
        root read back from its previous snapshot and events: for an import's batch of
        thousands of events of one large root, that is quadratic in the root's size."""
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
        """Snapshots are a cache, and one of an older ``class_version`` of the root lacks state
        its events imply (the session ends a resume followed, when each lifetime began): a
        root restored from it would decide later facts otherwise than one replayed from its
        events (a copy of the store made by ``journal export``, which keeps no snapshots). So
        such a snapshot is passed over and the root is replayed from its first event; the
        next snapshot taken of it is whole again."""
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
