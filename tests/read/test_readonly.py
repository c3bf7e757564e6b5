"""The view reader (lineage_es/read/readonly.py): a new process's questions answered from the
materialised view, without the event library, exactly as the full engine answers them; and
the full engine whenever the view alone could answer wrong (the view behind the journal, rows
waiting in the inbox)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_es.engine.application import LineageApplication
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import LineageError
from lineage_es.inbox_append import append_row, row
from lineage_es.model import to_json
from lineage_es.read.readonly import JOURNAL_NAME, ViewReader, open_view_reader
from lineage_es.user_files import inbox_dir
from tests.support.feed import Feed
from tests.support.paths import REPO

#: One step of a store's history: (what, which family, which member).
Step = tuple[str, int, int]

STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["root", "child", "nested", "ambiguous", "stop", "end", "rename", "delete"]
        ),
        st.integers(0, 2),
        st.integers(0, 3),
    ),
    min_size=1,
    max_size=25,
)


def fill(engine: Engine, steps: list[Step]) -> None:
    """Journal ``steps`` on ``engine``: families ``F0``..``F2``, members ``F<f>c<m>``."""
    feed = Feed(engine)
    for what, family, member in steps:
        root = f"F{family}"
        child = f"{root}c{member}"
        known = {m.conversation for m in engine.forest(include_stopped=True)}
        if what == "root" or root not in known:
            feed.root(root)
        elif what == "child":
            feed.child(root, root, child)
        elif what == "nested":
            feed.child(root, root, child)
            feed.child(root, child, f"{child}n")
        elif what == "ambiguous":
            feed.spawn(root, root, f"k-{child}")
            feed.spawn(root, root, f"k2-{child}")
            feed.start(root, f"{child}a")
        elif what == "stop":
            feed.stop(root, child)
        elif what == "end":
            feed.end(root)
        elif what == "rename":
            with contextlib.suppress(LineageError):  # a child the history never started
                engine.rename(child, f"name of {child}")
        else:
            with contextlib.suppress(LineageError):
                engine.delete(child)


def answers(reader: Any, ids: list[str]) -> list[object]:
    """Every question the view reader answers, asked of ``reader`` about ``ids`` (and an id
    nobody knows): each answer as JSON, or the error's type and message."""

    def ask(question: str, *args: str, **options: object) -> object:
        try:
            return to_json(getattr(reader, question)(*args, **options))
        except LineageError as exc:
            return (type(exc).__name__, str(exc))

    everyone = [*ids, "nobody"]
    found: list[object] = [
        ask("forest"),
        ask("forest", include_stopped=True),
        ask("forest", "claude", include_stopped=True),
    ]
    for a in everyone:
        found += [ask(question, a) for question in ("lineage", "tree_for", "chain", "family")]
        found += [ask("agents", a), ask("forest", root=a, include_stopped=True)]
        for b in everyone:
            found += [ask("relation", a, b), ask("provenance", a, b)]
    return found


def known_ids(engine: Engine) -> list[str]:
    ids: list[str] = []
    for root in engine.forest(include_stopped=True):
        ids += [m.conversation for m in engine.family(root.conversation)]
    return sorted(set(ids))


def full_engine(url: str) -> Callable[[], Engine]:
    return lambda: open_engine(url, create=False)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.sqlite'}"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_the_view_reader_answers_every_question_as_the_engine_does(steps: list[Step]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'journal.sqlite'}"
        with open_engine(url) as engine:
            fill(engine, steps)
            ids = known_ids(engine)
            expected = answers(engine, ids)
        reader = open_view_reader(url, full_engine(url))
        assert isinstance(reader, ViewReader)
        with reader:
            assert answers(reader, ids) == expected
            assert reader._engine is None  # answered from the view alone


def test_the_view_reader_answers_a_postgresql_store_as_the_engine_does(
    postgres_url: str,
) -> None:
    with open_engine(postgres_url) as engine:
        fill(engine, [("root", 0, 0), ("child", 0, 1), ("nested", 0, 2), ("root", 1, 0)])
        ids = known_ids(engine)
        expected = answers(engine, ids)
    reader = open_view_reader(postgres_url, full_engine(postgres_url))
    assert isinstance(reader, ViewReader)
    with reader:
        assert answers(reader, ids) == expected


def _lag_view(url: str) -> None:
    """Move the view's position one entry back, as a hook that crashed between journaling
    an entry and projecting it leaves it."""
    with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
        db.execute("UPDATE lineage_view SET position = position - 1 WHERE id = 1")


def test_a_view_behind_the_journal_is_left_to_the_engine(sqlite_url: str) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0), ("child", 0, 1)])
    _lag_view(sqlite_url)
    assert open_view_reader(sqlite_url, full_engine(sqlite_url)) is None


def test_a_postgresql_view_behind_the_journal_is_left_to_the_engine(postgres_url: str) -> None:
    import psycopg

    with open_engine(postgres_url) as engine:
        fill(engine, [("root", 0, 0), ("child", 0, 1)])
    schema = postgres_url.rsplit("schema=", 1)[1]
    with psycopg.connect(postgres_url.split("?", maxsplit=1)[0], autocommit=True) as db:
        db.execute(f"UPDATE {schema}.lineage_view SET position = position - 1 WHERE id = 1")
    assert open_view_reader(postgres_url, full_engine(postgres_url)) is None


def test_rows_waiting_in_the_inbox_are_left_to_the_engine(sqlite_url: str) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0)])
    folder = inbox_dir(sqlite_url)
    assert folder is not None
    append_row(folder, row("claude", 1, b'{"session_id": "F9"}'))
    assert open_view_reader(sqlite_url, full_engine(sqlite_url)) is None


def test_the_journal_name_is_the_applications(sqlite_url: str) -> None:
    assert LineageApplication.name == JOURNAL_NAME


def test_what_the_view_cannot_answer_opens_the_engine_and_sees_its_writes(
    sqlite_url: str,
) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0), ("child", 0, 1)])
    reader = open_view_reader(sqlite_url, full_engine(sqlite_url))
    assert isinstance(reader, ViewReader)
    with reader:
        assert len(reader.family("F0")) == 2
        reader.delete("F0c1")  # not the view's: the engine opens and journals it
        assert len(reader.family("F0")) == 1
        assert reader.as_of(position=1).family("F0")[0].conversation == "F0"


def _first_query(url: str, *args: str) -> tuple[str, bool]:
    """``lineage ARGS`` in a new process on ``url``: its output, and whether the process
    imported eventsourcing."""
    code = (
        "import sys\n"
        "from lineage_es.cli.main import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "print('eventsourcing' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "LINEAGE_STORE": url, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout, done.stderr.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("question", [["show", "F0c1"], ["tree", "--all"], ["family", "F0"]])
def test_a_first_question_on_a_current_view_never_imports_the_event_library(
    sqlite_url: str, question: list[str]
) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0), ("child", 0, 1)])
    output, imported = _first_query(sqlite_url, *question)
    assert "F0" in output
    assert not imported


def test_a_first_question_on_a_lagging_view_is_answered_by_the_engine_caught_up(
    sqlite_url: str,
) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0)])
        engine.projector.catch_up()
    with open_engine(sqlite_url) as engine:
        fill(engine, [("child", 0, 1)])
    _lag_view(sqlite_url)  # the child's last entry journaled, not projected
    output, imported = _first_query(sqlite_url, "show", "F0c1", "--format", "json")
    assert imported
    assert '"conversation": "F0c1"' in output


def test_a_live_reader_answers_what_was_journaled_after_it_opened(sqlite_url: str) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0)])
    reader = open_view_reader(sqlite_url, full_engine(sqlite_url), live=True)
    assert isinstance(reader, ViewReader)
    with reader, open_engine(sqlite_url) as writer:
        fill(writer, [("child", 0, 1)])  # journaled and projected by another engine
        assert [m.conversation for m in reader.family("F0")] == ["F0", "F0c1"]
        assert reader._engine is None  # the view, current again, answered


def test_a_live_reader_whose_view_falls_behind_answers_through_the_engine(
    sqlite_url: str,
) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0)])
    reader = open_view_reader(sqlite_url, full_engine(sqlite_url), live=True)
    assert isinstance(reader, ViewReader)
    with reader:
        with open_engine(sqlite_url) as writer:
            fill(writer, [("child", 0, 1)])
        _lag_view(sqlite_url)
        assert [m.conversation for m in reader.family("F0")] == ["F0", "F0c1"]
        assert reader._engine is not None


def test_a_one_shot_reader_checks_the_view_once_when_opened(sqlite_url: str) -> None:
    with open_engine(sqlite_url) as engine:
        fill(engine, [("root", 0, 0)])
    reader = open_view_reader(sqlite_url, full_engine(sqlite_url))
    assert isinstance(reader, ViewReader)
    with reader:
        opened_at = reader.position()
        _lag_view(sqlite_url)
        assert reader.position() == opened_at - 1  # the view's, not checked again
        assert reader._engine is None
