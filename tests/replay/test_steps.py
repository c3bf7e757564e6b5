"""When a step is checked: right after its row is ingested, for the requester and every view.

A Claude session transcript numbers its rows in the main file; its subagents' rows are merged in
by time and happen after the main row they follow, before the next one. The recording here is
replays/claude/parallel: the root spawns three Explore subagents at rows 8, 9 and 10, each
subagent's file starting a few milliseconds after its spawn row.
"""

from __future__ import annotations

import json
from pathlib import Path

from lineage_es.replay import run_replay
from lineage_es.replay.expected import tree_ids
from tests.support.paths import REPO

PARALLEL = REPO / "replays" / "claude" / "parallel"
TRANSCRIPT = PARALLEL / "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8.jsonl"
ROOT = "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8"
FIRST, SECOND, THIRD = "a31559a022d9a2cb6", "a5435e8f32c1127d1", "a8662875f7da1388c"


def children_seen_by_root(tmp_path: Path, rows: list[int]) -> dict[int, list[str]]:
    """The ids in the root's view ``children`` at each of ``rows``, read from the reports of
    expected files that say each row sees none."""
    expected = tmp_path / "e.yaml"
    steps = [{"row": row, "views": {ROOT: {"children": []}}} for row in rows]
    expected.write_text(json.dumps({"version": 1, "steps": steps}))
    result = run_replay(TRANSCRIPT, expected=expected)
    seen: dict[int, list[str]] = {row: [] for row in rows}
    for step in result.failed:
        (mismatch,) = step.mismatches
        seen[step.rows[0]] = [peer["conversation"] for peer in mismatch.observed]
    return seen


def test_a_steps_tree_and_its_requesters_view_answer_for_the_same_moment(
    tmp_path: Path,
) -> None:
    answers = run_replay(TRANSCRIPT).answers
    steps = [
        {"row": a.row, "views": {a.lineage.conversation: tree_ids(a.lineage.tree)}}
        for a in answers
        if a.lineage is not None
    ]
    expected = tmp_path / "e.yaml"
    expected.write_text(json.dumps({"version": 1, "steps": steps}))
    result = run_replay(TRANSCRIPT, expected=expected)
    assert len(result.steps) >= 10
    assert [step.label for step in result.failed] == []


def test_a_subagent_starting_after_its_spawn_row_is_seen_from_the_next_row(
    tmp_path: Path,
) -> None:
    assert children_seen_by_root(tmp_path, [8, 9, 10, 11, 12]) == {
        8: [],  # the spawn request alone places no child
        9: [FIRST],
        10: [FIRST, SECOND],
        11: [FIRST, THIRD],  # the second stopped before row 11, the third started after row 10
        12: [],
    }
