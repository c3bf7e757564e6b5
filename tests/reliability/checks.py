"""What the reliability tests check a journal and its view for, shared between them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from lineage_es.engine.engine import Engine
from lineage_es.read.decoding import JournalEvent
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView


def shape(event: JournalEvent) -> tuple[Any, ...]:
    """An event without its journal position (positions may skip after a rollback): what a
    journal and its sequential replay must agree on."""
    return (event.originator_id, event.version, event.topic, orjson.dumps(event.state))


@dataclass(frozen=True)
class Difference:
    """How a journal differs from the one a sequential replay of its facts writes."""

    lost: int
    invented: int
    same_order: bool


def compare(store: Sequence[JournalEvent], reference: Sequence[JournalEvent]) -> Difference:
    """``lost``: reference events the store lacks; ``invented``: store events the reference
    lacks; ``same_order``: both hold the same events in the same order."""
    ours = [shape(e) for e in store]
    theirs = [shape(e) for e in reference]
    return Difference(
        lost=sum((Counter(theirs) - Counter(ours)).values()),
        invented=sum((Counter(ours) - Counter(theirs)).values()),
        same_order=ours == theirs,
    )


def runs_per_key(events: Iterable[JournalEvent]) -> Counter[str]:
    """For each observation key, how many separate runs of journal entries carry it. One
    observation is saved in one transaction, so a key found in two runs was written twice."""
    runs: Counter[str] = Counter()
    current = None
    for event in events:
        fact = event.state.get("fact")
        if not fact:
            continue  # index entries carry no key; they are saved with their root's events
        if fact != current:
            runs[fact] += 1
            current = fact
    return runs


def view_is_a_prefix(engine: Engine) -> bool:
    """Whether the persisted view, as it is (not caught up), equals the journal replayed up to
    the view's own position: a page of the view is written whole or not at all."""
    position = engine.view.position()
    persisted = engine.view.all_rows()
    prefix = MemoryView()
    if position:
        Projector(engine.app.recorder, prefix).catch_up(stop=position)
    return prefix.position() == position and prefix.all_rows() == persisted
