"""Codex imports split while rollouts grow end as one import of the finished files, at every
moment: a rollout that goes on (a root's, a child's, after a turn end), a child its parent
closed before the import, two rollouts in one file, torn last lines."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta
from pathlib import Path

import orjson
import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import codex_sessions, import_codex
from tests.support.codex_sessions import (
    CHILD,
    MOMENTS,
    PARENT,
    event,
    family,
    line,
    live_at,
    message,
    meta,
    one_shot,
    parent_spawning,
    rollout,
    run,
    spawned,
)
from tests.support.growing import Roots, answers, moments

OTHER = "019a0000-0000-7000-8000-0000000000d4"

#: A rollout's rows by file name, each with the second it is written at.
Files = dict[str, list[tuple[float, bytes]]]


def name(thread: str) -> str:
    return f"rollout-2026-09-03T10-00-00-{thread}.jsonl"


def written(folder: Path, files: Files, until: float = float("inf")) -> Path:
    """``folder`` holding the rows of ``files`` written by second ``until``."""
    for file, rows in files.items():
        if any(t <= until for t, _ in rows):
            data = b"".join(row for t, row in rows if t <= until)
            rollout(folder, "", name=file).write_bytes(data)
    return folder


def grown(folder: Path, files: Files, *cuts: float) -> Engine:
    """``files`` imported as they stood at each of ``cuts``, then finished."""
    engine = open_engine("memory://")
    for cut in (*cuts, float("inf")):
        run(engine, written(folder, files, cut))
    return engine


def every_moment(engine: Engine) -> list[datetime]:
    """Each time the journal changes, and the instant before it."""
    times = {datetime.fromisoformat(e.timestamp) for e in engine.journal()}
    return sorted(times | {t - timedelta(microseconds=1) for t in times})


def assert_as_one_import(engine: Engine, folder: Path, roots: Roots = (PARENT,)) -> None:
    once = one_shot(folder)
    assert answers(engine, roots) == answers(once, roots)
    times = every_moment(once)
    assert moments(engine, times, roots) == moments(once, times, roots)


# -- rollouts that go on -----------------------------------------------------------------------


def test_root_whose_rollout_goes_on_is_live_between_the_imports_as_in_one(
    tmp_path: Path, memory: Engine
) -> None:
    rows = (meta(0, PARENT), message(1), message(2), message(8), event(9, "task_complete"))
    path = rollout(tmp_path / "a", PARENT, *rows[:3])
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(rows))
    run(memory, tmp_path / "a")
    rollout(tmp_path / "b", PARENT, *rows)
    assert live_at(memory, *MOMENTS) == live_at(one_shot(tmp_path / "b"), *MOMENTS)


def test_children_stopped_with_their_root_go_on_with_it_when_its_rollout_goes_on(
    tmp_path: Path, memory: Engine
) -> None:
    parent = parent_spawning(tmp_path / "b").read_bytes().splitlines(keepends=True)
    child = (spawned(3, CHILD, PARENT), message(5), message(6), event(8, "task_complete"))
    rollout(tmp_path / "b", CHILD, *child)
    path = rollout(tmp_path / "a", PARENT, *parent[:5])  # up to 4s: the child runs on
    rollout(tmp_path / "a", CHILD, *child)
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(parent))
    run(memory, tmp_path / "a")
    assert live_at(memory, *MOMENTS) == live_at(one_shot(tmp_path / "b"), *MOMENTS)
    assert family(memory)[CHILD].stopped_at == family(one_shot(tmp_path / "b"))[CHILD].stopped_at


def test_childs_rollout_that_goes_on_takes_it_on_from_its_last_row(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path / "a")
    parent_spawning(tmp_path / "b")
    child = (spawned(3, CHILD, PARENT), message(4), message(6), event(8, "task_complete"))
    rollout(tmp_path / "b", CHILD, *child)
    path = rollout(tmp_path / "a", CHILD, *child[:2])
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(child))
    run(memory, tmp_path / "a")
    assert live_at(memory, *MOMENTS) == live_at(one_shot(tmp_path / "b"), *MOMENTS)


def test_child_its_parent_closed_after_its_rollout_ended_stays_closed_when_it_goes_on(
    tmp_path: Path, memory: Engine
) -> None:
    close = line(7, "event_msg", {"type": "collab_close_end", "receiver_thread_id": CHILD})
    parent = (meta(0, PARENT), message(1), event(3, "collab_agent_spawn_end", new_thread_id=CHILD))
    rollout(tmp_path / "a", PARENT, *parent, close, message(10))
    rollout(tmp_path / "b", PARENT, *parent, close, message(10))
    child = (spawned(2, CHILD, PARENT), message(4), message(6), message(9))
    rollout(tmp_path / "b", CHILD, *child)
    path = rollout(tmp_path / "a", CHILD, *child[:2])
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(child))
    run(memory, tmp_path / "a")
    assert live_at(memory, *MOMENTS) == live_at(one_shot(tmp_path / "b"), *MOMENTS)


def test_row_after_a_childs_turn_end_resumes_it_at_its_own_time_in_the_next_import(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path / "a")
    parent_spawning(tmp_path / "b")
    child = (spawned(3, CHILD, PARENT), event(5, "task_complete"), message(7), message(8))
    rollout(tmp_path / "b", CHILD, *child)
    path = rollout(tmp_path / "a", CHILD, *child[:2])
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(child))
    run(memory, tmp_path / "a")
    assert live_at(memory, *MOMENTS) == live_at(one_shot(tmp_path / "b"), *MOMENTS)


def test_each_import_of_a_growing_rollout_leaves_the_history_of_one(tmp_path: Path) -> None:
    parent = parent_spawning(tmp_path / "b").read_bytes().splitlines(keepends=True)
    child = (spawned(3, CHILD, PARENT), message(5), message(6), event(8, "task_complete"))
    rollout(tmp_path / "b", CHILD, *child)
    expected = live_at(one_shot(tmp_path / "b"), *MOMENTS)
    engine = open_engine("memory://")
    for cut in range(1, len(parent) + 1):
        (tmp_path / "a").mkdir(exist_ok=True)
        path = rollout(tmp_path / "a", PARENT, name=f"rollout-2026-09-03T10-00-00-{PARENT}.jsonl")
        path.write_bytes(b"".join(parent[:cut]))
        child_path = rollout(tmp_path / "a", CHILD)
        child_path.write_bytes(b"".join(child[: max(0, cut - 2)]))
        run(engine, tmp_path / "a")
    child_path.write_bytes(b"".join(child))
    run(engine, tmp_path / "a")
    assert live_at(engine, *MOMENTS) == expected


def test_child_placed_before_its_rollout_was_read_starts_at_its_own_header(
    tmp_path: Path, memory: Engine
) -> None:
    call = {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c1"}
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": f'{{"agent_id":"{CHILD}"}}',
    }
    rollout(tmp_path, PARENT, meta(0, PARENT), line(2, "response_item", call))
    rollout(tmp_path, PARENT, line(3, "response_item", output), event(60, "task_complete"))
    run(memory, tmp_path)
    header = line(2, "session_meta", {"id": CHILD, "cwd": "/w", "session_id": PARENT})
    header = header.replace(
        b'"session_id"',
        b'"source":{"subagent":{"thread_spawn":{"parent_thread_id":"%s","depth":1}}},"session_id"'
        % PARENT.encode(),
    )
    rollout(tmp_path, CHILD, header, event(30, "task_complete"))
    run(memory, tmp_path)
    assert family(memory)[CHILD].started_at == family(one_shot(tmp_path))[CHILD].started_at


# -- a child its parent closed before the import ------------------------------------------------


def activity(second: int, kind: str) -> bytes:
    item = {"type": "SubAgentActivity", "id": "call_1", "kind": kind}
    item |= {"agent_thread_id": CHILD, "agent_path": "/root/scan"}
    return event(second, "item_completed", item=item)


def close_agent(second: int) -> bytes:
    call = {"type": "function_call", "name": "close_agent", "call_id": "c9"}
    return line(second, "response_item", call | {"arguments": orjson.dumps({"id": CHILD}).decode()})


CLOSES = {
    "interrupted": activity(6, "interrupted"),
    "completed": activity(6, "completed"),
    "collab_close_end": event(6, "collab_close_end", receiver_thread_id=CHILD),
    "close_agent": close_agent(6),
}


def closed_at_six(close: bytes) -> Files:
    """PARENT spawns CHILD (v2) and closes it at 6s; CHILD writes on to 10s."""
    call = {"type": "function_call", "namespace": "collaboration", "name": "spawn_agent"}
    call |= {"call_id": "call_1", "arguments": orjson.dumps({"task_name": "scan"}).decode()}
    parent = [meta(0, PARENT), line(2, "response_item", call), activity(3, "started"), close]
    parent += [message(12), event(13, "task_complete")]
    child = [spawned(3, CHILD, PARENT), message(4), message(7), message(9), message(10)]
    return {
        name(PARENT): list(zip((0, 2, 3, 6, 12, 13), parent, strict=True)),
        name(CHILD): list(zip((3, 4, 7, 9, 10), child, strict=True)),
    }


@pytest.mark.parametrize("close", CLOSES.values(), ids=CLOSES.keys())
def test_child_its_parent_closed_before_an_import_stays_closed_when_its_rollout_goes_on(
    tmp_path: Path, close: bytes
) -> None:
    files = closed_at_six(close)
    engine = grown(tmp_path / "a", files, 7.5)  # after the close and the child's row at 7s
    assert_as_one_import(engine, written(tmp_path / "b", files))


def test_child_its_parent_closed_and_reopened_before_an_import_goes_on_from_the_reopen(
    tmp_path: Path,
) -> None:
    files = closed_at_six(close_agent(6))
    resume = {"type": "function_call", "name": "resume_agent", "call_id": "c10"}
    resume |= {"arguments": orjson.dumps({"id": CHILD}).decode()}
    files[name(PARENT)].insert(4, (8, line(8, "response_item", resume)))
    engine = grown(tmp_path / "a", files, 8.5)  # the child's file ends at 7s, before the reopen
    assert_as_one_import(engine, written(tmp_path / "b", files))


# -- two rollouts in one file ---------------------------------------------------------------------


def two_rollouts(child: bool = False) -> Files:
    """PARENT's rollout, then OTHER's in the same file (as recorders keep them); with
    ``child``, PARENT has CHILD running past its last row."""
    first = [meta(0, PARENT), message(1)]
    first += [event(2, "collab_agent_spawn_end", new_thread_id=CHILD)] if child else [message(2)]
    first += [event(5, "task_complete")]
    files: Files = {
        name(PARENT): [
            *zip((0, 1, 2, 5), first, strict=True),
            (20, meta(20, OTHER)),
            (21, message(21)),
            (25, event(25, "task_complete")),
        ]
    }
    if child:
        files[name(CHILD)] = [(2, spawned(2, CHILD, PARENT)), (4, message(4)), (9, message(9))]
    return files


def test_first_of_two_rollouts_in_one_file_stops_at_its_last_row_when_the_second_is_appended(
    tmp_path: Path,
) -> None:
    engine = grown(tmp_path / "a", two_rollouts(), 10)
    assert_as_one_import(engine, written(tmp_path / "b", two_rollouts()), (PARENT, OTHER))


def test_first_of_two_rollouts_in_one_file_ends_its_children_when_the_second_is_appended(
    tmp_path: Path,
) -> None:
    engine = grown(tmp_path / "a", two_rollouts(child=True), 5, 10)
    assert_as_one_import(engine, written(tmp_path / "b", two_rollouts(child=True)), (PARENT, OTHER))


@pytest.mark.parametrize(
    ("case", "roots"),
    [
        (
            "irrlicht_1-5-session-new_v0.130.0",
            ("019e5c18-fa37-74a3-b799-e84966fe1c30", "019e5c19-5842-77f0-9417-0ad6552cd62b"),
        ),
        (
            "irrlicht_fork-conversation_v0.130.0",
            ("019e5615-1ef8-7270-b988-4f52f86449a4", "019e5615-9632-7740-b2cf-3061e4ff06e2"),
        ),
    ],
)
def test_corpus_file_of_two_rollouts_imported_at_each_of_its_lines_agrees_with_one_import(
    corpus: Path, tmp_path: Path, memory: Engine, case: str, roots: Roots
) -> None:
    (source,) = (corpus / "codex" / case).glob("*.jsonl")
    copy = tmp_path / source.name
    lines = source.read_bytes().splitlines(keepends=True)
    for cut in range(1, len(lines)):
        copy.write_bytes(b"".join(lines[:cut]))
        import_codex(memory, tmp_path)
    shutil.copy(source, copy)
    import_codex(memory, tmp_path)
    assert_as_one_import(memory, tmp_path, roots)


# -- torn last lines ----------------------------------------------------------------------------


TORN = {
    "torn row": message(5)[:40] + b"\n",
    "torn row and the next one": message(5)[:40] + event(9, "task_complete"),
}


@pytest.mark.parametrize("tail", TORN.values(), ids=TORN.keys())
def test_torn_last_line_stops_its_thread_at_its_last_whole_row(
    tmp_path: Path, memory: Engine, tail: bytes
) -> None:
    rollout(tmp_path, PARENT, meta(0, PARENT), message(1), message(3), tail)
    report = run(memory, tmp_path)
    assert report.skipped == {codex_sessions.TORN: 1}
    stopped = family(memory)[PARENT].stopped_at
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:03")


@pytest.mark.parametrize("tail", TORN.values(), ids=TORN.keys())
def test_torn_last_line_of_a_childs_rollout_stops_the_child_at_its_last_whole_row(
    tmp_path: Path, memory: Engine, tail: bytes
) -> None:
    parent = (meta(0, PARENT), event(1, "collab_agent_spawn_end", new_thread_id=CHILD))
    rollout(tmp_path, PARENT, *parent, message(8))
    rollout(tmp_path, CHILD, spawned(1, CHILD, PARENT), message(2), message(4), tail)
    run(memory, tmp_path)
    stopped = family(memory)[CHILD].stopped_at
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:04")


def test_last_row_torn_where_it_closed_an_object_is_counted_and_the_row_before_stops(
    tmp_path: Path, memory: Engine
) -> None:
    whole_looking = message(5)[: message(5).index(b'"}') + 2] + b"\n"
    rollout(tmp_path, PARENT, meta(0, PARENT), message(1), message(3), whole_looking)
    report = run(memory, tmp_path)
    assert report.skipped == {codex_sessions.TORN: 1}
    stopped = family(memory)[PARENT].stopped_at
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:03")


def test_rollout_whose_only_new_line_is_torn_stays_stopped_at_its_last_whole_row(
    tmp_path: Path,
) -> None:
    rows = [meta(0, PARENT), message(1), message(3), TORN["torn row"]]
    files: Files = {name(PARENT): list(zip((0.0, 1.0, 3.0, 5.0), rows, strict=True))}
    engine = grown(tmp_path / "a", files, 4)  # then the torn line comes
    stopped = family(engine)[PARENT].stopped_at
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:03")
    assert_as_one_import(engine, written(tmp_path / "b", files))
