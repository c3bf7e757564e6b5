"""A checkpoint's view, read one root at a time from its chain of blobs (a full checkpoint's
rows, then deltas of changed rows), answers every question as a view holding the merged
rows does: rows changing key, becoming or ceasing to be roots or pending, a conversation
listed in two roots, across any split into blobs."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage_es.read import checkpoint_rows
from lineage_es.read.checkpoint_rows import CheckpointView, encode_rows
from lineage_es.read.view import MemoryView, NodeRow

ROOT_IDS = ("root-a", "root-b", "root-c")
KEYS = ("k1", "k2", "k3")
SPAWN_KEYS = ("s1", "s2")
HOSTS = ("claude", "cursor")

#: One row's version: its nid (its root follows from it: a row never changes roots), its
#: conversation (``None``: pending), spawn key, depth, status, host, whether its root is named
#: as its conversation, its workspace.
versions = st.tuples(
    st.integers(1, 12),
    st.sampled_from((None, *KEYS)),
    st.sampled_from(SPAWN_KEYS),
    st.integers(0, 2),
    st.sampled_from(("live", "stopped", "deleted")),
    st.sampled_from(HOSTS),
    st.booleans(),
    st.sampled_from(((), ("/w",), ("/w", "/v"))),
)
#: The versions written in each stretch: the first blob holds every row, the others the rows
#: their stretch changed.
chains = st.lists(st.lists(versions, min_size=1, max_size=8), min_size=1, max_size=5)


def row_of(version: tuple[Any, ...]) -> NodeRow:
    nid, conversation, spawn_key, depth, status, host, named, workspace = version
    return NodeRow(
        nid=nid,
        root_id=ROOT_IDS[nid % len(ROOT_IDS)],
        host=host,
        root=conversation if named and conversation is not None else "k1",
        conversation=conversation,
        spawn_key=spawn_key,
        parent=None if depth == 0 else "k1",
        depth=depth,
        status=status,
        resolution="native",
        started_at=f"2026-03-01T00:00:{nid:02d}",
        workspace=workspace,
        last_seen=None if nid % 2 else "2026-03-02T00:00:00",
    )


def by_nid(rows: list[NodeRow]) -> list[NodeRow]:
    return sorted(rows, key=lambda row: row.nid)


def views(chain: list[list[tuple[Any, ...]]]) -> tuple[CheckpointView, MemoryView]:
    """The chain's checkpoint view (its conversations in buckets of about two), and a memory
    view holding the rows it merges."""
    rows: dict[int, NodeRow] = {}
    blobs = []
    for number, stretch in enumerate(chain):
        changed = {row.nid: row for row in map(row_of, stretch)}
        rows.update(changed)
        with mock.patch.object(checkpoint_rows, "BUCKET", 2):
            if number == 0:
                blobs.append(encode_rows(list(rows.values()), full=True))
            else:
                blobs.append(encode_rows(list(changed.values()), full=False))
    merged = MemoryView()
    merged.replace(list(rows.values()), 40)
    return CheckpointView(blobs, 40), merged


@given(chain=chains)
def test_every_root_s_rows_are_the_merged_rows_of_that_root(
    chain: list[list[tuple[Any, ...]]],
) -> None:
    lazy, merged = views(chain)
    for root_id in (*ROOT_IDS, "unknown"):
        assert lazy.root_rows(root_id) == by_nid(merged.root_rows(root_id))
        assert lazy.root_version(root_id) == (40 if merged.root_rows(root_id) else 0)


@given(chain=chains)
def test_a_key_finds_the_rows_listed_under_it_now_in_every_root(
    chain: list[list[tuple[Any, ...]]],
) -> None:
    lazy, merged = views(chain)
    for key in (*KEYS, *SPAWN_KEYS, "unknown"):
        assert lazy.find(key) == by_nid(merged.find(key))


@given(chain=chains)
def test_the_root_rows_are_those_that_are_roots_in_their_latest_version(
    chain: list[list[tuple[Any, ...]]],
) -> None:
    lazy, merged = views(chain)
    for host in (None, *HOSTS):
        for live_only in (True, False):
            got = lazy.roots(host, live_only=live_only)
            assert got == by_nid(merged.roots(host, live_only=live_only))


@given(chain=chains)
def test_the_pending_rows_are_those_still_waiting_for_their_conversation(
    chain: list[list[tuple[Any, ...]]],
) -> None:
    lazy, merged = views(chain)
    for host in HOSTS:
        assert lazy.pending(host) == by_nid(merged.pending(host))


@given(chain=chains)
def test_every_row_is_the_latest_version_of_each_in_nid_order(
    chain: list[list[tuple[Any, ...]]],
) -> None:
    lazy, merged = views(chain)
    assert lazy.all_rows() == merged.all_rows()


def test_a_view_of_no_checkpoint_is_empty() -> None:
    empty = CheckpointView([], 0)
    assert (empty.all_rows(), empty.find("k1"), empty.roots(None, live_only=False)) == ([], [], [])


def test_a_blob_of_another_layout_is_refused_not_misread() -> None:
    with pytest.raises(ValueError, match="another layout"):
        CheckpointView([b"x\x9c" + bytes(10)], 5)
