"""The journal's exchange format: what import accepts, skips and refuses; what verify finds."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from lineage_es.engine import Engine, open_engine
from lineage_es.errors import JournalFormatError
from lineage_es.journal import export_journal, import_journal, verify_journal
from tests.helpers import Feed


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    with open_engine("memory://") as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.child("R", "A", "B")
        path = tmp_path / "journal.jsonl"
        with path.open("wb") as out:
            export_journal(engine, out)
    return path


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_an_export_starts_with_a_versioned_header(exported: Path) -> None:
    header = orjson.loads(lines(exported)[0])
    assert header["format"] == "lineage-es-journal" and header["version"] == "1.0"


def test_an_import_reproduces_the_tree(exported: Path) -> None:
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
        assert report.imported == len(lines(exported)) - 1
        assert engine.chain("B").conversations == ("B", "A", "R")


def test_a_torn_final_line_is_skipped_and_reported(exported: Path) -> None:
    data = exported.read_bytes()
    exported.write_bytes(data + b'{"position": 99, "origin')
    with open_engine("memory://") as engine, pytest.warns(UserWarning, match="torn"):
        report = import_journal(engine, exported)
    assert report.torn_final_line == len(lines(exported))


def test_a_corrupt_interior_line_is_refused_with_its_number(exported: Path) -> None:
    content = lines(exported)
    content[3] = b"not json\n"
    exported.write_bytes(b"".join(content))
    with open_engine("memory://") as engine:
        with pytest.raises(JournalFormatError) as raised:
            import_journal(engine, exported)
        assert raised.value.line == 4
        assert engine.position() == 0


def test_an_unknown_event_type_of_the_same_major_is_skipped_with_a_warning(
    exported: Path,
) -> None:
    content = lines(exported)
    first_event = orjson.loads(content[1])
    extra = dict(first_event, topic="lineage:RootLineage.FromTheFuture", version=99)
    content.append(orjson.dumps(extra) + b"\n")
    exported.write_bytes(b"".join(content))
    with open_engine("memory://") as engine, pytest.warns(UserWarning, match="unknown event"):
        report = import_journal(engine, exported)
    assert report.skipped_unknown == [len(content)]


def test_a_newer_major_version_is_refused(exported: Path) -> None:
    content = lines(exported)
    content[0] = orjson.dumps({"format": "lineage-es-journal", "version": "2.0"}) + b"\n"
    exported.write_bytes(b"".join(content))
    with open_engine("memory://") as engine, pytest.raises(JournalFormatError, match="newer"):
        import_journal(engine, exported)


def test_a_line_over_32_mib_is_refused(tmp_path: Path, exported: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.write(lines(exported)[0])
        out.write(b'{"x": "' + b"a" * (32 * 1024 * 1024 + 10) + b'"}\n')
    with open_engine("memory://") as engine, pytest.raises(JournalFormatError, match="MiB"):
        import_journal(engine, path)


def test_a_file_larger_than_the_configured_total_is_refused(exported: Path) -> None:
    with open_engine("memory://") as engine, pytest.raises(JournalFormatError, match="bound"):
        import_journal(engine, exported, max_total=100)


def test_an_import_into_a_store_that_is_not_empty_is_refused(exported: Path) -> None:
    with open_engine("memory://") as engine:
        Feed(engine).root("X")
        with pytest.raises(JournalFormatError, match="not empty"):
            import_journal(engine, exported)


def test_verify_passes_on_a_healthy_store(engine: Engine) -> None:
    feed = Feed(engine)
    feed.root("R")
    feed.child("R", "R", "A")
    assert verify_journal(engine).ok


def test_verify_reports_a_view_that_differs_from_a_rebuild(tmp_path: Path) -> None:
    with open_engine(f"sqlite:///{tmp_path / 'j.sqlite'}") as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        row = next(r for r in engine.view.all_rows() if r.key == "A")
        row.depth = 7
        position = engine.view.position()
        engine.view.write([row], expected=position, position=position)
        report = verify_journal(engine)
    assert not report.ok
    assert any("differs from a rebuild" in problem for problem in report.problems)
