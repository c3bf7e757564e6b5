"""The expected file: validated with its lines, compared key by key, and written back stably."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from lineage_es.errors import InputError
from lineage_es.model import AgentLineage, LineageTree, Peer, Subagent
from lineage_es.replay.expected import (
    Expected,
    Mismatch,
    compare_lineage,
    compare_view,
    load_expected,
    parse_yaml,
    validate,
)
from lineage_es.replay.expected_writer import dump_expected, refresh_view, updated_document
from tests.support.expected_example import CHILD, ROOT, SPEC_EXAMPLE

OTHER = "ab00000000000000f"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "case.expected.yaml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def peer(conversation: str, depth: int = 1, resolution: str = "inferred") -> Peer:
    return Peer(
        conversation=conversation,
        depth=depth,
        started_at="2000-01-01T00:00:01+00:00",
        resolution=resolution,  # type: ignore[arg-type]
        parent=ROOT if depth else None,
    )


def child_lineage(tree: LineageTree | None = None) -> AgentLineage:
    return AgentLineage(
        conversation=CHILD,
        root=ROOT,
        depth=1,
        resolution="inferred",
        parent=ROOT,
        subagent=Subagent(id=CHILD, type="Explore"),
        tree=tree,
        host="claude",
    )


def load_error(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as caught:
        load_expected(write(tmp_path, text))
    return caught.value


# -- loading -----------------------------------------------------------------------------------


def test_the_spec_example_loads(tmp_path: Path) -> None:
    expected = load_expected(write(tmp_path, SPEC_EXAMPLE))
    assert expected.host == "claude"
    assert [s.rows for s in expected.steps] == [(5,)]
    assert expected.steps[0].views == {ROOT: {"children": [CHILD]}}
    assert expected.final_views == {ROOT: {"siblings": [], "children": [], "roots": []}}


def test_a_step_can_name_several_rows(tmp_path: Path) -> None:
    expected = load_expected(
        write(tmp_path, "version: 1\nsteps:\n  - rows: [5, 6, 7]\n    lineage: null\n")
    )
    assert expected.steps[0].rows == (5, 6, 7)
    assert expected.steps[0].label == "rows 5, 6, 7"


def test_an_unknown_key_is_refused_with_its_line(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """
        version: 1
        steps:
          - row: 5
            lineage:
              depth: 1
              resolutoin: inferred
        """,
    )
    assert error.line == 6
    assert "unknown key 'resolutoin'" in error.reason
    assert "did you mean 'resolution'" in error.reason


def test_an_unknown_key_in_a_peer_mapping_is_refused_with_its_line(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        f"""
        version: 1
        steps:
          - row: 5
            views:
              {ROOT}:
                children:
                  - conversation: {CHILD}
                    deph: 1
        """,
    )
    assert error.line == 8
    assert "unknown key 'deph'" in error.reason


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        pytest.param(
            "version: 1\nsteps: []\nfinal_views: {}\n",
            3,
            "unknown key 'final_views'",
            id="an unknown top-level key",
        ),
        pytest.param(
            "version: 1\nsteps:\n  - row: 1\n    rows: [2]\n",
            3,
            "exactly one",
            id="a step with row and rows",
        ),
        pytest.param("version: 2\nsteps: []\n", 1, "must be 1", id="another version"),
        pytest.param(
            "version: 1\nsteps:\n  - row: 3\n    lineage: {depth: one}\n",
            4,
            "expected an integer",
            id="a mistyped value",
        ),
        pytest.param(
            'version: 1\nsteps:\n  - row: 1\n    views:\n      "a\\nb": {kids: []}\n',
            5,
            "unknown key 'kids' in steps[0].views[\"a\\nb\"]",
            id="an odd conversation key, quoted in the message",
        ),
        pytest.param(
            "version: 1\nsteps: []\nsteps: []\n",
            3,
            "duplicate key 'steps'",
            id="a duplicate key",
        ),
        pytest.param(
            "version: 1\nsteps:\n  - row: 1\n    views:\n      1234: null\n",
            5,
            "quote it",
            id="a conversation key YAML reads as a number, which must be quoted",
        ),
        pytest.param(
            "version: 1\nsteps:\n  - row: 1\n    tree:\n      roots:\n"
            "        - {conversation: r1, started_at: yesterday}\n",
            6,
            'steps[0].tree.roots[0].started_at: expected an ISO-8601 time, got "yesterday"',
            id="a started_at that is not a time",
        ),
        pytest.param(
            "version: 1\nsteps: []\nfinal:\n  views:\n    r1:\n      children:\n"
            "        - {started_at: '2026-13-01T00:00:00Z'}\n",
            7,
            "final.views.r1.children[0].started_at: expected an ISO-8601 time",
            id="a started_at that names no day",
        ),
    ],
)
def test_a_refused_file_names_the_line_and_the_reason(
    tmp_path: Path, text: str, line: int, reason: str
) -> None:
    error = load_error(tmp_path, text)
    assert error.line == line
    assert reason in error.reason


def test_every_error_is_reported_each_with_its_line(tmp_path: Path) -> None:
    error = load_error(tmp_path, "version: 1\nsteps:\n  - row: 0\n  - row: 2\n    tre: null\n")
    assert error.line == 3
    assert f"{tmp_path / 'case.expected.yaml'}:5: unknown key 'tre'" in error.reason


def test_invalid_yaml_names_its_line(tmp_path: Path) -> None:
    error = load_error(tmp_path, "version: 1\nsteps:\n  - row: 1\n   lineage: [\n")
    assert error.line is not None
    assert "not valid YAML" in error.reason


def test_a_self_referring_alias_is_refused(tmp_path: Path) -> None:
    error = load_error(tmp_path, "version: 1\nsteps: &loop\n  - row: 1\n    tree: *loop\n")
    assert "alias refers to itself" in error.reason


def test_an_empty_expected_file_is_refused(tmp_path: Path) -> None:
    assert "empty" in load_error(tmp_path, "\n").reason


def test_an_unquoted_time_stays_text(tmp_path: Path) -> None:
    text = "children: [{started_at: 2000-01-01T00:00:01Z}]"
    data, _ = parse_yaml(text, tmp_path / "x.yaml")
    assert data == {"children": [{"started_at": "2000-01-01T00:00:01Z"}]}


# -- comparing ---------------------------------------------------------------------------------


def expected_from(tmp_path: Path, text: str) -> Expected:
    return load_expected(write(tmp_path, text))


CompareRow3 = Callable[[str, AgentLineage | None], list[Mismatch]]


@pytest.fixture
def compare_row_3(tmp_path: Path) -> CompareRow3:
    """``compare_row_3(step, observed)``: the mismatches between ``observed``, the requester's
    answer at row 3, and an expected file whose one step is ``- row: 3`` (its line 3) with the
    keys ``step`` gives (from line 4 on)."""

    def compare(step: str, observed: AgentLineage | None) -> list[Mismatch]:
        body = textwrap.indent(textwrap.dedent(step).strip() + "\n", "    ")
        expected = expected_from(tmp_path, "version: 1\nsteps:\n  - row: 3\n" + body)
        return compare_lineage(expected, expected.steps[0], 3, observed)

    return compare


def test_only_the_lineage_keys_given_are_compared(compare_row_3: CompareRow3) -> None:
    assert compare_row_3("lineage: {depth: 1}", child_lineage()) == []


def test_a_lineage_mismatch_names_row_perspective_path_and_line(
    compare_row_3: CompareRow3,
) -> None:
    (mismatch,) = compare_row_3("lineage:\n  depth: 2", child_lineage())
    assert (mismatch.row, mismatch.path, mismatch.line) == (3, "lineage.depth", 5)
    assert mismatch.perspective == f'requester "{CHILD}"'
    assert (mismatch.expected, mismatch.observed) == (2, 1)


def test_a_subagent_mapping_compares_only_its_given_keys(compare_row_3: CompareRow3) -> None:
    (mismatch,) = compare_row_3("lineage: {subagent: {type: Plan}}", child_lineage())
    assert (mismatch.path, mismatch.expected, mismatch.observed) == (
        "lineage.subagent.type",
        "Plan",
        "Explore",
    )


def test_a_host_in_lineage_is_an_unknown_key(tmp_path: Path) -> None:
    # REPLAY.md's `lineage:` keys are the lineage's own (LINEAGE.md's AgentLineage has no
    # host); the file's host is the top-level `host:`.
    error = load_error(tmp_path, "version: 1\nsteps:\n  - row: 3\n    lineage: {host: claude}\n")
    assert error.line == 4
    assert "unknown key 'host' in steps[0].lineage" in error.reason
    known = error.reason.split("known keys: ")[1]
    assert known.split(", ") == [
        "conversation",
        "root",
        "parent",
        "depth",
        "resolution",
        "subagent",
    ]


@pytest.mark.parametrize("step", ["lineage: {depth: 1.0}", "lineage:\n  depth: 1.0"])
def test_an_integer_written_as_a_float_holds_for_that_integer(
    compare_row_3: CompareRow3, step: str
) -> None:
    # The schema's `integer` (JSON Schema's) takes 1.0: it is compared as the number 1.
    assert compare_row_3(step, child_lineage()) == []
    (mismatch,) = compare_row_3("lineage: {depth: 2.0}", child_lineage())
    assert (mismatch.path, mismatch.expected, mismatch.observed) == ("lineage.depth", 2.0, 1)


def test_a_peer_depth_written_as_a_float_holds_for_that_integer(
    compare_row_3: CompareRow3,
) -> None:
    tree = LineageTree(siblings=(peer(OTHER),))
    step = f"tree: {{siblings: [{{conversation: {OTHER}, depth: 1.0}}]}}"
    assert compare_row_3(step, child_lineage(tree)) == []


def test_a_row_written_as_a_float_is_that_integer_row(tmp_path: Path) -> None:
    expected = load_expected(
        write(tmp_path, "version: 1\nsteps:\n  - row: 3.0\n  - rows: [4.0, 5]\n")
    )
    assert [step.rows for step in expected.steps] == [(3,), (4, 5)]
    assert [type(row) for step in expected.steps for row in step.rows] == [int, int, int]
    assert expected.steps[0].label == "row 3"


def test_lineage_null_holds_for_a_row_without_requester(compare_row_3: CompareRow3) -> None:
    assert compare_row_3("lineage: null", None) == []


def test_lineage_null_fails_for_a_row_with_a_requester(compare_row_3: CompareRow3) -> None:
    (mismatch,) = compare_row_3("lineage: null", child_lineage())
    assert (mismatch.path, mismatch.expected) == ("lineage", None)
    assert mismatch.observed["conversation"] == CHILD


def test_tree_null_holds_when_the_engine_has_no_tree(compare_row_3: CompareRow3) -> None:
    assert compare_row_3("tree: null", child_lineage(tree=None)) == []


def test_tree_null_fails_when_the_engine_has_a_tree(compare_row_3: CompareRow3) -> None:
    (mismatch,) = compare_row_3("tree: null", child_lineage(LineageTree()))
    assert (mismatch.path, mismatch.observed) == (
        "tree",
        {"siblings": [], "children": [], "roots": []},
    )


def test_an_id_item_matches_the_peer_conversation(compare_row_3: CompareRow3) -> None:
    tree = LineageTree(siblings=(peer(ROOT, depth=0, resolution="native"), peer(OTHER)))
    assert compare_row_3(f"tree: {{siblings: [{ROOT}, {OTHER}]}}", child_lineage(tree)) == []


def test_a_mapping_item_compares_only_its_given_peer_fields(compare_row_3: CompareRow3) -> None:
    step = f"tree:\n  siblings: [{{conversation: {OTHER}, resolution: confirmed}}]"
    held = LineageTree(siblings=(peer(OTHER, resolution="confirmed"),))
    failed = LineageTree(siblings=(peer(OTHER, resolution="inferred"),))
    assert compare_row_3(step, child_lineage(held)) == []
    (mismatch,) = compare_row_3(step, child_lineage(failed))
    assert mismatch.diff[-2:] == (
        f'-{{conversation: "{OTHER}", resolution: "confirmed"}}',
        f'+{{conversation: "{OTHER}", resolution: "inferred"}}',
    )


@pytest.mark.parametrize(
    "written",
    [
        "2000-01-01T00:00:01+00:00",
        "2000-01-01T00:00:01Z",
        "2000-01-01T00:00:01.000Z",
        "2000-01-01T00:00:01.000000+00:00",
        "2000-01-01T02:00:01+02:00",
    ],
)
def test_a_started_at_holds_for_the_same_instant_however_written(
    compare_row_3: CompareRow3, written: str
) -> None:
    # peer() started at "2000-01-01T00:00:01+00:00"
    step = f'tree:\n  siblings: [{{conversation: {OTHER}, started_at: "{written}"}}]'
    assert compare_row_3(step, child_lineage(LineageTree(siblings=(peer(OTHER),)))) == []


def test_a_started_at_fails_for_another_instant(compare_row_3: CompareRow3) -> None:
    step = f'tree:\n  siblings: [{{conversation: {OTHER}, started_at: "2000-01-01T00:00:01.5Z"}}]'
    (mismatch,) = compare_row_3(step, child_lineage(LineageTree(siblings=(peer(OTHER),))))
    assert mismatch.diff[-1] == (
        f'+{{conversation: "{OTHER}", started_at: "2000-01-01T00:00:01+00:00"}}'
    )


def test_lists_compare_in_order(compare_row_3: CompareRow3) -> None:
    tree = LineageTree(siblings=(peer(OTHER), peer(ROOT, depth=0)))
    (mismatch,) = compare_row_3(f"tree: {{siblings: [{ROOT}, {OTHER}]}}", child_lineage(tree))
    assert mismatch.path == "tree.siblings"
    assert mismatch.line == 4


def test_a_list_mismatch_is_shown_as_a_unified_diff(compare_row_3: CompareRow3) -> None:
    tree = LineageTree(children=(peer(OTHER),))
    (mismatch,) = compare_row_3(f"tree: {{children: [{CHILD}]}}", child_lineage(tree))
    assert mismatch.diff == (
        "--- expected",
        "+++ observed",
        "@@ -1 +1 @@",
        f'-"{CHILD}"',
        f'+"{OTHER}"',
    )


def test_a_view_is_compared_from_its_conversation_perspective(tmp_path: Path) -> None:
    expected = expected_from(
        tmp_path,
        f"version: 1\nsteps:\n  - row: 3\n    views:\n      {ROOT}:\n        children: [{CHILD}]\n",
    )
    (mismatch,) = compare_view(
        expected, 3, ("steps", 0), ROOT, expected.steps[0].views[ROOT], LineageTree()
    )
    assert mismatch.perspective == f'view of "{ROOT}"'
    assert (mismatch.path, mismatch.line) == ("tree.children", 6)


def test_a_null_view_holds_for_an_unknown_conversation(tmp_path: Path) -> None:
    expected = expected_from(tmp_path, "version: 1\nsteps: []\nfinal:\n  views: {nobody: null}\n")
    assert compare_view(expected, None, ("final",), "nobody", None, None) == []


# -- writing -----------------------------------------------------------------------------------


def test_ids_round_trip_through_the_written_yaml(tmp_path: Path) -> None:
    odd = ["call-1111-7\nfc_6666_0", "12345678", "1e5", "true", "null", "0x1f", "a: b", " x"]
    document = {
        "version": 1,
        "steps": [
            {"row": 1, "tree": {"siblings": odd, "children": [], "roots": []}},
            {"row": 2, "views": {odd[0]: None, odd[1]: {"roots": []}}},
        ],
    }
    text = dump_expected(document, "t.jsonl")
    data, lines = parse_yaml(text, tmp_path / "x.yaml")
    validate(data, lines, tmp_path / "x.yaml")
    assert data == document


def test_written_yaml_puts_short_id_lists_on_one_line() -> None:
    document = {"version": 1, "steps": [{"row": 1, "tree": {"siblings": [ROOT], "roots": []}}]}
    assert f"siblings: [{ROOT}]" in dump_expected(document, "t.jsonl")


def test_written_yaml_is_stable() -> None:
    document = {"version": 1, "host": "claude", "steps": [{"row": 1, "lineage": None}]}
    assert dump_expected(document, "t.jsonl") == dump_expected(dict(document), "t.jsonl")
    assert yaml.safe_load(dump_expected(document, "t.jsonl")) == document


def test_update_writes_a_step_only_where_the_requester_changed() -> None:
    tree = LineageTree(siblings=(peer(ROOT, depth=0),))
    same = child_lineage(tree)
    confirmed = replace(same, resolution="confirmed")
    document = updated_document(
        {1: same, 2: same, 3: None, 4: confirmed}, {}, None, host=None, existing=None
    )
    assert [s["row"] for s in document["steps"]] == [1, 4]
    assert document["steps"][1]["lineage"]["resolution"] == "confirmed"
    assert document["steps"][0]["tree"] == {"siblings": [ROOT], "children": [], "roots": []}


def test_update_keeps_hand_written_views_with_observed_values(tmp_path: Path) -> None:
    existing = expected_from(
        tmp_path,
        f"version: 1\nsteps:\n  - row: 2\n    views:\n      {ROOT}:\n"
        f"        children: [{{conversation: nobody, depth: 9}}]\n",
    )
    observed = LineageTree(siblings=(peer(OTHER),), children=(peer(CHILD),))
    document = updated_document(
        {1: child_lineage()}, {2: {ROOT: observed}}, None, host="claude", existing=existing
    )
    assert document["host"] == "claude"
    assert document["steps"][1] == {
        "row": 2,
        "views": {ROOT: {"children": [{"conversation": CHILD, "depth": 1}]}},
    }


def test_refreshing_an_empty_view_writes_the_whole_tree() -> None:
    tree = LineageTree(roots=(peer(OTHER, depth=0),))
    assert refresh_view({}, tree) == {"siblings": [], "children": [], "roots": [OTHER]}


def test_update_writes_no_views_for_a_step_that_had_none(tmp_path: Path) -> None:
    existing = expected_from(tmp_path, "version: 1\nsteps:\n  - row: 1\n    lineage: null\n")
    document = updated_document(
        {1: child_lineage(), 2: None}, {}, None, host=None, existing=existing
    )
    (step,) = document["steps"]
    assert sorted(step) == ["lineage", "row", "tree"]
