"""``lineage import codex``: a Codex sessions folder becomes the journal."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import ImportReport, codex_sessions, import_codex
from lineage_es.importers import lines as lines_module
from lineage_es.model import Member
from lineage_es.read.answers import TreeReader

PARENT = "019a0000-0000-7000-8000-0000000000a1"
CHILD = "019a0000-0000-7000-8000-0000000000b2"
GRANDCHILD = "019a0000-0000-7000-8000-0000000000c3"
T0 = datetime(2026, 9, 3, 8, 0, tzinfo=UTC)


def iso(second: float) -> str:
    return (
        (T0 + timedelta(seconds=second)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def line(second: float, kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": iso(second), "type": kind, "payload": payload}) + b"\n"


def meta(second: float, thread: str, **fields: Any) -> bytes:
    return line(second, "session_meta", {"id": thread, "cwd": "/w", "source": "cli"} | fields)


def spawned(second: float, thread: str, parent: str, depth: int = 1, **fields: Any) -> bytes:
    spawn = {"parent_thread_id": parent, "depth": depth, "agent_path": "/root/scan"}
    source = {"subagent": {"thread_spawn": spawn}}
    return meta(second, thread, source=source, session_id=PARENT, **fields)


def event(second: int, kind: str, **fields: Any) -> bytes:
    return line(second, "event_msg", {"type": kind} | fields)


def message(second: int, text: str = "working") -> bytes:
    content = [{"type": "output_text", "text": text}]
    return line(
        second, "response_item", {"type": "message", "role": "assistant", "content": content}
    )


def rollout(folder: Path, thread: str, *rows: bytes, name: str | None = None) -> Path:
    path = folder / "2026" / "09" / "03" / (name or f"rollout-2026-09-03T10-00-00-{thread}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as stream:
        stream.write(b"".join(rows))
    return path


def family(engine: Engine | TreeReader, root: str = PARENT) -> dict[str, Member]:
    return {m.conversation: m for m in engine.family(root)}


def run(engine: Engine, folder: Path, **options: Any) -> ImportReport:
    return import_codex(engine, folder, **options)


def parent_spawning(folder: Path) -> Path:
    """A root thread that spawns CHILD (v2: a SubAgentActivity item names it)."""
    call = {"type": "function_call", "namespace": "collaboration", "name": "spawn_agent"}
    call |= {"call_id": "call_1", "arguments": orjson.dumps({"task_name": "scan"}).decode()}
    started = {"type": "SubAgentActivity", "id": "call_1", "kind": "started"}
    started |= {"agent_thread_id": CHILD, "agent_path": "/root/scan"}
    done = started | {"kind": "completed"}
    return rollout(
        folder,
        PARENT,
        meta(0, PARENT),
        message(1),
        line(2, "response_item", call),
        event(3, "item_completed", item=started),
        message(4),
        event(9, "item_completed", item=done),
        event(10, "task_complete"),
    )


# -- placing -----------------------------------------------------------------------------------


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


def test_compressed_rollout_is_read(tmp_path: Path, memory: Engine) -> None:
    zstandard = pytest.importorskip("zstandard")
    path = parent_spawning(tmp_path)
    packed = path.with_name(path.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    path.unlink()
    run(memory, tmp_path)
    assert set(family(memory)) == {PARENT, CHILD}


def test_corrupt_compressed_rollout_is_counted_and_the_rest_imported(
    tmp_path: Path, memory: Engine
) -> None:
    pytest.importorskip("zstandard")
    parent_spawning(tmp_path)
    rollout(
        tmp_path, CHILD, b"\x28\xb5\x2f\xfd not really zstd", name=f"rollout-x-{CHILD}.jsonl.zst"
    )
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.CORRUPT] == 1
    assert PARENT in family(memory)


def test_continuation_file_carries_on_its_thread(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), event(5, "task_complete"))
    rows = (line(20, "history_base", {"id": CHILD}), message(21), event(22, "task_complete"))
    rollout(tmp_path, CHILD, *rows, name=f"rollout-2026-09-03T10-00-00-{CHILD}_r2.jsonl")
    run(memory, tmp_path)
    child = family(memory)[CHILD]
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:22")


def test_mistyped_header_is_counted_and_the_other_files_imported(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, line(3, "session_meta", {"id": 42}), message(5))
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.BAD_FIELDS] == 1
    assert PARENT in family(memory)


# -- files that go on ----------------------------------------------------------------------------


def live_at(engine: Engine, *seconds: float) -> list[set[str]]:
    """The conversations of PARENT's tree live at each moment (seconds after T0)."""
    moments = [engine.as_of(time=T0 + timedelta(seconds=s)).family(PARENT) for s in seconds]
    return [{m.conversation for m in members if m.status == "live"} for members in moments]


MOMENTS = (0.5, 1, 2, 2.5, 3, 4, 4.5, 5, 6, 7, 8, 9, 9.5, 10, 11, 20, 30)


def one_shot(folder: Path) -> Engine:
    engine = open_engine("memory://")
    run(engine, folder)
    return engine


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


# -- compressed and loose files ----------------------------------------------------------------


def compressed(path: Path, cut: float = 1.0, junk: bytes = b"") -> Path:
    """``path`` compressed in its place (``.zst``), cut to ``cut`` of its size, ``junk`` after."""
    zstandard = pytest.importorskip("zstandard")
    packed = path.with_name(path.name + ".zst")
    data = zstandard.ZstdCompressor(level=1).compress(path.read_bytes())
    packed.write_bytes(data[: int(len(data) * cut)] + junk)
    path.unlink()
    return packed


def padded_child(folder: Path) -> Path:
    """CHILD's rollout with its turn end after 1 MB of rows the compressor cannot shrink."""
    noise = [
        message(4, orjson.dumps(list(range(n * 997, n * 997 + 4000))).decode()) for n in range(60)
    ]
    return rollout(folder, CHILD, spawned(3, CHILD, PARENT), *noise, event(8, "task_complete"))


def test_compressed_rollout_cut_off_is_counted_corrupt_and_its_rows_before_the_cut_read(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    compressed(padded_child(tmp_path), cut=0.5)
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.CORRUPT: 1} and not report.partial
    stopped = family(memory)[CHILD].stopped_at  # at its last row before the cut
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:04")


def test_compressed_rollout_with_bytes_after_its_frame_is_counted_corrupt_and_read(
    tmp_path: Path, memory: Engine
) -> None:
    compressed(parent_spawning(tmp_path), junk=b"not a frame")
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.CORRUPT: 1}
    assert report.roots == {PARENT} and set(family(memory)) == {PARENT, CHILD}


def test_compressed_rollout_of_two_frames_is_read_whole(tmp_path: Path, memory: Engine) -> None:
    zstandard = pytest.importorskip("zstandard")
    rows = parent_spawning(tmp_path).read_bytes().splitlines(keepends=True)
    frames = [zstandard.ZstdCompressor().compress(b"".join(part)) for part in (rows[:2], rows[2:])]
    compressed(rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT)))
    path = tmp_path / "2026" / "09" / "03" / f"rollout-2026-09-03T10-00-00-{PARENT}.jsonl"
    path.unlink()
    path.with_name(path.name + ".zst").write_bytes(b"".join(frames))
    report = run(memory, tmp_path)
    assert not report.skipped
    stopped = family(memory)[PARENT].stopped_at  # at the last row, in the second frame
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:10")


def v1_parent(folder: Path) -> Path:
    """A root thread that spawns CHILD (v1: the spawn call's output names it)."""
    call = {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c1"}
    output = {"type": "function_call_output", "call_id": "c1"}
    output["output"] = orjson.dumps({"agent_id": CHILD}).decode()
    return rollout(
        folder,
        PARENT,
        meta(0, PARENT),
        line(2, "response_item", call),
        line(3, "response_item", output),
        event(10, "task_complete"),
    )


def spaced(path: Path) -> list[bytes]:
    """The rows of ``path`` as JSON with spaces after its colons and commas."""
    return [
        json.dumps(orjson.loads(raw)).encode() + b"\n" for raw in path.read_bytes().splitlines()
    ]


def test_rollout_in_spaced_json_is_read_like_a_compact_one(tmp_path: Path) -> None:
    rollout(tmp_path / "b", PARENT, *spaced(v1_parent(tmp_path / "a")))
    compact, loose = one_shot(tmp_path / "a"), one_shot(tmp_path / "b")
    assert set(family(loose)) == {PARENT, CHILD}
    assert family(loose) == family(compact)


def test_spaced_json_rollout_that_goes_on_is_still_read_whole(
    tmp_path: Path, memory: Engine
) -> None:
    rows = spaced(v1_parent(tmp_path / "x"))
    path = rollout(tmp_path / "a", PARENT, *rows[:2])
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(rows))
    run(memory, tmp_path / "a")
    assert set(family(memory)) == {PARENT, CHILD}


# -- bad lines -----------------------------------------------------------------------------------


def child_with(tmp_path: Path, *bad: bytes) -> ImportReport:
    """CHILD's rollout with ``bad`` lines between its working rows, imported: the reason each
    bad line was counted under."""
    parent_spawning(tmp_path)
    rows = (spawned(3, CHILD, PARENT), message(4), *bad, message(5), event(8, "task_complete"))
    rollout(tmp_path, CHILD, *rows)
    return run(open_engine("memory://"), tmp_path)


TORN_ROW = event(6, "token_count", info=None)[:40] + b"\n"


def test_line_that_is_not_json_is_counted_as_not_json(tmp_path: Path) -> None:
    report = child_with(tmp_path, b"not json at all\n")
    assert report.skipped == {lines_module.NOT_JSON: 1}


def test_row_cut_off_mid_write_is_counted_as_torn(tmp_path: Path) -> None:
    report = child_with(tmp_path, TORN_ROW)
    assert report.skipped == {codex_sessions.TORN: 1}


def test_row_torn_off_where_the_next_row_went_on_is_counted_as_torn(tmp_path: Path) -> None:
    report = child_with(tmp_path, TORN_ROW[:-1] + message(6))
    assert report.skipped == {codex_sessions.TORN: 1}


def test_json_line_that_is_not_an_object_is_counted_as_such(tmp_path: Path) -> None:
    report = child_with(tmp_path, b"[1,2]\n")
    assert report.skipped == {lines_module.NOT_OBJECT: 1}


def test_row_of_an_unknown_type_is_counted_as_such(tmp_path: Path) -> None:
    report = child_with(tmp_path, line(6, "future_row", {"type": "x"}))
    assert report.skipped == {lines_module.UNKNOWN_TYPE: 1}


def test_row_nesting_a_timed_object_is_not_taken_for_a_torn_one(tmp_path: Path) -> None:
    nested = event(6, "token_count", info={"last": {"timestamp": iso(5)}})
    assert not child_with(tmp_path, nested).skipped


def test_each_bad_line_is_counted_under_its_own_reason_and_the_import_goes_on(
    tmp_path: Path,
) -> None:
    unknown = line(6, "future_row", {"type": "x"})
    report = child_with(tmp_path, b"not json\n", unknown, TORN_ROW, b"[1,2]\n")
    assert report.skipped == {
        lines_module.NOT_JSON: 1,
        lines_module.UNKNOWN_TYPE: 1,
        codex_sessions.TORN: 1,
        lines_module.NOT_OBJECT: 1,
    }
    assert report.subagents == {CHILD} and report.read == 2


def test_bad_lines_of_a_resumed_thread_are_counted_alike(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), event(5, "task_complete"))
    run(memory, tmp_path)
    rollout(tmp_path, CHILD, b"not json\n", TORN_ROW, b"[1,2]\n", message(30))
    report = run(memory, tmp_path)
    assert report.skipped == {
        lines_module.NOT_JSON: 1,
        codex_sessions.TORN: 1,
        lines_module.NOT_OBJECT: 1,
    }
    stopped = family(memory)[CHILD].stopped_at  # by its last row, the one after them
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:30")


# -- the corpus ---------------------------------------------------------------------------------


def imported(corpus: Path, name: str = "") -> tuple[Engine, ImportReport]:
    engine = open_engine("memory://")
    return engine, import_codex(engine, corpus / "codex" / name)


def test_corpus_fork_file_holds_two_unrelated_roots(corpus: Path) -> None:
    engine, report = imported(corpus, "irrlicht_fork-conversation_v0.130.0")
    first, fork = "019e5615-1ef8-7270-b988-4f52f86449a4", "019e5615-9632-7740-b2cf-3061e4ff06e2"
    assert report.roots == {first, fork}
    assert engine.relation(fork, first) == "unrelated"


def test_corpus_headers_place_three_children_at_depth_one(corpus: Path) -> None:
    engine, _ = imported(corpus, "irrlicht_subagent-parent-link-headers_v0.144.4")
    root = "019f6249-055d-76d3-b381-cd9d3eb99189"
    children = [m for m in engine.family(root) if m.conversation != root]
    assert [(m.depth, m.parent) for m in children] == [(1, root)] * 3


def test_corpus_review_subagent_is_not_a_child(corpus: Path) -> None:
    _, report = imported(corpus, "agtrace_review-subagent-excerpt_v0.77.0")
    assert report.roots == {"019b88e0-0b0f-7bb0-a9ba-5cc2d8dffde9"}
    assert not report.subagents


def test_whole_corpus_imports_every_thread_and_stops_every_timed_root(corpus: Path) -> None:
    engine, report = imported(corpus)
    assert report.read == report.files
    roots = [n for n in engine.forest(include_stopped=True) if n.status == "live"]
    # Only the publisher-built header files carry no time to stop them at.
    assert [n.conversation for n in roots] == ["019f6249-055d-76d3-b381-cd9d3eb99189"]
