"""A journal that is not there: commands that only read never create one.

A mistyped ``--store`` path must not answer as an empty journal (and leave a new file
behind); the default journal not existing yet only means nothing has been journaled.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.common import open_store
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.journal import export_journal

READERS = [
    ("tree",),
    ("tree", "--watch"),
    ("show", "X"),
    ("relation", "X", "Y"),
    ("chain", "X"),
    ("provenance", "X", "Y"),
    ("family", "X"),
    ("agents", "--as", "X"),
    ("journal", "export"),
    ("journal", "verify"),
    ("serve", "--port", "0"),
]


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No $LINEAGE_STORE, and a data dir of the test's own: the default journal's folder."""
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path / "data" / "lineage-es"


@pytest.fixture
def no_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should ``tree --watch`` or ``serve`` get as far as waiting, fail instead of hanging."""

    def waits(*args: object, **kwargs: object) -> None:
        raise AssertionError("it went on to wait on a store it should have refused")

    monkeypatch.setattr("lineage_es.cli.live.watch_loop", waits)
    monkeypatch.setattr("lineage_es.serve.make_server", waits)


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.output


@pytest.mark.usefixtures("no_waiting")
@pytest.mark.parametrize("command", READERS, ids=" ".join)
def test_a_reader_refuses_a_store_file_that_does_not_exist_and_creates_none(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    typo = tmp_path / "typo.sqlite"
    code, out = run(*command, "--store", f"sqlite:///{typo}")
    assert code == 2 and f"no journal at {typo}: check the path" in out
    assert not typo.exists()


def test_a_reader_creates_no_folder_for_a_store_that_does_not_exist(tmp_path: Path) -> None:
    code, out = run("show", "X", "--store", f"sqlite:///{tmp_path}/no/such/dir/x.sqlite")
    assert code == 2 and "no journal at" in out
    assert not (tmp_path / "no").exists()


def test_lineage_store_naming_a_missing_file_is_refused_as_well(tmp_path: Path) -> None:
    typo = tmp_path / "typo.sqlite"
    code, out = run("tree", env={"LINEAGE_STORE": f"sqlite:///{typo}"})
    assert code == 2 and f"no journal at {typo}" in out and not typo.exists()


def test_a_reader_opens_an_existing_store_as_before(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    with open_engine(url):
        pass
    assert run("tree", "--store", url) == (0, "(no live agents)\n")


def test_ingest_creates_the_store_it_is_given(tmp_path: Path) -> None:
    journal, empty = tmp_path / "new" / "j.sqlite", tmp_path / "recordings"
    empty.mkdir()
    code, _ = run("ingest", str(empty), "--store", f"sqlite:///{journal}")
    assert code == 0 and journal.is_file()


def test_journal_import_creates_the_store_it_is_given(tmp_path: Path) -> None:
    exported, journal = tmp_path / "j.jsonl", tmp_path / "new.sqlite"
    with open_engine("memory://") as engine, exported.open("wb") as out:
        export_journal(engine, out)
    code, _ = run("journal", "import", str(exported), "--store", f"sqlite:///{journal}")
    assert code == 0 and journal.is_file()


def test_before_anything_is_journaled_the_default_journal_reads_as_empty(
    data_home: Path,
) -> None:
    code, out = run("tree", "--format", "json")
    assert code == 0 and "no journal yet at" in out and str(data_home) in out
    assert orjson.loads(out[out.index("{") :]) == {"roots": []}


def test_reading_the_default_journal_before_it_exists_creates_nothing(
    data_home: Path,
) -> None:
    assert run("journal", "verify")[0] == 0
    assert not data_home.exists()


def test_watching_readers_create_the_default_journal_to_see_the_first_hook(
    data_home: Path,
) -> None:
    with open_store(None, create=False, waits=True) as engine:
        assert engine.position() == 0
    assert (data_home / "journal.sqlite").is_file()
