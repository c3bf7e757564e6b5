"""The one bounded line reader: lines split and bounded, each caller's policy on top."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lineage_es.errors import InputError
from lineage_es.lines import LineTooLong, bounded_lines, json_rows, numbered_lines


def test_each_line_comes_with_its_size_and_whether_it_ended() -> None:
    lines = list(bounded_lines(io.BytesIO(b'{"a": 1}\n\n{"b"'), 64))
    assert lines == [(b'{"a": 1}\n', 9, True), (b"\n", 1, True), (b'{"b"', 4, False)]


def test_reading_starts_where_the_stream_stands() -> None:
    stream = io.BytesIO(b"one\ntwo\n")
    stream.seek(4)
    assert [line for line, _, _ in bounded_lines(stream, 64)] == [b"two\n"]


def test_a_line_at_the_limit_is_read_its_newline_not_counted() -> None:
    assert list(bounded_lines(io.BytesIO(b"x" * 8 + b"\n"), 8)) == [(b"x" * 8 + b"\n", 9, True)]


def test_an_overlong_line_stops_the_reading_with_nothing_read_past_the_limit() -> None:
    stream = io.BytesIO(b"ok\n" + b"x" * 100 + b"\n")
    lines = bounded_lines(stream, 8)
    assert next(lines) == (b"ok\n", 3, True)
    with pytest.raises(LineTooLong):
        next(lines)
    assert stream.tell() == 3 + 9


def test_a_skipped_overlong_line_is_reported_and_yielded_empty_with_its_size() -> None:
    skipped: list[None] = []
    lines = bounded_lines(io.BytesIO(b"x" * 100 + b"\nok\n"), 8, lambda: skipped.append(None))
    assert (list(lines), len(skipped)) == ([(b"", 101, True), (b"ok\n", 3, True)], 1)


def test_a_skipped_overlong_last_line_without_newline_is_incomplete_and_not_reported() -> None:
    skipped: list[None] = []
    lines = bounded_lines(io.BytesIO(b"x" * 100), 8, lambda: skipped.append(None))
    assert (list(lines), skipped) == ([(b"", 100, False)], [])


def test_numbered_lines_refuse_an_overlong_line_naming_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"{}\n\n" + b"x" * 100 + b"\n")
    with pytest.raises(InputError, match="longer than 64 bytes") as raised:
        list(numbered_lines(path, 64))
    assert (raised.value.path, raised.value.line) == (str(path), 3)


def test_json_rows_number_blank_lines_as_none(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n  \n{"b": 2}\n')
    assert list(json_rows(path)) == [(1, {"a": 1}), (2, None), (3, {"b": 2})]


def test_json_rows_end_quietly_at_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": ')
    assert list(json_rows(path)) == [(1, {"a": 1})]


def test_json_rows_refuse_a_complete_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n[1, 2]\n')
    with pytest.raises(InputError, match="not a JSON object") as raised:
        list(json_rows(path))
    assert raised.value.line == 2


def test_json_rows_refuse_an_overlong_line_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"pad": "' + b"x" * 100 + b'"}\n')
    with pytest.raises(InputError, match="longer than") as raised:
        list(json_rows(path, 64))
    assert raised.value.line == 2


def test_json_rows_refuse_a_file_that_cannot_be_opened(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read the file"):
        list(json_rows(tmp_path / "gone.jsonl"))


# -- read leniently: a bad line is handed over, and the lines after it follow -------------------


def test_numbered_lines_hand_over_an_overlong_line_unread_and_read_on(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"{}\n" + b"x" * 100 + b"\n{}\n")
    refused: list[InputError] = []
    lines = list(numbered_lines(path, 64, overlong=refused.append))
    assert lines == [(1, b"{}\n"), (3, b"{}\n")]
    assert [(e.path, e.line, e.reason) for e in refused] == [
        (str(path), 2, "line is longer than 64 bytes; refused unread")
    ]


def test_json_rows_hand_over_a_line_that_is_not_json_and_read_on(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2, "b\n{"a": 3}\n')
    refused: list[InputError] = []
    assert list(json_rows(path, bad=refused.append)) == [(1, {"a": 1}), (3, {"a": 3})]
    assert [(e.line, "not JSON" in e.reason) for e in refused] == [(2, True)]


def test_json_rows_hand_over_a_line_that_is_not_an_object_and_read_on(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'[1, 2]\n{"a": 1}\n')
    refused: list[InputError] = []
    assert list(json_rows(path, bad=refused.append)) == [(2, {"a": 1})]
    assert [(e.line, e.reason) for e in refused] == [(1, "line is not a JSON object")]


def test_json_rows_hand_over_an_overlong_line_unread_and_read_on(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"pad": "' + b"x" * 100 + b'"}\n{"a": 1}\n')
    refused: list[InputError] = []
    assert list(json_rows(path, 64, bad=refused.append)) == [(2, {"a": 1})]
    assert [(e.line, "longer than 64 bytes" in e.reason) for e in refused] == [(1, True)]


def test_json_rows_hand_over_a_row_nested_deeper_than_orjson_writes(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": ' + b"[" * 300 + b"]" * 300 + b'}\n{"a": 1}\n')
    refused: list[InputError] = []
    assert list(json_rows(path, bad=refused.append)) == [(2, {"a": 1})]
    assert [(e.line, "nested more than 254 levels" in e.reason) for e in refused] == [(1, True)]


def test_json_rows_read_leniently_take_a_row_nested_as_deep_as_orjson_writes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": ' + b"[" * 253 + b"]" * 253 + b"}\n")  # 254 levels
    refused: list[InputError] = []
    assert [n for n, _ in json_rows(path, bad=refused.append)] == [1]
    assert refused == []


def test_json_rows_read_leniently_still_end_quietly_at_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": ')
    refused: list[InputError] = []
    assert (list(json_rows(path, bad=refused.append)), refused) == ([(1, {"a": 1})], [])
