"""A view reads many roots at once as it reads them one by one: a forest asks for every root
in two reads of the view (versions, then the rows not cached), and the families of many roots
take three (the nodes listed under them first), on every store."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import UnknownConversation
from lineage_es.read.queries import Queries
from lineage_es.read.sqlview import SqlView
from lineage_es.read.view import NodeRow, ViewStore
from tests.support.feed import Feed


def in_nid_order(rows: list[NodeRow]) -> list[dict[str, Any]]:
    return [asdict(row) for row in sorted(rows, key=lambda row: row.nid)]


def grown(engine: Engine) -> list[str]:
    """Three roots fed to ``engine``, two of them with a child, one stopped: their root ids."""
    feed = Feed(engine)
    for root in ("r1", "r2", "r3"):
        feed.root(root)
    feed.child("r1", "r1", "r1-a")
    feed.child("r2", "r2", "r2-a")
    feed.stop("r3", "r3")
    return sorted({row.root_id for row in engine.view.roots(None, live_only=False)})


@pytest.fixture
def forest(engine: Engine) -> list[str]:
    """:func:`grown` on each store."""
    return grown(engine)


@pytest.fixture
def sql_engine(shared_store_url: str) -> Iterator[Engine]:
    """An engine whose view is in SQL tables (SQLite, PostgreSQL)."""
    with open_engine(shared_store_url) as opened:
        yield opened


def test_bulk_reads_answer_as_root_by_root_reads(engine: Engine, forest: list[str]) -> None:
    view: ViewStore = engine.view
    asked = [*forest, "no-such-root"]

    versions = view.root_versions(asked)
    rows = view.roots_rows(asked)

    assert versions == {root_id: view.root_version(root_id) for root_id in asked}
    assert {r: in_nid_order(found) for r, found in rows.items()} == {
        root_id: in_nid_order(view.root_rows(root_id)) for root_id in asked
    }
    assert (versions["no-such-root"], rows["no-such-root"]) == (0, [])


def test_a_sql_view_reads_more_ids_than_one_statement_takes(
    sql_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = sql_engine
    assert isinstance(engine.view, SqlView)
    asked = [*grown(engine), "unknown-1", "unknown-2"]
    monkeypatch.setattr("lineage_es.read.sqlview._IDS_PER_STATEMENT", 2)

    rows = engine.view.roots_rows(asked)

    assert engine.view.root_versions(asked) == {
        root_id: engine.view.root_version(root_id) for root_id in asked
    }
    assert {r: in_nid_order(found) for r, found in rows.items()} == {
        root_id: in_nid_order(engine.view.root_rows(root_id)) for root_id in asked
    }
    keys = ["r1", "r1-a", "r2", "r2-a", "r3", "no-such-key"]
    assert {k: in_nid_order(found) for k, found in engine.view.find_many(keys).items()} == {
        key: in_nid_order(engine.view.find(key)) for key in keys
    }


class CountingView:
    """A view that counts the reads a question makes of it."""

    def __init__(self, view: ViewStore) -> None:
        self._view = view
        self.reads = 0

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._view, name)
        if callable(found) and name.startswith(("root", "find")):
            self.reads += 1
        return found


def test_a_forest_reads_the_view_twice_however_many_roots_it_draws(
    engine: Engine, forest: list[str]
) -> None:
    counting = CountingView(engine.view)
    queries = Queries(counting)

    drawn = queries.forest(include_stopped=True)

    assert [node.conversation for node in drawn] == ["r1", "r2", "r3"]
    # roots() once, then root_versions() and roots_rows() once each
    assert counting.reads == 3


def test_snapshots_of_many_roots_equal_each_root_s_own(engine: Engine, forest: list[str]) -> None:
    bulk = Queries(engine.view).snapshots(forest)
    one_by_one = Queries(engine.view)

    for root_id in forest:
        alone = one_by_one.snapshot(root_id)
        assert (bulk[root_id].version, in_nid_order(bulk[root_id].rows)) == (
            alone.version,
            in_nid_order(alone.rows),
        )
        assert (bulk[root_id].live, bulk[root_id].children) == (alone.live, alone.children)


def test_finding_many_keys_answers_as_finding_each(engine: Engine, forest: list[str]) -> None:
    view: ViewStore = engine.view
    keys = ["r1", "r1-a", "spawn-r1-a", "r3", "no-such-key"]

    found = view.find_many(keys)

    assert {k: in_nid_order(rows) for k, rows in found.items()} == {
        key: in_nid_order(view.find(key)) for key in keys
    }


def test_families_answer_as_each_family(engine: Engine, forest: list[str]) -> None:
    asked = [("r1", None), ("r2", "claude"), ("r1-a", "claude"), ("r3", None)]

    assert engine.families(asked) == tuple(engine.family(root, host) for root, host in asked)


def test_families_of_an_unknown_root_raise_as_its_family_does(
    engine: Engine, forest: list[str]
) -> None:
    with pytest.raises(UnknownConversation):
        engine.families([("r1", None), ("no-such-root", None)])


def test_families_read_the_view_three_times_however_many_roots_they_name(
    engine: Engine, forest: list[str]
) -> None:
    counting = CountingView(engine.view)
    queries = Queries(counting)

    queries.families([("r1", None), ("r2", None), ("r3", None)])

    # find_many(), root_versions() and roots_rows() once each
    assert counting.reads == 3
