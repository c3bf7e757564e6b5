"""Fuzz: any expected file is refused whole with its line, or loaded and run; never anything in
between. No exception but :class:`InputError` (which names the file and a line), and memory
bounded however the file expands (anchors of anchors, deep nesting, huge numbers, broken YAML,
bytes that are not UTF-8).

A hang would show as unbounded work, and the work is bounded by what is measured here: every
node built counts against the bounds of :mod:`lineage_es.replay.yaml_bounds`, and the memory a
load allocates stays under :data:`PEAK_BYTES`.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_es.errors import InputError
from lineage_es.replay import run_replay
from lineage_es.replay.expected import Expected, load_expected
from lineage_es.replay.report import FORMATS, render
from tests.support.expected_example import SPEC_EXAMPLE
from tests.support.expected_hostile import laughs, nested, with_depth
from tests.support.one_spawn import HOLDS, write_recording

#: The most a load of these (small) files may allocate: the aliases' allowance of 100,000 nodes
#: fits well within it, a billion laughs would need tens of gigabytes.
PEAK_BYTES = 64 * 2**20

#: Well-formed expected files, the starting points the mutations break.
SEEDS = [
    HOLDS,
    "\n".join(line.removeprefix("    ") for line in SPEC_EXAMPLE.splitlines()).strip() + "\n",
    "version: 1\nsteps:\n  - &s\n    row: 3\n    tree: &t {siblings: [], children: []}\n"
    "  - *s\n  - rows: [1, 2]\n    views: {x: *t, y: *t}\nfinal: {views: {x: null}}\n",
]

#: Fragments that reach the readers' corners: anchors, aliases, tags, merge keys, flow
#: collections, numbers at and past the bounds, document markers, odd characters.
FRAGMENTS = [
    "&a ",
    "*a",
    "&b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
    "[*b, *b, *b, *b, *b, *b, *b, *b, *b]",
    "!!binary aGk=",
    "!!set {a: , b: }",
    "!!int '1'",
    "!thing ",
    "<<: *a",
    "? {a: 1}\n: 1",
    "[" * 120,
    "]" * 120,
    "{a: " * 30,
    "1" * 5000,
    "0x" + "f" * 400,
    "9223372036854775808",
    "9223372036854775807",
    "1.0e+999",
    "-.inf",
    ".nan",
    "1:20:30",
    "0o17",
    "2001-12-14T21:59:43Z",
    "---\n",
    "...\n",
    "%YAML 1.1\n",
    "\t",
    '"a\\nb"',
    "\ufeff",
    "\x85",
    "é",
    "- ",
    ": ",
    "\n  ",
    "#",
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A seed with a few edits: fragments spliced in, spans deleted, bytes replaced."""
    text = draw(st.sampled_from(SEEDS)).encode("utf-8")
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.integers(0, 3))
        if edit == 0:
            text = text[:at] + draw(st.sampled_from(FRAGMENTS)).encode("utf-8") + text[at:]
        elif edit == 1:
            text = text[:at] + text[at + draw(st.integers(1, 20)) :]
        elif edit == 2:
            text = text[:at] + draw(st.binary(min_size=1, max_size=4)) + text[at + 1 :]
        else:
            text = text[:at] + draw(st.text(max_size=6)).encode("utf-8") + text[at:]
    return text


numbers = st.one_of(
    st.integers().map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),
    st.integers(1, 2000).map(lambda n: "0x" + "f" * n),
    st.tuples(st.integers(-9, 9), st.integers(0, 9), st.integers(-999, 999)).map(
        lambda t: f"{t[0]}.{t[1]}e{t[2]:+d}"
    ),
    st.floats().map(repr),
    st.sampled_from([".inf", "-.inf", ".nan", "0b101", "0o17", "1_000", "1:20", "+12", "~"]),
)

hostile = st.one_of(
    st.integers(1, 8).map(laughs),
    st.integers(1, 8).map(lambda n: laughs(n, header="version: !!int '1'\n")),
    st.integers(0, 400).map(nested),
    st.integers(0, 400).map(lambda n: nested(n, header="host: !!str claude\nversion: 1\n")),
    numbers.map(with_depth),
    numbers.map(lambda n: with_depth(n).replace("steps:", "host: !!str claude\nsteps:")),
)

expected_files = st.one_of(
    mutated(),
    hostile.map(lambda text: text.encode("utf-8")),
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda text: text.encode("utf-8")),
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The recording (one Claude spawn) every loaded file is run against, and room for the
    expected file."""
    path = tmp_path_factory.mktemp("expected-fuzz")
    write_recording(path / "s.jsonl")
    return path


def load_within_bounds(path: Path) -> Expected | InputError:
    """``path`` loaded, or the :class:`InputError` refusing it; memory checked either way."""
    tracemalloc.start()
    try:
        return load_expected(path)
    except InputError as exc:
        return exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < PEAK_BYTES, f"loading allocated {peak:,} bytes"


def assert_refused_whole(error: InputError, path: Path) -> None:
    assert error.path == str(path)
    assert error.line is not None and error.line >= 1, error
    assert error.reason, error


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(content=expected_files)
def test_an_expected_file_is_refused_with_a_line_or_loaded_and_run(
    folder: Path, content: bytes
) -> None:
    path = folder / "e.expected.yaml"
    path.write_bytes(content)
    loaded = load_within_bounds(path)
    if isinstance(loaded, InputError):
        assert_refused_whole(loaded, path)
        return
    try:
        result = run_replay(folder / "s.jsonl", expected=loaded)
    except InputError as exc:  # a step naming a row the recording does not have
        assert_refused_whole(exc, path)
        return
    assert len(result.steps) >= len(loaded.steps)
    for fmt in FORMATS:  # every report the command line prints
        assert render(result, fmt)


def test_the_fuzz_reaches_both_outcomes(folder: Path) -> None:
    # A guard on the test above: its files must be loaded and run, not only refused.
    outcomes: list[bool] = []

    @settings(max_examples=200, deadline=None, database=None)
    @given(content=mutated())
    def collect(content: bytes) -> None:
        path = folder / "guard.expected.yaml"
        path.write_bytes(content)
        outcomes.append(not isinstance(load_within_bounds(path), InputError))

    collect()
    assert 0 < sum(outcomes) < len(outcomes)
