"""A child placed ambiguous under its root (LINEAGE.md, "the engine never guesses"), as the
command line and `lineage serve` show it: a descendant of its root with no parent edge.

The store (the ``ambiguous_store`` fixture of tests/cli/conftest.py): root R has child A; R and A
each have a spawn open when X starts.
"""

from __future__ import annotations

import http.client
from typing import Any

import orjson

from lineage_es.serve import LineageServer
from tests.support.ambiguous_store import run


def get(server: LineageServer, path: str) -> Any:
    address, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(address), port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    assert response.status == 200
    return orjson.loads(body)


def test_cli_relation_says_an_ambiguous_child_is_a_descendant_of_its_root(
    ambiguous_store: str,
) -> None:
    assert run("relation", "X", "R", "--store", ambiguous_store) == "descendant\n"


def test_cli_relation_says_the_root_is_an_ancestor_of_an_ambiguous_child(
    ambiguous_store: str,
) -> None:
    assert run("relation", "R", "X", "--store", ambiguous_store) == "ancestor\n"


def test_serve_relation_says_an_ambiguous_child_is_a_descendant_of_its_root(
    ambiguous_server: LineageServer,
) -> None:
    assert get(ambiguous_server, "/relation?a=X&b=R")["relation"] == "descendant"


def test_cli_tree_json_marks_the_ambiguous_child_and_only_it(ambiguous_store: str) -> None:
    root = orjson.loads(run("tree", "--format", "json", "--store", ambiguous_store))["roots"][0]
    marked = {c["conversation"]: c.get("ambiguous") for c in root["children"]}
    assert marked == {"A": None, "X": True} and "ambiguous" not in root


def test_serve_tree_marks_the_ambiguous_child(ambiguous_server: LineageServer) -> None:
    children = get(ambiguous_server, "/tree")["roots"][0]["children"]
    assert [c["conversation"] for c in children if c.get("ambiguous")] == ["X"]


def test_cli_tree_mermaid_draws_no_parent_edge_to_the_ambiguous_child(ambiguous_store: str) -> None:
    lines = run("tree", "--format", "mermaid", "--store", ambiguous_store).splitlines()
    assert "  n0 --> n1" in lines  # R spawned A
    assert "  n0 -. ambiguous .-> n2" in lines and "  n0 --> n2" not in lines


def test_cli_tree_dot_draws_no_parent_edge_to_the_ambiguous_child(ambiguous_store: str) -> None:
    lines = run("tree", "--format", "dot", "--store", ambiguous_store).splitlines()
    assert "  n0 -> n1;" in lines
    assert '  n0 -> n2 [style=dashed, label="ambiguous"];' in lines
