"""An import checks every event against the domain before it writes any: one bad value is
refused with its line and reason, and the store is left exactly as it was (empty, usable)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.errors import JournalFormatError
from lineage_es.journal import import_journal, verify_journal
from tests.support.journal_samples import edit_line, first_line_of, varied_export

PLACED = "lineage:RootLineage.ChildPlaced"
STARTED = "lineage:RootLineage.Started"
INDEXED = "lineage:ConversationIndex.Indexed"
STOPPED = "lineage:RootLineage.Stopped"


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    return varied_export(tmp_path / "journal.jsonl")


def refused_line(path: Path, store: str) -> JournalFormatError:
    with open_engine(store) as engine:
        with pytest.raises(JournalFormatError) as raised:
            import_journal(engine, path)
        assert engine.position() == 0
    return raised.value


def set_state(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(line: dict[str, Any]) -> None:
        line["state"][field] = value

    return edit


def test_a_timestamp_that_is_not_a_time_is_refused_with_its_line(
    exported: Path, tmp_path: Path
) -> None:
    number = first_line_of(exported, PLACED)
    edit_line(exported, number, set_state("timestamp", {"_type_": "datetime_iso", "_data_": "x"}))
    refused = refused_line(exported, f"sqlite:///{tmp_path / 'j.sqlite'}")
    assert refused.line == number and refused.reason.startswith("timestamp is not a time")


def test_a_timestamp_written_as_plain_text_is_refused(exported: Path) -> None:
    number = first_line_of(exported, STOPPED)
    edit_line(exported, number, set_state("timestamp", "2026-01-01T00:00:00+00:00"))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "timestamp" in refused.reason


def test_a_time_without_its_zone_is_refused(exported: Path) -> None:
    number = first_line_of(exported, STOPPED)
    naive = {"_type_": "datetime_iso", "_data_": "2026-01-01T00:00:00"}
    edit_line(exported, number, set_state("timestamp", naive))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "zone" in refused.reason


def test_a_missing_timestamp_is_refused(exported: Path) -> None:
    number = first_line_of(exported, PLACED)
    edit_line(exported, number, lambda line: line["state"].pop("timestamp"))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "timestamp" in refused.reason


def test_a_depth_written_as_text_is_refused(exported: Path) -> None:
    number = first_line_of(exported, PLACED)
    edit_line(exported, number, set_state("depth", "1"))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "depth" in refused.reason


def test_a_child_placed_deep_under_an_unknown_parent_is_refused(exported: Path) -> None:
    number = first_line_of(exported, PLACED)

    def misplace(line: dict[str, Any]) -> None:
        line["state"].update(parent="nobody-knows", depth=7)

    edit_line(exported, number, misplace)
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "nobody-knows" in refused.reason


def test_a_child_at_a_depth_that_does_not_follow_its_parents_is_refused(exported: Path) -> None:
    number = first_line_of(exported, PLACED)
    edit_line(exported, number, set_state("depth", 5))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "depth 5" in refused.reason


def test_a_nul_in_a_conversation_id_is_refused(exported: Path) -> None:
    number = first_line_of(exported, INDEXED)
    edit_line(exported, number, set_state("conversation", "R\x00"))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "NUL" in refused.reason


def test_an_aggregate_id_its_fields_do_not_name_is_refused(exported: Path) -> None:
    number = first_line_of(exported, STARTED)
    edit_line(exported, number, set_state("conversation", "someone-else"))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "aggregate id" in refused.reason


def test_an_event_naming_a_node_its_root_does_not_hold_is_refused(exported: Path) -> None:
    number = first_line_of(exported, STOPPED)
    edit_line(exported, number, set_state("conversation", "never-placed"))
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "never-placed" in refused.reason


def test_an_event_of_one_aggregate_kind_under_another_is_refused(exported: Path) -> None:
    number = first_line_of(exported, "lineage:RootLineage.Renamed")

    def index_event_on_a_root(line: dict[str, Any]) -> None:
        line["topic"] = "lineage:ConversationIndex.Moved"
        line["state"] = {"timestamp": line["state"]["timestamp"], "root": "R"}

    edit_line(exported, number, index_event_on_a_root)
    refused = refused_line(exported, "memory://")
    assert refused.line == number and "RootLineage" in refused.reason


def test_a_header_version_written_as_a_number_is_refused(exported: Path) -> None:
    edit_line(exported, 1, lambda header: header.update(version=1.1))
    refused = refused_line(exported, "memory://")
    assert refused.line == 1 and "1.1" in refused.reason


def lineage(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "lineage"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def test_the_command_names_file_and_line_exits_2_and_leaves_the_store_usable(
    exported: Path, tmp_path: Path
) -> None:
    good = tmp_path / "good.jsonl"
    good.write_bytes(exported.read_bytes())
    number = first_line_of(exported, PLACED)
    edit_line(exported, number, set_state("timestamp", {"_type_": "datetime_iso", "_data_": "x"}))
    store = f"sqlite:///{tmp_path / 'j.sqlite'}"
    refused = lineage("journal", "import", str(exported), "--store", store)
    assert refused.returncode == 2
    assert f"{exported}:{number}:" in refused.stderr
    assert lineage("journal", "verify", "--store", store).returncode == 0
    assert lineage("tree", "--all", "--store", store).returncode == 0
    imported = lineage("journal", "import", str(good), "--store", store)
    assert imported.returncode == 0, imported.stderr
    with open_engine(store) as engine:
        assert verify_journal(engine).ok
        assert engine.chain("Y").conversations == ("Y", "X", "A", "R")
