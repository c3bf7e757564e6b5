"""Ids given as a unique prefix, as in git, looked up in every view store (memory, SQLite,
PostgreSQL) by one function: an exact id wins, one match is the id, several are an error
naming them."""

from __future__ import annotations

import pytest

from lineage_es.engine.engine import Engine
from lineage_es.read import prefixes
from lineage_es.read.prefixes import (
    SHOWN_MATCHES,
    AmbiguousPrefix,
    PrefixTooShort,
    ids_starting_with,
    resolve_prefix,
)
from tests.support.feed import Feed

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
OTHER = "5f1c9999-0000-4000-8000-000000000002"


def fill(engine: Engine, *roots: str) -> None:
    feed = Feed(engine)
    for root in roots:
        feed.root(root)


def test_a_unique_prefix_names_the_one_id_it_starts(engine: Engine) -> None:
    fill(engine, ROOT, OTHER)
    assert resolve_prefix(engine.queries.view, "5f1c2e") == ROOT


def test_an_ambiguous_prefix_is_an_error_naming_every_match(engine: Engine) -> None:
    fill(engine, ROOT, OTHER)
    with pytest.raises(AmbiguousPrefix) as caught:
        resolve_prefix(engine.queries.view, "5f1c")
    assert caught.value.matches == (ROOT, OTHER) and ROOT in str(caught.value)


def test_an_ambiguous_prefix_names_ten_matches_and_counts_the_rest(engine: Engine) -> None:
    fill(engine, *(f"abcd{i:02}" for i in range(13)))
    with pytest.raises(AmbiguousPrefix) as caught:
        resolve_prefix(engine.queries.view, "abcd")
    assert len(caught.value.matches) == SHOWN_MATCHES and caught.value.total == 13
    assert "and 3 more" in str(caught.value)


def test_an_exact_id_wins_over_the_longer_ids_it_starts(engine: Engine) -> None:
    fill(engine, "abcd", "abcdef")
    assert resolve_prefix(engine.queries.view, "abcd") == "abcd"


def test_a_prefix_shorter_than_four_characters_is_refused(engine: Engine) -> None:
    fill(engine, ROOT)
    with pytest.raises(PrefixTooShort, match="at least 4 characters"):
        resolve_prefix(engine.queries.view, "5f1")


def test_an_exact_id_shorter_than_four_characters_is_taken(engine: Engine) -> None:
    fill(engine, "abc", "abcdef")
    assert resolve_prefix(engine.queries.view, "abc") == "abc"


def test_what_starts_no_id_is_left_for_the_question_to_call_unknown(engine: Engine) -> None:
    fill(engine, ROOT)
    assert resolve_prefix(engine.queries.view, "ffff") == "ffff"


def test_wildcards_in_a_prefix_match_only_themselves(engine: Engine) -> None:
    fill(engine, "ab_d-1", "abXd-2", "a%cd-3")
    view = engine.queries.view
    assert ids_starting_with(view, "ab_d") == (["ab_d-1"], 1)
    assert ids_starting_with(view, "a%cd") == (["a%cd-3"], 1)


def test_a_prefix_with_host_counts_only_that_hosts_ids(engine: Engine) -> None:
    Feed(engine).root(ROOT)
    Feed(engine, "codex").root(OTHER)
    assert resolve_prefix(engine.queries.view, "5f1c", "codex") == OTHER


def test_prefix_ranges_end_where_the_prefix_does(engine: Engine) -> None:
    """The SQLite range's upper bound is the prefix with its last character raised: an id
    one past it is outside."""
    fill(engine, "abcd-1", "abce-2", "abcc-3")
    assert ids_starting_with(engine.queries.view, "abcd") == (["abcd-1"], 1)


def test_a_database_not_ordered_by_code_point_is_asked_like_alone(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL under a language's collation: no range (it could leave ids out), the same
    answers."""
    monkeypatch.setattr(prefixes, "_orders_by_code_point", lambda view: False)
    fill(engine, "ab_d-1", "abXd-2", "abcd-3", "abcd.4")
    view = engine.queries.view
    assert ids_starting_with(view, "ab_d") == (["ab_d-1"], 1)
    assert ids_starting_with(view, "abcd") == (["abcd-3", "abcd.4"], 2)
