"""A Codex depth-2 child whose header names its parent thread but not the tree's root
(``session_id`` came with openai/codex#29327; older headers lack it) is placed under the
parent it names, whose root the journal knows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from lineage_es.engine.engine import Engine
from lineage_es.importers import import_codex
from tests.support.codex_sessions import (
    CHILD,
    GRANDCHILD,
    PARENT,
    event,
    family,
    line,
    message,
    meta,
    rollout,
)

OTHER = "019a0000-0000-7000-8000-0000000000d4"


def old_header(second: int, thread: str, parent: str, depth: int) -> bytes:
    """A thread-spawned child's ``session_meta`` without ``session_id``."""
    spawn = {"parent_thread_id": parent, "depth": depth, "agent_path": "/root/scan"}
    payload: dict[str, Any] = {"id": thread, "cwd": "/w"}
    return line(second, "session_meta", payload | {"source": {"subagent": {"thread_spawn": spawn}}})


def three_generations(folder: Path) -> None:
    """PARENT, CHILD below it and GRANDCHILD below CHILD, in old headers; no parent's rows
    name its child."""
    rollout(folder, PARENT, meta(0, PARENT), message(4), event(20, "task_complete"))
    rollout(folder, CHILD, old_header(3, CHILD, PARENT, 1), message(5), event(12, "task_complete"))
    rows = (old_header(7, GRANDCHILD, CHILD, 2), message(8), event(10, "task_complete"))
    rollout(folder, GRANDCHILD, *rows)


def test_depth_two_child_without_session_id_is_placed_under_the_parent_its_header_names(
    tmp_path: Path, memory: Engine
) -> None:
    three_generations(tmp_path)
    import_codex(memory, tmp_path)
    grandchild = family(memory)[GRANDCHILD]
    assert (grandchild.parent, grandchild.depth, grandchild.resolution) == (
        CHILD,
        2,
        "transcript",
    )


def test_depth_two_child_without_session_id_is_stopped_by_its_own_turn_end(
    tmp_path: Path, memory: Engine
) -> None:
    three_generations(tmp_path)
    import_codex(memory, tmp_path)
    grandchild = family(memory)[GRANDCHILD]
    assert grandchild.status == "stopped"
    assert (grandchild.stopped_at or "").startswith("2026-09-03T08:00:10")


def test_named_parent_wins_over_an_open_spawn_of_an_unrelated_root(
    tmp_path: Path, memory: Engine
) -> None:
    three_generations(tmp_path)
    call = {"type": "function_call", "namespace": "collaboration", "name": "spawn_agent"}
    call |= {"call_id": "call_q", "arguments": orjson.dumps({"task_name": "scan"}).decode()}
    rollout(tmp_path, OTHER, meta(1, OTHER), line(6, "response_item", call))
    import_codex(memory, tmp_path)
    assert memory.relation(GRANDCHILD, CHILD) == "child"
    assert GRANDCHILD not in family(memory, OTHER)


def test_child_whose_named_parent_is_unknown_is_still_not_placed(
    tmp_path: Path, memory: Engine
) -> None:
    rows = (old_header(7, GRANDCHILD, CHILD, 2), message(8))
    rollout(tmp_path, GRANDCHILD, *rows)
    import_codex(memory, tmp_path)
    assert memory.forest(include_stopped=True) == ()
