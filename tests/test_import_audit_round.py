"""``lineage import claude``: a root known only from its agents' files, and imports split in
steps that end where one import of the finished files does.

A root whose session file is gone (Claude Code's cleanup leaves ``<session>/subagents/``
behind) or not there yet is timed by its agents' rows alone: it stops at the last of them,
goes on when they do or when its session file turns up, and ``--reconcile`` deletes it
(``gc``) once no file of it remains. An import split in steps, wherever it cuts the files,
ends with the tree and the time-travel answers of one import, subagent types included.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import UnknownConversation
from lineage_es.hosts.base import parse_time
from lineage_es.importers import import_claude
from tests.test_import_claude import AGENT, CHILD, SESSION, Session, at, iso, members

# -- comparing with one import ---------------------------------------------------------------


def one_import(folder: Path) -> Engine:
    """The files as they are now, imported once."""
    engine = open_engine("memory://")
    import_claude(engine, folder)
    return engine


def instants(engine: Engine) -> list[datetime]:
    """Every time an event of ``engine``'s journal carries, and the instant before it."""
    found: set[datetime] = set()
    for event in engine.journal():
        when = parse_time(event.timestamp)
        if when is not None and "Ledger" not in event.topic:
            found |= {when, when - timedelta(microseconds=1)}
    return sorted(found)


def snapshot(engine: Engine, roots: Iterable[str], time: datetime | None) -> dict[str, Any]:
    """Each member's status, place, type, start and stop, now or back at ``time``."""
    view = engine if time is None else engine.as_of(time=time)
    found: dict[str, Any] = {}
    for root in roots:
        try:
            family = view.family(root)
        except UnknownConversation:
            continue
        for m in family:
            kind = m.subagent.type if m.subagent else None
            stop = m.stopped_at
            found[m.conversation] = (m.status, m.parent, m.resolution, kind, m.started_at, stop)
    return found


def assert_as_one_import(engine: Engine, folder: Path, roots: Iterable[str] = (SESSION,)) -> None:
    """``engine`` answers as one import of ``folder`` does: now, and at every instant."""
    once = one_import(folder)
    roots = tuple(roots)
    assert snapshot(engine, roots, None) == snapshot(once, roots, None)
    for time in instants(once):
        assert snapshot(engine, roots, time) == snapshot(once, roots, time), time


def two_agents(folder: Path) -> Session:
    """A session whose root spawns AGENT (running 3 to 6) and CHILD (4 to 8); the results
    come at 7 and 9, the root's last row at 10."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.spawn(3, "toolu_B", prompt="look")
    s.prompt(4, "look", agent=CHILD)
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(8, agent=CHILD)
    s.result(9, "toolu_B", CHILD)
    s.answer(10)
    return s


def stashed(path: Path) -> Path:
    """``path`` moved out of the history folder (to be put back later)."""
    aside = path.parent.parent.parent / f"{path.name}.aside"
    path.rename(aside)
    return aside


# -- D1: a root known only from its agents' files ---------------------------------------------


def test_root_known_only_from_its_agent_files_stops_at_their_last_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = two_agents(tmp_path)
    s.main.unlink()  # as Claude Code's cleanup does, leaving subagents/ behind
    import_claude(memory, tmp_path)
    root = members(memory)[SESSION]
    assert (root.status, parse_time(root.stopped_at)) == ("stopped", at(8))


def test_root_known_only_from_its_agent_files_goes_on_while_they_grow(
    tmp_path: Path, memory: Engine
) -> None:
    s = two_agents(tmp_path)
    s.main.unlink()
    child = s.agent_path(CHILD)
    rows = child.read_bytes().splitlines(keepends=True)
    child.write_bytes(rows[0])  # CHILD had written its first row only (at 4)
    import_claude(memory, tmp_path)
    child.write_bytes(b"".join(rows))
    import_claude(memory, tmp_path)
    assert snapshot(memory, [SESSION], at(5))[SESSION][0] == "live"
    assert parse_time(members(memory)[SESSION].stopped_at) == at(8)
    assert_as_one_import(memory, tmp_path)


def test_agent_stopped_before_such_a_root_keeps_its_own_stop_when_their_files_grow(
    tmp_path: Path, memory: Engine
) -> None:
    """The first import caught AGENT's file at 3 and CHILD's at 4 (the root stopped there);
    both go on, to 6 and 8, then CHILD's to 9. AGENT stopped at 6, its own last row, not
    with the root."""
    s = two_agents(tmp_path)
    s.main.unlink()
    paths = [s.agent_path(AGENT), s.agent_path(CHILD)]
    whole = [path.read_bytes() for path in paths]
    for path, data in zip(paths, whole, strict=True):
        path.write_bytes(data.splitlines(keepends=True)[0])
    import_claude(memory, tmp_path)
    for path, data in zip(paths, whole, strict=True):
        path.write_bytes(data)
    import_claude(memory, tmp_path)
    s.answer(9, agent=CHILD)
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[AGENT].stopped_at) == at(6)
    assert_as_one_import(memory, tmp_path)


def test_session_file_found_after_its_agent_files_ends_as_one_import_of_all_files(
    tmp_path: Path, memory: Engine
) -> None:
    """The agents' files were imported first (their end stopped the root, and their calls
    were not known); the session file's rows take over from there."""
    s = two_agents(tmp_path)
    aside = stashed(s.main)
    import_claude(memory, tmp_path)
    aside.rename(s.main)
    import_claude(memory, tmp_path)
    assert_as_one_import(memory, tmp_path)


def test_reconcile_deletes_a_root_known_only_from_its_agent_files_once_they_are_gone(
    tmp_path: Path, memory: Engine
) -> None:
    s = two_agents(tmp_path)
    s.main.unlink()
    import_claude(memory, tmp_path)
    shutil.rmtree(s.main.with_suffix(""))
    report = import_claude(memory, tmp_path, reconcile_gone=True)
    reasons = {
        e.state["conversation"]: e.state["reason"]
        for e in memory.journal()
        if e.topic.endswith(".Deleted")
    }
    assert reasons == {SESSION: "gc", AGENT: "gc", CHILD: "gc"}
    assert SESSION in report.deleted
    assert members(memory) == {}


def test_reconcile_keeps_a_root_known_only_from_its_agent_files_while_one_remains(
    tmp_path: Path, memory: Engine
) -> None:
    s = two_agents(tmp_path)
    s.main.unlink()
    import_claude(memory, tmp_path)
    s.agent_path(AGENT).unlink()
    import_claude(memory, tmp_path, reconcile_gone=True)
    assert set(members(memory)) == {SESSION, CHILD}


def test_reconcile_keeps_a_root_whose_session_file_is_on_disk_with_no_row_yet(
    tmp_path: Path, memory: Engine
) -> None:
    """The session file's first row is still being written when its agents' files go: the
    file on disk holds its root, which its rows take on when they come."""
    s = two_agents(tmp_path)
    whole = s.main.read_bytes()
    s.main.write_bytes(whole[:50])
    import_claude(memory, tmp_path)
    import_claude(memory, tmp_path)
    shutil.rmtree(s.main.with_suffix(""))
    report = import_claude(memory, tmp_path, reconcile_gone=True)
    assert SESSION not in report.deleted
    s.main.write_bytes(whole)
    import_claude(memory, tmp_path)
    assert members(memory)[SESSION].status != "deleted"


def test_reconcile_takes_the_agents_with_a_session_whose_restored_file_is_gone_again(
    tmp_path: Path, memory: Engine
) -> None:
    """Once the session's own file has spoken for the root, it alone holds it (as for any
    session: Claude Code's cleanup leaves subagents/ behind)."""
    s = two_agents(tmp_path)
    aside = stashed(s.main)
    import_claude(memory, tmp_path)
    aside.rename(s.main)
    import_claude(memory, tmp_path)
    s.main.unlink()
    import_claude(memory, tmp_path, reconcile_gone=True)
    assert members(memory) == {}


def test_corpus_root_published_without_its_session_file_is_not_live_for_ever(
    corpus: Path, memory: Engine
) -> None:
    """phoenix publishes one agent's file and sidecar, not its session's file."""
    (case,) = (corpus / "claude").glob("phoenix_*")
    import_claude(memory, case)
    (root,) = [m for m in memory.forest(include_stopped=True) if m.conversation.startswith("0")]
    assert root.status == "stopped"


# -- D2: an import split in steps ends as one import ------------------------------------------


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
    assert_as_one_import(memory, tmp_path)


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
    assert_as_one_import(memory, tmp_path)


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
    assert_as_one_import(memory, tmp_path)


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
    assert_as_one_import(memory, tmp_path)


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
    assert_as_one_import(memory, tmp_path)


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
    assert_as_one_import(memory, tmp_path)


# -- an import of unchanged files journals nothing ------------------------------------------


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
    assert_as_one_import(memory, tmp_path)


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
    assert_as_one_import(memory, tmp_path)


def test_root_known_only_from_its_agent_files_starts_at_an_earlier_agent_file_found_later(
    tmp_path: Path, memory: Engine
) -> None:
    """The first import found CHILD's file alone (the root started at its first row, 4);
    AGENT's file, found by the next, starts at 3: the root starts there, as in one import."""
    s = two_agents(tmp_path)
    s.main.unlink()
    aside = stashed(s.agent_path(AGENT))
    import_claude(memory, tmp_path)
    aside.rename(s.agent_path(AGENT))
    import_claude(memory, tmp_path)
    assert parse_time(members(memory)[SESSION].started_at) == at(3)
    assert_as_one_import(memory, tmp_path)
