"""Rows the engine absorbs after its own writes answer exactly as a fresh read of the view.

The queries patch a cached root with the rows just written only when that root is next asked
for; whatever the order of writes, questions, evictions and other writers, a root's snapshot
must hold the rows a new reader of the same view would load.
"""

from __future__ import annotations

from dataclasses import asdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lineage_es.read.queries as queries_module
from lineage_es.read.peers import oldest_first, peer_of
from lineage_es.read.queries import Queries
from lineage_es.read.view import MemoryView, NodeRow

ROOTS = ("r1", "r2", "r3")


@st.composite
def node_rows(draw: st.DrawFn) -> NodeRow:
    """A node of one of a few roots, rewritten whole as the projection does."""
    root_id = draw(st.sampled_from(ROOTS))
    nid = draw(st.integers(1, 5))
    return NodeRow(
        nid=nid + 10 * ROOTS.index(root_id),
        root_id=root_id,
        host="claude",
        root=f"{root_id}-main",
        conversation=f"{root_id}-c{nid}",
        spawn_key=None,
        parent=None if nid == 1 else f"{root_id}-c1",
        depth=0 if nid == 1 else 1,
        status=draw(st.sampled_from(("live", "stopped", "deleted"))),
        resolution="certain",
        started_at=f"2026-09-01T08:00:0{nid}.000000+00:00",
        last_seen=draw(st.sampled_from((None, "2026-09-01T09:00:00.000000+00:00"))),
    )


#: One step: the engine writes a page and absorbs it, another writer writes one, or a root is
#: asked for.
step = st.one_of(
    st.tuples(st.just("own"), st.lists(node_rows(), min_size=1, max_size=4)),
    st.tuples(st.just("foreign"), st.lists(node_rows(), min_size=1, max_size=4)),
    st.tuples(st.just("ask"), st.sampled_from(ROOTS)),
)
steps = st.lists(step, max_size=30)


def loaded(view: MemoryView, root_id: str) -> list[dict[str, object]]:
    """The slow path: the root's rows as a reader that caches nothing loads them."""
    return sorted((asdict(row) for row in view.root_rows(root_id)), key=lambda r: str(r["nid"]))


def write(view: MemoryView, queries: Queries, kind: str, rows: list[NodeRow], position: int) -> int:
    """Write ``rows`` as one page after ``position``, as the engine's own (absorbed) or another
    writer's (``foreign``); the position after it."""
    page = [row.copy() for row in rows]
    assert view.write(page, expected=position, position=position + 1)
    if kind == "own":
        queries.absorb(page, position, position + 1)
    return position + 1


def snapshot_rows(queries: Queries, root_id: str) -> list[dict[str, object]]:
    rows = queries.snapshot(root_id).rows
    return sorted((asdict(row) for row in rows), key=lambda r: str(r["nid"]))


@pytest.mark.parametrize("cache_size", [1, 2, 512], ids=lambda n: f"cache {n}")
def test_a_root_asked_for_after_absorbed_writes_holds_the_rows_a_fresh_read_loads(
    cache_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queries_module, "ROOT_CACHE_SIZE", cache_size)

    @settings(max_examples=200, deadline=None)
    @given(steps)
    def check(plan: list[tuple[str, object]]) -> None:
        view = MemoryView()
        queries = Queries(view)
        position = 0
        for kind, what in plan:
            if kind == "ask":
                assert isinstance(what, str)
                assert snapshot_rows(queries, what) == loaded(view, what)
                continue
            assert isinstance(what, list)
            position = write(view, queries, kind, what, position)
        for root_id in ROOTS:
            assert snapshot_rows(queries, root_id) == loaded(view, root_id)

    check()


def test_rows_changed_after_they_were_absorbed_do_not_change_the_answer() -> None:
    view = MemoryView()
    queries = Queries(view)
    first = NodeRow(
        nid=1,
        root_id="r1",
        host="claude",
        root="main",
        conversation="main",
        spawn_key=None,
        parent=None,
        depth=0,
        status="live",
        resolution="certain",
        started_at="2026-09-01T08:00:00.000000+00:00",
    )
    assert view.write([first], expected=0, position=1)
    queries.absorb([first], 0, 1)
    queries.snapshot("r1")
    written = first.copy()
    written.status = "stopped"
    assert view.write([written], expected=1, position=2)
    queries.absorb([written], 1, 2)
    written.status = "deleted"  # the projector's working copy, changed for a later page

    assert [row.status for row in queries.snapshot("r1").rows] == ["stopped"]


def fresh_peers(view: MemoryView, root_id: str) -> tuple[object, object]:
    """The slow path: a root's live peers, and their grouping by parent, built from a fresh
    read of its rows."""
    live = [
        row for row in sorted(view.root_rows(root_id), key=oldest_first) if row.status == "live"
    ]
    children: dict[str, list[object]] = {}
    for row in live:
        if row.parent is not None:
            children.setdefault(row.parent, []).append(peer_of(row))
    return tuple(peer_of(row) for row in live), {k: tuple(v) for k, v in children.items()}


#: The steps of :data:`steps`, and asking for a root's peers (an answer does; a forest or a
#: family asks for its rows alone).
steps_listing_peers = st.lists(
    st.one_of(step, st.tuples(st.just("list"), st.sampled_from(ROOTS))), max_size=30
)


@settings(max_examples=300, deadline=None)
@given(steps_listing_peers)
def test_a_root_s_peers_built_when_first_asked_for_equal_those_of_a_fresh_read(
    plan: list[tuple[str, object]],
) -> None:
    """Whether or not each earlier snapshot of a root listed its peers, the peers a later one
    builds, reusing what it can, are those of its rows."""
    view = MemoryView()
    queries = Queries(view)
    position = 0
    for kind, what in plan:
        if kind in ("ask", "list"):
            assert isinstance(what, str)
            snapshot = queries.snapshot(what)
            if kind == "list":
                assert (snapshot.live, snapshot.children) == fresh_peers(view, what)
            continue
        assert isinstance(what, list)
        position = write(view, queries, kind, what, position)
    for root_id in ROOTS:
        snapshot = queries.snapshot(root_id)
        assert (snapshot.live, snapshot.children) == fresh_peers(view, root_id)
