"""Every folder the engine creates is 0700 and every file 0600, whatever the umask: the
journal, hook.log, recordings, exports and the hooks' configs name every project a person
works on, and recordings hold prompts."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es import hook
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.hook_config import install

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o277], ids=["umask-000", "umask-277"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The process's umask set to one that grants everyone everything (000), or to one that
    takes the owner's own write and execute bits (277), for the test's length."""
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A state dir not made yet, two folders down: where hook.log goes."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg" / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg" / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "xdg" / "state" / "lineage"


def test_a_new_store_and_every_folder_above_it_are_private(umask: int, tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "journal.sqlite"
    with open_engine(f"sqlite:///{path}") as engine:
        engine.observe("claude", START)
        created = sorted(path.parent.glob("journal.sqlite*"))
        assert [mode(p) for p in created] == [0o600] * len(created) and len(created) >= 2
    assert (mode(tmp_path / "a"), mode(tmp_path / "a" / "b")) == (0o700, 0o700)


def test_an_export_to_a_new_file_is_private(umask: int, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(store) as engine:
        engine.observe("claude", START)
    out = tmp_path / "export.jsonl"
    result = CliRunner().invoke(main, ["journal", "export", "-o", str(out), "--store", store])
    assert result.exit_code == 0, result.output
    assert mode(out) == 0o600 and out.read_bytes().count(b"\n") > 1


def test_an_export_over_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(store) as engine:
        engine.observe("claude", START)
    out = tmp_path / "export.jsonl"
    out.write_bytes(b"old contents, longer than nothing at all\n" * 1000)
    out.chmod(0o640)
    result = CliRunner().invoke(main, ["journal", "export", "-o", str(out), "--store", store])
    assert result.exit_code == 0, result.output
    assert mode(out) == 0o640 and b"old contents" not in out.read_bytes()


def test_the_hook_log_and_its_folders_are_private(umask: int, data_home: Path) -> None:
    hook.log_error("claude", "a failure")
    log = data_home / "hook.log"
    assert mode(log) == 0o600
    assert [mode(data_home), mode(data_home.parent), mode(data_home.parent.parent)] == [0o700] * 3


def test_a_recording_and_its_new_folders_are_private(
    umask: int, tmp_path: Path, data_home: Path
) -> None:
    recording = tmp_path / "captures" / "today" / "claude.jsonl"
    outcome = hook.run_hook(
        "claude",
        orjson.dumps(START),
        store=f"sqlite:///{tmp_path / 'journal.sqlite'}",
        record=recording,
    )
    assert outcome.error is None
    assert mode(recording) == 0o600
    assert (mode(recording.parent), mode(recording.parent.parent)) == (0o700, 0o700)


def test_a_hook_config_made_by_install_hooks_is_private(umask: int, tmp_path: Path) -> None:
    change = install("claude", "project", cwd=tmp_path / "project")
    made = sorted(change.path.parent.iterdir())
    assert change.path in made and [mode(p) for p in made] == [0o600] * len(made)
    assert mode(change.path.parent) == 0o700 and mode(tmp_path / "project") == 0o700


def test_a_folder_that_exists_already_keeps_its_mode(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    with open_engine(f"sqlite:///{folder / 'journal.sqlite'}") as engine:
        engine.observe("claude", START)
    assert mode(folder) == 0o755 and mode(folder / "journal.sqlite") == 0o600
