"""``lineage import codex`` counts each line it cannot read under its own reason and imports
the rest."""

from __future__ import annotations

from pathlib import Path

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import ImportReport, codex_sessions
from lineage_es.importers import lines as lines_module
from tests.support.codex_sessions import (
    CHILD,
    PARENT,
    event,
    family,
    iso,
    line,
    message,
    parent_spawning,
    rollout,
    run,
    spawned,
)


def test_mistyped_header_is_counted_and_the_other_files_imported(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, line(3, "session_meta", {"id": 42}), message(5))
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.BAD_FIELDS] == 1
    assert PARENT in family(memory)


# -- bad lines ---------------------------------------------------------------------------------


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
