"""Writing many stored events in one transaction, in bounded batches, telling progress.

eventsourcing's recorders write a save as one statement: on PostgreSQL one ``INSERT ...
SELECT FROM unnest(%s)`` of every event, sent in the driver's pipeline mode, which stalls for
good once that statement grows past what the connection's buffers take (some tens of
thousands of events), while it holds the events table's lock and every other writer waits.
An import writes its events here instead: the table locked and the listeners notified once,
as the recorder does, then the same insert statement once per batch, in one transaction (all
or nothing), and ``progress`` told after each batch.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from eventsourcing.persistence import ApplicationRecorder, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder

if TYPE_CHECKING:
    from eventsourcing.postgres import PostgresApplicationRecorder

#: Events written by one statement: small enough for any connection's buffers, large enough
#: that the round trips cost little.
BATCH_EVENTS = 1000


def insert_in_batches(
    recorder: ApplicationRecorder,
    stored_events: Sequence[StoredEvent],
    *,
    progress: Callable[[int], None] | None = None,
    batch: int = BATCH_EVENTS,
) -> None:
    """Write ``stored_events`` in order in one transaction, ``batch`` at a time, calling
    ``progress`` with each batch's size once it is written (the commit comes after the last).

    A store other than SQLite or PostgreSQL (memory) takes them in one call, as it holds
    them in memory anyway."""
    if not stored_events:
        return
    batches = [stored_events[i : i + batch] for i in range(0, len(stored_events), batch)]
    # A PostgreSQL recorder's module is loaded once there is one; a SQLite import never
    # loads it (it imports psycopg).
    postgres = sys.modules.get("eventsourcing.postgres")
    if postgres is not None and isinstance(recorder, postgres.PostgresApplicationRecorder):
        _postgres_batches(recorder, batches, progress)
    elif isinstance(recorder, SQLiteApplicationRecorder):
        with recorder.datastore.transaction(commit=True) as cursor:
            for events in batches:
                recorder._insert_events(cursor, events)
                if progress is not None:
                    progress(len(events))
    else:
        recorder.insert_events(stored_events)
        if progress is not None:
            progress(len(stored_events))


def _postgres_batches(
    recorder: PostgresApplicationRecorder,
    batches: list[Sequence[StoredEvent]],
    progress: Callable[[int], None] | None,
) -> None:
    """The recorder's own statements (its table lock, its notification, its insert), without
    the pipeline, one insert per batch, in one transaction."""
    with (
        recorder.datastore.get_connection() as connection,
        connection.transaction(),
        connection.cursor() as cursor,
    ):
        recorder._lock_table(cursor)
        recorder._notify_channel(cursor)
        for events in batches:
            rows = [
                recorder.construct_pg_stored_event(
                    e.originator_id, e.originator_version, e.topic, e.state
                )
                for e in events
            ]
            cursor.execute(recorder.insert_events_statement, (rows,))
            if progress is not None:
                progress(len(events))
