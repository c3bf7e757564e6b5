"""A view row's copy: the same values in another object, which the projection then changes
without touching the row the view holds."""

from __future__ import annotations

from dataclasses import astuple

from hypothesis import given
from hypothesis import strategies as st

from lineage_es.read.view import NodeRow

text = st.text(max_size=5)
maybe = st.none() | text

rows = st.builds(
    NodeRow,
    nid=st.integers(),
    depth=st.integers(0, 5),
    status=st.sampled_from(("live", "stopped", "deleted")),
    ambiguous=st.booleans(),
    workspace=st.tuples() | st.tuples(text) | st.tuples(text, text),
    **dict.fromkeys(("root_id", "host", "root", "resolution", "started_at"), text),
    **dict.fromkeys(
        ("conversation", "spawn_key", "parent", "agent_type", "subagent_id", "description"),
        maybe,
    ),
    **dict.fromkeys(("name", "stopped_at", "delete_reason", "last_seen"), maybe),
)


@given(rows)
def test_a_copy_holds_every_value_of_the_row(row: NodeRow) -> None:
    assert astuple(row.copy()) == astuple(row)


@given(rows)
def test_changing_a_copy_leaves_the_row_as_it_was(row: NodeRow) -> None:
    before = astuple(row)
    clone = row.copy()
    clone.status = "changed"
    clone.last_seen = "later"

    assert clone is not row
    assert astuple(row) == before
