"""``lineage import`` knows the row types the hosts really write that say nothing of lineage
(Claude's ``worktree-state``, Codex's ``world_state``, ...): it passes over them as known rows,
never counting them as rows of an unknown type."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import lines as lines_module
from tests.support import claude_projects as claude
from tests.support import codex_sessions as codex


@pytest.mark.parametrize("kind", ["worktree-state", "file-history-delta", "agent-color"])
def test_a_claude_row_without_lineage_is_not_counted_unknown(
    tmp_path: Path, memory: Engine, kind: str
) -> None:
    s = claude.one_child(tmp_path)
    s.write(s.main, {"type": kind, "sessionId": claude.SESSION})  # as the host writes them
    report = claude.run(memory, tmp_path)
    assert lines_module.UNKNOWN_TYPE not in report.skipped
    assert claude.members(memory)[claude.AGENT].parent == claude.SESSION


def test_a_codex_world_state_row_is_not_counted_unknown(tmp_path: Path) -> None:
    codex.parent_spawning(tmp_path)
    rows = (
        codex.spawned(3, codex.CHILD, codex.PARENT),
        codex.line(4, "world_state", {"type": "snapshot"}),
        codex.message(5),
        codex.event(8, "task_complete"),
    )
    codex.rollout(tmp_path, codex.CHILD, *rows)
    with open_engine("memory://") as engine:
        report = codex.run(engine, tmp_path)
        assert lines_module.UNKNOWN_TYPE not in report.skipped
        assert codex.CHILD in codex.family(engine)
