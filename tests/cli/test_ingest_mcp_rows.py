"""``lineage ingest`` reads a recording's Claude Code and Cursor MCP rows (they journal nothing)
and journals the hooks before them, so a caller they name is found afterwards."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.callers import CallerFinder
from lineage_es.engine.engine import open_engine
from tests.support.mcp_families import (
    GRANDCHILD,
    claude_family,
    claude_mcp_call,
    claude_meta,
)


def test_a_recording_with_a_claude_mcp_row_ingests_whole(tmp_path: Path) -> None:
    payloads = [*claude_family(), claude_mcp_call("toolu_09G", GRANDCHILD)]
    rows = [{"host": "claude", "at": "2026-09-03T09:30:00Z", "payload": p} for p in payloads]
    mcp = {"tool": "list_agents", "_meta": claude_meta("toolu_09G")}
    rows.append({"host": "claude", "at": "2026-09-03T09:31:00Z", "mcp": mcp})
    recording = tmp_path / "r.jsonl"
    recording.write_text("".join(json.dumps(row) + "\n" for row in rows))
    store = f"sqlite:///{tmp_path / 'j.sqlite'}"
    result = CliRunner().invoke(main, ["ingest", "--quiet", "--store", store, str(recording)])
    assert result.exit_code == 0, result.output
    with open_engine(store, create=False) as engine:
        found = CallerFinder(engine).identify(claude_meta("toolu_09G"), "list_agents", {})
    assert found.lineage.conversation == GRANDCHILD
