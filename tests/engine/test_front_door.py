"""The engine's one way in: ``observe`` takes a host payload or a reader's observation, answers
or not as asked; its import ledgers are reached through the engine, under its guard."""

from __future__ import annotations

import pytest

from lineage_es import ConcurrencyError, LineageError
from lineage_es.engine import engine as engine_module
from lineage_es.engine.engine import Engine, EngineClosed, InvalidArgument, open_engine
from lineage_es.facts import Observation, RootSeen

START = {"session_id": "R", "hook_event_name": "SessionStart", "source": "startup"}
SEEN = Observation(host="claude", requester="R", key="k", facts=(RootSeen("R"),), root="R")


def test_a_payload_and_the_observation_it_makes_answer_alike() -> None:
    with open_engine("memory://") as by_payload, open_engine("memory://") as by_observation:
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


def test_a_concurrency_error_is_a_lineage_error_importable_from_the_engine() -> None:
    assert engine_module.ConcurrencyError is ConcurrencyError
    assert issubclass(ConcurrencyError, LineageError)
