"""Two engines on one store (two hook processes, or two machines on PostgreSQL) never
answer from a stale view: each sees what the other journaled."""

from __future__ import annotations

from pathlib import Path

import pytest

from lineage_es.engine.engine import open_engine
from tests.support.feed import Feed, keys


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


def test_a_decision_starts_from_what_another_engine_journaled(shared_url: str) -> None:
    """The first engine holds R's aggregate in its cache; after the second engine stops A, a
    tool call of A through the first must resume it, not be taken as a no-op on stale state."""
    with open_engine(shared_url) as first, open_engine(shared_url) as second:
        one = Feed(first)
        two = Feed(second, clock=one.clock)
        one.root("R")
        one.child("R", "R", "A")
        two.stop("R", "A")
        one.act("R", "A")
        tree = second.tree_for("R")
        assert tree is not None and keys(tree.children) == ["A"]


def test_a_conversation_re_rooted_by_another_engine_is_routed_to_its_new_root(
    shared_url: str,
) -> None:
    """The first engine routes C to P (bound by order); the second sees C start a session of
    its own and re-roots it; the first engine's next fact about C (a spawn) lands on root C."""
    with open_engine(shared_url) as first, open_engine(shared_url) as second:
        one = Feed(first, host="cursor")
        two = Feed(second, clock=one.clock, host="cursor")
        one.cursor_root("P", ("/w",))
        one.cursor_start("P", "K", ("/w",))
        one.cursor_act("C", ("/w",))
        assert first.lineage("C").root == "P"
        two.cursor_root("C", ("/w",))
        lineage = one.cursor_start("C", "K2", ("/w",))
        assert lineage is not None and (lineage.root, lineage.depth) == ("C", 0)
        assert lineage.tree is not None and keys(lineage.tree.children) == ["K2"]
