"""The memory view's live roots are kept as rows change, and always equal a scan of every row."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_es.read.view import MemoryView, NodeRow

HOSTS = ("claude", "codex")


@st.composite
def row_changes(draw: st.DrawFn) -> list[list[NodeRow]]:
    """Pages of row writes: a few nodes made, stopped, resumed, deleted, re-rooted and moved
    between hosts, in any order (a node's row is rewritten whole, as the projection does)."""
    pages: list[list[NodeRow]] = []
    for _ in range(draw(st.integers(1, 12))):
        page: list[NodeRow] = []
        for _ in range(draw(st.integers(1, 4))):
            nid = draw(st.integers(1, 6))
            conversation = f"c{nid}"
            is_root = draw(st.booleans())
            page.append(
                NodeRow(
                    nid=nid,
                    root_id=f"r{nid if is_root else draw(st.integers(1, 6))}",
                    host=draw(st.sampled_from(HOSTS)),
                    root=conversation if is_root else "c1",
                    conversation=conversation,
                    spawn_key=None,
                    parent=None if is_root else "c1",
                    depth=0 if is_root else draw(st.integers(0, 2)),
                    status=draw(st.sampled_from(("live", "stopped", "deleted"))),
                    resolution="certain",
                    started_at=f"2026-09-01T08:00:0{nid}.000000+00:00",
                )
            )
        pages.append(page)
    return pages


def scanned_live_roots(view: MemoryView, host: str | None) -> list[int]:
    """The slow path: every row looked at."""
    return sorted(
        row.nid
        for row in view.all_rows()
        if row.is_root and row.status == "live" and (host is None or row.host == host)
    )


@settings(max_examples=300, deadline=None)
@given(row_changes())
def test_the_live_roots_kept_equal_a_scan_of_every_row_after_each_write(
    pages: list[list[NodeRow]],
) -> None:
    view = MemoryView()
    for position, page in enumerate(pages, start=1):
        assert view.write(page, expected=position - 1, position=position)
        for host in (None, *HOSTS):
            kept = sorted(row.nid for row in view.roots(host, live_only=True))
            assert kept == scanned_live_roots(view, host)


@settings(max_examples=100, deadline=None)
@given(row_changes())
def test_a_replaced_view_keeps_only_the_new_rows_live_roots(pages: list[list[NodeRow]]) -> None:
    view = MemoryView()
    for position, page in enumerate(pages, start=1):
        view.write(page, expected=position - 1, position=position)
    fresh = pages[-1]
    view.replace(fresh, len(pages) + 1)
    assert sorted(row.nid for row in view.roots(None, live_only=True)) == scanned_live_roots(
        view, None
    )
