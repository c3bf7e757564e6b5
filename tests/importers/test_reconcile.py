"""``--reconcile`` deletes a conversation only once every file holding it is gone, and the
import's summary says what was journaled and what was deleted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lineage_es.engine.engine import Engine
from lineage_es.importers import import_claude, import_codex
from tests.support.claude_projects import AGENT, SESSION, members, one_child
from tests.support.codex_sessions import (
    CHILD,
    PARENT,
    event,
    family,
    line,
    message,
    meta,
    parent_spawning,
    rollout,
    spawned,
)

OTHER = "019a0000-0000-7000-8000-0000000000d4"


def deleted_reasons(engine: Engine) -> dict[str, str]:
    """Every delete journaled, as conversation: reason."""
    return {
        e.state["conversation"]: e.state["reason"]
        for e in engine.journal()
        if e.topic.endswith(".Deleted")
    }


def continued_child(folder: Path) -> tuple[Path, Path]:
    """CHILD's rollout and its continuation file (which starts with ``history_base``)."""
    parent_spawning(folder)
    base = rollout(folder, CHILD, spawned(3, CHILD, PARENT), event(5, "task_complete"))
    rows = (line(20, "history_base", {"id": CHILD}), message(21), event(22, "task_complete"))
    name = f"rollout-2026-09-03T10-00-00-{CHILD}_r2.jsonl"
    return base, rollout(folder, CHILD, *rows, name=name)


def compressed(path: Path) -> Path:
    """``path`` replaced by its ``.zst``."""
    zstandard = pytest.importorskip("zstandard")
    packed = path.with_name(path.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    path.unlink()
    return packed


# -- which files hold a conversation ---------------------------------------------------------


def test_codex_thread_is_kept_while_its_continuation_file_remains(
    tmp_path: Path, memory: Engine
) -> None:
    base, _ = continued_child(tmp_path)
    import_codex(memory, tmp_path)
    base.unlink()
    report = import_codex(memory, tmp_path, reconcile_gone=True)
    assert CHILD in family(memory)
    assert (report.deleted, report.kept) == ([], [CHILD])


def test_codex_thread_is_deleted_once_its_continuation_file_is_gone_too(
    tmp_path: Path, memory: Engine
) -> None:
    base, continuation = continued_child(tmp_path)
    import_codex(memory, tmp_path)
    base.unlink()
    import_codex(memory, tmp_path, reconcile_gone=True)
    continuation.unlink()
    report = import_codex(memory, tmp_path, reconcile_gone=True)
    assert CHILD not in family(memory)
    assert report.deleted == [CHILD]


def test_codex_continuation_gone_keeps_the_thread_its_first_file_holds(
    tmp_path: Path, memory: Engine
) -> None:
    _, continuation = continued_child(tmp_path)
    import_codex(memory, tmp_path)
    continuation.unlink()
    import_codex(memory, tmp_path, reconcile_gone=True)
    assert CHILD in family(memory)


def test_both_roots_of_a_gone_two_root_codex_file_are_deleted(
    tmp_path: Path, memory: Engine
) -> None:
    path = rollout(tmp_path, PARENT, meta(0, PARENT), message(1), meta(5, OTHER), message(6))
    import_codex(memory, tmp_path)
    path.unlink()
    report = import_codex(memory, tmp_path, reconcile_gone=True)
    assert sorted(report.deleted) == sorted([PARENT, OTHER])
    assert memory.family(OTHER) == ()


def test_claude_session_whose_main_file_is_gone_takes_its_agents_below_it(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    import_claude(memory, tmp_path)
    s.main.unlink()  # as Claude Code's cleanup does, leaving subagents/ behind
    report = import_claude(memory, tmp_path, reconcile_gone=True)
    assert deleted_reasons(memory) == {SESSION: "gc", AGENT: "parent-teardown"}
    assert (report.deleted, report.cascaded, report.kept) == ([SESSION], [AGENT], [])


def test_claude_agent_whose_own_file_is_gone_is_deleted_though_its_session_names_it(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    import_claude(memory, tmp_path)
    s.agent_path(AGENT).unlink()
    report = import_claude(memory, tmp_path, reconcile_gone=True)
    assert deleted_reasons(memory) == {AGENT: "gc"}
    assert set(members(memory)) == {SESSION} and report.kept == []


# -- what the summary says ---------------------------------------------------------------------


def test_unchanged_compressed_rollout_read_again_journals_no_new_event(
    tmp_path: Path, memory: Engine
) -> None:
    packed = compressed(parent_spawning(tmp_path))
    import_codex(memory, tmp_path)
    os.utime(packed, ns=(packed.stat().st_atime_ns, packed.stat().st_mtime_ns + 10**9))
    report = import_codex(memory, tmp_path)
    assert report.read == 1 and report.observations > 0
    assert report.journaled == 0
    assert "0 new lineage events journaled" in report.summary()[1]


def test_first_import_counts_the_events_it_journaled(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    report = import_codex(memory, tmp_path)
    lineage_events = [e for e in memory.journal() if "ImportLedger" not in e.topic]
    assert report.journaled == len(lineage_events) > 0


def test_reconcile_summary_names_the_deleted_and_those_taken_below_them(
    tmp_path: Path, memory: Engine
) -> None:
    parent = parent_spawning(tmp_path)
    rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT), message(5))
    import_codex(memory, tmp_path)
    parent.unlink()
    report = import_codex(memory, tmp_path, reconcile_gone=True)
    assert (report.deleted, report.cascaded) == ([PARENT], [CHILD])
    assert "deleted 1 conversations whose files are gone, and 1 below them" in report.summary()[2]


def test_summary_without_reconcile_says_the_gone_files_conversations_are_kept(
    tmp_path: Path, memory: Engine
) -> None:
    parent = parent_spawning(tmp_path)
    import_codex(memory, tmp_path)
    parent.unlink()
    report = import_codex(memory, tmp_path)
    assert "1 files gone from disk; their conversations kept" in report.summary()[2]
