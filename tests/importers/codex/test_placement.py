"""``lineage import codex`` places each thread of a sessions folder under its parent, from
the rollouts' own rows, and times it by them."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import Engine
from tests.support.codex_sessions import (
    CHILD,
    GRANDCHILD,
    PARENT,
    T0,
    event,
    family,
    line,
    message,
    meta,
    parent_spawning,
    rollout,
    run,
    spawned,
)


def test_thread_spawned_child_is_placed_under_its_parent_from_its_rollout(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), message(5), event(8, "task_complete"))
    run(memory, tmp_path)
    child = family(memory)[CHILD]
    assert (child.parent, child.depth, child.resolution) == (PARENT, 1, "transcript")


def test_child_file_named_before_its_parents_is_still_placed_after_the_spawn(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    rows = (spawned(3, CHILD, PARENT), message(5), event(8, "task_complete"))
    rollout(tmp_path, CHILD, *rows, name=f"rollout-2026-09-03T09-00-00-{CHILD}.jsonl")
    run(memory, tmp_path)
    assert family(memory)[CHILD].started_at.startswith("2026-09-03T08:00:03")


def test_childs_turn_end_stops_it_until_its_next_turn(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    rows = (spawned(3, CHILD, PARENT), event(5, "task_complete"), message(7), message(8))
    rollout(tmp_path, CHILD, *rows)
    run(memory, tmp_path)
    moments = [T0 + timedelta(seconds=s) for s in (6, 7)]
    status = [family(memory.as_of(time=moment))[CHILD].status for moment in moments]
    assert status == ["stopped", "live"]


def test_depth_two_child_is_placed_under_its_parent_thread(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), message(5))
    rollout(tmp_path, GRANDCHILD, spawned(4, GRANDCHILD, CHILD, depth=2), message(6))
    run(memory, tmp_path)
    grandchild = family(memory)[GRANDCHILD]
    assert (grandchild.parent, grandchild.depth) == (CHILD, 2)


def test_forked_childs_copy_of_its_parents_header_is_not_authoritative(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    copy = meta(0, PARENT)  # a forked child's history starts with its parent's header
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT, forked_from_id=PARENT), copy, message(5))
    run(memory, tmp_path)
    assert set(family(memory)) == {PARENT, CHILD}
    assert [n.conversation for n in memory.forest(include_stopped=True)] == [PARENT]


@pytest.mark.parametrize(
    "source", [{"subagent": "review"}, {"subagent": {"other": "guardian"}}, "agent_job:7"]
)
def test_review_guardian_and_job_threads_are_not_children(
    tmp_path: Path, memory: Engine, source: Any
) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, meta(3, CHILD, source=source), message(5))
    run(memory, tmp_path)
    assert CHILD not in {n.conversation for n in memory.forest(include_stopped=True)}
    assert CHILD in family(memory)  # named by the parent's own spawn, not by the review file


def test_continuation_file_carries_on_its_thread(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), event(5, "task_complete"))
    rows = (line(20, "history_base", {"id": CHILD}), message(21), event(22, "task_complete"))
    rollout(tmp_path, CHILD, *rows, name=f"rollout-2026-09-03T10-00-00-{CHILD}_r2.jsonl")
    run(memory, tmp_path)
    child = family(memory)[CHILD]
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:22")
