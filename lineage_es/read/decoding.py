"""Reading the journal: stored entries in pages, each decoded into a :class:`JournalEvent`.

An entry is decoded straight from its stored JSON and upcast to its event class's current
version; no domain object is rebuilt, so a reader of the journal (the projection, an export,
the import ledger) pays for a dict, not an aggregate.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple
from uuid import UUID

import orjson
from eventsourcing.persistence import ApplicationRecorder, Notification

from lineage_es.domain.topics import EVENT_CLASSES, upcast

#: Event types whose stored state may need upcasting.
VERSIONED = frozenset(t for t, c in EVENT_CLASSES.items() if getattr(c, "class_version", 1) > 1)

#: Entries asked of the recorder at a time: far faster than its default section of 10.
PAGE_SIZE = 1000


class JournalEvent(NamedTuple):
    """One decoded journal entry: its position, root aggregate, topic and state."""

    position: int
    originator_id: str
    version: int
    topic: str
    state: dict[str, Any]

    @property
    def timestamp(self) -> str:
        """When the event happened, as :func:`iso` writes it."""
        return iso(self.state.get("timestamp"))


def iso(value: Any) -> str:
    """A stored timestamp as a fixed-width UTC ISO string, so strings sort as times; ``""``
    for a value that holds no time."""
    if type(value) is dict:
        value = value.get("_data_")
    if type(value) is str and len(value) == 32 and value.endswith("+00:00"):
        return value
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        moment = datetime.fromisoformat(value)
    else:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def originator_hex(originator: object) -> str:
    """A stored entry's aggregate id as the journal writes it: hex, without dashes."""
    return originator.hex if isinstance(originator, UUID) else str(originator)


def decode(notification: Notification) -> JournalEvent | None:
    """The journal entry for a notification, upcast to the current event version; ``None``
    (with a warning) for a topic this version does not know."""
    topic = notification.topic
    if topic not in EVENT_CLASSES:
        warnings.warn(f"skipping journal entry of unknown type {topic!r}", stacklevel=2)
        return None
    state = orjson.loads(notification.state)
    if topic in VERSIONED or "class_version" in state:
        upcast(topic, state)
    return JournalEvent(
        notification.id,
        originator_hex(notification.originator_id),
        notification.originator_version,
        topic,
        state,
    )


def stored_entries(
    recorder: ApplicationRecorder, start: int = 0, stop: int | None = None
) -> Iterator[Notification]:
    """Every stored entry after position ``start`` (up to ``stop``), whatever its type, read
    :data:`PAGE_SIZE` at a time."""
    if stop == 0:
        return
    position = start
    while True:
        page = recorder.select_notifications(
            start=position, limit=PAGE_SIZE, stop=stop, inclusive_of_start=False
        )
        if not page:
            return
        yield from page
        position = page[-1].id


def read_journal(
    recorder: ApplicationRecorder, start: int = 0, stop: int | None = None
) -> Iterator[JournalEvent]:
    """Every journal entry after position ``start`` (up to ``stop``), decoded, in order;
    one of an unknown type is skipped with a warning (:func:`decode`)."""
    for notification in stored_entries(recorder, start, stop):
        event = decode(notification)
        if event is not None:
            yield event
