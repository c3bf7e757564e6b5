"""A view of its own as the journal had it at a position or a time, rows and all, built the
way the engine builds the one its ``as_of`` answers from (whose internals it does not hand
out): for tests that look at view rows a public answer does not carry."""

from __future__ import annotations

from datetime import datetime

from lineage_es.engine.engine import Engine
from lineage_es.engine.journaling import as_utc
from lineage_es.read.decoding import iso
from lineage_es.read.projection import Projector
from lineage_es.read.queries import Queries
from lineage_es.read.view import MemoryView


def past_queries(
    engine: Engine, *, position: int | None = None, time: datetime | None = None
) -> Queries:
    """The queries over a fresh view of the journal up to ``position`` (every entry when
    None), only the entries made by ``time`` when given: stops held then, and not yet
    resumed by then, show (the projector's time-travel rules)."""
    view = MemoryView()
    projector = Projector(engine.app.recorder, view)
    if time is None:
        projector.catch_up(stop=position)
    else:
        cutoff = iso(as_utc(time))
        events = [e for e in engine.journal(stop=position) if e.timestamp <= cutoff]
        projector.apply_events(events, position=events[-1].position if events else 0)
    return Queries(view)
