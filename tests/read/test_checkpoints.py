"""Time travel's checkpoints: made lazily, from the first time travel past a stretch none
covers (never by writing), remade by ``lineage journal rebuild``, and never trusted once the
journal they were made from is not the one in the store."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.journal import rebuild_time_travel
from lineage_es.read import checkpoints
from lineage_es.read.checkpoint_rows import encode_rows
from lineage_es.read.checkpoints import Checkpoint, checkpoint_store
from lineage_es.read.view import NodeRow
from tests.support.past_view import past_queries
from tests.support.random_journals import ROOTS, answers, child_of, feed_steps

#: Eight children of two roots, each stopped: 40-odd journal entries.
JOURNAL = [("seen", r, 0, -1, 0) for r in (0, 1)] + [
    (kind, r, c, -1, 1 + c)
    for r in (0, 1)
    for c in range(4)
    for kind in ("child", "acted", "stopped")
]


@pytest.fixture(autouse=True)
def small_stretches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoints, "STRETCH", 5)
    monkeypatch.setattr(checkpoints, "FULL_EVERY", 3)


@pytest.fixture
def journaled(store_url: str) -> Iterator[Engine]:
    with open_engine(store_url) as engine:
        feed_steps(engine, JOURNAL)
        yield engine


def kept(engine: Engine) -> list[Checkpoint]:
    return checkpoint_store(engine.app.recorder, engine.view).index()


def test_writing_the_journal_makes_no_checkpoint(journaled: Engine) -> None:
    assert journaled.position() > 5 and kept(journaled) == []


def test_time_travel_makes_the_checkpoints_of_every_whole_stretch_before_it(
    journaled: Engine,
) -> None:
    journaled.as_of(position=23)
    assert [c.position for c in kept(journaled)] == [5, 10, 15, 20]


def test_a_checkpoint_of_another_journal_at_the_same_position_is_dropped_not_used(
    journaled: Engine,
) -> None:
    store = checkpoint_store(journaled.app.recorder, journaled.view)
    wrong = NodeRow(7, "x", "claude", "ghost", "ghost", None, None, 0, "live", "native", "")
    store.add(
        Checkpoint(10, True, "", "", True, "another:1:topic:0"), encode_rows([wrong], full=True)
    )
    past = journaled.as_of(position=12)
    assert answers(past) == answers(past_queries(journaled, position=12))
    assert "another:1:topic:0" not in {c.checked for c in kept(journaled)}


def test_journal_rebuild_makes_the_checkpoints_of_the_whole_journal_again(
    journaled: Engine,
) -> None:
    count, size = rebuild_time_travel(journaled)
    assert count == journaled.position() // 5 == len(kept(journaled)) and size > 0


def test_a_rebuilt_journal_s_checkpoints_answer_as_a_full_replay(journaled: Engine) -> None:
    rebuild_time_travel(journaled)
    end = journaled.position()
    assert answers(journaled.as_of(position=end - 1)) == answers(
        past_queries(journaled, position=end - 1)
    )


def test_lineage_journal_rebuild_says_how_many_checkpoints_it_made(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed_steps(engine, JOURNAL)
        expected = engine.position() // 5
    result = CliRunner().invoke(main, ["journal", "rebuild", "--store", url])
    assert result.exit_code == 0, result.output
    assert f"made {expected} time-travel checkpoints" in result.output


def test_a_child_stopped_after_the_last_checkpoint_shows_live_before_its_stop(
    journaled: Engine,
) -> None:
    stop = max(e.position for e in journaled.journal() if e.topic.endswith(".Stopped"))
    past = journaled.as_of(position=stop - 1)
    assert {m.conversation: m.status for m in past.family(ROOTS[1])}[child_of(1, 3)] == "live"


def test_time_travel_on_a_store_locked_by_another_writer_answers_without_new_checkpoints(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    with open_engine(f"sqlite:///{path}") as engine:
        feed_steps(engine, JOURNAL)
    with open_engine(f"sqlite:///{path}", lock_timeout=0.05) as engine:
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            past = answers(engine.as_of(position=23))
        finally:
            writer.execute("ROLLBACK")
            writer.close()
        assert past == answers(past_queries(engine, position=23)) and kept(engine) == []


def test_threads_travelling_at_once_each_answer_as_a_full_replay(journaled: Engine) -> None:
    end = journaled.position()
    positions = [end - 1, end // 2, end, 7, end - 3, 12]
    with ThreadPoolExecutor(max_workers=len(positions)) as pool:
        got = list(pool.map(lambda p: answers(journaled.as_of(position=p)), positions))
    assert got == [answers(past_queries(journaled, position=p)) for p in positions]


def test_checkpoints_of_the_previous_layout_are_dropped_and_made_again(
    journaled: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = journaled.app.recorder
    entry = checkpoints.entry_at(recorder, 10)
    assert entry is not None
    with monkeypatch.context() as previous:
        previous.setattr(checkpoints, "FORMAT", "c1")
        checked = checkpoints.entry_identity(entry)
    rows = [[7, "x", "claude", "ghost", "ghost", None, None, 0, "live", "native", ""]]
    old = Checkpoint(10, True, "", "", True, checked)
    checkpoint_store(recorder, journaled.view).add(old, zlib.compress(orjson.dumps(rows)))
    past = journaled.as_of(position=12)
    assert answers(past) == answers(past_queries(journaled, position=12))
    assert {c.checked.split(":")[0] for c in kept(journaled)} == {checkpoints.FORMAT}


def test_checkpoints_of_another_format_are_made_again(
    journaled: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    journaled.as_of(position=12)
    monkeypatch.setattr(checkpoints, "FORMAT", "c0")
    journaled.as_of(position=12)
    assert {c.checked.split(":")[0] for c in kept(journaled)} == {"c0"}
