"""``lineage import claude``: a root known only from its agents' files.

A root whose session file is gone (Claude Code's cleanup leaves ``<session>/subagents/``
behind) or not there yet is timed by its agents' rows alone: it stops at the last of them,
goes on when they do or when its session file turns up, and ``--reconcile`` deletes it
(``gc``) once no file of it remains.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lineage_es.engine.engine import Engine
from lineage_es.hosts.base import parse_time
from lineage_es.importers import import_claude
from tests.support.claude_projects import AGENT, CHILD, SESSION, at, members
from tests.support.growing import (
    assert_as_one_import_at_every_instant,
    snapshot,
    stashed,
    two_agents,
)


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
    assert_as_one_import_at_every_instant(memory, tmp_path)


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
    assert_as_one_import_at_every_instant(memory, tmp_path)


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
    assert_as_one_import_at_every_instant(memory, tmp_path)


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
    assert_as_one_import_at_every_instant(memory, tmp_path)
