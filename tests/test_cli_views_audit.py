"""What the views print, as an audit of the command line and `lineage serve` found them
wanting: every member and lineage listing marks a child placed ambiguous, as `tree` does;
ages are counted from the moment a time-travelling tree shows; `show` names a renamed
conversation; `serve` refuses parameters it does not know or cannot read; `ingest` names
each bad line of a file that holds nothing else.

The store: root R has child A; R and A each have a spawn open when X starts, so X is placed
under R with no parent edge (ambiguous). Feed's clock: R starts at 2026-01-01T00:00:01Z,
each later observation one second on.
"""

from __future__ import annotations

import http.client
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.errors import StoreError
from lineage_es.serve import LineageServer, make_server, serve_in_thread
from tests import test_ambiguous_placement as ambiguous

#: The store (R, A; X ambiguous), a server over it and the command runner, as the ambiguous
#: placement tests have them.
store, server, run = ambiguous.store, ambiguous.server, ambiguous.run


def line_of(out: str, conversation: str) -> str:
    """The printed line naming ``conversation`` as one of its words."""
    return next(line for line in out.splitlines() if conversation in line.split())


def get(server: LineageServer, path: str) -> tuple[int, Any]:
    address, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(address), port, timeout=10)
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, orjson.loads(body)


# -- an ambiguous child is marked in every listing ------------------------------------------


def test_family_text_flags_the_ambiguous_child_and_only_it(store: str) -> None:
    lines = run("family", "R", "--store", store).splitlines()
    flagged = [line.split()[0] for line in lines if line.endswith(" ambiguous")]
    assert flagged == ["X"]


def test_family_json_marks_the_ambiguous_child_as_tree_json_does(store: str) -> None:
    members = orjson.loads(run("family", "R", "--json", "--store", store))
    assert {m["conversation"]: m.get("ambiguous") for m in members} == {
        "R": None,
        "A": None,
        "X": True,
    }


def test_agents_text_flags_the_ambiguous_child(store: str) -> None:
    lines = run("agents", "--as", "A", "--store", store).splitlines()
    assert [line.split()[1] for line in lines if line.endswith(" ambiguous")] == ["X"]


def test_agents_json_marks_the_ambiguous_child(store: str) -> None:
    members = orjson.loads(run("agents", "--as", "A", "--json", "--store", store))
    assert [m["conversation"] for m in members if m.get("ambiguous")] == ["X"]


def test_show_marks_an_ambiguous_child(store: str) -> None:
    lineage = orjson.loads(run("show", "X", "--store", store))
    assert lineage["ambiguous"] is True and lineage["parent"] is None


def test_show_of_a_child_with_a_parent_has_no_ambiguous_key(store: str) -> None:
    assert "ambiguous" not in orjson.loads(run("show", "A", "--store", store))


def test_show_marks_the_ambiguous_child_among_the_tree_it_lists(store: str) -> None:
    tree = orjson.loads(run("show", "A", "--store", store))["tree"]
    assert [p["conversation"] for p in tree["siblings"] if p.get("ambiguous")] == ["X"]


def test_serve_lineage_marks_an_ambiguous_child(server: LineageServer) -> None:
    status, body = get(server, "/lineage/X")
    assert status == 200 and body["ambiguous"] is True


# -- ages are counted from the moment shown ---------------------------------------------------


def test_tree_at_a_time_counts_ages_from_that_time(store: str) -> None:
    out = run("tree", "--all", "--at", "2026-01-01T00:00:51Z", "--store", store)
    assert line_of(out, "R").endswith(" 50s") and line_of(out, "X").endswith(" 44s ? ambiguous")


def test_tree_at_a_position_counts_ages_from_the_time_it_had_reached(store: str) -> None:
    with open_engine(store, create=False) as engine:
        last = engine.position()
    out = run("tree", "--all", "--position", str(last), "--store", store)
    assert line_of(out, "R").endswith(" 6s") and line_of(out, "X").endswith(" 0s ? ambiguous")


# -- show names a renamed conversation -------------------------------------------------------


def test_show_prints_the_name_a_rename_gave(store: str) -> None:
    run("rename", "A", "scout", "--store", store)
    assert orjson.loads(run("show", "A", "--store", store))["name"] == "scout"


def test_show_of_a_conversation_never_renamed_has_no_name_key(store: str) -> None:
    assert "name" not in orjson.loads(run("show", "A", "--store", store))


# -- serve refuses what it cannot read -------------------------------------------------------


def test_serve_refuses_an_unknown_parameter_naming_it(server: LineageServer) -> None:
    status, body = get(server, "/tree?al=1")
    assert status == 400 and "'al'" in body["error"]


def test_serve_refuses_an_unknown_parameter_of_lineage(server: LineageServer) -> None:
    status, body = get(server, "/lineage/A?hots=claude")
    assert status == 400 and "'hots'" in body["error"]


def test_serve_refuses_an_unparsable_time_naming_the_parameter(server: LineageServer) -> None:
    status, body = get(server, "/tree?at=garbage")
    assert status == 400 and "at" in body["error"] and "garbage" in body["error"]


def test_serve_refuses_a_position_that_is_not_a_number(server: LineageServer) -> None:
    status, body = get(server, "/tree?position=two")
    assert status == 400 and "position" in body["error"]


def test_serve_refuses_a_position_past_the_journal_end_as_the_cli_does(
    server: LineageServer,
) -> None:
    status, body = get(server, "/tree?position=99999")
    assert status == 400 and "past the journal's end" in body["error"]


def test_serve_tree_at_a_position_travels_back(server: LineageServer) -> None:
    status, body = get(server, "/tree?position=1")
    assert status == 200 and body["roots"][0]["children"] == []


def test_serve_tree_at_a_time_travels_back(server: LineageServer) -> None:
    status, body = get(server, "/tree?at=2026-01-01T00:00:01Z")
    assert status == 200 and body["roots"][0]["children"] == []


# -- ingest names each bad line of a file holding nothing else -----------------------------


def ingest(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ingest", "--quiet", *map(str, args)])
    return result.exit_code, result.output


def test_ingest_names_each_bad_line_of_a_file_of_only_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("hello\n\n[1]\n")
    code, out = ingest(path, "--store", f"sqlite:///{tmp_path / 'j.sqlite'}")
    assert code == 1
    assert f"{path}:1: line is not JSON" in out and f"{path}:3: line holds a JSON list" in out


def test_ingest_does_not_call_a_file_of_only_bad_lines_empty(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("hello\n")
    _, out = ingest(path, "--store", f"sqlite:///{tmp_path / 'j.sqlite'}")
    assert "empty" not in out and "not read to the end" not in out
    assert "skipped 1 bad line" in out


def test_serve_answers_a_store_failure_503_not_a_bad_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def locked(*args: object, **kwargs: object) -> object:
        raise StoreError("store sqlite:///j.sqlite: database is locked")

    with open_engine("memory://") as engine:
        monkeypatch.setattr(engine, "forest", locked)
        running = make_server(engine, "127.0.0.1", 0)
        serve_in_thread(running)
        try:
            status, body = get(running, "/tree")
        finally:
            running.shutdown()
            running.server_close()
    assert status == 503
    assert "locked" in body["error"]
