"""The journal's exchange format: what import accepts, skips and refuses; what verify finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import JournalFormatError
from lineage_es.journal import (
    DEFAULT_MAX_TOTAL_BYTES,
    export_journal,
    import_journal,
    verify_journal,
)
from tests.support.feed import Feed


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
    assert header["format"] == "lineage-es-journal" and header["version"] == "1.1"


def test_an_import_reproduces_the_tree(exported: Path) -> None:
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
        assert report.imported == len(lines(exported)) - 1
        assert engine.chain("B").conversations == ("B", "A", "R")


def test_a_torn_final_line_is_skipped_and_reported(exported: Path) -> None:
    data = exported.read_bytes()
    exported.write_bytes(data + b'{"position": 99, "origin')
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
    assert report.torn_final_line == len(lines(exported))
    assert report.warnings == [
        f"line {len(lines(exported))}: torn final line (interrupted append) skipped"
    ]


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
    header = orjson.loads(content[0])
    header.update(position=header["position"] + 1, events=header["events"] + 1)
    first_event = orjson.loads(content[1])
    extra = dict(
        first_event,
        topic="lineage:RootLineage.FromTheFuture",
        version=99,
        position=header["position"],
    )
    content[0] = orjson.dumps(header) + b"\n"
    content.append(orjson.dumps(extra) + b"\n")
    exported.write_bytes(b"".join(content))
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
    assert report.skipped_unknown == [len(content)]
    assert any("unknown event type" in message for message in report.warnings)


def test_a_newer_major_version_is_refused(exported: Path) -> None:
    content = lines(exported)
    content[0] = orjson.dumps({"format": "lineage-es-journal", "version": "2.0"}) + b"\n"
    exported.write_bytes(b"".join(content))
    with open_engine("memory://") as engine, pytest.raises(JournalFormatError, match="newer"):
        import_journal(engine, exported)


def test_a_file_larger_than_the_configured_total_is_refused(exported: Path) -> None:
    with open_engine("memory://") as engine, pytest.raises(JournalFormatError, match="bound"):
        import_journal(engine, exported, max_total=100)


MIB_32 = 32 * 1024 * 1024


def import_refused(path: Path, max_total: int = DEFAULT_MAX_TOTAL_BYTES) -> JournalFormatError:
    with open_engine("memory://") as engine, pytest.raises(JournalFormatError) as raised:
        import_journal(engine, path, max_total=max_total)
    return raised.value


def test_an_empty_file_is_refused_at_line_1(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    refused = import_refused(path)
    assert (refused.line, refused.reason) == (1, "the file is empty (no header)")


def test_a_blank_first_line_is_not_a_header(exported: Path) -> None:
    exported.write_bytes(b"\n" + exported.read_bytes())
    refused = import_refused(exported)
    assert (refused.line, refused.reason) == (1, "the header is not JSON")


def test_a_first_line_of_another_format_is_refused(exported: Path) -> None:
    content = lines(exported)
    content[0] = b'{"format": "something-else"}\n'
    exported.write_bytes(b"".join(content))
    refused = import_refused(exported)
    assert (refused.line, refused.reason) == (1, "not a lineage-es-journal file (no header)")


def test_blank_lines_are_skipped_but_counted(exported: Path) -> None:
    content = lines(exported)
    events = len(content) - 1
    content[2:2] = [b"\n", b"  \r\n"]
    exported.write_bytes(b"".join(content) + b"\t\n")
    with open_engine("memory://") as engine:
        assert import_journal(engine, exported).imported == events
    content[4] = b"not json\n"
    exported.write_bytes(b"".join(content))
    assert import_refused(exported).line == 5


def test_a_blank_last_line_without_its_newline_is_not_torn(exported: Path) -> None:
    exported.write_bytes(exported.read_bytes() + b"   ")
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
    assert (report.torn_final_line, report.warnings) == (None, [])


def test_a_whole_last_line_without_its_newline_is_imported(exported: Path) -> None:
    content = lines(exported)
    exported.write_bytes(b"".join(content).rstrip(b"\n"))
    with open_engine("memory://") as engine:
        report = import_journal(engine, exported)
    assert (report.imported, report.torn_final_line) == (len(content) - 1, None)


def test_a_bad_last_line_with_its_newline_is_refused_not_torn(exported: Path) -> None:
    exported.write_bytes(exported.read_bytes() + b'{"position": 99, "origin\n')
    refused = import_refused(exported)
    assert refused.line == len(lines(exported))
    assert refused.reason.startswith("malformed journal line: ")


def test_a_missing_file_raises_the_os_error(tmp_path: Path) -> None:
    with open_engine("memory://") as engine, pytest.raises(FileNotFoundError):
        import_journal(engine, tmp_path / "gone.jsonl")


def test_a_line_over_32_mib_is_refused_naming_its_line(tmp_path: Path, exported: Path) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_bytes(b"".join(lines(exported)[:2]) + b'{"x": "' + b"a" * MIB_32 + b'"}\n{}\n')
    refused = import_refused(path)
    assert (refused.line, refused.reason) == (3, "line is longer than 32 MiB")


def test_a_line_of_exactly_32_mib_is_read_with_or_without_its_newline(
    tmp_path: Path, exported: Path
) -> None:
    path = tmp_path / "edge.jsonl"
    path.write_bytes(b"".join(lines(exported)) + b" " * MIB_32 + b"\n" + b" " * MIB_32)
    with open_engine("memory://") as engine:
        report = import_journal(engine, path)
    assert (report.imported, report.torn_final_line) == (len(lines(exported)) - 1, None)


def test_an_overlong_last_line_without_its_newline_is_refused_not_torn(
    tmp_path: Path, exported: Path
) -> None:
    path = tmp_path / "huge.jsonl"
    path.write_bytes(lines(exported)[0] + b"x" * (MIB_32 + 1))
    refused = import_refused(path)
    assert (refused.line, refused.reason) == (2, "line is longer than 32 MiB")


def test_the_total_bound_counts_every_byte_and_names_the_line_that_crosses_it(
    exported: Path,
) -> None:
    size = exported.stat().st_size
    with open_engine("memory://") as engine:
        import_journal(engine, exported, max_total=size)
    refused = import_refused(exported, max_total=size - 1)
    assert refused.line == len(lines(exported))
    assert refused.reason == f"the file is larger than the configured bound of {size - 1} bytes"
    assert import_refused(exported, max_total=10).line == 1


def test_the_total_bound_is_checked_before_the_line_bound(tmp_path: Path, exported: Path) -> None:
    path = tmp_path / "huge.jsonl"
    header = lines(exported)[0]
    path.write_bytes(header + b"x" * (MIB_32 + 10) + b"\n")
    assert "configured bound" in import_refused(path, max_total=len(header) + MIB_32).reason
    assert "32 MiB" in import_refused(path, max_total=len(header) + MIB_32 + 1).reason


def test_an_import_into_a_store_that_is_not_empty_is_refused(exported: Path) -> None:
    with open_engine("memory://") as engine:
        Feed(engine).root("X")
        with pytest.raises(JournalFormatError, match="not empty"):
            import_journal(engine, exported)


def test_a_refused_import_writes_nothing_however_far_it_got(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    with open_engine("memory://") as engine:
        feed = Feed(engine)
        for index in range(1200):
            feed.root(f"R{index}")
        with path.open("wb") as out:
            export_journal(engine, out)
    content = lines(path)
    last = orjson.loads(content[-1])
    last["version"] += 1  # its aggregate now jumps a version, after 1,199 good entries
    content[-1] = orjson.dumps(last) + b"\n"
    path.write_bytes(b"".join(content))
    with open_engine("memory://") as engine:
        with pytest.raises(JournalFormatError, match="jumps to version"):
            import_journal(engine, path)
        assert engine.position() == 0


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


def test_another_engine_answers_from_the_old_view_while_a_rebuild_runs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    with open_engine(url) as writer:
        feed = Feed(writer)
        for index in range(700):  # more than one page of the journal
            feed.root(f"R{index}")
            feed.start(f"R{index}", f"A{index}")
    seen: list[int] = []
    with open_engine(url) as rebuilding, open_engine(url) as reader:

        def midway(entries: int) -> None:
            seen.append(reader.lineage("A699").depth)

        rebuilding.rebuild(progress=midway)
        assert reader.lineage("A699").depth == 1
    assert len(seen) > 1 and set(seen) == {1}


def test_a_rebuild_never_takes_back_what_another_writer_projected_while_it_ran(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    with open_engine(url) as writer:
        Feed(writer).root("R")
    after_swaps: list[set[str]] = []
    with open_engine(url) as rebuilding, open_engine(url) as other:
        swap = rebuilding.view.replace

        def replace_once_another_writer_went_on(
            rows: Any, position: int, *, force: bool = False
        ) -> bool:
            if not after_swaps:
                Feed(other).root("S")  # journaled and projected after the rebuild replayed
            done = swap(rows, position, force=True) if force else swap(rows, position)
            # What any reader finds in the view right after it, before catching up itself:
            after_swaps.append({row.conversation or "" for row in rebuilding.view.all_rows()})
            return done

        rebuilding.view.replace = replace_once_another_writer_went_on  # type: ignore[method-assign]
        rebuilding.rebuild()
        assert {node.conversation for node in rebuilding.forest()} == {"R", "S"}
    assert after_swaps and all(seen == {"R", "S"} for seen in after_swaps)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("host", "codex"),
        ("root", "elsewhere"),
        ("agent_type", "WRONG"),
        ("subagent_id", "WRONGID"),
        ("description", "not what was asked"),
        ("workspace", ("/somewhere/else",)),
    ],
)
def test_verify_reports_a_view_row_that_differs_from_a_rebuild_in_any_field(
    tmp_path: Path, field: str, value: object
) -> None:
    with open_engine(f"sqlite:///{tmp_path / 'j.sqlite'}") as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        row = next(r for r in engine.view.all_rows() if r.key == "A")
        setattr(row, field, value)
        position = engine.view.position()
        engine.view.write([row], expected=position, position=position)
        report = verify_journal(engine)
    assert any("differs from a rebuild" in problem for problem in report.problems)
