"""A child placed ambiguous is marked in every member and lineage listing, as `tree` marks it:
`family` and `agents` (text and JSON), `show` and `lineage serve`'s /lineage.

The store (the ``ambiguous_store`` fixture): root R has child A; R and A each have a spawn open
when X starts, so X is placed under R with no parent edge.
"""

from __future__ import annotations

import http.client
from typing import Any

import orjson

from lineage_es.serve import LineageServer
from tests.support.ambiguous_store import run


def get(server: LineageServer, path: str) -> tuple[int, Any]:
    address, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(address), port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, orjson.loads(body)


def test_family_text_flags_the_ambiguous_child_and_only_it(ambiguous_store: str) -> None:
    lines = run("family", "R", "--store", ambiguous_store).splitlines()
    flagged = [line.split()[0] for line in lines if line.endswith(" ambiguous")]
    assert flagged == ["X"]


def test_family_json_marks_the_ambiguous_child_as_tree_json_does(ambiguous_store: str) -> None:
    members = orjson.loads(run("family", "R", "--json", "--store", ambiguous_store))
    assert {m["conversation"]: m.get("ambiguous") for m in members} == {
        "R": None,
        "A": None,
        "X": True,
    }


def test_agents_text_flags_the_ambiguous_child(ambiguous_store: str) -> None:
    lines = run("agents", "--as", "A", "--store", ambiguous_store).splitlines()
    assert [line.split()[1] for line in lines if line.endswith(" ambiguous")] == ["X"]


def test_agents_json_marks_the_ambiguous_child(ambiguous_store: str) -> None:
    members = orjson.loads(run("agents", "--as", "A", "--json", "--store", ambiguous_store))
    assert [m["conversation"] for m in members if m.get("ambiguous")] == ["X"]


def test_show_marks_an_ambiguous_child(ambiguous_store: str) -> None:
    lineage = orjson.loads(run("show", "X", "--store", ambiguous_store))
    assert lineage["ambiguous"] is True and lineage["parent"] is None


def test_show_of_a_child_with_a_parent_has_no_ambiguous_key(ambiguous_store: str) -> None:
    assert "ambiguous" not in orjson.loads(run("show", "A", "--store", ambiguous_store))


def test_show_marks_the_ambiguous_child_among_the_tree_it_lists(ambiguous_store: str) -> None:
    tree = orjson.loads(run("show", "A", "--store", ambiguous_store))["tree"]
    assert [p["conversation"] for p in tree["siblings"] if p.get("ambiguous")] == ["X"]


def test_serve_lineage_marks_an_ambiguous_child(ambiguous_server: LineageServer) -> None:
    status, body = get(ambiguous_server, "/lineage/X")
    assert status == 200 and body["ambiguous"] is True
