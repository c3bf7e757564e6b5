"""`lineage ingest` says how much of what it read was new to the journal: a second ingest of
the same recordings says it added nothing, rather than count again the rows it read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.ingest import ingest as ingest_paths
from tests.support.claude_transcripts import write


def start(session: str) -> dict[str, Any]:
    return {"session_id": session, "hook_event_name": "SessionStart", "source": "startup"}


def ingest(path: Path, store: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ingest", "--quiet", str(path), "--store", store])
    return result.exit_code, result.output


def test_a_first_ingest_counts_the_journal_entries_it_added(tmp_path: Path) -> None:
    capture = write(tmp_path / "a.jsonl", [start("R1"), start("R2")])
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    code, out = ingest(capture, store)
    with open_engine(store, create=False) as engine:
        entries = engine.position()
    assert code == 0 and entries > 0
    assert out.strip().endswith(f"ingested 2 rows from 1 recordings; {entries} new journal entries")


def test_a_second_ingest_of_the_same_recording_says_nothing_was_new(tmp_path: Path) -> None:
    capture = write(tmp_path / "a.jsonl", [start("R1"), start("R2")])
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    ingest(capture, store)
    code, out = ingest(capture, store)
    assert code == 0
    assert "read 2 rows from 1 recordings; nothing new: the journal had all of it already" in out
    assert "ingested" not in out


def test_a_recording_grown_since_counts_only_what_it_added(tmp_path: Path) -> None:
    with open_engine("memory://") as engine:
        ingest_paths(engine, [write(tmp_path / "a.jsonl", [start("R1")])])
        alone = engine.position()
        grown = ingest_paths(engine, [write(tmp_path / "b.jsonl", [start("R1"), start("R2")])])
        assert (grown.rows, grown.new_entries) == (2, engine.position() - alone)
        assert 0 < grown.new_entries < engine.position()
