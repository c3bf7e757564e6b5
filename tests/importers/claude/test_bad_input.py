"""``lineage import claude`` counts what it cannot read (broken rows, lines that are no
rows, files too large or unreadable) and imports the rest; a missing folder is refused."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_es.engine.engine import Engine
from lineage_es.errors import InputError
from lineage_es.importers import lines as lines_module
from tests.support.claude_projects import (
    AGENT,
    OTHER,
    SESSION,
    Session,
    iso,
    members,
    one_child,
    run,
)


def test_missing_folder_is_refused(tmp_path: Path, memory: Engine) -> None:
    with pytest.raises(InputError, match="not a folder"):
        run(memory, tmp_path / "absent")


# -- bad input is counted, never fatal ---------------------------------------------------------


def test_broken_and_unknown_rows_are_counted_and_the_rest_imported(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    call = {"type": "tool_use", "id": "toolu_Z", "name": "Agent", "input": {}}
    torn = orjson.dumps({"type": "assistant", "message": {"content": [call]}})[:-9]
    s.write(s.main, torn + b"\n")  # an interrupted write, then the next row
    s.write(s.main, {"type": "hologram", "sessionId": SESSION, "message": {"content": [call]}})
    s.answer(30)
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.TORN: 1, lines_module.UNKNOWN_TYPE: 1}
    assert members(memory)[AGENT].parent == SESSION


def test_lines_that_cannot_be_rows_are_counted_though_no_marker_points_to_them(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    s.write(s.main, b"not json at all\n")
    s.write(s.main, b"[1, 2, 3]\n")
    s.write(s.main, b"\xff\xfe\n")
    s.write(s.main, orjson.dumps({"type": "user", "sessionId": SESSION})[:-9] + b"\n")
    s.write(s.main, b"\n")  # a blank line is no row, and no fault
    s.answer(30)
    report = run(memory, tmp_path)
    assert report.skipped == {
        lines_module.NOT_JSON: 2,
        lines_module.NOT_OBJECT: 1,
        lines_module.TORN: 1,
    }


def test_row_of_an_unknown_type_read_for_the_files_end_is_counted_once(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    s.write(s.main, {"type": "hologram", "sessionId": SESSION, "timestamp": iso(30)})
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.UNKNOWN_TYPE: 1}
    assert str(members(memory)[SESSION].stopped_at).startswith("2026-09-03T08:00:09")


@pytest.mark.parametrize("stamp", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00"])
def test_a_row_whose_time_no_datetime_holds_in_utc_is_read_as_untimed(
    tmp_path: Path, memory: Engine, stamp: str
) -> None:
    """Its offset carries it past year 9999 (or before year 1) in UTC: the row is read as
    one without a time, and the import goes on."""
    s = one_child(tmp_path)
    s.write(s.main, {"type": "user", "sessionId": SESSION, "uuid": "u-edge", "timestamp": stamp})
    run(memory, tmp_path)
    assert members(memory)[AGENT].parent == SESSION


_ROWS = st.dictionaries(st.sampled_from(["type", "uuid", "x"]), st.integers(-9, 9), max_size=3)


_LINES = st.one_of(
    _ROWS.map(orjson.dumps),
    _ROWS.map(lambda row: orjson.dumps(row)[:-1]),
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")),
)


@given(lines=st.lists(_LINES, max_size=12))
@settings(max_examples=200, deadline=None)
def test_every_line_that_is_not_a_json_object_is_counted_by_the_region_or_its_parser(
    lines: list[bytes],
) -> None:
    """count_bad_lines parses only lines without an object's shape; the lines with one that
    are no object are left to whoever parses them: between the two, each is counted."""
    data = b"".join(line + b"\n" for line in lines)
    skips: Counter[str] = Counter()
    lines_module.count_bad_lines(data, skips)
    shaped = [line for line in lines if lines_module.looks_like_object(line)]
    left = sum(lines_module.why_bad(line) is not None for line in shaped)
    assert sum(skips.values()) + left == sum(
        lines_module.why_bad(line) is not None for line in lines
    )
    assert all(
        lines_module.why_bad(line) in (None, lines_module.NOT_JSON, lines_module.TORN)
        for line in shaped
    )


def test_overlong_line_is_skipped_and_counted(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(lines_module, "REGION_BYTES", 1000)
    s = one_child(tmp_path)
    s.prompt(20, "x" * 10_000)
    s.answer(21)
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.OVERLONG] == 1
    assert members(memory)[SESSION].stopped_at is not None


def test_file_over_the_size_limit_is_skipped_and_counted(tmp_path: Path, memory: Engine) -> None:
    one_child(tmp_path)
    big = Session(tmp_path, OTHER)
    for second in range(40):
        big.prompt(second, "y" * 200)
    report = run(memory, tmp_path, max_file_bytes=4000)
    assert report.skipped[lines_module.TOO_LARGE] == 1
    assert OTHER not in {n.conversation for n in memory.forest(include_stopped=True)}


def test_unreadable_file_is_counted_and_the_others_imported(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_child(tmp_path)
    other = Session(tmp_path, OTHER)
    other.prompt(1)
    real_open = open

    def refusing(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path) == str(other.main):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing)
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.UNREADABLE] == 1
    assert AGENT in members(memory)
