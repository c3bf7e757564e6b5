"""How `lineage tree` draws the forest: in a terminal, as JSON, Mermaid and dot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from lineage_es.facts import LOGICAL_EPOCH
from lineage_es.model import ForestNode, Subagent
from lineage_es.read.render import dumps_deep, forest_dot, forest_json, forest_mermaid, forest_text

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
        "last_seen",
        "children",
    ]
    assert list(root) == contract and list(root["children"][0]) == contract


def chain(length: int) -> tuple[ForestNode, ...]:
    """A root with a chain of ``length`` agents below it, each the only child of the last."""
    below: tuple[ForestNode, ...] = ()
    for depth in range(length, -1, -1):
        below = (
            ForestNode(
                conversation=f"D{depth}",
                host="claude",
                depth=depth,
                status="live",
                resolution="native" if depth == 0 else "confirmed",
                started_at=NOW.isoformat(),
                children=below,
            ),
        )
    return below


DEEP = chain(1200)  # deeper than Python's recursion limit and orjson's nesting limit


def test_text_draws_a_chain_deeper_than_the_recursion_limit() -> None:
    lines = forest_text(DEEP, now=NOW).splitlines()
    # 1199 levels of indent: 18 pages of 64 not drawn, 47 drawn.
    assert len(lines) == 1201 and lines[-1].startswith("…1152 " + " " * 3 * 47 + "└─ ● D1200")


def test_json_writes_a_chain_deeper_than_the_recursion_limit() -> None:
    text = forest_json(DEEP)
    assert text.count(b'"conversation"') == 1201 and text.endswith(b"\n    }\n  ]\n}")


def test_mermaid_draws_a_chain_deeper_than_the_recursion_limit() -> None:
    lines = forest_mermaid(DEEP).splitlines()
    assert lines[1201] == '  n1200["D1200<br/>live"]' and lines[-1] == "  n0 --> n1"


def test_dot_draws_a_chain_deeper_than_the_recursion_limit() -> None:
    lines = forest_dot(DEEP).splitlines()
    assert "  n1199 -> n1200;" in lines and lines[-2] == "  n0 -> n1;"


def test_json_is_laid_out_as_orjson_lays_it_out() -> None:
    data = orjson.loads(forest_json(FOREST))
    assert forest_json(FOREST) == orjson.dumps(data, option=orjson.OPT_INDENT_2)


@pytest.mark.parametrize("indent", [False, True])
def test_the_deep_writer_lays_out_tuples_as_orjson_does(indent: bool) -> None:
    data = {"a": (1, {"b": ()}), "c": [(2,), "x"]}
    option = orjson.OPT_INDENT_2 if indent else 0
    assert dumps_deep(data, indent=indent) == orjson.dumps(data, option=option)


def test_json_of_an_empty_forest_is_an_empty_list_of_roots() -> None:
    assert forest_json(()) == orjson.dumps({"roots": []}, option=orjson.OPT_INDENT_2)


def typed(kind: str, conversation: str = "a1") -> tuple[ForestNode, ...]:
    """A root with one child whose subagent type is ``kind``."""
    child = ForestNode(
        conversation=conversation,
        host="claude",
        depth=1,
        status="live",
        resolution="inferred",
        started_at=NOW.isoformat(),
        subagent=Subagent(id="a1", type=kind),
    )
    return (
        ForestNode(
            conversation="r1",
            host="claude",
            depth=0,
            status="live",
            resolution="native",
            started_at=NOW.isoformat(),
            children=(child,),
        ),
    )


def test_mermaid_escapes_a_subagent_type_that_would_draw_a_node_and_an_edge() -> None:
    lines = forest_mermaid(typed('x"] --> n9["injected')).splitlines()
    assert lines == [
        "flowchart TD",
        '  n0["r1<br/>claude<br/>live"]',
        '  n1["a1<br/>x#quot;] --#gt; n9[#quot;injected<br/>live"]',
        "  n0 --> n1",
    ]


def test_mermaid_escapes_markup_in_an_id_and_a_type() -> None:
    label = forest_mermaid(typed("<img src=x>", conversation="<b>&")).splitlines()[2]
    assert label == '  n1["#lt;b#gt;#amp;<br/>#lt;img src=x#gt;<br/>live"]'


def test_mermaid_escapes_an_entity_code_written_in_an_id() -> None:
    label = forest_mermaid(typed("general", conversation="a#quot;b")).splitlines()[2]
    assert label == '  n1["a#35;quot;b<br/>general<br/>live"]'


def test_dot_escapes_quotes_and_backslashes_in_an_id() -> None:
    lines = forest_dot(typed("general", conversation='a"] x [\\')).splitlines()
    assert '    n1 [label="a\\"] x [\\\\\\ngeneral\\nlive"];' in lines
