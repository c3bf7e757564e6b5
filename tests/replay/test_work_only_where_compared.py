"""A replay against an expected file builds only what the file compares: the requester's
relations (every agent of its host, each related to it) are listed at a row only when a step
there compares them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lineage_es.replay import run_replay
from lineage_es.replay.inputs import family_relations
from tests.support.mcp_families import FIRST, GRANDCHILD, ROOT, SECOND, claude_family


def _recording(path: Path) -> tuple[Path, int]:
    rows = [
        {"host": "claude", "at": f"2026-09-03T09:30:{n:02d}Z", "payload": payload}
        for n, payload in enumerate(claude_family())
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path, len(rows)


@pytest.fixture
def listed_at(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The requesters whose relations the replay listed, in order."""
    calls: list[str | None] = []

    def counting(engine: Any, lineage: Any) -> dict[str, str] | None:
        calls.append(None if lineage is None else lineage.conversation)
        return family_relations(engine, lineage)

    monkeypatch.setattr("lineage_es.replay.family_relations", counting)
    return calls


def test_a_step_comparing_only_views_lists_no_relations(
    tmp_path: Path, listed_at: list[str | None]
) -> None:
    recording, last = _recording(tmp_path / "r.jsonl")
    expected = tmp_path / "views.yaml"
    expected.write_text(
        f"version: 1\nhost: claude\nsteps:\n  - row: {last}\n    views:\n"
        f"      {ROOT}: {{children: [{FIRST}, {SECOND}]}}\n"
    )
    result = run_replay(recording, expected=expected)
    assert result.ok, result.failed
    assert listed_at == []


def test_a_step_comparing_relations_lists_them_at_its_row_and_they_hold(
    tmp_path: Path, listed_at: list[str | None]
) -> None:
    recording, last = _recording(tmp_path / "r.jsonl")
    expected = tmp_path / "relations.yaml"
    expected.write_text(
        f"version: 1\nhost: claude\nsteps:\n  - row: {last}\n    relations:\n"
        f"      {ROOT}: parent\n      {FIRST}: self\n      {GRANDCHILD}: child\n"
    )
    result = run_replay(recording, expected=expected)
    assert result.ok, result.failed
    assert listed_at == [FIRST]  # the last row's requester: FIRST spawns GRANDCHILD
