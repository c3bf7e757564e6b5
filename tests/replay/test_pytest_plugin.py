"""The pytest plugin: each ``*.expected.yaml`` under the ``lineage_replays`` folders is a test
that fails with the same diff ``lineage-replay --assert`` prints."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

import lineage_es.engine.engine
import lineage_es.replay.report  # noqa: F401 (imported once here, not again in every inner run)
from tests.support.one_spawn import CHILD, HOLDS, write_recording

pytest_plugins = ["pytester"]

FAILS = HOLDS.replace("depth: 1", "depth: 2")


def plugin_args() -> list[str]:
    """Load the plugin explicitly unless the installed package already registers it."""
    installed = any(ep.name == "lineage_replay" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "lineage_es.pytest_plugin"]


def add_case(pytester: pytest.Pytester, folder: str, name: str, expected: str) -> None:
    directory = pytester.path / folder
    directory.mkdir(parents=True, exist_ok=True)
    write_recording(directory / f"{name}.jsonl")
    (directory / f"{name}.expected.yaml").write_text(expected)


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # Hypothesis's plugin re-imports itself in every inner run; it has nothing to do here.
    return pytester.runpytest(*plugin_args(), "-p", "no:hypothesispytest", *args)


def test_each_expected_file_under_the_folders_is_one_item(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    add_case(pytester, "replays", "spawn", HOLDS)
    add_case(pytester, "replays/nested", "again", HOLDS)
    result = run(pytester, "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        ["replays/nested/again.expected.yaml::again", "replays/spawn.expected.yaml::spawn"]
    )


def test_a_replay_whose_expectations_hold_passes(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    add_case(pytester, "replays", "spawn", HOLDS)
    run(pytester).assert_outcomes(passed=1)


def test_a_failing_replay_shows_the_same_diff_as_the_cli(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    add_case(pytester, "replays", "spawn", FAILS)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f'*row 3, requester "{CHILD}": lineage.depth (expected at *spawn.expected.yaml:5)',
            "*expected: 2",
            "*observed: 1",
        ]
    )
    result.stdout.no_fnmatch_line("*Traceback*")


def test_an_expected_file_without_its_recording_fails(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    (pytester.path / "replays").mkdir()
    (pytester.path / "replays" / "lonely.expected.yaml").write_text(HOLDS)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no recording lonely.jsonl beside it*"])


def test_an_unusable_expected_file_fails_naming_its_line(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    add_case(pytester, "replays", "typo", HOLDS.replace("lineage:", "lineages:"))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*typo.expected.yaml:5: unknown key 'lineages'*"])


def test_expected_files_outside_the_folders_are_not_collected(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    add_case(pytester, "replays", "kept", HOLDS)
    add_case(pytester, "elsewhere", "skipped", FAILS)
    result = run(pytester)
    result.assert_outcomes(passed=1)


def test_without_the_option_expected_files_under_the_test_paths_are_found(
    pytester: pytest.Pytester,
) -> None:
    add_case(pytester, "tests/replays", "spawn", HOLDS)
    add_case(pytester, "tests/other", "deeper", FAILS)
    run(pytester).assert_outcomes(passed=1, failed=1)


def test_without_the_option_only_the_test_paths_are_searched(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\n")
    pytester.mkdir("tests")
    add_case(pytester, "tests/replays", "spawn", HOLDS)
    add_case(pytester, "elsewhere", "skipped", FAILS)
    run(pytester).assert_outcomes(passed=1)


def test_without_the_option_an_expected_file_without_its_recording_says_what_to_set(
    pytester: pytest.Pytester,
) -> None:
    (pytester.path / "replays").mkdir()
    (pytester.path / "replays" / "lonely.expected.yaml").write_text(HOLDS)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(
        ["*lonely.expected.yaml: no recording lonely.jsonl beside it*lineage_replays*"]
    )


def test_lineage_update_writes_the_expected_file_from_the_replay(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    add_case(pytester, "replays", "spawn", FAILS)
    run(pytester, "--lineage-update").assert_outcomes(passed=1)
    assert "depth: 1" in (pytester.path / "replays" / "spawn.expected.yaml").read_text()
    run(pytester).assert_outcomes(passed=1)


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_lineage_update_is_refused_under_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    add_case(pytester, "replays", "spawn", FAILS)
    result = run(pytester, "--lineage-update")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--lineage-update refuses to run when*CI is set*"])
    assert (pytester.path / "replays" / "spawn.expected.yaml").read_text() == FAILS


@pytest.mark.parametrize("value", ["", "0", "false", "False"])
def test_ci_empty_zero_or_false_is_not_ci_for_lineage_update(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    add_case(pytester, "replays", "spawn", FAILS)
    run(pytester, "--lineage-update").assert_outcomes(passed=1)


def test_a_missing_replay_folder_is_warned_about(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = nowhere\n")
    result = run(pytester)
    result.stdout.fnmatch_lines(["*lineage_replays: *nowhere is not a folder*"])


def test_replay_folders_outside_testpaths_are_still_collected(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntestpaths = tests\nlineage_replays = replays\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    add_case(pytester, "replays", "spawn", HOLDS)
    run(pytester).assert_outcomes(passed=2)


def test_explicit_paths_choose_exactly_what_runs(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nlineage_replays = replays\n")
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_one.py").write_text("def test_one():\n    pass\n")
    add_case(pytester, "replays", "spawn", FAILS)
    run(pytester, "tests").assert_outcomes(passed=1)
