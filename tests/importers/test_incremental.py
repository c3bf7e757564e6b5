"""Importing again reads only what changed, kept in the journal's own import ledger."""

from __future__ import annotations

import io
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_es.cli.main import main
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import import_claude, import_codex
from lineage_es.importers import lines as lines_module
from lineage_es.importers.lines import Region
from lineage_es.journal import export_journal, import_journal
from tests.support.claude_projects import (
    AGENT,
    CHILD,
    SESSION,
    Session,
    at,
    members,
    one_child,
    spawned_agent,
)
from tests.support.codex_sessions import CHILD as THREAD_CHILD
from tests.support.codex_sessions import PARENT as THREAD_PARENT
from tests.support.codex_sessions import event, message, parent_spawning, rollout, spawned


@pytest.fixture
def imported(tmp_path: Path, memory: Engine) -> Session:
    """``one_child``'s session in ``tmp_path``, imported once into ``memory``."""
    s = one_child(tmp_path)
    import_claude(memory, tmp_path)
    return s


@pytest.fixture
def agent_file_gone(imported: Session) -> Session:
    """After the first import, the agent's transcript is deleted from disk."""
    imported.agent_path(AGENT).unlink()
    return imported


@pytest.fixture
def both_files_gone(agent_file_gone: Session) -> Session:
    """After the first import, the session's and the agent's transcripts are deleted."""
    agent_file_gone.main.unlink()
    return agent_file_gone


def touch_later(path: Path) -> None:
    """Move the mtime on, as a later write would, whatever the clock's resolution."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


@contextmanager
def line_limits(max_line: int, region: int) -> Iterator[None]:
    """Lines longer than ``max_line`` bytes are skipped; files are read ``region`` bytes at a
    time (a hypothesis test cannot use the ``monkeypatch`` fixture once per example)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lines_module, "MAX_LINE_BYTES", max_line)
        patch.setattr(lines_module, "REGION_BYTES", region)
        yield


def lineage(*args: str | Path) -> Result:
    """Runs the ``lineage`` command."""
    return CliRunner().invoke(main, [str(a) for a in args])


# -- what a re-import reads ---------------------------------------------------------------------


@pytest.mark.usefixtures("imported")
def test_reimport_with_nothing_changed_reads_no_file_and_journals_nothing(
    tmp_path: Path, memory: Engine
) -> None:
    position = memory.position()
    report = import_claude(memory, tmp_path)
    assert (report.read, report.unchanged, report.bytes) == (0, 2, 0)
    assert memory.position() == position


def test_grown_session_is_read_from_where_the_last_import_stopped(
    tmp_path: Path, memory: Engine, imported: Session
) -> None:
    before = imported.main.stat().st_size
    imported.prompt(30)
    report = import_claude(memory, tmp_path)
    assert (report.read, report.bytes) == (1, imported.main.stat().st_size - before)


def test_resumed_session_appending_to_its_file_goes_on_from_its_old_last_row_to_its_new_one(
    tmp_path: Path, memory: Engine, imported: Session
) -> None:
    """As one import of the whole file reads it: the end of a turn stops no root, and the
    old last row stopped it only because the file ended there."""
    imported.prompt(40, "resume")  # claude --resume appends to the same file
    imported.answer(45)
    import_claude(memory, tmp_path)
    root = members(memory)[SESSION]
    assert root.stopped_at is not None and root.stopped_at.startswith("2026-09-03T08:00:45")
    assert members(memory.as_of(time=at(42)))[SESSION].status == "live"
    assert members(memory.as_of(time=at(20)))[SESSION].status == "live"
    assert members(memory.as_of(time=at(50)))[SESSION].status == "stopped"


def test_spawn_read_in_one_import_is_answered_by_its_result_in_the_next(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT)  # AGENT's own spawn, answered after this import
    import_claude(memory, tmp_path)
    s.answer(5, agent=AGENT)
    s.prompt(5, "deeper", agent=CHILD)  # no sidecar: placed by ordering first
    s.result(6, "toolu_B", CHILD, agent=AGENT)  # found through the call kept in the ledger
    s.answer(7, agent=AGENT)
    import_claude(memory, tmp_path)
    child = members(memory)[CHILD]
    assert (child.parent, child.resolution) == (AGENT, "transcript")


def test_agent_file_growing_after_its_stop_resumes_the_agent(
    tmp_path: Path, memory: Engine, imported: Session
) -> None:
    imported.prompt(50, "again", agent=AGENT)
    imported.answer(52, agent=AGENT)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=at(51)))[AGENT].status == "live"
    assert str(members(memory)[AGENT].stopped_at).startswith("2026-09-03T08:00:52")


def test_partial_last_line_is_left_for_the_next_import(tmp_path: Path, memory: Engine) -> None:
    s = one_child(tmp_path)
    row = {"type": "user", "sessionId": SESSION, "uuid": "late"}
    line = orjson.dumps(row | {"timestamp": "2026-09-03T08:01:00.000Z"}) + b"\n"
    s.write(s.main, line[:20])  # Claude Code is still writing this row
    first = import_claude(memory, tmp_path)
    s.write(s.main, line[20:])
    second = import_claude(memory, tmp_path)
    assert (first.partial, second.partial) == (1, 0)
    assert str(members(memory)[SESSION].stopped_at).startswith("2026-09-03T08:01:00")


def test_replaced_file_is_read_again_from_its_start(
    tmp_path: Path, memory: Engine, imported: Session
) -> None:
    imported.main.write_bytes(b"")
    imported.prompt(60, "a shorter file in its place")
    touch_later(imported.main)
    report = import_claude(memory, tmp_path)
    assert report.bytes == imported.main.stat().st_size


@given(
    lines=st.lists(st.binary(max_size=90).map(lambda b: b.replace(b"\n", b"") + b"\n")),
    tail=st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    region=st.integers(min_value=1, max_value=120),
)
@settings(max_examples=150, deadline=None)
def test_chunks_give_every_complete_line_at_its_offset_and_skip_overlong_ones(
    lines: list[bytes], tail: bytes, region: int
) -> None:
    data = b"".join(lines) + tail
    skips: Counter[str] = Counter()
    with line_limits(64, region):
        chunks = lines_module.Chunks(io.BytesIO(data), 0, skips)
        regions = list(chunks)
    assert all(data[r.offset : r.offset + len(r.data)] == r.data for r in regions)
    assert b"".join(r.data for r in regions) == b"".join(x for x in lines if len(x) <= 64)
    assert skips[lines_module.OVERLONG] == sum(len(x) > 64 for x in lines)
    assert (chunks.end, chunks.partial) == (len(data) - len(tail), bool(tail))


def _regions(stream: IO[bytes], offset: int) -> tuple[list[Region], list[Any], int, bool, int]:
    skips: Counter[str] = Counter()
    chunks = lines_module.Chunks(stream, offset, skips)
    regions = list(chunks)
    tail = list(chunks.last_lines())
    return regions, tail, chunks.end, chunks.partial, skips[lines_module.OVERLONG]


@given(
    lines=st.lists(st.binary(max_size=90).map(lambda b: b.replace(b"\n", b"") + b"\n")),
    tail=st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    region=st.integers(min_value=1, max_value=120),
    skip=st.integers(min_value=0, max_value=5),
)
@settings(max_examples=100, deadline=None)
def test_chunks_of_a_file_are_those_of_the_same_bytes_in_memory(
    lines: list[bytes], tail: bytes, region: int, skip: int
) -> None:
    """A file is read no more than it holds at a time; its regions, last lines, end and
    skips are those of the same bytes read without knowing their size."""
    data = b"".join(lines) + tail
    offset = len(b"".join(lines[:skip]))
    with line_limits(64, region):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "rows.jsonl"
            path.write_bytes(data)
            with path.open("rb") as stream:
                stream.seek(offset)
                from_file = _regions(stream, offset)
        memory = io.BytesIO(data)
        memory.seek(offset)
        in_memory = _regions(memory, offset)
    assert from_file == in_memory
    assert len(from_file[1]) == min(
        lines_module.Chunks.TAIL, sum(len(x) <= 64 for x in lines[skip:])
    )


# -- files gone from disk -----------------------------------------------------------------------


@pytest.mark.usefixtures("both_files_gone")
def test_deleted_transcript_deletes_nothing_from_the_journal(
    tmp_path: Path, memory: Engine
) -> None:
    report = import_claude(memory, tmp_path)
    assert report.gone == 2
    assert set(members(memory)) == {SESSION, AGENT}


@pytest.mark.usefixtures("both_files_gone")
def test_reconcile_deletes_the_conversations_of_gone_files_as_gc(
    tmp_path: Path, memory: Engine
) -> None:
    report = import_claude(memory, tmp_path, reconcile_gone=True)
    assert memory.family(SESSION) == ()
    reasons = {
        e.state["conversation"]: e.state["reason"]
        for e in memory.journal()
        if e.topic.endswith("Deleted")
    }
    assert reasons == {AGENT: "gc", SESSION: "gc"}
    assert sorted(report.deleted) == sorted([AGENT, SESSION])


@pytest.mark.usefixtures("agent_file_gone")
def test_reconcile_of_a_gone_agent_file_deletes_only_that_agent(
    tmp_path: Path, memory: Engine
) -> None:
    import_claude(memory, tmp_path, reconcile_gone=True)
    assert set(members(memory)) == {SESSION}


@pytest.mark.usefixtures("agent_file_gone")
def test_reconcile_forgets_the_gone_files_so_a_second_run_deletes_nothing_more(
    tmp_path: Path, memory: Engine
) -> None:
    import_claude(memory, tmp_path, reconcile_gone=True)
    position = memory.position()
    report = import_claude(memory, tmp_path, reconcile_gone=True)
    assert (report.gone, report.deleted, memory.position()) == (0, [], position)


# -- the ledger lives in the journal -------------------------------------------------------------


def test_ledger_survives_journal_export_and_import(tmp_path: Path, memory: Engine) -> None:
    one_child(tmp_path / "history")
    import_claude(memory, tmp_path / "history")
    exported = tmp_path / "journal.jsonl"
    with exported.open("wb") as out:
        export_journal(memory, out)
    with open_engine("memory://") as elsewhere:
        import_journal(elsewhere, exported)
        report = import_claude(elsewhere, tmp_path / "history")
        assert (report.read, report.unchanged) == (0, 2)
        assert set(members(elsewhere)) == {SESSION, AGENT}


def test_import_and_reimport_on_every_store(tmp_path: Path, engine: Engine) -> None:
    s = one_child(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT)
    s.meta(CHILD, toolUseId="toolu_B", parentAgentId=AGENT, spawnDepth=2)
    s.prompt(5, "deeper", agent=CHILD)
    first = import_claude(engine, tmp_path)
    second = import_claude(engine, tmp_path)
    assert (first.read, second.read) == (3, 0)
    assert {m.conversation: m.depth for m in engine.family(SESSION)} == {
        SESSION: 0,
        AGENT: 1,
        CHILD: 2,
    }


def test_grown_codex_rollout_resumes_its_thread(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    path = rollout(tmp_path, THREAD_CHILD, spawned(3, THREAD_CHILD, THREAD_PARENT), message(5))
    import_codex(memory, tmp_path)
    rollout(tmp_path, THREAD_CHILD, message(30), event(31, "task_complete"))
    report = import_codex(memory, tmp_path)
    assert report.read == 1 and report.bytes < path.stat().st_size
    child = {m.conversation: m for m in memory.family(THREAD_PARENT)}[THREAD_CHILD]
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:31")


# -- the command --------------------------------------------------------------------------------


def test_cli_imports_then_reads_nothing_the_second_time(tmp_path: Path) -> None:
    one_child(tmp_path / "projects")
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    args = ("import", "claude", tmp_path / "projects", "--store", store, "--quiet")
    first = lineage(*args)
    second = lineage(*args)
    assert first.exit_code == second.exit_code == 0
    assert "1 roots and 1 subagents seen" in first.output
    assert "0 read (0 bytes), 2 unchanged" in second.output


def test_cli_progress_bar_is_silent_with_quiet(tmp_path: Path) -> None:
    one_child(tmp_path)
    loud = lineage("import", "claude", tmp_path, "--store", "memory://")
    quiet = lineage("import", "claude", tmp_path, "--store", "memory://", "--quiet")
    assert "reading claude history" in loud.output
    assert "reading claude history" not in quiet.output


def test_cli_missing_folder_exits_2_with_the_reason(tmp_path: Path) -> None:
    result = lineage("import", "codex", tmp_path / "absent", "--store", "memory://")
    assert result.exit_code == 2
    assert "not a folder" in result.output


def test_cli_help_teaches_with_examples() -> None:
    result = lineage("import", "--help")
    assert "lineage import claude" in result.output and "--reconcile" in result.output
