"""``lineage-replay`` end to end: hand-written Claude hook payloads through a real engine."""

from __future__ import annotations

import json
import shutil
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from click.testing import CliRunner, Result

from lineage_es.replay import cli
from tests.support.paths import REPO

REPLAYS = REPO / "replays"
#: The expected files shipped with the recordings they check.
SHIPPED = sorted(REPLAYS.glob("*/*/*.expected.yaml"))

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
CHILD = "a1000000000000001"
SPAWN = {"prompt": "p", "subagent_type": "Explore"}

#: A root spawns one Explore subagent, which works, is confirmed, stops; the session ends.
SESSION: list[dict[str, Any]] = [
    {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"},
    {
        "session_id": ROOT,
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_use_id": "toolu_01A",
        "tool_input": SPAWN,
    },
    {
        "session_id": ROOT,
        "hook_event_name": "SubagentStart",
        "agent_id": CHILD,
        "agent_type": "Explore",
    },
    {
        "session_id": ROOT,
        "hook_event_name": "PreToolUse",
        "agent_id": CHILD,
        "tool_name": "Read",
        "tool_use_id": "toolu_02",
        "tool_input": {"file_path": "/w/a.py"},
    },
    {
        "session_id": ROOT,
        "hook_event_name": "PostToolUse",
        "tool_name": "Agent",
        "tool_use_id": "toolu_01A",
        "tool_input": SPAWN,
        "tool_response": {"status": "completed", "agentId": CHILD},
    },
    {
        "session_id": ROOT,
        "hook_event_name": "SubagentStop",
        "agent_id": CHILD,
        "agent_type": "Explore",
    },
    {"session_id": ROOT, "hook_event_name": "SessionEnd", "reason": "other"},
]

#: An expected file saying the root has no children after row 4 (it has one).
NO_CHILDREN_AT_ROW_4 = f"""version: 1
host: claude
steps:
  - row: 4
    views:
      {ROOT}: {{children: []}}
"""

#: Claude Code's compaction worker: not delegation, so the adapter ignores the row.
COMPACT = {"session_id": ROOT, "hook_event_name": "PreCompact", "agent_id": "acompact-e1f845"}


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def write_yaml(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip())
    return path


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "session.jsonl", SESSION)


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests run under CI too; only the refusal test sets it."""
    monkeypatch.delenv("CI", raising=False)


def replay(*args: str | Path) -> Result:
    return CliRunner().invoke(cli.main, [str(a) for a in args])


class Checked(NamedTuple):
    """What ``--assert`` made of a recording, and the expected file it was checked against."""

    result: Result
    expected: Path


WriteExpected = Callable[[str], Path]
Check = Callable[..., Checked]


@pytest.fixture
def write_expected(tmp_path: Path) -> WriteExpected:
    """Writes an expected file (YAML, dedented) as ``e.yaml`` and returns its path."""

    def write(text: str) -> Path:
        return write_yaml(tmp_path / "e.yaml", text)

    return write


@pytest.fixture
def check(session: Path, write_expected: WriteExpected) -> Check:
    """``check(text, *options, recording=session)``: writes the expected file and replays the
    recording (the shared session unless told) with ``--assert`` against it."""

    def run(text: str, *options: str, recording: Path = session) -> Checked:
        expected = write_expected(text)
        return Checked(replay(recording, "--assert", expected, *options), expected)

    return run


@pytest.fixture
def written(session: Path, tmp_path: Path) -> Path:
    """The expected file ``--update`` writes for the session from nothing."""
    target = tmp_path / "written.yaml"
    result = replay(session, "--host", "claude", "--update", target)
    assert result.exit_code == 0, result.output
    return target


def test_without_expectations_each_row_answer_is_printed(session: Path) -> None:
    result = replay(session, "--host", "claude")
    assert result.exit_code == 0, result.output
    assert f'row 3 (hook) claude "{CHILD}": root "{ROOT}" parent "{ROOT}" depth 1' in result.stdout
    assert "7 rows replayed" in result.stdout


def test_held_expectations_exit_0(check: Check) -> None:
    result, _ = check(
        f"""
        version: 1
        host: claude
        steps:
          - row: 3
            lineage: {{conversation: {CHILD}, root: {ROOT}, parent: {ROOT}, depth: 1}}
            tree: {{siblings: [{ROOT}], children: [], roots: []}}
        """
    )
    assert result.exit_code == 0, result.output
    assert "ok: 1 of 1 step held" in result.stdout


def test_a_failed_expectation_exits_1_with_row_perspective_and_diff(check: Check) -> None:
    result, expected = check(
        f"""
        version: 1
        host: claude
        steps:
          - row: 3
            lineage: {{depth: 2}}
            tree: {{siblings: [{ROOT}, {CHILD}]}}
        """
    )
    assert result.exit_code == 1
    assert f'row 3, requester "{CHILD}": lineage.depth (expected at {expected}:5)' in result.stdout
    assert "expected: 2\n    observed: 1" in result.stdout
    assert f'-"{CHILD}"' in result.stdout
    assert "FAILED: 0 of 1 step held" in result.stdout


def test_a_step_with_several_rows_checks_each_of_them(check: Check) -> None:
    result, _ = check(
        f"""
        version: 1
        host: claude
        steps:
          - rows: [3, 4, 5]
            lineage: {{conversation: {CHILD}}}
        """
    )
    assert result.exit_code == 1
    assert "FAIL rows 3, 4, 5" in result.stdout
    assert f'row 5, requester "{ROOT}": lineage.conversation' in result.stdout
    assert "row 3," not in result.stdout


def test_a_row_the_adapter_ignores_has_lineage_and_tree_null(tmp_path: Path, check: Check) -> None:
    compacting = write_jsonl(tmp_path / "s.jsonl", [SESSION[0], COMPACT])
    result, _ = check(
        "version: 1\nhost: claude\nsteps:\n  - row: 2\n    lineage: null\n    tree: null\n",
        recording=compacting,
    )
    assert result.exit_code == 0, result.output


def test_lineage_null_fails_on_a_row_with_a_requester(check: Check) -> None:
    result, _ = check("version: 1\nhost: claude\nsteps:\n  - row: 1\n    lineage: null\n")
    assert result.exit_code == 1
    assert "expected: null" in result.stdout


def test_peer_items_may_be_ids_or_mappings_of_peer_fields(check: Check) -> None:
    result, _ = check(
        f"""
        version: 1
        host: claude
        steps:
          - row: 4
            views:
              {ROOT}:
                children:
                  - {{conversation: {CHILD}, depth: 1, resolution: inferred}}
              {CHILD}:
                siblings: [{ROOT}]
        """
    )
    assert result.exit_code == 0, result.output


def test_started_at_follows_the_logical_clock_of_bare_payloads(check: Check) -> None:
    clock = "2000-01-01T00:00:"  # row n happens n seconds after the logical epoch
    result, _ = check(
        f"""
        version: 1
        host: claude
        steps:
          - row: 4
            views:
              {ROOT}:
                children: [{{conversation: {CHILD}, started_at: "{clock}03.000000+00:00"}}]
              {CHILD}:
                siblings: [{{conversation: {ROOT}, started_at: "{clock}01.000000+00:00"}}]
        """
    )
    assert result.exit_code == 0, result.output


def test_recorded_rows_are_placed_at_their_receipt_time(tmp_path: Path, check: Check) -> None:
    records = [
        {"host": "claude", "at": f"2026-03-01T10:00:0{n}Z", "payload": payload}
        for n, payload in enumerate(SESSION[:3], start=1)
    ]
    recorded = write_jsonl(tmp_path / "rec.jsonl", records)
    result, _ = check(
        f"""
        version: 1
        steps:
          - row: 3
            tree:
              siblings: [{{conversation: {ROOT}, started_at: "2026-03-01T10:00:01.000000+00:00"}}]
        """,
        recording=recorded,
    )
    assert result.exit_code == 0, result.output


def test_a_receipt_time_matches_however_the_expected_file_writes_it(
    tmp_path: Path, check: Check
) -> None:
    records = [
        {"host": "claude", "at": f"2026-03-01T10:00:0{n}.250Z", "payload": payload}
        for n, payload in enumerate(SESSION[:3], start=1)
    ]
    recorded = write_jsonl(tmp_path / "rec.jsonl", records)
    result, _ = check(
        f"""
        version: 1
        steps:
          - row: 3
            tree:
              siblings: [{{conversation: {ROOT}, started_at: "2026-03-01T10:00:01.25Z"}}]
            views:
              {ROOT}:
                children: [{{started_at: "2026-03-01T11:00:03.250+01:00"}}]
        """,
        recording=recorded,
    )
    assert result.exit_code == 0, result.output


def test_an_mcp_call_from_an_unseen_thread_has_its_stated_lineage_and_no_tree(
    tmp_path: Path, check: Check
) -> None:
    meta = {
        "threadId": "019a-b2",
        "x-codex-turn-metadata": {"session_id": "019a-a1", "parent_thread_id": "019a-a1"},
    }
    record = {"host": "codex", "at": "2026-03-01T10:00:00Z", "mcp": {"tool": "send", "_meta": meta}}
    recorded = write_jsonl(tmp_path / "rec.jsonl", [record])
    result, _ = check(
        """
        version: 1
        steps:
          - row: 1
            lineage: {conversation: 019a-b2, root: 019a-a1, parent: 019a-a1, resolution: native}
            tree: null
        final:
          views: {019a-b2: null}
        """,
        recording=recorded,
    )
    assert result.exit_code == 0, result.output


def test_a_recorded_mcp_call_is_answered_by_its_own_hosts_rule_alone(
    tmp_path: Path, check: Check
) -> None:
    # A Claude Code key in a Codex call's _meta is not Codex's way of naming its caller.
    meta = {
        "threadId": "019a-b2",
        "x-codex-turn-metadata": {"session_id": "019a-a1", "parent_thread_id": "019a-a1"},
        "claudecode/toolUseId": "toolu_01A",
    }
    record = {"host": "codex", "at": "2026-03-01T10:00:00Z", "mcp": {"tool": "send", "_meta": meta}}
    recorded = write_jsonl(tmp_path / "rec.jsonl", [record])
    result, _ = check(
        """
        version: 1
        steps:
          - row: 1
            lineage: {conversation: 019a-b2, root: 019a-a1, parent: 019a-a1, resolution: native}
        """,
        recording=recorded,
    )
    assert result.exit_code == 0, result.output


def test_a_view_that_does_not_hold_is_reported_from_that_conversation(check: Check) -> None:
    result, _ = check(NO_CHILDREN_AT_ROW_4)
    assert result.exit_code == 1
    assert f'row 4, view of "{ROOT}": tree.children' in result.stdout
    assert f'+"{CHILD}"' in result.stdout


def test_final_views_are_checked_after_the_last_row(check: Check) -> None:
    result, _ = check(
        f"""
        version: 1
        host: claude
        steps: []
        final:
          views:
            {ROOT}: {{siblings: [], children: [{CHILD}], roots: []}}
        """
    )
    assert result.exit_code == 1
    assert f'after the last row, view of "{ROOT}": tree.children' in result.stdout


def test_junit_output_is_xml_with_one_testcase_per_step(check: Check) -> None:
    result, _ = check(
        f"""
        version: 1
        host: claude
        steps:
          - row: 1
            lineage: {{depth: 0}}
          - rows: [3, 4]
            lineage: {{depth: 5}}
        final:
          views: {{{ROOT}: {{children: []}}}}
        """,
        "--format",
        "junit",
    )
    assert result.exit_code == 1
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["row 1", "rows 3, 4", "final"]
    assert [c.find("failure") is not None for c in cases] == [False, True, False]
    assert (suite.get("tests"), suite.get("failures")) == ("3", "1")


def test_json_output_lists_each_step_and_its_mismatches(check: Check) -> None:
    result, _ = check(
        "version: 1\nhost: claude\nsteps:\n  - row: 3\n    lineage: {depth: 4}\n",
        "--format",
        "json",
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    (mismatch,) = report["steps"][0]["mismatches"]
    assert (report["ok"], mismatch["path"], mismatch["expected"], mismatch["observed"]) == (
        False,
        "lineage.depth",
        4,
        1,
    )


def test_update_is_refused_when_ci_is_set(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    target = tmp_path / "e.yaml"
    result = replay(session, "--host", "claude", "--update", target)
    assert result.exit_code == 2
    assert "CI" in result.stderr
    assert not target.exists()


def test_an_updated_expected_file_then_asserts(session: Path, written: Path) -> None:
    assert "host: claude" in written.read_text()
    assert replay(session, "--assert", written).exit_code == 0


def test_update_writes_a_step_where_the_requester_changed(written: Path) -> None:
    text = written.read_text()
    assert "row: 2\n" not in text  # the root's answer did not change on its spawn request
    assert "row: 3\n" in text  # the child appeared


def test_update_writes_no_views_where_none_were_written(
    session: Path, write_expected: WriteExpected
) -> None:
    target = write_expected(
        "version: 1\nhost: claude\nsteps:\n  - row: 3\n    lineage: {depth: 1}\n"
    )
    assert replay(session, "--update", target).exit_code == 0
    assert "views:" not in target.read_text()


def test_an_update_over_the_file_update_wrote_rewrites_nothing(
    session: Path, written: Path
) -> None:
    first = written.read_bytes()
    assert replay(session, "--update", written).exit_code == 0
    assert written.read_bytes() == first


@pytest.mark.parametrize("shipped", SHIPPED, ids=lambda p: str(p.parent.relative_to(REPLAYS)))
def test_a_second_update_of_a_shipped_file_rewrites_nothing(shipped: Path, tmp_path: Path) -> None:
    transcript = shipped.with_name(shipped.name.removesuffix(".expected.yaml") + ".jsonl")
    target = tmp_path / shipped.name
    shutil.copyfile(shipped, target)
    assert replay(transcript, "--update", target).exit_code == 0
    first = target.read_bytes()
    assert replay(transcript, "--update", target).exit_code == 0
    assert target.read_bytes() == first


def test_update_in_junit_is_a_junit_report_naming_the_file_written(
    session: Path, tmp_path: Path
) -> None:
    target = tmp_path / "e.yaml"
    result = replay(session, "--host", "claude", "--update", target, "--format", "junit")
    assert result.exit_code == 0, result.output
    suite = ET.fromstring(result.stdout).find("testsuite")
    assert suite is not None
    (case,) = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("1", "0", "0")
    assert case.get("file") == str(target)
    assert str(target) in (case.get("name") or "")
    assert target.exists()


def test_update_keeps_hand_written_views(session: Path, write_expected: WriteExpected) -> None:
    target = write_expected(NO_CHILDREN_AT_ROW_4)
    assert replay(session, "--update", target).exit_code == 0
    text = target.read_text()
    assert f"{ROOT}:\n        children: [{CHILD}]" in text
    assert replay(session, "--assert", target).exit_code == 0


def test_update_over_an_existing_file_writes_every_row_that_changed(
    session: Path, written: Path, write_expected: WriteExpected
) -> None:
    target = write_expected(NO_CHILDREN_AT_ROW_4)
    assert replay(session, "--update", target).exit_code == 0
    assert _rows(target) == _rows(written)


def _rows(expected: Path) -> list[str]:
    return [line.strip() for line in expected.read_text().splitlines() if "row:" in line]


def test_cursor_ids_with_newlines_round_trip_through_update(tmp_path: Path) -> None:
    odd = "call-1111-7\nfc_6666_0"
    rows = [
        {**SESSION[0]},
        {**SESSION[1], "tool_use_id": odd},
        {**SESSION[2], "agent_id": "a2000000000000002"},
    ]
    transcript = write_jsonl(tmp_path / "s.jsonl", rows)
    target = write_yaml(
        tmp_path / "e.yaml", 'version: 1\nsteps: []\nfinal:\n  views: {"x\\ny": null}\n'
    )
    assert replay(transcript, "--host", "claude", "--update", target).exit_code == 0
    assert '"x\\ny": null' in target.read_text()
    assert replay(transcript, "--host", "claude", "--assert", target).exit_code == 0


#: A payload Claude Code never sends: a subagent start without the subagent.
NO_AGENT_ID = {"session_id": ROOT, "hook_event_name": "SubagentStart"}


@pytest.mark.parametrize(
    ("rows", "options", "where", "also"),
    [
        pytest.param(
            [SESSION[0], "{not json"],
            ("--host", "claude"),
            "2: line is not JSON",
            "1 row ingested before it",
            id="a line that is not JSON",
        ),
        pytest.param(
            [SESSION[0], SESSION[1], NO_AGENT_ID],
            ("--host", "claude"),
            "3: claude: missing required field 'agent_id'",
            "2 rows ingested before it, nothing from this one",
            id="a payload missing a required field",
        ),
        pytest.param(
            [SESSION[0], {"hello": "world"}],
            (),
            "2:",
            "no known host",
            id="a payload from no known host",
        ),
    ],
)
def test_an_unusable_row_exits_2_naming_file_and_line(
    tmp_path: Path, rows: list[Any], options: tuple[str, ...], where: str, also: str
) -> None:
    transcript = write_jsonl(tmp_path / "s.jsonl", rows)
    result = replay(transcript, *options)
    assert result.exit_code == 2
    assert f"{transcript}:{where}" in result.stderr
    assert also in result.stderr


def test_an_overlong_line_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    with transcript.open("wb") as out:
        out.write(json.dumps(SESSION[0]).encode() + b"\n")
        out.write(b" " * (32 * 1024 * 1024 + 1) + b"\n")
    result = replay(transcript, "--host", "claude")
    assert result.exit_code == 2
    assert f"{transcript}:2: line is longer than 32 MiB" in result.stderr


@pytest.mark.parametrize(
    ("text", "options", "where"),
    [
        pytest.param(
            "version: 1\nhost: claude\nsteps:\n  - row: 3\n    lineage: {dept: 1}\n",
            (),
            "5: unknown key 'dept'",
            id="a typo",
        ),
        pytest.param(
            "version: 1\nhost: claude\nsteps:\n  - row: 3\n    lineage: {parent: !!binary aGk=}\n",
            (),
            "5: steps[0].lineage.parent: expected a string or null",
            id="a YAML value JSON cannot hold",
        ),
        pytest.param(
            "version: 1\nhost: claude\nsteps:\n  - row: 99\n",
            (),
            "4: row 99 is past the end of the recording",
            id="a step past the last row",
        ),
        pytest.param(
            "version: 1\nhost: claude\nsteps: []\n",
            ("--host", "cursor"),
            "2: --host cursor disagrees",
            id="a host option contradicting the file",
        ),
        pytest.param(
            "version: 1\nhost: claude\nsteps:\n  - row: 3\n    tree:\n"
            "      siblings: [{started_at: '2026-03-01 at ten'}]\n",
            (),
            "6: steps[0].tree.siblings[0].started_at: expected an ISO-8601 time",
            id="a time that is not one",
        ),
    ],
)
def test_an_unusable_expected_file_exits_2_naming_its_line(
    check: Check, text: str, options: tuple[str, ...], where: str
) -> None:
    result, expected = check(text, *options)
    assert result.exit_code == 2
    assert f"{expected}:{where}" in result.stderr


def test_an_unusable_input_in_junit_is_still_a_junit_report(tmp_path: Path) -> None:
    transcript = write_jsonl(tmp_path / "s.jsonl", ["{not json"])
    result = replay(transcript, "--host", "claude", "--format", "junit")
    assert result.exit_code == 2
    error = ET.fromstring(result.stdout).find("testsuite/testcase/error")
    assert error is not None
    assert f"{transcript}:1" in (error.text or "")


def test_with_a_store_a_rejected_row_journals_nothing(tmp_path: Path) -> None:
    from lineage_es import open_engine

    clean = write_jsonl(tmp_path / "clean.jsonl", SESSION[:2])
    dirty = write_jsonl(tmp_path / "dirty.jsonl", [*SESSION[:2], NO_AGENT_ID, SESSION[2]])
    positions = []
    for name, transcript, code in (("a", clean, 0), ("b", dirty, 2)):
        store = f"sqlite:///{tmp_path / name}.sqlite"
        assert replay(transcript, "--host", "claude", "--store", store).exit_code == code
        engine = open_engine(store)
        positions.append(engine.position())
        assert engine.tree_for(CHILD, "claude") is None
        engine.close()
    assert positions[0] > 0
    assert positions[0] == positions[1]


def test_assert_and_update_together_is_a_usage_error(
    session: Path, write_expected: WriteExpected
) -> None:
    expected = write_expected("version: 1\nsteps: []\n")
    result = replay(session, "--assert", expected, "--update", expected)
    assert result.exit_code == 2
    assert "not both" in result.stderr


def test_help_teaches_with_examples() -> None:
    result = replay("--help")
    assert result.exit_code == 0
    assert "lineage-replay session.jsonl --assert session.expected.yaml" in result.stdout
    assert "rows: [5, 6, 7]" in result.stdout
    assert "Exit status" in result.stdout


def test_the_expected_file_in_the_help_is_valid(tmp_path: Path) -> None:
    from lineage_es.replay.expected import load_expected

    block = cli.EPILOG.split("The expected file (YAML):\n")[1].split("\n\n")[0]
    path = tmp_path / "help.yaml"
    path.write_text("\n".join(line[2:] for line in block.splitlines()))
    assert [step.rows for step in load_expected(path).steps] == [(5,), (6,)]


def test_an_unexpected_error_exits_2_without_a_traceback(
    session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lineage_es.replay

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(lineage_es.replay, "run_replay", explode)
    result = replay(session, "--host", "claude")
    assert result.exit_code == 2
    assert "unexpected error: RuntimeError: disk on fire" in result.stderr
    assert "Traceback" not in result.output


# -- a step on a line holding no row; a host the recording's form contradicts -----------------

CLAUDE_TRANSCRIPT = REPLAYS / "claude" / "root-only" / "db54f5d0-c338-4a49-a9ff-612173df821b.jsonl"
CODEX_ROLLOUT = REPLAYS / "codex" / "root-only" / "root-only.jsonl"


def with_blank_line(source: Path, target: Path, before: int | None) -> Path:
    """``source`` with a blank line inserted as line ``before`` (``None``: appended last)."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(len(lines) if before is None else before - 1, "\n")
    target.write_text("".join(lines), encoding="utf-8")
    return target


@pytest.mark.parametrize(
    ("source", "before", "blank"),
    [
        pytest.param(None, 3, 3, id="hook payloads, a blank line amid them"),
        pytest.param(None, None, 8, id="hook payloads, a trailing blank line"),
        pytest.param(CODEX_ROLLOUT, 2, 2, id="a Codex rollout, a blank line amid it"),
        pytest.param(CODEX_ROLLOUT, None, 12, id="a Codex rollout, a trailing blank line"),
        pytest.param(CLAUDE_TRANSCRIPT, 2, 2, id="a Claude transcript, a blank line amid it"),
    ],
)
def test_a_step_on_a_blank_line_is_refused_naming_its_line(
    session: Path, tmp_path: Path, check: Check, source: Path | None, before: int | None, blank: int
) -> None:
    recording = with_blank_line(source or session, tmp_path / "blank.jsonl", before)
    result, expected = check(
        f"version: 1\nsteps:\n  - row: {blank}\n    lineage: null\n", recording=recording
    )
    assert result.exit_code == 2, result.output
    assert f"{expected}:3: line {blank} of the recording is blank: no row" in result.stderr


def test_a_step_naming_a_blank_line_among_its_rows_is_refused(
    session: Path, tmp_path: Path, check: Check
) -> None:
    recording = with_blank_line(session, tmp_path / "blank.jsonl", 3)
    result, expected = check(
        "version: 1\nhost: claude\nsteps:\n  - rows: [2, 3, 4]\n    tree: null\n",
        recording=recording,
    )
    assert result.exit_code == 2, result.output
    assert f"{expected}:4: line 3 of the recording is blank: no row" in result.stderr


def test_past_the_end_of_a_recording_its_last_row_is_its_last_line_holding_one(
    tmp_path: Path, check: Check
) -> None:
    recording = with_blank_line(CODEX_ROLLOUT, tmp_path / "blank.jsonl", None)
    result, expected = check("version: 1\nsteps:\n  - row: 13\n", recording=recording)
    assert result.exit_code == 2, result.output
    assert f"{expected}:3: row 13 is past the end of the recording (its last row is 11)" in (
        result.stderr
    )


def test_a_transcript_row_observing_nothing_still_has_lineage_null(check: Check) -> None:
    # Line 2 of the Claude transcript is a row its reader ignores (not a blank line).
    result, _ = check(
        "version: 1\nsteps:\n  - row: 2\n    lineage: null\n", recording=CLAUDE_TRANSCRIPT
    )
    assert result.exit_code == 0, result.output


def test_update_refuses_a_kept_view_past_the_end_naming_its_line(
    session: Path, write_expected: WriteExpected
) -> None:
    text = f"version: 1\nhost: claude\nsteps:\n  - row: 99\n    views:\n      {ROOT}: null\n"
    expected = write_expected(text)
    result = replay(session, "--update", expected)
    assert result.exit_code == 2
    assert "unexpected error" not in result.stderr
    assert f"{expected}:4: row 99 is past the end of the recording (its last row is 7)" in (
        result.stderr
    )
    assert expected.read_text() == text


def test_update_refuses_a_kept_view_on_a_blank_line(
    session: Path, tmp_path: Path, write_expected: WriteExpected
) -> None:
    recording = with_blank_line(session, tmp_path / "blank.jsonl", 3)
    text = f"version: 1\nhost: claude\nsteps:\n  - row: 3\n    views:\n      {ROOT}: null\n"
    expected = write_expected(text)
    result = replay(recording, "--update", expected)
    assert result.exit_code == 2
    assert f"{expected}:4: line 3 of the recording is blank: no row" in result.stderr
    assert expected.read_text() == text


def test_update_rewrites_a_step_without_views_past_the_end(
    session: Path, write_expected: WriteExpected
) -> None:
    # Only views are kept from an existing file: a recording cut shorter is simply rewritten.
    expected = write_expected("version: 1\nhost: claude\nsteps:\n  - row: 99\n    lineage: null\n")
    result = replay(session, "--update", expected)
    assert result.exit_code == 0, result.output
    assert "row: 99" not in expected.read_text()


@pytest.mark.parametrize("option", ["--assert", "--update"])
@pytest.mark.parametrize(
    ("recording", "host"), [(CLAUDE_TRANSCRIPT, "codex"), (CODEX_ROLLOUT, "cursor")]
)
def test_an_expected_host_contradicting_the_recordings_form_names_the_expected_files_line(
    write_expected: WriteExpected, recording: Path, host: str, option: str
) -> None:
    expected = write_expected(f"version: 1\nhost: {host}\nsteps: []\n")
    result = replay(recording, option, expected)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"lineage-replay: error: {expected}:2: host: {host} ")
    assert f"contradicts the recording {recording}" in result.stderr


def test_an_integer_written_as_a_float_holds(check: Check) -> None:
    result, _ = check("version: 1\nhost: claude\nsteps:\n  - row: 3.0\n    lineage: {depth: 1.0}\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok: 1 of 1 step held")
