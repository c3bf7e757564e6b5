"""The commands' reader opener (lineage_es/cli/common.py ``open_reader``) answers from the
materialised view when it is current: ``lineage serve`` and ``tree --watch`` through a live
view reader that checks the view before each question, other readers through one that checked
it when opened; ``open_store`` (writers, the journal commands) always opens the engine."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from lineage_es.cli.common import open_reader, open_store
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.read.readonly import ViewReader
from lineage_es.serve import url_of
from tests.support.feed import Feed
from tests.support.serving import serving


@contextmanager
def served(answerer: Any) -> Iterator[str]:
    """The base URL of a server answering from ``answerer``, while in use."""
    with serving(answerer) as server:
        yield url_of(server)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url) as answer:
        return orjson.loads(answer.read())


def test_a_server_opened_on_a_current_view_answers_its_first_tree_as_the_engine(
    store: str,
) -> None:
    with open_engine(store) as engine, served(engine) as base:
        expected = get_json(f"{base}/tree?all=1")
    with open_reader(store, waits=True) as opened:
        assert isinstance(opened, ViewReader)
        with served(opened) as base:
            assert get_json(f"{base}/tree?all=1") == expected
        assert opened._engine is None


def test_a_server_on_the_view_answers_what_hooks_journal_after_it_started(store: str) -> None:
    with open_reader(store, waits=True) as opened, served(opened) as base:
        with open_engine(store) as writer:
            Feed(writer).child("R", "A", "B")
        found = get_json(f"{base}/lineage/B")
        assert (found["parent"], found["depth"]) == ("A", 2)


def test_a_writer_is_opened_on_the_engine(store: str) -> None:
    with open_store(store) as opened:
        assert isinstance(opened, Engine)


def test_a_reader_on_a_memory_store_is_opened_on_the_engine() -> None:
    with open_reader("memory://") as opened:
        assert isinstance(opened, Engine)
