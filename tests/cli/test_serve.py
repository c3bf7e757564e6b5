"""`lineage serve`: a read-only HTTP JSON API on the loopback address."""

from __future__ import annotations

import http.client
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import LineageError, StoreError
from lineage_es.read.render import forest_json
from lineage_es.serve import LineageServer, make_server, serve_in_thread
from tests.support.feed import Feed
from tests.support.serving import serving

ODD = "call-1\nfc_2/3"  # a Cursor-like id: a newline and a slash, as real ids can hold


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.child("R", "A", ODD)
        feed.child("R", "R", "C")
        feed.stop("R", "C")
    return url


@pytest.fixture
def engine(store: str) -> Iterator[Engine]:
    with open_engine(store) as opened:
        yield opened


@pytest.fixture
def server(engine: Engine) -> Iterator[LineageServer]:
    with serving(engine) as running:
        yield running


def request(
    server: LineageServer, path: str, method: str = "GET", host: str | None = None
) -> tuple[int, Any]:
    address, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(address), port, timeout=10)
    headers = {"Host": host} if host is not None else {}
    connection.request(method, path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, orjson.loads(body) if body else None


def test_tree_answers_the_live_forest_as_the_cli_draws_it(
    server: LineageServer, engine: Engine
) -> None:
    status, body = request(server, "/tree")
    assert status == 200 and body == orjson.loads(forest_json(engine.forest()))


def test_tree_all_includes_stopped_nodes(server: LineageServer) -> None:
    _, body = request(server, "/tree?all=1")
    assert [c["conversation"] for c in body["roots"][0]["children"]] == ["A", "C"]


def test_lineage_answers_a_conversation_named_by_an_encoded_id(server: LineageServer) -> None:
    status, body = request(server, f"/lineage/{quote(ODD, safe='')}")
    assert status == 200 and (body["conversation"], body["parent"], body["depth"]) == (ODD, "A", 2)


def test_an_unknown_conversation_is_404(server: LineageServer) -> None:
    status, body = request(server, "/lineage/nobody")
    assert status == 404 and "nobody" in body["error"]


def test_relation_says_what_a_is_to_b(server: LineageServer) -> None:
    status, body = request(server, "/relation?a=A&b=R")
    assert status == 200 and body["relation"] == "child"


def test_relation_without_both_conversations_is_400(server: LineageServer) -> None:
    assert request(server, "/relation?a=A")[0] == 400


def test_chain_runs_up_to_the_root(server: LineageServer) -> None:
    _, body = request(server, f"/chain/{quote(ODD, safe='')}")
    assert body["conversations"] == [ODD, "A", "R"]


@pytest.mark.parametrize(
    ("value", "stopped_shown"), [("1", True), ("true", True), ("0", False), ("false", False)]
)
def test_tree_all_reads_one_or_zero_true_or_false(
    server: LineageServer, value: str, stopped_shown: bool
) -> None:
    status, body = request(server, f"/tree?all={value}")
    children = [c["conversation"] for c in body["roots"][0]["children"]]
    assert status == 200 and ("C" in children) is stopped_shown


def test_tree_all_with_any_other_value_is_400(server: LineageServer) -> None:
    status, body = request(server, "/tree?all=maybe")
    assert status == 400 and "'maybe'" in body["error"]


def test_an_unknown_host_parameter_is_400(server: LineageServer) -> None:
    assert request(server, "/tree?host=windsurf")[0] == 400


def test_an_unknown_path_is_404(server: LineageServer) -> None:
    assert request(server, "/agents")[0] == 404


def test_writes_are_refused(server: LineageServer) -> None:
    assert request(server, "/tree", method="POST")[0] == 405


def test_a_request_naming_another_host_is_refused(server: LineageServer) -> None:
    """A web page cannot reach it through DNS rebinding: the Host header must be loopback."""
    assert request(server, "/tree", host="evil.example:7421")[0] == 403


def test_answers_include_facts_journaled_after_the_server_started(
    server: LineageServer, store: str
) -> None:
    with open_engine(store) as writer:
        Feed(writer).root("S")
    _, body = request(server, "/tree")
    assert [r["conversation"] for r in body["roots"]] == ["R", "S"]


def test_a_non_loopback_address_is_refused(engine: Engine) -> None:
    with pytest.raises(LineageError, match="--allow-remote"):
        make_server(engine, "0.0.0.0", 0)


def test_cli_serve_on_a_public_address_exits_2_with_the_reason(store: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--bind", "0.0.0.0", "--store", store])
    assert result.exit_code == 2 and "--allow-remote" in result.stderr


def test_the_refusal_of_a_public_address_names_the_bind_option(engine: Engine) -> None:
    with pytest.raises(LineageError, match="--bind"):
        make_server(engine, "0.0.0.0", 0)


def test_cli_serve_host_still_binds_and_says_it_is_deprecated(store: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--host", "0.0.0.0", "--store", store])
    assert result.exit_code == 2 and "--allow-remote" in result.stderr
    assert "deprecated, use --bind" in result.stderr


def test_cli_serve_refuses_both_bind_and_host(store: str) -> None:
    args = ["serve", "--bind", "::1", "--host", "0.0.0.0", "--store", store]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "once, with --bind" in result.stderr


def test_cli_serve_help_names_bind_and_hides_host() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert "--bind" in result.output and "--host" not in result.output


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_cli_serve_on_a_port_out_of_range_exits_2_with_the_reason(store: str, port: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--port", port, "--store", store])
    assert result.exit_code == 2 and "0<=x<=65535" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_port_out_of_range_is_refused_with_the_reason(engine: Engine) -> None:
    with pytest.raises(LineageError, match="not a TCP port"):
        make_server(engine, "127.0.0.1", 65536)


def test_a_request_line_with_control_characters_is_logged_escaped(engine: Engine) -> None:
    """Control characters reach the server URL-encoded (the HTTP parser refuses them raw);
    the logged line shows them decoded, escaped."""
    logged: list[str] = []
    running = make_server(engine, "127.0.0.1", 0, log=logged.append)
    serve_in_thread(running)
    try:
        address, port = running.server_address[:2]
        with socket.create_connection((str(address), port), timeout=10) as client:
            client.sendall(b"GET /%1b[2J%1b]0;owned%07 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            client.recv(65536)
    finally:
        running.shutdown()
        running.server_close()
    assert logged and all(ord(c) >= 0x20 for line in logged for c in line)
    assert "\\x1b[2J\\x1b]0;owned\\x07" in logged[0]


def test_a_request_line_with_raw_control_characters_is_refused_and_not_logged(
    engine: Engine,
) -> None:
    logged: list[str] = []
    running = make_server(engine, "127.0.0.1", 0, log=logged.append)
    serve_in_thread(running)
    try:
        address, port = running.server_address[:2]
        with socket.create_connection((str(address), port), timeout=10) as client:
            client.sendall(b"GET /\x1b[2J HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            answer = client.recv(65536)
    finally:
        running.shutdown()
        running.server_close()
    assert answer.startswith(b"HTTP/1.1 400 ") and logged == []


@pytest.fixture
def deep_engine(tmp_path: Path) -> Iterator[Engine]:
    """A root D0 with a chain of 600 agents below it, each spawned by the last."""
    with open_engine(f"sqlite:///{tmp_path / 'deep.sqlite'}") as opened:
        feed = Feed(opened)
        feed.root("D0")
        parent = "D0"
        for i in range(1, 601):
            feed.spawn("D0", parent, f"k{i}")
            feed.start("D0", f"D{i}")
            parent = f"D{i}"
        yield opened


def test_tree_answers_a_chain_600_deep(deep_engine: Engine) -> None:
    running = make_server(deep_engine, "127.0.0.1", 0)
    serve_in_thread(running)
    try:
        address, port = running.server_address[:2]
        connection = http.client.HTTPConnection(str(address), port, timeout=30)
        connection.request("GET", "/tree")
        response = connection.getresponse()
        body = response.read()
        connection.close()
    finally:
        running.shutdown()
        running.server_close()
    assert response.status == 200 and body.count(b'"conversation":') == 601
    assert body.startswith(b'{"roots":[{"conversation":"D0",') and body.endswith(b"}]}\n")


# -- parameters it cannot read, and time travel, on the store with an ambiguous child (the
# ``ambiguous_server`` fixture) -------------------------------------------------------------


def test_serve_refuses_an_unknown_parameter_naming_it(ambiguous_server: LineageServer) -> None:
    status, body = request(ambiguous_server, "/tree?al=1")
    assert status == 400 and "'al'" in body["error"]


def test_serve_refuses_an_unknown_parameter_of_lineage(ambiguous_server: LineageServer) -> None:
    status, body = request(ambiguous_server, "/lineage/A?hots=claude")
    assert status == 400 and "'hots'" in body["error"]


def test_serve_refuses_an_unparsable_time_naming_the_parameter(
    ambiguous_server: LineageServer,
) -> None:
    status, body = request(ambiguous_server, "/tree?at=garbage")
    assert status == 400 and "at" in body["error"] and "garbage" in body["error"]


def test_serve_refuses_a_time_beyond_the_utc_range_saying_the_range(
    ambiguous_server: LineageServer,
) -> None:
    status, body = request(ambiguous_server, "/tree?at=9999-12-31T23:00:00-05:00")
    assert status == 400 and "years 1 to 9999" in body["error"]


def test_serve_refuses_a_position_that_is_not_a_number(ambiguous_server: LineageServer) -> None:
    status, body = request(ambiguous_server, "/tree?position=two")
    assert status == 400 and "position" in body["error"]


def test_serve_refuses_a_position_past_the_journal_end_as_the_cli_does(
    ambiguous_server: LineageServer,
) -> None:
    status, body = request(ambiguous_server, "/tree?position=99999")
    assert status == 400 and "past the journal's end" in body["error"]


def test_serve_tree_at_a_position_travels_back(ambiguous_server: LineageServer) -> None:
    status, body = request(ambiguous_server, "/tree?position=1")
    assert status == 200 and body["roots"][0]["children"] == []


def test_serve_tree_at_a_time_travels_back(ambiguous_server: LineageServer) -> None:
    status, body = request(ambiguous_server, "/tree?at=2026-01-01T00:00:01Z")
    assert status == 200 and body["roots"][0]["children"] == []


def test_serve_answers_a_store_failure_503_not_a_bad_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def locked(*args: object, **kwargs: object) -> object:
        raise StoreError("store sqlite:///j.sqlite: database is locked")

    with open_engine("memory://") as engine:
        monkeypatch.setattr(engine, "forest", locked)
        with serving(engine) as running:
            status, body = request(running, "/tree")
    assert status == 503
    assert "locked" in body["error"]
