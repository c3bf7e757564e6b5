"""`lineage demo`: the demo recordings go into a store of their own, named and printed, never
into the person's journal; it says how to look at it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import lineage_es
from lineage_es.cli.demo import DEMO_FILE, find_replays
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


@pytest.fixture(autouse=True)
def person(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A person's data dir (where their own journal lives) and a working folder."""
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return data


def run(*args: str) -> Result:
    return CliRunner().invoke(main, ["demo", *args])


def test_the_demo_goes_into_its_own_store_in_the_current_folder(person: Path) -> None:
    result = run()
    assert result.exit_code == 0, result.stderr
    store = f"sqlite:///{Path.cwd() / DEMO_FILE}"
    assert f"demo store: {store}" in result.stdout
    with open_engine(store, create=False) as engine:
        assert engine.forest(include_stopped=True)
    assert not (person / "lineage-es").exists()  # the person's own journal: untouched


def test_it_says_how_to_look_at_the_demo_store() -> None:
    result = run()
    store = f"sqlite:///{Path.cwd() / DEMO_FILE}"
    assert f"lineage tree --all --store {store}" in result.stdout
    assert f"lineage serve --store {store}" in result.stdout
    shown = CliRunner().invoke(main, ["tree", "--all", "--store", store])
    assert shown.exit_code == 0 and "claude" in shown.stdout and "cursor" in shown.stdout


def test_lineage_store_set_in_the_environment_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine = tmp_path / "mine.sqlite"
    monkeypatch.setenv("LINEAGE_STORE", f"sqlite:///{mine}")
    assert run().exit_code == 0
    assert not mine.exists() and (Path.cwd() / DEMO_FILE).exists()


def test_another_store_can_be_named(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'elsewhere.sqlite'}"
    result = run("--store", store)
    assert result.exit_code == 0 and f"demo store: {store}" in result.stdout
    assert not (Path.cwd() / DEMO_FILE).exists()


def test_running_it_again_adds_nothing() -> None:
    run()
    store = f"sqlite:///{Path.cwd() / DEMO_FILE}"
    with open_engine(store) as engine:
        before = engine.position()
    assert run().exit_code == 0
    with open_engine(store) as engine:
        assert engine.position() == before


@pytest.mark.parametrize("which", ["default", "environment"])
def test_the_persons_own_journal_is_refused(
    which: str, person: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = person / "lineage-es" / "journal.sqlite"
    if which == "environment":
        own = tmp_path / "team.sqlite"
        monkeypatch.setenv("LINEAGE_STORE", f"sqlite:///{own}")
    result = run("--store", f"sqlite:///{own}")
    assert result.exit_code == 2 and "is your own journal" in result.stderr
    assert not own.exists()


def test_a_store_that_keeps_nothing_is_refused() -> None:
    result = run("--store", "memory://")
    assert result.exit_code == 2 and "keeps nothing" in result.stderr


def test_the_recordings_are_found_in_the_current_folder_of_a_tool_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Installed from a clone (not editable), the package is elsewhere: the clone has them."""
    site = tmp_path / "site-packages" / "lineage_es"
    site.mkdir(parents=True)
    monkeypatch.setattr(lineage_es, "__file__", str(site / "__init__.py"))
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "replays").symlink_to(REPLAYS)
    assert find_replays(clone) == clone / "replays"


def test_without_recordings_it_says_where_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages" / "lineage_es"
    site.mkdir(parents=True)
    monkeypatch.setattr(lineage_es, "__file__", str(site / "__init__.py"))
    result = run()
    assert result.exit_code == 2
    assert "replays/ folder of a clone of lineage-es" in result.stderr
    assert "--replays PATH" in result.stderr and not (Path.cwd() / DEMO_FILE).exists()
