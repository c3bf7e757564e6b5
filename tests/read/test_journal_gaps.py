"""What the journal's tools say about missing entries: verify finds gaps in positions (an error
where only a removed entry makes one, a warning on PostgreSQL), an export counts its events and
an import refuses one that lost any; what an import warns of is said once, in its report."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import JournalFormatError
from lineage_es.journal import export_journal, import_journal, verify_journal
from tests.support.feed import Feed

UNKNOWN = "lineage:RootLineage.FromTheFuture"


def fed(engine: Engine) -> Engine:
    feed = Feed(engine)
    feed.root("R")
    feed.child("R", "R", "A")
    feed.child("R", "A", "B")
    return engine


@pytest.fixture
def journal_file(tmp_path: Path) -> Path:
    """A SQLite journal with a few roots, children and index entries."""
    path = tmp_path / "journal.sqlite"
    with open_engine(f"sqlite:///{path}") as engine:
        fed(engine)
        other = Feed(engine)
        other.root("S")
        other.child("S", "S", "C")
    return path


def rows(path: Path) -> list[tuple[int, str, int, str]]:
    with sqlite3.connect(path) as db:
        return list(
            db.execute(
                "SELECT rowid, originator_id, originator_version, topic FROM stored_events "
                "ORDER BY rowid"
            )
        )


def remove(path: Path, position: int) -> None:
    db = sqlite3.connect(path)
    with db:
        db.execute("DELETE FROM stored_events WHERE rowid = ?", (position,))
    db.close()


@pytest.fixture
def sqlite_engine(journal_file: Path) -> Iterator[Engine]:
    with open_engine(f"sqlite:///{journal_file}") as engine:
        yield engine


def verified_after_removing(path: Path, position: int) -> list[str]:
    """Remove one entry, rebuild the view (so only the journal can tell), and verify."""
    remove(path, position)
    with open_engine(f"sqlite:///{path}") as engine:
        engine.rebuild()
        report = verify_journal(engine)
    assert not report.ok
    return report.problems


def last_of_its_aggregate(path: Path) -> int:
    """An interior entry that is the last of its aggregate: its versions keep no hole."""
    entries = rows(path)
    last = {originator: rowid for rowid, originator, _, _ in entries}
    return next(rowid for rowid in sorted(last.values()) if rowid < entries[-1][0])


def test_verify_reports_an_interior_entry_removed_from_a_sqlite_journal(
    journal_file: Path,
) -> None:
    position = last_of_its_aggregate(journal_file)
    problems = verified_after_removing(journal_file, position)
    assert f"position {position} is missing: an entry was removed from the journal" in problems


def test_verify_reports_a_removed_aggregate_of_a_single_entry(journal_file: Path) -> None:
    singles = [r for r in rows(journal_file) if r[2] == 1 and r[3].endswith("Indexed")]
    position = singles[0][0]
    problems = verified_after_removing(journal_file, position)
    assert f"position {position} is missing: an entry was removed from the journal" in problems


def test_verify_reports_a_removed_first_entry_as_a_gap_from_position_1(
    journal_file: Path,
) -> None:
    problems = verified_after_removing(journal_file, 1)
    assert "position 1 is missing: an entry was removed from the journal" in problems


def test_verify_reports_an_aggregate_whose_versions_do_not_start_at_1(
    journal_file: Path,
) -> None:
    entries = rows(journal_file)
    longer = {r[1] for r in entries if r[2] == 2}
    rowid, originator, _, _ = next(r for r in entries if r[1] in longer and r[2] == 1 and r[0] > 1)
    problems = verified_after_removing(journal_file, rowid)
    assert f"aggregate {originator}: version 2 follows 0 (a gap)" in problems


def test_verify_reports_every_run_of_missing_positions(journal_file: Path) -> None:
    for position in (3, 4, 6):
        remove(journal_file, position)
    with open_engine(f"sqlite:///{journal_file}") as engine:
        engine.rebuild()
        problems = verify_journal(engine).problems
    assert "positions 3 to 4 are missing: 2 entries were removed from the journal" in problems
    assert "position 6 is missing: an entry was removed from the journal" in problems


def test_verify_reads_an_entry_of_unknown_type_as_present_and_warns_of_it_once(
    sqlite_engine: Engine,
) -> None:
    root = next(r for r in rows_of(sqlite_engine) if r[3].endswith("Started"))
    last_version = max(r[2] for r in rows_of(sqlite_engine) if r[1] == root[1])
    sqlite_engine.app.recorder.insert_events(
        [StoredEvent(uuid.UUID(root[1]), last_version + 1, UNKNOWN, b"{}")]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what the engine says of it is not the subject here
        Feed(sqlite_engine).root("T")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = verify_journal(sqlite_engine)
    assert report.ok, report.problems
    assert len(report.warnings) == 1 and UNKNOWN in report.warnings[0]


def rows_of(engine: Engine) -> list[tuple[int, str, int, str]]:
    path = engine.location.path
    assert path is not None
    return rows(path)


def gap_by_a_rolled_back_write(engine: Engine) -> None:
    """What a writer that lost a race leaves on PostgreSQL: a sequence value used by no row."""
    recorder = engine.app.recorder
    taken = next(iter(engine.journal()))
    with pytest.raises(IntegrityError):
        recorder.insert_events(
            [
                StoredEvent(uuid.uuid4(), 1, taken.topic, b"{}"),
                StoredEvent(uuid.UUID(taken.originator_id), taken.version, taken.topic, b"{}"),
            ]
        )


def test_on_postgresql_a_gap_in_positions_is_a_warning_not_a_problem(postgres_url: str) -> None:
    with open_engine(postgres_url) as engine:
        Feed(engine).root("R")
        gap_by_a_rolled_back_write(engine)
        Feed(engine).root("S")
        positions = [e.position for e in engine.journal()]
        assert positions != list(range(1, len(positions) + 1))
        report = verify_journal(engine)
    assert report.ok, report.problems
    assert len(report.warnings) == 1
    assert "not proof" in report.warnings[0] and "rolled-back" in report.warnings[0]


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    path = tmp_path / "journal.jsonl"
    with open_engine("memory://") as engine, path.open("wb") as out:
        fed(engine)
        export_journal(engine, out)
    return path


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def refused(path: Path) -> JournalFormatError:
    with open_engine("memory://") as engine:
        with pytest.raises(JournalFormatError) as raised:
            import_journal(engine, path)
        assert engine.position() == 0
    return raised.value


def test_an_export_header_counts_the_events_written(exported: Path) -> None:
    header = orjson.loads(lines(exported)[0])
    assert header["events"] == len(lines(exported)) - 1 == header["position"]


def test_an_import_refuses_an_export_missing_an_interior_entry(exported: Path) -> None:
    content = lines(exported)
    events = len(content) - 1
    del content[3]
    exported.write_bytes(b"".join(content))
    error = refused(exported)
    assert (error.line, error.reason) == (
        1,
        f"the header counts {events} events but the file holds {events - 1}: 1 entry is missing",
    )


def test_an_import_refuses_an_export_missing_its_last_entry(exported: Path) -> None:
    content = lines(exported)
    exported.write_bytes(b"".join(content[:-1]))
    assert "1 entry is missing" in refused(exported).reason


def test_an_export_whose_counted_last_entry_is_torn_imports_all_but_that_entry(
    exported: Path,
) -> None:
    data = exported.read_bytes()
    exported.write_bytes(data[: data.rindex(b"\n", 0, -1) + 20])
    torn = len(lines(exported))
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
    assert (report.imported, report.torn_final_line) == (torn - 2, torn)
    assert report.warnings == [f"line {torn}: torn final line (interrupted append) skipped"]


def test_an_import_refuses_an_export_missing_an_entry_besides_its_torn_last_one(
    exported: Path,
) -> None:
    content = lines(exported)
    del content[3]
    data = b"".join(content)
    exported.write_bytes(data[: data.rindex(b"\n", 0, -1) + 20])
    error = refused(exported)
    assert "2 entries are missing" in error.reason
    assert f"line {len(lines(exported))} is torn" in error.reason


def test_an_import_refuses_an_export_holding_more_entries_than_its_header_counts(
    exported: Path,
) -> None:
    content = lines(exported)
    header = orjson.loads(content[0])
    content[0] = orjson.dumps({**header, "events": header["events"] - 1}) + b"\n"
    exported.write_bytes(b"".join(content))
    assert refused(exported).reason.endswith("more than its header counts")


def test_an_import_refuses_an_entry_whose_position_does_not_follow_the_last(
    exported: Path,
) -> None:
    content = lines(exported)
    content[2], content[3] = content[3], content[2]
    exported.write_bytes(b"".join(content))
    error = refused(exported)
    assert error.line == 4 and "does not follow" in error.reason


def test_an_import_refuses_an_export_whose_entries_stop_short_of_its_position(
    exported: Path,
) -> None:
    content = lines(exported)
    last = orjson.loads(content[-1])
    content[-1] = orjson.dumps({**last, "position": last["position"] - 1}) + b"\n"
    del content[-2]
    header = orjson.loads(content[0])
    content[0] = orjson.dumps({**header, "events": header["events"] - 1}) + b"\n"
    exported.write_bytes(b"".join(content))
    error = refused(exported)
    assert error.line == len(content) and "the header's position" in error.reason


def test_an_older_export_without_a_count_imports_a_missing_entry_as_before(
    exported: Path,
) -> None:
    content = lines(exported)
    header = orjson.loads(content[0])
    content[0] = orjson.dumps({"format": header["format"], "version": "1.0"}) + b"\n"
    exported.write_bytes(b"".join(content[:-1]))
    with open_engine("memory://") as engine:
        assert import_journal(engine, exported).imported == len(content) - 2


def test_an_export_of_a_postgresql_journal_with_gaps_in_positions_imports(
    postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "journal.jsonl"
    with open_engine(postgres_url) as engine:
        Feed(engine).root("R")
        gap_by_a_rolled_back_write(engine)
        Feed(engine).root("S")
        with path.open("wb") as out:
            written = export_journal(engine, out)
    positions = [orjson.loads(line)["position"] for line in lines(path)[1:]]
    assert positions != list(range(1, written + 1))
    with open_engine("memory://") as engine:
        assert import_journal(engine, path).imported == written


def test_an_export_keeps_entries_of_unknown_type_for_a_newer_reader(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with open_engine("memory://") as engine:
        Feed(engine).root("R")
        engine.app.recorder.insert_events([StoredEvent(uuid.uuid4(), 1, UNKNOWN, b'{"a": 1}')])
        with warnings.catch_warnings(), path.open("wb") as out:
            warnings.simplefilter("error")
            written = export_journal(engine, out)
        assert written == engine.position()
    last = orjson.loads(lines(path)[-1])
    assert (last["topic"], last["state"]) == (UNKNOWN, {"a": 1})


def with_unknown_entry(path: Path) -> Path:
    content = lines(path)
    header = orjson.loads(content[0])
    extra = dict(
        orjson.loads(content[1]),
        topic=UNKNOWN,
        version=99,
        position=header["position"] + 1,
    )
    header.update(position=header["position"] + 1, events=header["events"] + 1)
    content[0] = orjson.dumps(header) + b"\n"
    content.append(orjson.dumps(extra) + b"\n")
    path.write_bytes(b"".join(content))
    return path


def test_an_import_says_what_it_skipped_in_its_report_and_nowhere_else(exported: Path) -> None:
    with_unknown_entry(exported)
    with warnings.catch_warnings(), open_engine("memory://") as engine:
        warnings.simplefilter("error")
        report = import_journal(engine, exported)
    assert report.warnings == [
        f"line {len(lines(exported))}: unknown event type {UNKNOWN!r} skipped"
    ]


def test_the_import_command_prints_each_warning_once(exported: Path, tmp_path: Path) -> None:
    with_unknown_entry(exported)
    store = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    command = ["journal", "import", str(exported), "--store", store]
    done = subprocess.run(
        [sys.executable, "-c", "from lineage_es.launch import main; main()", *command],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "default"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("unknown event type") == 1
    assert "UserWarning" not in done.stderr


def test_lineage_journal_verify_prints_the_reports_warnings(
    sqlite_engine: Engine, journal_file: Path
) -> None:
    from click.testing import CliRunner

    from lineage_es.cli.main import main

    root = next(r for r in rows_of(sqlite_engine) if r[3].endswith("Started"))
    last_version = max(r[2] for r in rows_of(sqlite_engine) if r[1] == root[1])
    sqlite_engine.app.recorder.insert_events(
        [StoredEvent(uuid.UUID(root[1]), last_version + 1, UNKNOWN, b"{}")]
    )
    result = CliRunner().invoke(main, ["journal", "verify", "--store", f"sqlite:///{journal_file}"])
    assert result.exit_code == 0, result.output
    assert "warning: " in result.stderr and UNKNOWN in result.stderr
