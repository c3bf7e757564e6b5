"""A tree's ``roots`` are the other live roots of its host and workspace, oldest first, however
the kept lists of live roots were built and reused as roots come, change and go."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_es.model import Peer
from lineage_es.read.peers import peer_of, same_workspace
from lineage_es.read.queries import Queries
from lineage_es.read.view import MemoryView, NodeRow

HOSTS = ("claude", "codex")
FOLDERS = ("/a", "/b", "/c")


@st.composite
def root_rows(draw: st.DrawFn) -> NodeRow:
    """A root row, rewritten whole: its host, status, workspace (folders in any order, some
    repeated) and last time vary."""
    nid = draw(st.integers(1, 8))
    return NodeRow(
        nid=nid,
        root_id=f"r{nid}",
        host=draw(st.sampled_from(HOSTS)),
        root=f"c{nid}",
        conversation=f"c{nid}",
        spawn_key=None,
        parent=None,
        depth=0,
        status=draw(st.sampled_from(("live", "live", "stopped", "deleted"))),
        resolution="certain",
        started_at=f"2026-09-01T08:00:0{draw(st.integers(0, 3))}.000000+00:00",
        workspace=tuple(draw(st.lists(st.sampled_from(FOLDERS), max_size=3))),
        last_seen=draw(st.sampled_from((None, "2026-09-01T09:00:00.000000+00:00"))),
    )


def slow_other_roots(view: MemoryView, row: NodeRow) -> tuple[Peer, ...]:
    """The definition, over every row of the view."""
    others = [
        other
        for other in view.all_rows()
        if other.is_root
        and other.status == "live"
        and other.host == row.host
        and other.root_id != row.root_id
        and same_workspace(other.workspace, row.workspace)
    ]
    return tuple(peer_of(other) for other in sorted(others, key=lambda r: (r.started_at, r.nid)))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(root_rows(), min_size=1, max_size=4), min_size=1, max_size=10))
def test_the_roots_of_every_tree_equal_the_definition_after_each_write(
    pages: list[list[NodeRow]],
) -> None:
    view = MemoryView()
    queries = Queries(view)
    for position, page in enumerate(pages, start=1):
        assert view.write(page, expected=position - 1, position=position)
        for row in view.all_rows():
            assert queries.tree_of(row).roots == slow_other_roots(view, row)
