"""`lineage ingest` and a row whose id no store can keep (a NUL inside it): the row is named
with its file and line and skipped, the rows before and after it go in, and the run exits 1,
as for any other bad line; whichever host the row is from and wherever it falls in a batch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from lineage_es import ingest as ingest_module
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.ingest import ingest
from tests.support import codex_hooks, cursor_hooks


def claude_start(session: str) -> dict[str, Any]:
    return {"session_id": session, "hook_event_name": "SessionStart", "source": "startup"}


def capture(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return path


def roots(store: str) -> list[str]:
    with open_engine(store) as engine:
        return [node.conversation for node in engine.forest(include_stopped=True)]


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.sqlite'}"


def test_a_claude_row_whose_id_holds_a_nul_is_named_and_skipped(tmp_path: Path, store: str) -> None:
    path = capture(tmp_path, [claude_start("s1"), claude_start("bad\x00id"), claude_start("s3")])
    result = CliRunner().invoke(main, ["ingest", str(path), "--store", store, "--quiet"])
    assert result.exit_code == 1
    assert f"error: {path}:2: claude: conversation holds a NUL character" in result.stderr
    assert "ingested 2 rows from 1 recordings; skipped 1 bad line" in result.stderr
    assert roots(store) == ["s1", "s3"]


def test_a_codex_row_whose_id_holds_a_nul_is_named_and_skipped(tmp_path: Path, store: str) -> None:
    rows = [
        codex_hooks.hook("SessionStart", source="startup"),
        codex_hooks.hook("SessionStart", source="startup", session_id="x\x00y"),
        codex_hooks.hook("UserPromptSubmit", prompt="go on"),
    ]
    with open_engine(store) as engine:
        report = ingest(engine, [capture(tmp_path, rows)])
    assert (report.rows, report.bad_lines) == (2, 1)
    assert report.failures == [
        f"{tmp_path / 'capture.jsonl'}:2: codex: conversation holds a NUL character"
    ]
    assert roots(store) == [codex_hooks.ROOT]


def test_a_cursor_row_whose_workspace_holds_a_nul_is_named_and_skipped(
    tmp_path: Path, store: str
) -> None:
    rows = [
        cursor_hooks.hook("c1", "sessionStart"),
        cursor_hooks.hook("c2", "sessionStart", workspace_roots=["/w\x00"]),
        cursor_hooks.hook("c3", "sessionStart"),
    ]
    with open_engine(store) as engine:
        report = ingest(engine, [capture(tmp_path, rows)])
    assert [failure.split(": ", 1)[0] for failure in report.failures] == [
        f"{tmp_path / 'capture.jsonl'}:2"
    ]
    assert "NUL" in report.failures[0] and roots(store) == ["c1", "c3"]


def test_a_bad_id_in_the_middle_of_a_batch_loses_no_row_of_it(
    tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest_module, "BATCH", 4)
    sessions = [f"s{i:02}" for i in range(1, 11)]
    rows = [claude_start(s) for s in sessions]
    rows[5] = claude_start("bad\x00six")
    rows[6] = claude_start("bad\x00seven")
    with open_engine(store) as engine:
        report = ingest(engine, [capture(tmp_path, rows)])
    assert [failure.split(": ", 1)[0] for failure in report.failures] == [
        f"{tmp_path / 'capture.jsonl'}:6",
        f"{tmp_path / 'capture.jsonl'}:7",
    ]
    assert report.rows == 8 and roots(store) == [s for s in sessions if s not in ("s06", "s07")]


def test_failures_are_reported_in_line_order_whoever_found_them(tmp_path: Path, store: str) -> None:
    path = tmp_path / "capture.jsonl"
    path.write_bytes(
        orjson.dumps(claude_start("bad\x00id"))
        + b"\nnot json\n"
        + orjson.dumps({"hook_event_name": "SessionStart"})
        + b"\n"
        + orjson.dumps(claude_start("s4"))
        + b"\n"
    )
    with open_engine(store) as engine:
        report = ingest(engine, [path])
    assert [failure.split(": ", 1)[0] for failure in report.failures] == [
        f"{path}:1",
        f"{path}:2",
        f"{path}:3",
    ]
    assert roots(store) == ["s4"]
