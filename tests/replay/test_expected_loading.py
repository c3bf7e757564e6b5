"""Loading a large expected file fast: the event reader must agree with the exact reader (node
tree, every line), the compiled validator (fastjsonschema) with jsonschema, which explains what
it refuses, and deeper lines come on demand."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_es.errors import InputError
from lineage_es.replay import schema_check, yaml_bounds, yaml_lines
from lineage_es.replay.expected import (
    LazyLines,
    conforms,
    load_expected,
    parse_yaml,
    schema,
    validate,
)
from lineage_es.replay.expected_writer import dump_expected
from tests.support.expected_example import CHILD, ROOT, SPEC_EXAMPLE
from tests.support.paths import REPO

SHIPPED = sorted((REPO / "replays").rglob("*.expected.yaml"))


def both_readers(text: str, path: Path) -> tuple[Any, dict[Any, int]]:
    """Read ``text`` with the event reader, check it agrees with the exact reader, return it."""
    fast = yaml_lines._parse_events(text, None)
    exact = yaml_lines._parse_nodes(text, path)
    assert fast is not None, "the event reader gave up on an ordinary document"
    assert fast[0] == exact[0]
    assert fast[1] == exact[1]
    eager = yaml_lines._parse_events(text, yaml_lines._EAGER_DEPTH)
    assert eager is not None
    assert eager[0] == exact[0]
    assert eager[1] == {k: v for k, v in exact[1].items() if len(k) <= yaml_lines._EAGER_DEPTH}
    return fast


def jsonschema_valid(data: Any) -> bool:
    return bool(jsonschema.Draft202012Validator(schema()).is_valid(data))


# -- the event reader --------------------------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO / "replays")))
def test_every_shipped_expected_file_reads_the_same_both_ways(path: Path) -> None:
    data, _ = both_readers(path.read_text(encoding="utf-8"), path)
    assert conforms(data)
    assert jsonschema_valid(data)


def test_the_shipped_files_include_an_alias() -> None:
    # `--update` writes an anchor when two views share a tree; the event reader builds it.
    assert any("*id0" in path.read_text(encoding="utf-8") for path in SHIPPED)


ORDINARY = {
    "spec": SPEC_EXAMPLE,
    "plain scalars": """
        a: [1, 0x1f, 0o17, +12, 1_000, '1:20', 1:20, 1.5, 1e3, .inf, yes, No, on, ~, null, x]
        b: 2001-12-14
        c: 2001-12-14T21:59:43.10-05:00
        d:
        e: ""
        '': 1
        "=": eq
        f: "<<"
        """,
    "block scalars": """
        literal: |
          two
          lines
        folded: >-
          one
          line
        "quoted key": 'it''s'
        """,
    "documents markers": "%YAML 1.1\n---\nversion: 1\nsteps: []\n...\n",
    "flow over lines": """
        steps: [{row: 1,
                 tree: {siblings: [a,
                   b]}}, {rows: [2, 3]}]
        """,
    "anchors and aliases": """
        shared: &tree
          siblings: &ids [a, b]
          children: [&c c]
        steps:
          - row: 1
            tree: *tree
          - row: 2
            tree: {siblings: *ids, children: [*c, *c]}
          - &step
            row: 3
          - *step
          - *ids
        """,
    "comments and unicode": '# héllo\nsteps: # trailing\n  - row: 1 # one\n    x: "é\\nü"\n',
}


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_yaml_reads_the_same_both_ways(name: str, tmp_path: Path) -> None:
    both_readers(textwrap.dedent(ORDINARY[name]).lstrip(), tmp_path / "x.yaml")


UNUSUAL = {
    "duplicate key": "version: 1\nsteps: []\nsteps: []\n",
    "number key": "steps:\n  - views:\n      1234: null\n",
    "null key": "? \n: 1\n",
    "bool key": "yes: 1\n",
    "mapping key": "? {a: 1}\n: 1\n",
    "alias key": "a: &k key\n*k : 2\n",
    "anchored key": "&k key: 1\n",
    "tag": "version: !!int '1'\n",
    "local tag": "version: !thing 1\n",
    "non-specific tag": "version: ! 1\n",
    "binary": "version: !!binary aGk=\n",
    "merge": "base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n",
    "value key": "=: 1\n",
    "self alias": "version: 1\nsteps: &loop\n  - row: 1\n    tree: *loop\n",
    "undefined alias": "version: *nothing\n",
    "duplicate anchor": "a: &x 1\nb: &x 2\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "empty": "\n",
    "comments only": "# nothing\n",
    "invalid": "version: 1\nsteps:\n  - row: 1\n   lineage: [\n",
}


def outcome(read: Callable[[str, Path], tuple[Any, Any]], text: str, path: Path) -> Any:
    """What ``read`` makes of ``text``: the data, or the reason and line it refuses it for."""
    try:
        return read(text, path)[0]
    except InputError as exc:
        return (exc.reason, exc.line)


@pytest.mark.parametrize("name", UNUSUAL)
def test_unusual_yaml_is_left_to_the_exact_reader(name: str, tmp_path: Path) -> None:
    text = UNUSUAL[name]
    assert yaml_lines._parse_events(text, None) is None
    path = tmp_path / "x.yaml"
    assert outcome(parse_yaml, text, path) == outcome(yaml_lines._parse_nodes, text, path)


odd_text = st.one_of(
    st.text(max_size=8),
    st.sampled_from(
        ["yes", "No", "on", "~", "null", "1e5", "0x1f", "1:20", "12", "1_0", "", " x", "a: b"]
    ),
    st.sampled_from(["2001-12-14", "<<", "=", "- a", "#", "'", '"', "é\n\t", "\x85", "\ufeff"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-yaml_bounds.MAX_INTEGER, yaml_bounds.MAX_INTEGER),
    st.floats(allow_nan=False),
    odd_text,
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(odd_text, inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=documents,
    flow=st.sampled_from([None, True, False]),
    unicode=st.booleans(),
    canonical=st.booleans(),
)
def test_any_dumped_document_reads_the_same_both_ways(
    data: Any, flow: bool | None, unicode: bool, canonical: bool
) -> None:
    text = yaml.safe_dump(
        data, default_flow_style=flow, allow_unicode=unicode, canonical=canonical, width=40
    )
    fast = yaml_lines._parse_events(text, None)
    if fast is None:  # tags (canonical form) and such: the exact reader alone judges them
        return
    assert fast == yaml_lines._parse_nodes(text, Path("x.yaml"))


@settings(max_examples=200, deadline=None)
@given(data=documents)
def test_a_document_written_by_update_reads_the_same_both_ways(data: Any) -> None:
    text = dump_expected({"version": 1, "steps": [{"row": 1, "views": {"x": data}}]}, "t.jsonl")
    both_readers(text, Path("x.yaml"))


# -- the compiled schema -----------------------------------------------------------------------


def test_the_validator_is_compiled_once_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled: list[object] = []
    real = fastjsonschema.compile

    def counting(definition: Any, **options: Any) -> Any:
        compiled.append(definition)
        return real(definition, **options)

    monkeypatch.setattr(fastjsonschema, "compile", counting)
    schema_check._compiled_validator.cache_clear()
    assert compiled == []
    for _ in range(3):
        load_expected(written(tmp_path, DEEP))
    assert compiled == [schema()]


def test_a_refusal_jsonschema_cannot_explain_still_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were the two validators ever to disagree, the compiled one's reason is given.
    monkeypatch.setattr(schema_check, "_explain_refusal", lambda *_: None)
    text = 'version: 1\nsteps:\n  - row: 1\n    views:\n      "a.b": {kids: []}\n'
    data, lines = parse_yaml(text, tmp_path / "x.yaml")
    with pytest.raises(InputError) as caught:
        validate(data, lines, tmp_path / "x.yaml")
    assert caught.value.line == 5
    assert caught.value.reason.startswith('steps[0].views["a.b"]: must not contain')


def test_a_value_json_has_no_name_for_is_refused() -> None:
    assert not conforms({"version": 1, "steps": [{"row": 1, "lineage": {"parent": b"x"}}]})
    assert not conforms({"version": 1, "steps": [{"row": 1, "views": {"a": {"roots": {1}}}}]})


def test_a_refused_document_is_explained_by_jsonschema(tmp_path: Path) -> None:
    data, lines = parse_yaml("version: 1\nsteps:\n  - row: 0\n", tmp_path / "x.yaml")
    assert not conforms(data)
    with pytest.raises(InputError) as caught:
        validate(data, lines, tmp_path / "x.yaml")
    assert (caught.value.line, caught.value.reason) == (3, "steps[0].row: must be at least 1")


ids = st.sampled_from([ROOT, CHILD, "a\nb", ""])
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.0, float("inf")]),
    st.sampled_from(["", "x", "inferred", "claude", "native"]),
    st.lists(st.integers(-1, 2), max_size=2),
    st.dictionaries(st.sampled_from(["a", "views"]), st.none(), max_size=1),
)


def mostly(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``right`` nine times in ten, anything else otherwise."""
    return st.integers(0, 9).flatmap(lambda i: junk if i == 0 else right)


def fields(spec: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Mappings of some of ``spec``'s keys, now and then with an unknown key."""
    known = st.fixed_dictionaries({}, optional=spec)
    odd = st.fixed_dictionaries({"bogus": junk}, optional=spec)
    return st.integers(0, 9).flatmap(lambda i: odd if i == 0 else known)


resolutions = st.sampled_from(["native", "registry", "confirmed", "transcript", "inferred", "x"])
subagents = st.one_of(st.none(), fields({"id": ids, "type": st.one_of(st.none(), ids)}))
peer_fields = {
    "conversation": ids,
    "depth": mostly(st.integers(-1, 3)),
    "parent": mostly(st.one_of(st.none(), ids)),
    "started_at": mostly(st.just("2000-01-01T00:00:00Z")),
    "subagent": mostly(subagents),
    "resolution": mostly(resolutions),
}
peers = st.lists(mostly(st.one_of(ids, fields(peer_fields))), max_size=3)
trees = st.one_of(
    st.none(), fields({"siblings": mostly(peers), "children": mostly(peers), "roots": peers})
)
views = st.dictionaries(st.sampled_from([ROOT, CHILD, ""]), mostly(trees), max_size=2)
lineages = st.one_of(
    st.none(),
    fields(
        {
            "conversation": ids,
            "root": ids,
            "parent": mostly(st.one_of(st.none(), ids)),
            "depth": mostly(st.integers(-1, 3)),
            "resolution": mostly(resolutions),
            "subagent": mostly(subagents),
            "host": mostly(st.sampled_from(["claude", "codex", "cursor", "vim"])),
        }
    ),
)
rows = st.integers(-1, 9).flatmap(
    lambda i: st.sampled_from([0, 2.0, True, "3"]) if i < 0 else st.just(i or 1)
)
step_fields = {
    "lineage": mostly(lineages),
    "tree": mostly(trees),
    "views": mostly(views),
}
steps = st.one_of(
    fields({"row": mostly(rows), **step_fields}).map(lambda s: {"row": 1, **s}),
    fields(step_fields).map(lambda s: {"rows": [2, 3], **s}),
    fields({"row": mostly(rows), "rows": mostly(st.lists(rows, max_size=3)), **step_fields}),
)
expected_documents = mostly(
    fields(
        {
            "version": mostly(st.just(1)),
            "steps": mostly(st.lists(mostly(steps), max_size=3)),
            "host": mostly(st.sampled_from(["claude", "codex", "cursor"])),
            "final": mostly(fields({"views": mostly(views)})),
        }
    ).map(lambda d: {"version": 1, "steps": [], **d})
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=st.one_of(expected_documents, documents))
def test_the_compiled_validator_agrees_with_jsonschema(document: Any) -> None:
    assert conforms(document) == jsonschema_valid(document)


def edge(**step: Any) -> dict[str, Any]:
    return {"version": 1, "steps": [{"row": 1, **step}]}


def each(*values: object) -> tuple[object, ...]:
    return values


EDGES: list[object] = [
    *({"version": v, "steps": []} for v in (1, 1.0, True, "1", 2, None)),
    *(edge(row=v) for v in (0, 0.0, 1, 2.0, 2.5, True, False, "3", None, float("inf"))),
    *({"version": 1, "steps": [{"rows": v}]} for v in ([], [1, 2.0], [True], [0], 3, None)),
    {"version": 1, "steps": [{"row": 1, "rows": [1]}]},
    {"version": 1, "steps": [{}]},
    *(edge(lineage={"depth": v}) for v in (0, 0.0, -1, -1.0, -0.5, False, "0", None)),
    *(edge(lineage={"resolution": v}) for v in ("inferred", "", 1, None, True)),
    *(edge(lineage={"subagent": v}) for v in each(None, {}, {"id": ""}, {"type": None}, [], "x")),
    *(edge(tree=v) for v in each(None, {}, [], {"roots": []}, {"roots": None}, {"kids": []})),
    *(edge(tree={"children": [v]}) for v in each("", "a", {}, {"depth": 1.0}, 1, None, [], True)),
    *(edge(views=v) for v in each({}, {"": None}, {"a": None}, {"a": {}}, {"a": []}, [], None)),
    {"version": 1, "steps": [], "final": {}},
    {"version": 1, "steps": [], "final": {"views": {}}},
    {"version": 1, "steps": [], "final": {"views": {}, "x": 1}},
    {"version": 1, "steps": [], "host": "vim"},
    {"version": 1},
    {"steps": []},
    [],
    None,
]


@pytest.mark.parametrize("document", EDGES, ids=repr)
def test_the_compiled_validator_agrees_with_jsonschema_at_the_edges(document: Any) -> None:
    assert conforms(document) == jsonschema_valid(document)


def test_the_generated_documents_are_often_valid() -> None:
    # A guard on the test above: it must see valid documents, not only broken ones.
    found = []

    @settings(max_examples=300, deadline=None, database=None)
    @given(document=expected_documents)
    def collect(document: Any) -> None:
        found.append(jsonschema_valid(document))

    collect()
    assert sum(found) > len(found) // 20


# -- lines on demand ---------------------------------------------------------------------------


DEEP = f"""\
version: 1
host: claude
steps:
  - row: 1
    lineage: {{depth: 0}}
  - row: 3
    tree:
      siblings: [{ROOT}]
      children:
        - {CHILD}
"""


def written(tmp_path: Path, text: str) -> Path:
    """``text`` as the expected file ``e.yaml``."""
    path = tmp_path / "e.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def count_full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = yaml_lines._parse_events

    def counting(text: str, depth: int | None) -> Any:
        if depth is None:
            calls.append(1)
        return real(text, depth)

    monkeypatch.setattr(yaml_lines, "_parse_events", counting)
    return calls


def test_loading_keeps_only_the_lines_of_top_keys_and_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = written(tmp_path, DEEP)
    full_reads = count_full_reads(monkeypatch)
    expected = load_expected(path)
    assert isinstance(expected.lines, LazyLines)
    assert [step.line for step in expected.steps] == [4, 6]
    assert (expected.lines.get(("host",)), expected.final_line) == (2, None)
    assert ("steps", 2) not in expected.lines
    assert full_reads == []
    assert expected.lines[("steps", 1, "tree")] == 7
    assert expected.line_of(("steps", 1, "tree", "children")) == 9
    assert expected.line_of(("steps", 1, "tree", "children", 0)) == 10
    assert expected.line_of(("steps", 0, "lineage", "depth")) == 5
    assert full_reads == [1]
    assert expected.lines == yaml_lines._parse_nodes(DEEP, path)[1]


def test_deeper_lines_are_not_taken_from_a_changed_file(tmp_path: Path) -> None:
    path = written(tmp_path, DEEP)
    expected = load_expected(path)
    path.write_text("\n\n\n" + DEEP, encoding="utf-8")
    # The file read is not the file loaded: the step's own line is the best known.
    assert expected.line_of(("steps", 1, "tree", "children")) == 6


def test_an_aliased_step_loads_as_a_step_of_its_own(tmp_path: Path) -> None:
    text = "version: 1\nsteps:\n  - &s\n    row: 2\n    lineage: {depth: 1}\n  - *s\n"
    path = written(tmp_path, text)
    expected = load_expected(path)
    # An alias is built afresh, with its anchor's lines, as the exact reader builds it.
    assert [(s.rows, s.line, dict(s.checks)) for s in expected.steps] == [
        ((2,), 3, {"lineage": {"depth": 1}}),
        ((2,), 3, {"lineage": {"depth": 1}}),
    ]
    assert expected.steps[0].checks is not expected.steps[1].checks
    assert expected.line_of(("steps", 1, "lineage", "depth")) == 5
    assert expected.lines == yaml_lines._parse_nodes(text, path)[1]


def test_an_error_deep_in_a_large_file_names_its_line(tmp_path: Path) -> None:
    body = "".join(f"  - row: {i}\n    lineage: {{depth: {i}}}\n" for i in range(1, 500))
    path = written(tmp_path, f"version: 1\nsteps:\n{body}  - row: 500\n    lineage: {{dept: 1}}\n")
    with pytest.raises(InputError) as caught:
        load_expected(path)
    assert caught.value.line == 2 + 2 * 499 + 2
    assert "unknown key 'dept' in steps[499].lineage (did you mean 'depth'?)" in (
        caught.value.reason
    )


def test_a_float_row_is_as_valid_as_jsonschema_says(tmp_path: Path) -> None:
    # jsonschema takes 2.0 for an integer; the compiled validator must not be stricter.
    path = written(tmp_path, "version: 1.0\nsteps:\n  - row: 2.0\n")
    assert load_expected(path).steps[0].rows == (2.0,)
