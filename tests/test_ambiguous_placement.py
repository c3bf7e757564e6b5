"""A child placed ambiguous under its root (LINEAGE.md, "the engine never guesses"), as the
command line and `lineage serve` show it: a descendant of its root with no parent edge.

The store is the audit's: root R has child A; R and A each have a spawn open when X starts.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.serve import LineageServer, make_server, serve_in_thread
from tests.helpers import Feed


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.spawn("R", "R", "K-root")
        feed.spawn("R", "A", "K-a")
        feed.start("R", "X")
    return url


@pytest.fixture
def server(store: str) -> Iterator[LineageServer]:
    with open_engine(store) as engine:
        running = make_server(engine, "127.0.0.1", 0)
        serve_in_thread(running)
        try:
            yield running
        finally:
            running.shutdown()
            running.server_close()


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def get(server: LineageServer, path: str) -> Any:
    address, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(address), port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    assert response.status == 200
    return orjson.loads(body)


def test_cli_relation_says_an_ambiguous_child_is_a_descendant_of_its_root(store: str) -> None:
    assert run("relation", "X", "R", "--store", store) == "descendant\n"


def test_cli_relation_says_the_root_is_an_ancestor_of_an_ambiguous_child(store: str) -> None:
    assert run("relation", "R", "X", "--store", store) == "ancestor\n"


def test_serve_relation_says_an_ambiguous_child_is_a_descendant_of_its_root(
    server: LineageServer,
) -> None:
    assert get(server, "/relation?a=X&b=R")["relation"] == "descendant"


def test_cli_tree_json_marks_the_ambiguous_child_and_only_it(store: str) -> None:
    root = orjson.loads(run("tree", "--format", "json", "--store", store))["roots"][0]
    marked = {c["conversation"]: c.get("ambiguous") for c in root["children"]}
    assert marked == {"A": None, "X": True} and "ambiguous" not in root


def test_serve_tree_marks_the_ambiguous_child(server: LineageServer) -> None:
    children = get(server, "/tree")["roots"][0]["children"]
    assert [c["conversation"] for c in children if c.get("ambiguous")] == ["X"]


def test_cli_tree_mermaid_draws_no_parent_edge_to_the_ambiguous_child(store: str) -> None:
    lines = run("tree", "--format", "mermaid", "--store", store).splitlines()
    assert "  n0 --> n1" in lines  # R spawned A
    assert "  n0 -. ambiguous .-> n2" in lines and "  n0 --> n2" not in lines


def test_cli_tree_dot_draws_no_parent_edge_to_the_ambiguous_child(store: str) -> None:
    lines = run("tree", "--format", "dot", "--store", store).splitlines()
    assert "  n0 -> n1;" in lines
    assert '  n0 -> n2 [style=dashed, label="ambiguous"];' in lines
