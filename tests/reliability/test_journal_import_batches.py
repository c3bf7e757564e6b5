"""A large import goes in bounded batches inside one transaction: it makes progress on
PostgreSQL however large the journal (one huge insert stalled in the driver's pipeline while
holding the events table's lock), tells its progress, and stays all or nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.journal import import_journal, verify_journal
from lineage_es.stores.bulk import BATCH_EVENTS
from tests.support.journal_samples import large_export

#: How long a large import may take before it counts as stalled: far beyond its seconds.
STALLED_AFTER = 300


@pytest.fixture(params=["sqlite", "postgresql"])
def written_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_an_import_is_written_in_bounded_batches_each_told_with_the_total(
    written_store: str, tmp_path: Path
) -> None:
    exported = large_export(tmp_path / "j.jsonl", roots=50)  # 2,500 events
    told: list[tuple[int, int]] = []
    with open_engine(written_store) as engine:
        report = import_journal(
            engine, exported, progress=lambda batch, total: told.append((batch, total))
        )
        assert verify_journal(engine).ok
    assert report.imported == 2500
    assert [batch for batch, _ in told] == [BATCH_EVENTS, BATCH_EVENTS, 500]
    assert {total for _, total in told} == {2500}


class Interrupted(Exception):
    """Stands for a Ctrl-C or a lost connection between two batches."""


def test_an_import_interrupted_after_some_batches_writes_nothing(
    written_store: str, tmp_path: Path
) -> None:
    exported = large_export(tmp_path / "j.jsonl", roots=50)

    def interrupt_after_the_first_batch(batch: int, total: int) -> None:
        raise Interrupted

    with open_engine(written_store) as engine:
        with pytest.raises(Interrupted):
            import_journal(engine, exported, progress=interrupt_after_the_first_batch)
        assert engine.position() == 0
        assert import_journal(engine, exported).imported == 2500


@pytest.mark.slow
def test_a_large_export_with_large_events_imports_into_postgresql(
    postgres_url: str, tmp_path: Path
) -> None:
    exported = large_export(tmp_path / "j.jsonl", roots=500, description_bytes=400)  # 25,000
    command = [str(Path(sys.executable).parent / "lineage"), "journal", "import", str(exported)]
    try:
        done = subprocess.run(
            [*command, "--store", postgres_url],
            capture_output=True,
            text=True,
            check=False,
            timeout=STALLED_AFTER,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the import made no progress in {STALLED_AFTER}s")
    assert done.returncode == 0, done.stderr
    assert "imported 25000 events" in done.stderr
    with open_engine(postgres_url) as engine:
        assert engine.position() >= 25000 and verify_journal(engine).ok


def test_the_import_command_shows_a_progress_bar_as_it_writes(tmp_path: Path) -> None:
    exported = large_export(tmp_path / "j.jsonl", roots=50)
    command = [str(Path(sys.executable).parent / "lineage"), "journal", "import", str(exported)]
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    done = subprocess.run([*command, "--store", store], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == ["importing", "imported 2500 events"]
