"""What the import's walk of a history folder (Codex's or Claude Code's) cannot read is
counted, never waited on, and never taken for a file gone from disk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import Engine
from lineage_es.importers import import_codex, walk
from lineage_es.importers.walk import NOT_REGULAR, UNREADABLE_FOLDER
from tests.support.claude_projects import SESSION, members, one_child, run
from tests.support.codex_sessions import CHILD, PARENT, family, message, parent_spawning, rollout

FOLDER = "2026/09/03"


def unlistable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Listing ``folder`` fails as an unreadable one does (the tests run as root)."""
    real = os.scandir

    def scandir(path: Any) -> Iterator[os.DirEntry[str]]:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr("lineage_es.importers.walk.os.scandir", scandir)


def test_unreadable_folder_is_counted_as_skipped(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent_spawning(tmp_path)
    unlistable(monkeypatch, tmp_path / FOLDER)
    report = import_codex(memory, tmp_path)
    assert report.skipped == {walk.UNREADABLE_FOLDER: 1}
    assert report.unlisted == {FOLDER}


def test_files_of_a_folder_turned_unreadable_are_not_gone_so_reconcile_keeps_them(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent_spawning(tmp_path)
    import_codex(memory, tmp_path)
    unlistable(monkeypatch, tmp_path / FOLDER)
    report = import_codex(memory, tmp_path, reconcile_gone=True)
    assert (report.gone, report.deleted) == (0, [])
    assert set(family(memory)) == {PARENT, CHILD}


def test_unreadable_history_folder_itself_loses_nothing_to_reconcile(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent_spawning(tmp_path)
    import_codex(memory, tmp_path)
    unlistable(monkeypatch, tmp_path)
    report = import_codex(memory, tmp_path, reconcile_gone=True)
    assert (report.files, report.gone, report.deleted) == (0, 0, [])
    assert PARENT in family(memory)


def test_dangling_symbolic_link_is_counted_as_skipped(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    (tmp_path / FOLDER / f"rollout-x-{CHILD}.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    report = import_codex(memory, tmp_path)
    assert report.skipped == {walk.DANGLING_LINK: 1}
    assert report.files == report.read == 1


def test_symbolic_link_to_a_rollout_is_read(tmp_path: Path, memory: Engine) -> None:
    target = rollout(tmp_path / "elsewhere", CHILD, message(5))
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / target.name).symlink_to(target)
    report = import_codex(memory, tmp_path / "link")
    assert (report.files, report.read, report.skipped) == (1, 1, {})


def test_fifo_named_like_a_rollout_is_counted_and_never_opened(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    os.mkfifo(tmp_path / FOLDER / f"rollout-x-{CHILD}.jsonl")  # opening it would block
    report = import_codex(memory, tmp_path)
    assert report.skipped == {walk.NOT_REGULAR: 1}
    assert report.files == report.read == 1


def test_skipped_entries_are_in_the_summary(tmp_path: Path, memory: Engine) -> None:
    parent_spawning(tmp_path)
    os.mkfifo(tmp_path / FOLDER / f"rollout-x-{CHILD}.jsonl")
    summary = import_codex(memory, tmp_path).summary()
    assert f"skipped 1: {walk.NOT_REGULAR}" in summary


# -- Claude Code's projects folder -------------------------------------------------------------


def test_fifo_named_like_a_session_is_counted_and_never_opened(
    tmp_path: Path, memory: Engine
) -> None:
    session = one_child(tmp_path)
    os.mkfifo(session.project / "0f0f0f0f-0000-4000-8000-000000000002.jsonl")  # would block
    report = run(memory, tmp_path)
    assert report.skipped == {NOT_REGULAR: 1}
    assert SESSION in members(memory)


def test_session_in_a_folder_that_cannot_be_listed_is_not_taken_for_gone(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = one_child(tmp_path)
    run(memory, tmp_path)
    real = os.scandir

    def scandir(path: Any) -> Iterator[os.DirEntry[str]]:
        if Path(path) == session.project:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr("lineage_es.importers.walk.os.scandir", scandir)
    report = run(memory, tmp_path, reconcile_gone=True)
    assert (report.skipped, report.gone, report.deleted) == ({UNREADABLE_FOLDER: 1}, 0, [])
    assert members(memory)[SESSION].status != "deleted"
