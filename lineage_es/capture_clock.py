"""Where a capture of bare hook payloads goes on the logical clock, when ``lineage ingest``
reads it.

Bare hook payloads carry no time: ``lineage-replay`` dates a capture's row ``n`` at
:func:`~lineage_es.replay.inputs.logical_time` ``(n)``. Ingest dates it ``base + n`` instead,
so that captures ingested one after another (in one call, in the order read, or in several)
read as one recording: ``base`` is the latest logical time already in the store, or where the
previous capture of the call ended, whichever is later (:class:`CaptureClock`). A capture the
store already holds keeps the base it had then, so that it is a duplicate again.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import orjson

from lineage_es.engine import Engine
from lineage_es.errors import InputError, PayloadError
from lineage_es.facts import LOGICAL_EPOCH, Acted, RootSeen
from lineage_es.hosts import adapter
from lineage_es.projection import PAGE_SIZE, iso
from lineage_es.render import LOGICAL_SPAN
from lineage_es.replay.inputs import PayloadRow, detect_form, read_rows

#: The facts a payload states that journal nothing about nodes already known and live.
_QUIET = (Acted, RootSeen)


@dataclass
class Capture:
    """What the rows of a capture of bare hook payloads would state: each key's rows (those
    with a requester), the keys of payloads that happen once, the last row read, and the last
    row stating more than that a known node acted (a row after it journals nothing when its
    nodes are live)."""

    rows: dict[str, list[int]] = field(default_factory=dict)
    once: set[str] = field(default_factory=set)
    last: int = 0
    last_loud: int = 0


def read_capture(path: Path, host: str | None) -> Capture | None:
    """The capture at ``path`` as :class:`Capture`; ``None`` when the file is in another
    form, or cannot be read (ingest then reports why)."""
    try:
        if detect_form(path, lenient=True) != "hooks":
            return None
        capture = Capture()
        for item in read_rows(path, host=host, lenient=True):
            capture.last = max(capture.last, item.row)
            if not isinstance(item, PayloadRow):
                continue
            try:
                observation = adapter(item.host).observe(item.payload, at=item.at)
            except PayloadError:
                continue
            if observation.requester is None:
                continue
            capture.rows.setdefault(observation.key, []).append(item.row)
            if not observation.recurs:
                capture.once.add(observation.key)
            if not all(isinstance(fact, _QUIET) for fact in observation.facts):
                capture.last_loud = item.row
    except (InputError, OSError):
        return None
    return capture


#: The years the logical era spans, as a stored time starts (a cheap test before decoding).
_ERA_YEARS = tuple(
    f'"{year:04d}-'.encode()
    for year in range(
        LOGICAL_EPOCH.year, (LOGICAL_EPOCH + timedelta(seconds=LOGICAL_SPAN)).year + 1
    )
)


class CaptureClock:
    """Where the next capture of bare hook payloads starts on the logical clock.

    Row ``n`` of a capture is dated ``base + n`` seconds after :data:`LOGICAL_EPOCH`. A new
    capture's ``base`` is the latest logical time in the store (an event dated less than
    :data:`LOGICAL_SPAN` after the epoch), or the end of the last capture this ingest read,
    whichever is later: captures ingested in order read as one recording, whose rows are
    numbered on from file to file.

    A capture read again keeps its first base, so its payloads are duplicates again (a
    recurring one is a duplicate only when dated before the change that ended its lifetime).
    A base ``b`` is the capture's (of several, the one holding most of its facts, then the
    latest) when the store holds some of its facts at their rows' times
    ``b + n``, and every event dated in ``(b, b + last]`` names a fact of a row at or after its
    time (an event may be dated back, to a stop it went on from). The window may also end with
    a later capture's events, ingested on its own after this one's last journaled row: that
    is taken only when a fact the capture's rows matched happens once (a payload naming a
    tool call) and its rows from there on state no more than that known nodes acted.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        #: The latest logical second in the store or ended by a capture this ingest read.
        self.latest = 0
        #: The journal position read up to.
        self.read_to = 0
        #: The logical seconds of each fact's events, and all of them as (second, fact), sorted.
        self.seconds: dict[str, list[int]] = {}
        self.events: list[tuple[int, str]] = []

    def base_for(self, capture: Capture) -> int:
        """The base of ``capture``: its own if the store holds it already, else the latest
        logical time."""
        self._catch_up()
        candidates = {
            second - row
            for key, rows in capture.rows.items()
            for second in self.seconds.get(key, ())
            for row in rows
            if second >= row
        }
        held = {base: self._held(capture, base) for base in candidates}
        best = max(held, key=lambda base: (held[base], base), default=None)
        return best if best is not None and held[best] else self.latest

    def ingested(self, base: int, capture: Capture) -> None:
        """The capture went in from ``base``: the next one starts after it."""
        self.latest = max(self.latest, base + capture.last)

    def _held(self, capture: Capture, base: int) -> int:
        """How many of the store's events are ``capture``'s ingested from ``base``; 0 when
        the store does not hold it so (see the class)."""
        start = bisect.bisect_right(self.events, base, key=_second)
        stop = bisect.bisect_right(self.events, base + capture.last, key=_second)
        matched = 0
        once = False
        for second, fact in self.events[start:stop]:
            rows = capture.rows.get(fact)
            if rows is not None and base + rows[-1] >= second:
                matched += 1
                once = once or fact in capture.once
                continue
            return matched if once and base + capture.last_loud < second else 0
        return matched

    def _catch_up(self) -> None:
        """Read the journal's new events dated in the logical era."""
        recorder = self.engine.app.recorder
        changed = False
        while True:
            page = recorder.select_notifications(
                start=self.read_to, limit=PAGE_SIZE, inclusive_of_start=False
            )
            if not page:
                break
            self.read_to = page[-1].id
            for notification in page:
                if not any(year in notification.state for year in _ERA_YEARS):
                    continue
                state = orjson.loads(notification.state)
                second = _logical_second(iso(state.get("timestamp")))
                if second is None:
                    continue
                self.latest = max(self.latest, math.ceil(second))
                fact = state.get("fact")
                if isinstance(fact, str) and fact and second.is_integer():
                    self.seconds.setdefault(fact, []).append(int(second))
                    self.events.append((int(second), fact))
                    changed = True
        if changed:
            self.events.sort()


def _second(event: tuple[int, str]) -> int:
    return event[0]


def _logical_second(stamp: str) -> float | None:
    """How many seconds after :data:`LOGICAL_EPOCH` a stored time is, when it lies in the
    logical era (less than :data:`LOGICAL_SPAN` after it); else ``None``."""
    if not stamp:
        return None
    second = (datetime.fromisoformat(stamp) - LOGICAL_EPOCH).total_seconds()
    return second if 0 <= second < LOGICAL_SPAN else None
