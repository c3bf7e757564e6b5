"""Two engines on one store (two hook processes, or two machines on PostgreSQL) never
answer from a stale view: each sees what the other journaled."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_es.engine import open_engine
from tests.helpers import Feed, keys


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.sqlite'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def test_each_engine_answers_with_what_the_other_journaled(shared_url: str) -> None:
    with open_engine(shared_url) as first, open_engine(shared_url) as second:
        one = Feed(first)
        two = Feed(second, clock=one.clock)
        one.root("R")
        one.child("R", "R", "A")
        tree = second.tree_for("R")
        assert tree is not None and keys(tree.children) == ["A"]
        two.child("R", "R", "B")
        tree = first.tree_for("R")
        assert tree is not None and keys(tree.children) == ["A", "B"]
        two.stop("R", "A")
        one.child("R", "R", "C")
        tree = second.tree_for("R")
        assert tree is not None and keys(tree.children) == ["B", "C"]


def test_a_cached_root_is_refreshed_after_another_engine_changes_it(shared_url: str) -> None:
    with open_engine(shared_url) as first, open_engine(shared_url) as second:
        one = Feed(first)
        two = Feed(second, clock=one.clock)
        one.root("R")
        assert second.tree_for("R") is not None  # second caches R
        one.child("R", "R", "A")
        two.root("Other")  # second's own write follows first's unseen one
        tree = second.tree_for("R")
        assert tree is not None and keys(tree.children) == ["A"]
