"""``lineage-replay`` and the host of each row: a host given against a payload's own fields, MCP
rows that can state nothing, and a Claude transcript copied under another name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lineage_es.replay import cli

REPLAYS = Path(__file__).resolve().parents[1] / "replays"
TASK_SUBAGENT = REPLAYS / "cursor" / "task-subagent" / "task-subagent.jsonl"
PARALLEL = REPLAYS / "claude" / "parallel"
PARALLEL_SESSION = "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8"
CODEX_ROOT = "019f9b20-1d3c-7e52-a7b8-c9d0e1f2a3b4"


def replay(*args: str | Path) -> Result:
    return CliRunner().invoke(cli.main, [str(a) for a in args])


def write_jsonl(path: Path, *rows: Any) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


@pytest.mark.parametrize("given", ["claude", "codex"])
def test_a_host_given_against_a_cursor_capture_exits_2_naming_the_row(given: str) -> None:
    result = replay(TASK_SUBAGENT, "--host", given)
    assert result.exit_code == 2
    assert f"task-subagent.jsonl:1: the payload is from cursor, not {given}" in result.output


def test_an_expected_files_host_against_a_cursor_capture_exits_2(tmp_path: Path) -> None:
    expected = tmp_path / "e.yaml"
    expected.write_text("version: 1\nhost: codex\nsteps: []\n")
    result = replay(TASK_SUBAGENT, "--assert", expected)
    assert result.exit_code == 2
    assert "the payload is from cursor, not codex" in result.output


def test_the_cursor_capture_still_replays_as_cursor() -> None:
    assert replay(TASK_SUBAGENT, "--host", "cursor").exit_code == 0


@pytest.mark.parametrize(
    ("host", "meta", "reason"),
    [
        ("codex", {}, "names no thread"),
        ("cursor", {"threadId": CODEX_ROOT}, "cursor puts no lineage in an MCP tool call's _meta"),
    ],
    ids=["codex-naming-no-thread", "cursor"],
)
def test_an_mcp_row_that_can_state_nothing_exits_2_naming_the_row(
    tmp_path: Path, host: str, meta: dict[str, Any], reason: str
) -> None:
    start = {"session_id": CODEX_ROOT, "turn_id": "t1", "hook_event_name": "UserPromptSubmit"}
    recording = write_jsonl(
        tmp_path / "r.jsonl",
        {"host": "codex", "at": "2026-09-03T09:30:00Z", "payload": start},
        {"host": host, "at": "2026-09-03T09:30:01Z", "mcp": {"tool": "x", "_meta": meta}},
    )
    result = replay(recording)
    assert result.exit_code == 2
    assert "r.jsonl:2: " in result.output
    assert reason in result.output


def test_a_renamed_claude_transcript_holds_its_shipped_expectations(tmp_path: Path) -> None:
    shutil.copytree(PARALLEL / PARALLEL_SESSION, tmp_path / PARALLEL_SESSION)
    renamed = tmp_path / "transcript.jsonl"
    shutil.copyfile(PARALLEL / f"{PARALLEL_SESSION}.jsonl", renamed)
    result = replay(renamed, "--assert", PARALLEL / f"{PARALLEL_SESSION}.expected.yaml")
    assert (result.exit_code, result.output.splitlines()[-1][:3]) == (0, "ok:")
