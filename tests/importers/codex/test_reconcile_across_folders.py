"""``--reconcile`` of one history folder deletes a conversation only when no file holding it
is left on disk in any folder imported for the host: Codex archives a thread by moving its
rollout from ``~/.codex/sessions`` to ``~/.codex/archived_sessions``, both imported."""

from __future__ import annotations

import shutil
from pathlib import Path

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import import_codex
from tests.support.codex_sessions import PARENT, event, family, message, meta, rollout


def folders(base: Path) -> tuple[Path, Path]:
    sessions, archived = base / "sessions", base / "archived_sessions"
    sessions.mkdir()
    archived.mkdir()
    return sessions, archived


def finished_thread(sessions: Path) -> Path:
    return rollout(sessions, PARENT, meta(0, PARENT), message(1), event(10, "task_complete"))


def archive(path: Path, archived: Path) -> Path:
    """What ``codex`` does to a finished thread: its rollout moves, flat, to the archive."""
    return Path(shutil.move(str(path), str(archived / path.name)))


def test_thread_archived_and_imported_from_the_archive_survives_reconcile(
    tmp_path: Path, engine: Engine
) -> None:
    sessions, archived = folders(tmp_path)
    path = finished_thread(sessions)
    import_codex(engine, sessions, reconcile_gone=True)
    import_codex(engine, archived)
    archive(path, archived)
    import_codex(engine, archived)
    report = import_codex(engine, sessions, reconcile_gone=True)
    assert (report.deleted, report.kept) == ([], [PARENT])
    assert PARENT in family(engine)


def test_archived_thread_is_deleted_once_its_archived_file_is_gone_too(
    tmp_path: Path, memory: Engine
) -> None:
    sessions, archived = folders(tmp_path)
    path = finished_thread(sessions)
    import_codex(memory, sessions)
    moved = archive(path, archived)
    import_codex(memory, archived)
    import_codex(memory, sessions, reconcile_gone=True)
    moved.unlink()
    report = import_codex(memory, archived, reconcile_gone=True)
    assert report.deleted == [PARENT]


def test_file_an_other_folders_ledger_lists_but_gone_from_disk_holds_nothing(
    tmp_path: Path, memory: Engine
) -> None:
    sessions, archived = folders(tmp_path)
    archived_copy = archived / "rollout-2026-09-03T10-00-00-copy.jsonl"
    path = finished_thread(sessions)
    shutil.copy(path, archived_copy)
    import_codex(memory, sessions)
    import_codex(memory, archived)
    archived_copy.unlink()  # the archive is not imported again: its ledger still lists it
    path.unlink()
    report = import_codex(memory, sessions, reconcile_gone=True)
    assert report.deleted == [PARENT]


def test_archived_thread_survives_reconcile_on_a_journal_reopened(tmp_path: Path) -> None:
    sessions, archived = folders(tmp_path)
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    path = finished_thread(sessions)
    with open_engine(store) as engine:
        import_codex(engine, sessions)
        archive(path, archived)
        import_codex(engine, archived)
    with open_engine(store) as engine:
        report = import_codex(engine, sessions, reconcile_gone=True)
        assert (report.deleted, PARENT in family(engine)) == ([], True)


def test_thread_moved_to_an_imported_folder_not_read_since_is_kept(
    tmp_path: Path, memory: Engine
) -> None:
    sessions, archived = folders(tmp_path)
    path = finished_thread(sessions)
    import_codex(memory, sessions)
    import_codex(memory, archived)
    archive(path, archived)
    report = import_codex(memory, sessions, reconcile_gone=True)
    assert (report.deleted, report.kept) == ([], [PARENT])


def test_thread_archived_before_the_archive_was_ever_imported_survives_reconcile(
    tmp_path: Path, memory: Engine
) -> None:
    sessions, archived = folders(tmp_path)
    path = finished_thread(sessions)
    import_codex(memory, sessions)
    archive(path, archived)
    report = import_codex(memory, sessions, reconcile_gone=True)
    assert (report.deleted, report.kept) == ([], [PARENT])


def test_thread_deleted_not_archived_is_reconciled_though_an_archive_lies_beside(
    tmp_path: Path, memory: Engine
) -> None:
    sessions, _ = folders(tmp_path)
    path = finished_thread(sessions)
    import_codex(memory, sessions)
    path.unlink()
    report = import_codex(memory, sessions, reconcile_gone=True)
    assert report.deleted == [PARENT]
