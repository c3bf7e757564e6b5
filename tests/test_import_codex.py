"""``lineage import codex``: a Codex sessions folder becomes the journal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage_es.engine import Engine, open_engine
from lineage_es.importers import ImportReport, codex_sessions, import_codex
from lineage_es.importers import lines as lines_module
from lineage_es.model import Member
from lineage_es.queries import Queries

PARENT = "019a0000-0000-7000-8000-0000000000a1"
CHILD = "019a0000-0000-7000-8000-0000000000b2"
GRANDCHILD = "019a0000-0000-7000-8000-0000000000c3"
T0 = datetime(2026, 9, 3, 8, 0, tzinfo=UTC)


def iso(second: int) -> str:
    return (
        (T0 + timedelta(seconds=second)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def line(second: int, kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": iso(second), "type": kind, "payload": payload}) + b"\n"


def meta(second: int, thread: str, **fields: Any) -> bytes:
    return line(second, "session_meta", {"id": thread, "cwd": "/w", "source": "cli"} | fields)


def spawned(second: int, thread: str, parent: str, depth: int = 1, **fields: Any) -> bytes:
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


def family(engine: Engine | Queries, root: str = PARENT) -> dict[str, Member]:
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
