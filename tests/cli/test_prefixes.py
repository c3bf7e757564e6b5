"""Every command that takes a conversation id takes a unique prefix of it too, as git does
(4 characters at least); an ambiguous prefix exits 2 naming the ids it starts."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.serve.api import answer
from tests.support.feed import Feed

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
CHILD = "a1000000000000001"
GRANDCHILD = "a2000000000000002"
OTHER = "5f1c9999-0000-4000-8000-000000000002"


@pytest.fixture
def store(tmp_path: Path) -> str:
    """ROOT has CHILD, CHILD has GRANDCHILD; OTHER is a root of its own."""
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root(ROOT)
        feed.child(ROOT, ROOT, CHILD)
        feed.child(ROOT, CHILD, GRANDCHILD)
        feed.root(OTHER)
    return url


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (["show", "a200"], ("json", "conversation", GRANDCHILD)),
        (["relation", "a200", "5f1c2e", "--format", "json"], ("json", "b", ROOT)),
        (["chain", "a200"], ("text", None, f"{GRANDCHILD} > {CHILD} > {ROOT}\n")),
        (["provenance", "a200", "5f1c2e"], ("json", "recipient", ROOT)),
        (["family", "5f1c2e", "--format", "json"], ("json", 0, ROOT)),
        (["agents", "--as", "a100", "--format", "json"], ("json", 0, ROOT)),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else "",
)
def test_each_query_command_takes_a_unique_prefix(
    store: str, query: list[str], expected: tuple[str, object, str]
) -> None:
    code, out = run(*query, "--store", store)
    fmt, key, value = expected
    assert code == 0, out
    if fmt == "text":
        assert out == value
        return
    data = orjson.loads(out)
    answer = data[key]["conversation"] if isinstance(key, int) else data[key]
    assert answer == value


def test_tree_of_one_root_takes_a_unique_prefix(store: str) -> None:
    code, out = run("tree", "5f1c2e", "--all", "--format", "json", "--store", store)
    assert code == 0, out
    assert [root["conversation"] for root in orjson.loads(out)["roots"]] == [ROOT]


def test_rename_takes_a_unique_prefix(store: str) -> None:
    assert run("rename", "a100", "runner", "--store", store)[0] == 0
    assert orjson.loads(run("show", CHILD, "--store", store)[1])["name"] == "runner"


def test_delete_takes_a_unique_prefix(store: str) -> None:
    code, out = run("delete", "a100", "--store", store)
    assert code == 0 and "deleted 2 nodes" in out


def test_an_ambiguous_prefix_exits_2_naming_the_ids_it_starts(store: str) -> None:
    code, out = run("show", "5f1c", "--store", store)
    assert code == 2
    assert ROOT in out and OTHER in out and "give more of the one you mean" in out


def test_a_prefix_of_three_characters_is_refused_saying_how_many_to_give(store: str) -> None:
    code, out = run("show", "a20", "--store", store)
    assert code == 2 and "unknown conversation 'a20'" in out and "at least 4 characters" in out


def test_the_http_api_takes_a_unique_prefix_too(store: str) -> None:
    with open_engine(store, create=False) as engine:
        assert answer(engine, "/lineage/a200")["conversation"] == GRANDCHILD
        assert answer(engine, "/relation?a=a200&b=5f1c2e")["relation"] == "descendant"
