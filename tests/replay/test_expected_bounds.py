"""Expected files past a bound (size, nesting, alias expansion, number size) are refused whole,
naming the file and the line, by the loader, ``lineage-replay`` (exit 2) and the pytest plugin."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from click.testing import CliRunner

import lineage_es.engine.engine
import lineage_es.replay.report  # noqa: F401 (imported once here, not again in every inner run)
from lineage_es.errors import InputError
from lineage_es.replay import cli, yaml_bounds
from lineage_es.replay.expected import load_expected
from tests.support.expected_hostile import laughs, nested, with_depth
from tests.support.one_spawn import HOLDS, write_recording

pytest_plugins = ["pytester"]

#: Forces the exact reader (node tree): the event reader leaves any tag to it.
TAGGED = "version: !!int '1'\n"


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "e.expected.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def refusal(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as caught:
        load_expected(written(tmp_path, text))
    return caught.value


# -- aliases -----------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["version: 1\n", TAGGED], ids=["event reader", "exact reader"])
def test_aliases_expanding_past_the_allowance_are_refused_at_the_alias(
    tmp_path: Path, header: str
) -> None:
    error = refusal(tmp_path, laughs(6, header=header))
    assert error.line == 7
    assert error.reason.startswith("aliases expand this document past 100,000 added nodes")


def test_aliases_within_the_allowance_are_expanded(tmp_path: Path) -> None:
    # Five levels add 74,718 nodes: loaded, then refused by the schema for its unknown keys.
    error = refusal(tmp_path, laughs(5))
    assert (error.line, error.reason.split(";")[0]) == (2, "unknown key 'x0'")


def test_a_large_file_may_expand_by_its_own_length(tmp_path: Path) -> None:
    padding = "#" * 700_000 + "\n"
    error = refusal(tmp_path, laughs(6, header=padding + "version: 1\n")[len("version: 1\n") :])
    assert "aliases expand" not in error.reason


def test_the_allowance_is_the_larger_of_the_floor_and_the_text_length() -> None:
    assert yaml_bounds.alias_allowance("x" * 10) == yaml_bounds.ALIAS_NODES
    assert yaml_bounds.alias_allowance("x" * 200_000) == 200_000


# -- nesting -----------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["version: 1\n", TAGGED], ids=["event reader", "exact reader"])
@pytest.mark.parametrize("depth", [101, 600])
def test_nesting_past_the_bound_is_refused_naming_its_line(
    tmp_path: Path, header: str, depth: int
) -> None:
    error = refusal(tmp_path, nested(depth, header=header))
    assert (error.line, error.reason) == (2, "nested deeper than 100 levels of mappings and lists")


def test_nesting_at_the_bound_is_read(tmp_path: Path) -> None:
    error = refusal(tmp_path, nested(99))  # 100 levels with the top mapping
    assert error.line == 2
    assert error.reason.startswith("steps[0]: expected a mapping, got [[[")


def test_nesting_through_aliases_counts_too(tmp_path: Path) -> None:
    text = "version: 1\nx: &n " + "[" * 60 + "]" * 60 + "\nsteps: [[[*n]]]\n"
    # 3 written levels around an alias of 60 more, and the steps list: within the bound.
    assert "nested deeper" not in refusal(tmp_path, text).reason
    deep = "version: 1\nx: &n " + "[" * 60 + "]" * 60 + "\nsteps: " + "[" * 45 + "*n" + "]" * 45
    error = refusal(tmp_path, deep + "\n")
    assert (error.line, error.reason) == (3, "nested deeper than 100 levels of mappings and lists")


# -- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("header", ["", "# " + TAGGED], ids=["event reader", "exact reader"])
@pytest.mark.parametrize(
    ("number", "reason"),
    [
        ("1" * 5000, "the integer 111111111111...111111 (5000 characters) is too large"),
        ("0x" + "f" * 5000, "the integer 0xffffffffff...ffffff (5002 characters) is too large"),
        ("9223372036854775808", "the integer 9223372036854775808 is too large"),
        ("-9223372036854775808", "the integer -9223372036854775808 is too large"),
        ("1.0e+999", "the number 1.0e+999 is too large for a float"),
        ("-1.5e+400", "the number -1.5e+400 is too large for a float"),
    ],
)
def test_a_number_too_large_to_use_is_refused_naming_its_line(
    tmp_path: Path, header: str, number: str, reason: str
) -> None:
    text = with_depth(number)
    if header:  # a tag elsewhere in the file sends it to the exact reader
        text = text.replace("steps:", "host: !!str claude\nsteps:")
    error = refusal(tmp_path, text)
    assert error.line == (5 if header else 4)
    assert error.reason.startswith(reason)


def test_the_largest_integer_is_read(tmp_path: Path) -> None:
    path = written(tmp_path, "version: 1\nsteps:\n  - row: 9223372036854775807\n")
    assert load_expected(path).steps[0].rows == (2**63 - 1,)


def test_infinity_written_as_such_is_left_to_the_schema(tmp_path: Path) -> None:
    error = refusal(tmp_path, with_depth(".inf"))
    assert (error.line, error.reason) == (
        4,
        "steps[0].lineage.depth: expected an integer, got Infinity",
    )


# -- size --------------------------------------------------------------------------------------


def test_a_file_past_the_size_limit_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_bounds, "MAX_FILE_BYTES", 40)
    # 22 bytes to the end of line 2; the 40th byte is on line 4.
    error = refusal(tmp_path, "version: 1\nsteps: []\n" + "#########\n" * 3)
    assert error.line == 4
    assert error.reason.startswith("the file is larger than 40 bytes, the limit")


def test_a_file_at_the_size_limit_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "version: 1\nsteps: []\n"
    monkeypatch.setattr(yaml_bounds, "MAX_FILE_BYTES", len(text))
    assert load_expected(written(tmp_path, text)).steps == ()


def test_a_file_that_is_not_utf8_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "e.expected.yaml"
    path.write_bytes(b"version: 1\nsteps:\n  - row: 1 # caf\xe9\n")
    with pytest.raises(InputError) as caught:
        load_expected(path)
    assert caught.value.line == 3
    assert caught.value.reason.startswith("not UTF-8: byte 0xe9 at offset 34")


def test_the_size_limit_is_64_mib() -> None:
    assert yaml_bounds.MAX_FILE_BYTES == 64 * 2**20


# -- the faces ---------------------------------------------------------------------------------


def test_lineage_replay_exits_2_naming_the_alias_line(tmp_path: Path) -> None:
    recording = tmp_path / "s.jsonl"
    write_recording(recording)
    expected = written(tmp_path, laughs(6))
    result = CliRunner().invoke(cli.main, [str(recording), "--assert", str(expected)])
    assert result.exit_code == 2, result.output
    assert f"{expected}:7: aliases expand this document" in result.output
    assert "unexpected" not in result.output


def test_lineage_replay_exits_2_for_a_number_too_large(tmp_path: Path) -> None:
    recording = tmp_path / "s.jsonl"
    write_recording(recording)
    expected = written(tmp_path, with_depth("1" * 5000))
    result = CliRunner().invoke(cli.main, [str(recording), "--assert", str(expected)])
    assert result.exit_code == 2, result.output
    assert f"{expected}:4: the integer 111111111111...111111" in result.output


def plugin_args() -> list[str]:
    installed = any(ep.name == "lineage_replay" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "lineage_es.pytest_plugin"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (laughs(6), "*bomb.expected.yaml:7: aliases expand this document past 100,000*"),
        (with_depth("1" * 5000), "*bomb.expected.yaml:4: the integer 111111111111...111111*"),
        (nested(600), "*bomb.expected.yaml:2: nested deeper than 100 levels*"),
    ],
    ids=["aliases", "number", "nesting"],
)
def test_the_pytest_plugin_fails_one_item_with_the_refusal(
    pytester: pytest.Pytester, text: str, message: str
) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    folder = pytester.path / "replays"
    folder.mkdir()
    write_recording(folder / "bomb.jsonl")
    (folder / "bomb.expected.yaml").write_text(text)
    write_recording(folder / "fine.jsonl")
    (folder / "fine.expected.yaml").write_text(HOLDS)
    result = pytester.runpytest(*plugin_args(), "-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([message])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_a_character_yaml_forbids_is_refused_naming_its_line(tmp_path: Path) -> None:
    error = refusal(tmp_path, "version: 1\nsteps:\n  - row: 1\x00\n")
    assert error.line == 3
    assert error.reason.startswith("not valid YAML: unacceptable character #x0000")
