"""How `lineage tree` draws the forest: in a terminal, as JSON, Mermaid and dot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson

from lineage_es.facts import LOGICAL_EPOCH
from lineage_es.model import ForestNode
from lineage_es.render import forest_dot, forest_json, forest_mermaid, forest_text

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def node(started: datetime) -> ForestNode:
    return ForestNode(
        conversation="r1",
        host="claude",
        depth=0,
        status="live",
        resolution="native",
        started_at=started.isoformat(timespec="microseconds"),
    )


def test_a_node_shows_how_long_ago_it_started() -> None:
    assert " 3h" in forest_text((node(NOW - timedelta(hours=3, minutes=5)),), now=NOW)


def test_a_node_replayed_without_a_time_of_its_own_shows_its_row() -> None:
    text = forest_text((node(LOGICAL_EPOCH + timedelta(seconds=12)),), now=NOW)
    assert " row 12" in text and "d " not in text.split("live", 1)[1]


def placed(conversation: str, *, ambiguous: bool = False) -> ForestNode:
    return ForestNode(
        conversation=conversation,
        host="claude",
        depth=1,
        status="live",
        resolution="inferred" if ambiguous else "confirmed",
        started_at=NOW.isoformat(),
        ambiguous=ambiguous,
    )


#: Root r1 with a child A it certainly spawned and a child X placed ambiguous under it.
FOREST = (
    ForestNode(
        conversation="r1",
        host="claude",
        depth=0,
        status="live",
        resolution="native",
        started_at=NOW.isoformat(),
        children=(placed("A"), placed("X", ambiguous=True)),
    ),
)


def test_mermaid_draws_a_certain_parent_edge_as_a_solid_arrow() -> None:
    assert "  n0 --> n1" in forest_mermaid(FOREST).splitlines()


def test_mermaid_links_an_ambiguous_node_to_its_root_by_a_dotted_labelled_arrow() -> None:
    lines = forest_mermaid(FOREST).splitlines()
    assert "  n0 -. ambiguous .-> n2" in lines
    assert "  n0 --> n2" not in lines


def test_dot_draws_a_certain_parent_edge_plain() -> None:
    assert "  n0 -> n1;" in forest_dot(FOREST).splitlines()


def test_dot_links_an_ambiguous_node_to_its_root_by_a_dashed_labelled_edge() -> None:
    lines = forest_dot(FOREST).splitlines()
    assert '  n0 -> n2 [style=dashed, label="ambiguous"];' in lines
    assert "  n0 -> n2;" not in lines


def test_json_marks_a_node_placed_ambiguous() -> None:
    ambiguous = orjson.loads(forest_json(FOREST))["roots"][0]["children"][1]
    assert (ambiguous["conversation"], ambiguous["ambiguous"]) == ("X", True)


def test_json_of_an_unambiguous_node_keeps_exactly_its_contract_keys() -> None:
    root = orjson.loads(forest_json(FOREST))["roots"][0]
    contract = [
        "conversation",
        "host",
        "depth",
        "status",
        "resolution",
        "started_at",
        "subagent",
        "children",
    ]
    assert list(root) == contract and list(root["children"][0]) == contract
