"""An engine applies the entries it has just journaled to its view as the store gave them
back, without reading them again; whatever another writer journaled before them is read
from the journal with them."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, Observation
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView, NodeRow
from tests.support.feed import EPOCH, Feed, keys


def entries_read(engine: Engine) -> list[int]:
    """The journal positions the engine reads from now on (each entry of each page read)."""
    read: list[int] = []
    recorder: Any = engine.app.recorder
    select = recorder.select_notifications

    def counting(*args: Any, **kwargs: Any) -> Any:
        page = select(*args, **kwargs)
        read.extend(entry.id for entry in page)
        return page

    recorder.select_notifications = counting
    return read


def rebuilt_rows(engine: Engine) -> list[NodeRow]:
    """The view a projector makes from the whole journal."""
    view = MemoryView()
    Projector(engine.app.recorder, view).catch_up()
    return view.all_rows()


def test_what_an_engine_journals_reaches_its_view_unread(engine: Engine) -> None:
    feed = Feed(engine)
    feed.root("R")
    read = entries_read(engine)
    feed.child("R", "R", "A")
    engine.observe_many(
        [
            Observation(
                host="claude",
                requester="R",
                key="batch-1",
                facts=(ChildIdentified("R", "B", "confirmed"),),
                root="R",
                at=EPOCH + timedelta(hours=1),
            )
        ]
    )
    tree = engine.tree_for("R")
    assert tree is not None and keys(tree.children) == ["A", "B"]
    assert read == []
    assert engine.view.all_rows() == rebuilt_rows(engine)


def test_what_another_writer_journaled_first_is_read_with_it(shared_store_url: str) -> None:
    with open_engine(shared_store_url) as first, open_engine(shared_store_url) as second:
        one = Feed(first)
        two = Feed(second, clock=one.clock)
        one.root("R")
        before = first.position()
        two.child("R", "R", "B")
        read = entries_read(first)
        one.child("R", "R", "A")
        assert read[0] == before + 1  # the other writer's entries, then this engine's own
        tree = first.tree_for("R")
        assert tree is not None and keys(tree.children) == ["B", "A"]
        assert first.view.all_rows() == rebuilt_rows(first)
