"""``lineage-replay`` identifies the caller of a recorded Claude Code or Cursor MCP call as
``lineage mcp`` does, from the rows before it, and an expected step asserts it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lineage_es.replay import cli
from tests.support.mcp_families import (
    CURSOR_CHILD,
    CURSOR_ROOT,
    FIRST,
    GRANDCHILD,
    ROOT,
    SECOND,
    claude_family,
    claude_mcp_call,
    claude_meta,
    cursor_family,
    cursor_mcp,
)


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


def _recording(path: Path, host: str, payloads: list[Any], mcp: dict[str, Any]) -> Path:
    rows = [
        {"host": host, "at": f"2026-09-03T09:30:{n:02d}Z", "payload": payload}
        for n, payload in enumerate(payloads)
    ]
    rows.append({"host": host, "at": "2026-09-03T09:31:00Z", "mcp": mcp})
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _expect(path: Path, row: int, conversation: str, parent: str, depth: int) -> Path:
    path.write_text(
        "version: 1\nsteps:\n"
        f"  - row: {row}\n    lineage:\n      conversation: {conversation}\n"
        f"      parent: {parent}\n      depth: {depth}\n"
    )
    return path


def _replay(recording: Path, expected: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli.main, [str(recording), "--assert", str(expected)])
    return result.exit_code, result.output


def test_a_recorded_claude_mcp_call_asserts_its_caller_at_depth_2(tmp_path: Path) -> None:
    payloads = [*claude_family(), claude_mcp_call("toolu_09G", GRANDCHILD)]
    mcp = {"tool": "list_agents", "arguments": {}, "_meta": claude_meta("toolu_09G")}
    recording = _recording(tmp_path / "r.jsonl", "claude", payloads, mcp)
    row = len(payloads) + 1
    held = _replay(recording, _expect(tmp_path / "ok.yaml", row, GRANDCHILD, FIRST, 2))
    assert held[0] == 0, held[1]
    wrong = _replay(recording, _expect(tmp_path / "no.yaml", row, FIRST, FIRST, 2))
    assert wrong[0] == 1


def test_a_recorded_cursor_mcp_call_asserts_the_caller_its_window_names(tmp_path: Path) -> None:
    payloads = [*cursor_family(), cursor_mcp(CURSOR_CHILD, "beforeMCPExecution", "lineage")]
    mcp = {"tool": "lineage", "_meta": {"progressToken": 1}}
    recording = _recording(tmp_path / "r.jsonl", "cursor", payloads, mcp)
    expected = _expect(tmp_path / "ok.yaml", len(payloads) + 1, CURSOR_CHILD, CURSOR_ROOT, 1)
    code, output = _replay(recording, expected)
    assert code == 0, output


def _expect_relations(path: Path, row: int, relations: dict[str, str]) -> Path:
    lines = "".join(f"      {conversation}: {rel}\n" for conversation, rel in relations.items())
    path.write_text(f"version: 1\nsteps:\n  - row: {row}\n    relations:\n{lines}")
    return path


def test_an_expected_step_asserts_the_mcp_callers_relations(tmp_path: Path) -> None:
    payloads = [*claude_family(), claude_mcp_call("toolu_09G", GRANDCHILD)]
    mcp = {"tool": "list_agents", "_meta": claude_meta("toolu_09G")}
    recording = _recording(tmp_path / "r.jsonl", "claude", payloads, mcp)
    row = len(payloads) + 1
    held = {GRANDCHILD: "self", FIRST: "parent", ROOT: "ancestor", SECOND: "kin"}
    code, output = _replay(recording, _expect_relations(tmp_path / "ok.yaml", row, held))
    assert code == 0, output
    wrong = {**held, SECOND: "sibling"}
    code, output = _replay(recording, _expect_relations(tmp_path / "no.yaml", row, wrong))
    assert code == 1
    assert "relations" in output and "kin" in output
