"""The command line refuses what would fail later, and says only what the user can act on.

A hook store that cannot work is refused at install time (not logged by every hook later); a
mistyped path is not rebuilt into a new journal; permission advice is given only where it
applies, in one plain line; a reader that stops reading (``| head``) is no error; a folder
that does not exist is named as such.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.errors import StoreError
from lineage_es.hook_config import HookConfigError, hook_command
from lineage_es.replay import cli as replay_cli
from lineage_es.stores import prepare_sqlite_file

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME and data dir of the test's own, and no store or CI set from outside."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in ("LINEAGE_STORE", "CLAUDE_CONFIG_DIR", "CI"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def journal(tmp_path: Path) -> str:
    """A SQLite journal holding one root, private as created."""
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        engine.observe("claude", START)
    return url


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.output


def lineage(*args: str, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """``lineage ARGS`` in a process of its own: real stderr, real pipes, real warnings."""
    command = [sys.executable, "-c", "from lineage_es.launch import main; main()", *args]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, text=True, check=False)


def into_a_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """``lineage ARGS | head -0``, deterministically: no one is left reading stdout."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return lineage(*args, stdout=writer)
    finally:
        os.close(writer)


def words(text: str) -> str:
    return " ".join(text.split())


# 1. install-hooks --store


def test_install_hooks_refuses_a_store_url_it_cannot_parse(home: Path) -> None:
    code, out = run("install-hooks", "claude", "--store", "foo://bar")
    assert code == 2 and "'foo://bar' is not a store URL" in out and "--store" in out
    assert "give sqlite:///PATH or postgresql://" in out and "use memory://" not in out
    assert not (home / ".claude" / "settings.json").exists()


def test_install_hooks_refuses_a_memory_store_which_each_hook_process_would_forget(
    home: Path,
) -> None:
    code, out = run("install-hooks", "claude", "--store", "memory://")
    assert code == 2 and "memory://" in out and "keeps nothing" in out
    assert not (home / ".claude" / "settings.json").exists()


def test_install_hooks_names_what_is_wrong_in_a_sqlite_url_without_a_path(home: Path) -> None:
    code, out = run("install-hooks", "claude", "--store", "sqlite://")
    assert code == 2 and "a SQLite store needs a file path" in out
    assert not (home / ".claude" / "settings.json").exists()


def test_hook_command_refuses_a_memory_store() -> None:
    with pytest.raises(HookConfigError, match="keeps nothing"):
        hook_command("claude", store="memory://")


def test_install_hooks_help_says_a_hook_without_store_reads_lineage_store_when_it_runs() -> None:
    code, out = run("install-hooks", "--help")
    help_text = words(out)
    assert code == 0 and "Default: $LINEAGE_STORE" not in help_text
    assert "the command names no store" in help_text
    assert "$LINEAGE_STORE of the host's environment when the hook runs" in help_text


def test_install_hooks_notes_that_lineage_store_set_here_is_not_written_into_the_hooks(
    home: Path, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'team.sqlite'}"
    code, out = run("install-hooks", "claude", env={"LINEAGE_STORE": store})
    assert code == 0 and "--store" not in (home / ".claude" / "settings.json").read_text()
    assert "$LINEAGE_STORE is set here but not written into the hooks" in words(out)


# 2. journal rebuild


def test_journal_rebuild_refuses_a_store_file_that_does_not_exist_and_creates_none(
    tmp_path: Path,
) -> None:
    typo = tmp_path / "typo.sqlite"
    code, out = run("journal", "rebuild", "--store", f"sqlite:///{typo}")
    assert code == 2 and f"no journal at {typo}" in out and "rebuilt" not in out
    assert not typo.exists()


def test_journal_rebuild_rebuilds_an_existing_store(journal: str) -> None:
    code, out = run("journal", "rebuild", "--store", journal)
    assert code == 0 and "rebuilt the view from 2 events" in out


# 3. the store-permission warning


def test_a_store_readable_by_others_is_warned_about_in_one_plain_line(
    journal: str, tmp_path: Path
) -> None:
    path = tmp_path / "journal.sqlite"
    path.chmod(0o644)
    done = lineage("tree", "--store", journal)
    assert done.returncode == 0
    assert done.stderr == (
        f"warning: store file {path} is readable by other users; run: chmod 600 {path}\n"
    )


def test_a_folder_named_as_the_store_gets_no_chmod_advice(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(StoreError, match="cannot open the store"):
            prepare_sqlite_file(folder, create=False)


def test_a_file_of_another_user_gets_no_chmod_advice(
    journal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "journal.sqlite"
    path.chmod(0o644)
    monkeypatch.setattr(os, "getuid", lambda: path.stat().st_uid + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prepare_sqlite_file(path, create=False)


def test_a_file_that_is_not_a_journal_gets_no_chmod_advice(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database\n")
    path.chmod(0o644)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(StoreError, match="not a SQLite journal"):
            prepare_sqlite_file(path, create=False)


# 4. a reader that stops reading


def test_agents_into_a_closed_pipe_exits_quietly_as_tree_does(journal: str) -> None:
    done = into_a_closed_pipe("agents", "--as", ROOT, "--store", journal)
    assert (done.returncode, done.stderr) == (0, "")


def test_journal_export_into_a_closed_pipe_exits_quietly(journal: str) -> None:
    done = into_a_closed_pipe("journal", "export", "--store", journal)
    assert (done.returncode, done.stderr) == (0, "")


def test_tree_into_a_closed_pipe_exits_quietly(journal: str) -> None:
    done = into_a_closed_pipe("tree", "--store", journal)
    assert (done.returncode, done.stderr) == (0, "")


# 5. lineage-replay --update into a folder that does not exist


def test_replay_update_into_a_missing_folder_names_that_folder_and_is_unusable_input(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "session.jsonl"
    recording.write_text(json.dumps(START) + "\n")
    target = tmp_path / "nodir" / "out.yaml"
    result = CliRunner().invoke(replay_cli.main, [str(recording), "--update", str(target)])
    assert result.exit_code == replay_cli.EXIT_UNUSABLE
    assert f"cannot write {target}: folder {target.parent} does not exist" in result.output
    assert ".out.yaml.tmp" not in result.output
