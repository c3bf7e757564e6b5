"""``lineage journal verify`` finds a gap in an aggregate's sequence and a view that differs
from a rebuild, and exits non-zero on either."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from tests.support.feed import Feed


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    with open_engine(f"sqlite:///{path}") as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.stop("R", "A")
    return path


def verify(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["journal", "verify", "--store", f"sqlite:///{path}"])
    return result.exit_code, result.output


def test_verify_exits_zero_on_a_healthy_store(store: Path) -> None:
    assert verify(store)[0] == 0


def test_verify_exits_non_zero_on_a_gap_in_an_aggregates_sequence(store: Path) -> None:
    db = sqlite3.connect(store)
    with db:
        db.execute(
            "DELETE FROM stored_events WHERE rowid = (SELECT rowid FROM stored_events "
            "WHERE originator_version = 2 ORDER BY rowid LIMIT 1)"
        )
    db.close()
    code, output = verify(store)
    assert code == 1
    assert "a gap" in output


def test_verify_exits_non_zero_when_the_view_differs_from_a_rebuild(store: Path) -> None:
    db = sqlite3.connect(store)
    with db:
        db.execute("UPDATE lineage_nodes SET status = 'live' WHERE conversation = 'A'")
    db.close()
    code, output = verify(store)
    assert code == 1
    assert "differs from a rebuild" in output
