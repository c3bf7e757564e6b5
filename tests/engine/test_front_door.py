"""The engine's one way in: ``observe`` takes a host payload or a reader's observation, answers
or not as asked; its import ledgers are reached through the engine, under its guard."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import pytest

import lineage_es.engine as engine_package
from lineage_es import ConcurrencyError, LineageError, errors
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import EngineClosed, InvalidArgument
from lineage_es.facts import Observation, RootSeen

START = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}
SEEN = Observation(host="claude", requester="R", key="k", facts=(RootSeen("R"),), root="R")


def test_a_payload_and_the_observation_it_makes_answer_alike() -> None:
    def clock() -> datetime:  # one time for both: the answers carry it (last_seen)
        return datetime(2026, 1, 1, tzinfo=UTC)

    with (
        open_engine("memory://", clock=clock) as by_payload,
        open_engine("memory://", clock=clock) as by_observation,
    ):
        assert by_payload.observe("claude", START) == by_observation.observe("claude", SEEN)


def test_an_unanswered_observe_journals_all_the_same(memory: Engine) -> None:
    assert memory.observe("claude", START, answer=False) is None
    assert memory.observe("claude", SEEN, answer=False) is None
    assert memory.lineage("R").depth == 0


def test_an_observation_given_as_another_hosts_is_refused_before_it_is_journaled(
    memory: Engine,
) -> None:
    with pytest.raises(InvalidArgument, match="codex"):
        memory.observe("codex", SEEN)
    assert memory.position() == 0


def test_the_import_ledgers_are_the_engines_and_closed_with_it() -> None:
    engine = open_engine("memory://")
    assert engine.ledgers is engine.ledgers
    assert engine.ledgers.load("claude", "/nowhere") is None
    engine.close()
    with pytest.raises(EngineClosed):
        engine.ledgers.load("claude", "/nowhere")


def test_a_concurrency_error_is_a_lineage_error_importable_from_lineage_es() -> None:
    assert errors.ConcurrencyError is ConcurrencyError
    assert issubclass(ConcurrencyError, LineageError)


def test_the_engine_package_hands_out_the_front_door_only_when_asked() -> None:
    """``from lineage_es.engine import Engine, open_engine`` works as when the engine was one
    module, and importing another module of the package does not load the front door."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "import lineage_es.engine.unit\n"
            "print('lineage_es.engine.engine' in sys.modules)\n"
            "from lineage_es.engine import Engine, open_engine\n"
            "from lineage_es.engine import engine\n"
            "print(Engine is engine.Engine, open_engine is engine.open_engine)\n",
        ],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.split()
    assert loaded == ["False", "True", "True"]
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = engine_package.Nothing


def test_an_engine_that_answers_nothing_loads_no_answering_code() -> None:
    """A hook that answers nothing never imports the answerer or the answers' builders; the
    first question loads them."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from lineage_es.engine.engine import open_engine\n"
            "LAZY = ('lineage_es.engine.answering', 'lineage_es.read.answers')\n"
            "engine = open_engine('memory://')\n"
            f"engine.observe('claude', {START!r}, answer=False)\n"
            "print(*[name in sys.modules for name in LAZY])\n"
            f"print(engine.observe('claude', {START!r}).depth, engine.lineage('R').depth)\n"
            "print(*[name in sys.modules for name in LAZY])\n",
        ],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.split()
    assert loaded == ["False", "False", "0", "0", "True", "True"]
