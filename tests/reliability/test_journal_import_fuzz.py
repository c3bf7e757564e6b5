"""Fuzzing the import: any one field of any line of a real export, changed to any JSON value
or removed, is either refused whole with its line (the store left empty) or imported with
``verify`` clean and the tree answering. Never anything in between."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_es.engine.engine import open_engine
from lineage_es.errors import JournalFormatError
from lineage_es.journal import import_journal, verify_journal
from tests.support.journal_samples import export_to, feed_varied, lines_of
from tests.support.paths import REPO

COMPAT_EXPORT = REPO / "tests" / "fixtures" / "compat" / "0.1.0" / "journal.jsonl"

#: A value removes the field instead of replacing it.
REMOVED = object()

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-2, max_value=12),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["R", "A", "X", "Y", "R\x00", "", "1.1", "claude", "lineage:RootLineage"]),
)
TIMES = st.builds(
    lambda data: {"_type_": "datetime_iso", "_data_": data},
    st.one_of(
        st.text(max_size=8),
        st.sampled_from(["2026-01-01T00:00:00", "2026-01-01T00:00:00+00:00", "2026-13-01"]),
    ),
)
VALUES: st.SearchStrategy[Any] = st.one_of(
    st.just(REMOVED),
    SCALARS,
    TIMES,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.text(max_size=4), SCALARS, max_size=3),
)


@functools.cache
def exported(name: str) -> tuple[dict[str, Any], ...]:
    """The journals mutated: a small one of many event types, and a real one of 0.1.0 (kept
    out of the tests' arguments, so that a failing example shows only what was drawn)."""
    if name == "compat":
        return tuple(lines_of(COMPAT_EXPORT))
    with tempfile.TemporaryDirectory() as folder, open_engine("memory://") as engine:
        feed_varied(engine)
        return tuple(lines_of(export_to(engine, Path(folder) / "varied.jsonl")))


def field_paths(line: dict[str, Any]) -> list[tuple[str, ...]]:
    """Every field of a line: its own keys, and each key of its state."""
    paths: list[tuple[str, ...]] = [(key,) for key in line if key != "state"]
    paths += [("state", key) for key in line.get("state", {})]
    return paths


def mutated(
    lines: tuple[dict[str, Any], ...], number: int, path: tuple[str, ...], value: Any
) -> bytes:
    changed = orjson.loads(orjson.dumps(lines[number - 1]))
    holder = changed
    for key in path[:-1]:
        holder = holder[key]
    if value is REMOVED:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    out = [*lines[: number - 1], changed, *lines[number:]]
    return b"".join(orjson.dumps(line) + b"\n" for line in out)


def assert_all_or_nothing(path: Path) -> None:
    """The invariant: refused with a line and nothing written, or imported and sound."""
    with open_engine("memory://") as engine:
        try:
            import_journal(engine, path)
        except JournalFormatError as refused:
            assert refused.line is not None, refused
            assert engine.position() == 0
            return
        report = verify_journal(engine)
        assert report.ok, report.problems
        engine.forest(include_stopped=True)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_field_changed_is_refused_whole_with_a_line_or_imported_sound(
    tmp_path: Path, data: st.DataObject
) -> None:
    lines = exported(data.draw(st.sampled_from(["varied", "compat"]), label="journal"))
    number = data.draw(st.integers(min_value=1, max_value=len(lines)), label="line")
    path = data.draw(st.sampled_from(field_paths(lines[number - 1])), label="field")
    value = data.draw(VALUES, label="value")
    target = tmp_path / "mutated.jsonl"
    target.write_bytes(mutated(lines, number, path, value))
    assert_all_or_nothing(target)


def every_field_of_every_event_type(
    lines: tuple[dict[str, Any], ...],
) -> list[tuple[int, tuple[str, ...]]]:
    """The first line of each event type (and the header), with each of its fields."""
    seen: set[str] = set()
    chosen: list[tuple[int, tuple[str, ...]]] = []
    for number, line in enumerate(lines, 1):
        kind = line.get("topic", "header")
        if kind in seen:
            continue
        seen.add(kind)
        chosen += [(number, path) for path in field_paths(line)]
    return chosen


#: Values every field is tried with: wrong types, text no store keeps, and removal.
FIXED_VALUES: list[Any] = [REMOVED, None, True, -1, 7, "x", "R\x00", [], {}, 1.5]


def test_every_field_of_every_event_type_changed_keeps_the_invariant(tmp_path: Path) -> None:
    lines = exported("varied")
    tried = 0
    for number, path in every_field_of_every_event_type(lines):
        for value in FIXED_VALUES:
            target = tmp_path / "mutated.jsonl"
            target.write_bytes(mutated(lines, number, path, value))
            assert_all_or_nothing(target)
            tried += 1
    assert tried > 100
