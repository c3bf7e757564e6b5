"""Importing files Claude Code is still writing: whatever an import caught, the imports after
it leave the history one import of the finished files gives, at every moment.

Wherever an import split in steps cuts the files (a row half written, rows stamped out of
time order, a row stamped before the stop it takes back), it ends with the tree and the
time-travel answers of one import, subagent types included; an import of files unchanged
since the last journals nothing.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.hosts.base import parse_time
from lineage_es.importers import import_claude
from tests.support.claude_projects import AGENT, OTHER, SESSION, Session, at, clear, iso, members
from tests.support.growing import (
    Roots,
    answers,
    assert_as_one_import,
    assert_as_one_import_at_every_instant,
    background_child_then_waiting,
    history,
    moments,
    one_import,
    snapshot,
    two_agents,
)

# -- a file with no complete row yet ------------------------------------------------------------


def background_agent_at_work(folder: Path) -> Session:
    """A session whose root launched AGENT in the background (second 2), which began at 3,
    while the root answered at 4."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A", run_in_background=True)
    s.result(2, "toolu_A", AGENT, status="async_launched")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(4)
    return s


def start_writing(path: Path, how: str, row: bytes) -> None:
    """The file exists with nothing complete in it: empty, or its first row half written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"" if how == "empty" else row[: len(row) // 2])


@pytest.mark.parametrize("how", ["empty", "torn"])
def test_agent_file_with_no_complete_row_at_the_first_import_starts_its_agent_at_its_first_row(
    tmp_path: Path, memory: Engine, how: str
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    start_writing(s.agent_path(AGENT), how, b'{"type":"user","sessionId":"x"}\n')
    import_claude(memory, tmp_path)
    s.agent_path(AGENT).write_bytes(b"")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    import_claude(memory, tmp_path)
    assert members(memory)[AGENT].started_at.startswith("2026-09-03T08:00:03")
    assert_as_one_import(memory, tmp_path)


@pytest.mark.parametrize("how", ["empty", "torn"])
def test_hosts_own_agent_file_with_no_complete_row_at_the_first_import_is_never_a_child(
    tmp_path: Path, memory: Engine, how: str
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    helper = "acompact-e1f845"
    start_writing(s.agent_path(helper), how, b'{"type":"user","sessionId":"x"}\n')
    import_claude(memory, tmp_path)
    s.agent_path(helper).write_bytes(b"")
    s.prompt(3, "summarise", agent=helper)
    s.answer(5, agent=helper)
    report = import_claude(memory, tmp_path)
    assert set(members(memory)) == {SESSION}
    assert report.internal == 1


def test_session_file_with_no_complete_row_at_the_first_import_holds_its_agents_back(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    finished = s.main.read_bytes()
    s.main.write_bytes(finished[:40])  # its first row still being written
    import_claude(memory, tmp_path)
    assert memory.forest(include_stopped=True) == ()
    s.main.write_bytes(finished)
    import_claude(memory, tmp_path)
    assert_as_one_import(memory, tmp_path)


def abandoned_headless_session(folder: Path) -> Session:
    """A finished session whose own file was left with half its first row, long ago (the
    host never completed it), beside its agent's whole file."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.main.write_bytes(s.main.read_bytes()[:40])
    hour_ago = time.time() - 3600
    for path in (s.main, s.agent_path(AGENT)):
        os.utime(path, (hour_ago, hour_ago))
    return s


def test_session_file_left_with_no_complete_row_does_not_hold_its_agents_back(
    tmp_path: Path, memory: Engine
) -> None:
    s = abandoned_headless_session(tmp_path / "left")
    import_claude(memory, tmp_path / "left")
    without = tmp_path / "without"
    shutil.copytree(tmp_path / "left", without)
    (without / s.main.relative_to(tmp_path / "left")).unlink()
    assert AGENT in members(memory)
    assert answers(memory) == answers(one_import(without))


def test_session_file_left_with_no_complete_row_is_not_read_again_unchanged(
    tmp_path: Path, memory: Engine
) -> None:
    abandoned_headless_session(tmp_path)
    import_claude(memory, tmp_path)
    assert import_claude(memory, tmp_path).journaled == 0


def test_result_read_before_its_agents_first_row_waits_for_that_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    s.agent_path(AGENT).parent.mkdir(parents=True)
    s.agent_path(AGENT).write_bytes(b"")  # the agent's rows are not on disk yet
    import_claude(memory, tmp_path)
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    import_claude(memory, tmp_path)
    child = members(memory)[AGENT]
    assert (child.started_at[11:19], str(child.stopped_at)[11:19]) == ("08:00:03", "08:00:06")
    assert_as_one_import(memory, tmp_path)


def test_leading_rows_without_a_time_wait_for_the_files_first_time(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.tail()  # a mode and a title, before the first prompt
    import_claude(memory, tmp_path)
    assert memory.forest(include_stopped=True) == ()
    s.prompt(4)
    import_claude(memory, tmp_path)
    assert members(memory)[SESSION].started_at.startswith("2026-09-03T08:00:04")


# -- a file that goes on after an import --------------------------------------------------------


def test_session_read_while_it_waits_for_a_background_child_agrees_with_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    s = background_child_then_waiting(tmp_path)
    import_claude(memory, tmp_path)  # the file ends at second 3: root and child stop there
    s.tail()  # the untimed rows again: the same rows, so no new row to resume at
    s.notice(8, AGENT, status="killed")
    s.answer(9)
    import_claude(memory, tmp_path)
    assert {c: v[0] for c, v in history(memory, [5])[0].items()} == {
        SESSION: "live",
        AGENT: "live",
    }
    assert_as_one_import(memory, tmp_path)


def test_continued_session_goes_on_from_its_old_last_row(tmp_path: Path, memory: Engine) -> None:
    s = background_child_then_waiting(tmp_path)
    import_claude(memory, tmp_path)
    s.notice(8, AGENT)
    import_claude(memory, tmp_path)
    root = members(memory.as_of(time=at(3)))[SESSION]
    assert (root.status, members(memory.as_of(time=at(6)))[SESSION].status) == ("live", "live")


def test_agent_file_read_while_its_agent_works_agrees_with_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    import_claude(memory, tmp_path)  # the agent's file ends at second 3
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=at(4)))[AGENT].status == "live"
    assert_as_one_import(memory, tmp_path)


def test_agent_that_outlives_the_sessions_last_row_agrees_with_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    s = background_agent_at_work(tmp_path)  # the session's file ends at 4
    s.answer(5, agent=AGENT)
    import_claude(memory, tmp_path)  # the agent's file ends at 5
    s.answer(7, agent=AGENT)
    s.notice(8, AGENT)
    s.answer(10)
    import_claude(memory, tmp_path)
    assert_as_one_import(memory, tmp_path)


def test_every_moment_of_a_session_imported_three_times_agrees_with_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    s = background_agent_at_work(tmp_path)  # the session's file ends at 4
    import_claude(memory, tmp_path)
    s.answer(5, agent=AGENT)
    s.tail()
    import_claude(memory, tmp_path)
    s.answer(7, agent=AGENT)
    s.notice(8, AGENT)
    s.answer(9)
    import_claude(memory, tmp_path)
    assert_as_one_import(memory, tmp_path)


def test_agent_whose_last_rows_are_out_of_time_order_when_read_agrees_with_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    """Both files caught mid-write (the spotter a2898e3 case cut at 16:02:51.740): the
    session's file ends at 4, stopping the agent with it; the agent's file goes on with a
    row stamped 6 and ends with one stamped 5. It acts again no later than its own stop."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(4)
    s.answer(6, agent=AGENT)
    s.answer(5, agent=AGENT)
    import_claude(memory, tmp_path)
    s.answer(8, agent=AGENT)
    s.result(9, "toolu_A", AGENT)
    s.answer(10)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=at(4)))[AGENT].status == "live"
    assert_as_one_import(memory, tmp_path)


def test_resumed_session_copying_its_old_rows_stops_again_at_the_copy_of_its_last_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.answer(3)
    first = s.main.read_bytes()
    import_claude(memory, tmp_path)
    s.write(s.main, first)  # a resume that copies the old rows (same uuids, same times)
    import_claude(memory, tmp_path)
    assert_as_one_import(memory, tmp_path)


def test_session_cleared_after_an_import_goes_on_from_its_old_last_row_to_the_clear(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.answer(3)
    s.tail()
    import_claude(memory, tmp_path)  # the file ends at second 3: the session stops there
    clear(s, 5)  # the next session's rows, appended to the same file
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=at(4)))[SESSION].status == "live"
    assert_as_one_import(memory, tmp_path, roots=(SESSION, OTHER))


# -- 2.0.x subagents written inline, with no id of their own ----------------------------------


def inline_child_at_work(folder: Path) -> Session:
    """A 2.0.13 session whose root spawned a subagent (call toolu_A) at 2, which writes its
    rows in the session's own file from 3 on, with no id of its own."""
    s = Session(folder)
    s.row(1, "user", message={"role": "user", "content": "hi"}, version="2.0.13")
    s.spawn(2, "toolu_A")
    s.row(3, "user", message={"role": "user", "content": "do it"}, isSidechain=True)
    return s


def inline_child_done(s: Session) -> None:
    """The inline child answers at 5; its result (no ``agentId`` in 2.0.x) comes at 7."""
    text = {"role": "assistant", "content": [{"type": "text", "text": "fine"}]}
    s.row(5, "assistant", message=text, isSidechain=True)
    block = {"type": "tool_result", "tool_use_id": "toolu_A", "content": "fine"}
    result = {"role": "user", "content": [block]}
    s.row(7, "user", message=result, toolUseResult={"status": "completed", "prompt": "do it"})
    s.answer(9)


def test_inline_child_running_when_an_import_read_its_file_goes_on_to_its_result(
    tmp_path: Path, memory: Engine
) -> None:
    s = inline_child_at_work(tmp_path)
    import_claude(memory, tmp_path)  # the file ends at the child's first row: both stop there
    inline_child_done(s)
    import_claude(memory, tmp_path)
    child = members(memory)["toolu_A"]  # pending for good: listed under its spawn key
    assert members(memory.as_of(time=at(4)))["toolu_A"].status == "live"
    assert str(child.stopped_at)[11:19] == "08:00:07"
    assert_as_one_import(memory, tmp_path)


# -- a row stamped before the stop it takes back -----------------------------------------------


def test_child_stopped_with_its_root_goes_on_when_the_next_row_is_stamped_before_the_stop(
    tmp_path: Path, memory: Engine
) -> None:
    """The session file ends at 3 (its root and its background AGENT stop there); it goes on
    with a row stamped 2.5 (as attachments are stamped before what they follow), then more.
    AGENT ran on until its notice at 8, as one import of the finished file has it."""
    s = background_child_then_waiting(tmp_path)
    import_claude(memory, tmp_path)
    content = {"role": "user", "content": "see attached"}
    s.row(None, "user", message=content, timestamp="2026-09-03T08:00:02.500Z")
    s.answer(5)
    s.notice(8, AGENT)
    s.answer(9)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=at(6)))[AGENT].status == "live"
    assert_as_one_import(memory, tmp_path)


def test_agent_whose_file_goes_on_with_a_row_stamped_before_its_stop_is_stopped_by_its_result(
    tmp_path: Path, memory: Engine
) -> None:
    """AGENT's file ends at 6 (it stops there); it goes on with a row stamped 5.5, its
    parent's result stops it at 7, and it writes again at 8: stopped from 7 to 8, as one
    import of the finished files has it."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    import_claude(memory, tmp_path)
    text = {"role": "assistant", "content": [{"type": "text", "text": "more"}]}
    s.row(None, "assistant", AGENT, message=text, timestamp="2026-09-03T08:00:05.500Z")
    s.result(7, "toolu_A", AGENT)
    s.answer(8, agent=AGENT)
    s.answer(10)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=at(7)))[AGENT].status == "stopped"
    assert_as_one_import(memory, tmp_path)


# -- an import split in steps ends as one import, at every instant -----------------------------


def test_flat_agent_file_empty_at_the_first_import_starts_its_agent_at_its_first_row(
    tmp_path: Path, memory: Engine
) -> None:
    """2.0.x layout: ``agent-<id>.jsonl`` beside the session file, which names the session
    only in its rows. Empty at the first import, it is no session's yet: the result naming
    its agent waits for its first row rather than starting the agent at its call."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_F", version="2.0.50")
    s.result(30, "toolu_F", "abcd1234")
    s.answer(31)
    flat = s.project / "agent-abcd1234.jsonl"
    flat.touch()
    import_claude(memory, tmp_path)
    s.agent_path = lambda agent: flat  # type: ignore[method-assign]
    s.prompt(3, "do it", agent="abcd1234")
    s.answer(29, agent="abcd1234")
    import_claude(memory, tmp_path)
    assert "abcd1234" not in snapshot(memory, [SESSION], at(2))
    assert_as_one_import_at_every_instant(memory, tmp_path)


def test_agent_whose_first_row_was_read_before_its_call_has_its_calls_type_from_its_start(
    tmp_path: Path, memory: Engine
) -> None:
    """The first import caught AGENT's first row (at 3) but not the call that spawned it,
    written a moment before: AGENT is the call's ``Explore`` agent from its start all the
    same, as one import of the finished files has it."""
    s = Session(tmp_path)
    s.prompt(1)
    s.prompt(3, "do it", agent=AGENT)
    import_claude(memory, tmp_path)
    s.spawn(2, "toolu_A")
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    import_claude(memory, tmp_path)
    assert snapshot(memory, [SESSION], at(4))[AGENT][3] == "Explore"
    assert_as_one_import_at_every_instant(memory, tmp_path)


def out_of_order(folder: Path) -> tuple[Path, bytes]:
    """A session file whose last rows are stamped before the row ahead of them (9 and 8.5
    after 9.5): its content and the length of its rows up to the one stamped 9.5."""
    s = Session(folder)
    s.prompt(1)
    s.answer(9)
    s.prompt(10)
    data = s.main.read_bytes()
    s.main.write_bytes(data.replace(iso(10).encode(), b"2026-09-03T08:00:09.500Z"))
    s.row(None, "user", message={"role": "user", "content": "a"}, timestamp=iso(9))
    s.row(None, "user", message={"role": "user", "content": "b"}, timestamp=iso(8))
    return s.main, s.main.read_bytes()[: len(data)]


def test_a_file_stops_at_its_last_row_though_an_earlier_row_is_stamped_later(
    tmp_path: Path, memory: Engine
) -> None:
    """The issue: stops come from the last rows (here the one stamped 8), not the latest
    time a row carries."""
    out_of_order(tmp_path)
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[SESSION].stopped_at) == at(8)


def test_a_file_cut_after_a_row_stamped_later_than_the_rows_after_it_stops_as_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    main, head = out_of_order(tmp_path)
    whole = main.read_bytes()
    main.write_bytes(head)  # the first import stops the root at 9.5, where the file ended
    import_claude(memory, tmp_path)
    main.write_bytes(whole)
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[SESSION].stopped_at) == at(8)
    assert_as_one_import_at_every_instant(memory, tmp_path)


def test_agent_file_that_goes_on_keeps_its_own_stop_before_its_parents_result(
    tmp_path: Path, memory: Engine
) -> None:
    """The first import caught AGENT's file at 4, then its parent's result at 7; its file
    goes on to 6. AGENT stopped at 6, its own last row: the result says it was done by 7,
    not that it ran until then."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(4, agent=AGENT)
    path = s.agent_path(AGENT)
    head = path.read_bytes()
    s.answer(6, agent=AGENT)
    whole = path.read_bytes()
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    path.write_bytes(head)
    import_claude(memory, tmp_path)
    path.write_bytes(whole)
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[AGENT].stopped_at) == at(6)
    assert_as_one_import_at_every_instant(memory, tmp_path)


def test_agent_file_that_goes_on_before_its_session_file_does_keeps_its_own_stop(
    tmp_path: Path, memory: Engine
) -> None:
    """The first import caught AGENT's file at 4 and the session's at 7; AGENT's file goes
    on to 6 (before the session's end), then the session's file goes on. AGENT stopped at 6,
    its own last row: the session's end at 7 did not stop it with the root."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(4, agent=AGENT)
    s.answer(7)
    path, main = s.agent_path(AGENT), s.main.read_bytes()
    head = path.read_bytes()
    s.answer(6, agent=AGENT)
    whole = path.read_bytes()
    path.write_bytes(head)
    import_claude(memory, tmp_path)
    path.write_bytes(whole)
    import_claude(memory, tmp_path)
    s.result(8, "toolu_A", AGENT)
    s.answer(9)
    assert s.main.read_bytes().startswith(main)
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[AGENT].stopped_at) == at(6)
    assert_as_one_import_at_every_instant(memory, tmp_path)


def test_result_waits_for_its_agents_first_row_while_that_row_is_still_being_written(
    tmp_path: Path, memory: Engine
) -> None:
    """Two imports caught AGENT's file with its first row half written (longer the second
    time), after its parent's result: AGENT starts at its first row (3) all the same, not at
    the result (7)."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    path = s.agent_path(AGENT)
    whole = path.read_bytes()
    first = whole.index(b"\n")
    for cut in (first // 3, 2 * first // 3):
        path.write_bytes(whole[:cut])
        import_claude(memory, tmp_path)
    path.write_bytes(whole)
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[AGENT].started_at) == at(3)
    assert_as_one_import_at_every_instant(memory, tmp_path)


# -- an import of unchanged files journals nothing ---------------------------------------------


def test_import_of_unchanged_files_releases_nothing_held_for_an_agents_torn_first_row(
    tmp_path: Path, memory: Engine
) -> None:
    """AGENT's file has half its first row, after its parent's result: what the first import
    held back for that row waits for a change in the files, not for the next import."""
    s = two_agents(tmp_path)
    path = s.agent_path(AGENT)
    whole = path.read_bytes()
    path.write_bytes(whole[: whole.index(b"\n") // 2])
    import_claude(memory, tmp_path)
    before = memory.position()
    import_claude(memory, tmp_path)
    assert memory.position() == before
    path.write_bytes(whole)
    import_claude(memory, tmp_path)
    assert_as_one_import_at_every_instant(memory, tmp_path)


def test_import_of_unchanged_files_reads_no_agent_file_held_for_a_session_file_with_no_row(
    tmp_path: Path, memory: Engine
) -> None:
    """The session file has half its first row: its agents' files wait for a change in the
    files, not for the next import (which journals nothing, not even its ledger)."""
    s = two_agents(tmp_path)
    whole = s.main.read_bytes()
    s.main.write_bytes(whole[: whole.index(b"\n") // 2])
    import_claude(memory, tmp_path)
    before = memory.position()
    import_claude(memory, tmp_path)
    assert memory.position() == before
    s.main.write_bytes(whole)
    import_claude(memory, tmp_path)
    assert_as_one_import_at_every_instant(memory, tmp_path)


# -- the corpus ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "roots"),
    [
        (
            "irrlicht_1-5-session-clear_v2.1.142",
            ("4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c", "fd023a54-8d3f-441b-bb58-6319f2fc51f0"),
        ),
        ("agentlogs_inline-sidechain_v2.0.13", ("609efeca-2f51-4118-b077-e91c9fe63f73",)),
    ],
)
def test_corpus_session_imported_at_each_of_its_lines_agrees_with_one_import(
    corpus: Path, tmp_path: Path, case: str, roots: Roots
) -> None:
    """The session file read up to each of its lines, then whole: at every moment of the
    journal, the history one import of the whole file gives."""
    (source,) = (corpus / "claude" / case).glob("*.jsonl")
    lines = source.read_bytes().splitlines(keepends=True)
    once = one_import(source.parent)
    times = sorted({datetime.fromisoformat(e.timestamp) for e in once.journal()})
    times += [time - timedelta(microseconds=1) for time in times]
    expected = (answers(once, roots), moments(once, sorted(times), roots))
    for cut in range(len(lines)):
        folder = tmp_path / str(cut)
        copy = folder / "p" / source.name
        copy.parent.mkdir(parents=True)
        copy.write_bytes(b"".join(lines[:cut]))
        engine = open_engine("memory://")
        import_claude(engine, folder)
        shutil.copy(source, copy)
        import_claude(engine, folder)
        assert (answers(engine, roots), moments(engine, sorted(times), roots)) == expected, cut


def test_corpus_background_session_imported_while_it_waits_is_live_between(
    corpus: Path, tmp_path: Path, memory: Engine
) -> None:
    case = corpus / "claude" / "irrlicht_3-2-background-killed_v2.1.156"
    (source,) = case.glob("*.jsonl")
    copy = tmp_path / "p" / source.name
    copy.parent.mkdir()
    copy.write_bytes(b"".join(source.read_bytes().splitlines(keepends=True)[:22]))
    import_claude(memory, tmp_path)
    shutil.copy(source, copy)
    import_claude(memory, tmp_path)
    root = "79322395-6d9a-49b4-82af-08898027aa0e"
    view = memory.as_of(time=at(0).replace(2026, 5, 29, 17, 49, 30))
    assert [m.status for m in view.family(root)] == ["live"] * 4
    once = one_import(tmp_path)
    assert [(m.conversation, m.stopped_at) for m in memory.family(root)] == [
        (m.conversation, m.stopped_at) for m in once.family(root)
    ]
