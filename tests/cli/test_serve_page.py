"""`lineage serve`'s web page over HTTP: the page for browsers, what it loads, and the live
stream of changes it listens to."""

from __future__ import annotations

import re
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.serve import LineageServer, make_server, serve_in_thread
from tests.support.feed import Feed
from tests.support.serving import serving
from tests.support.web_server import EventStream, get, get_json

PAGE_FILES = ("index.html", "app.js", "app.css")


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        engine.rename("A", "planner")
        Feed(engine).root("S")
    return url


@pytest.fixture
def server(store: str) -> Iterator[LineageServer]:
    with open_engine(store) as engine, serving(engine, poll_interval=0.05) as running:
        yield running


def test_a_browser_asking_for_html_gets_the_page(server: LineageServer) -> None:
    status, headers, body = get(server, "/", {"Accept": "text/html,application/xhtml+xml"})
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert b'<ul id="forest"' in body


def test_an_api_client_asking_at_the_root_still_gets_the_endpoints(server: LineageServer) -> None:
    status, body = get_json(server, "/")
    assert status == 200 and "/tree" in body["endpoints"] and "/events" in body["endpoints"]


@pytest.mark.parametrize(
    ("path", "kind"), [("/static/app.js", "text/javascript"), ("/static/app.css", "text/css")]
)
def test_the_page_files_are_served_from_the_package(
    server: LineageServer, path: str, kind: str
) -> None:
    status, headers, body = get(server, path)
    name = path.rsplit("/", 1)[1]
    assert status == 200 and headers["content-type"].startswith(kind)
    assert body == files("lineage_es.serve").joinpath("static", name).read_bytes()


@pytest.mark.parametrize("name", PAGE_FILES)
def test_the_page_fetches_nothing_from_another_origin(name: str) -> None:
    text = files("lineage_es.serve").joinpath("static", name).read_text()
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.IGNORECASE)
    assert "@import" not in text and "@font-face" not in text


def test_the_page_may_talk_to_its_own_server_only(server: LineageServer) -> None:
    _, headers, _ = get(server, "/", {"Accept": "text/html"})
    policy = headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "access-control-allow-origin" not in headers


def test_forest_answers_every_root_with_names_and_its_position(
    server: LineageServer, store: str
) -> None:
    status, body = get_json(server, "/forest")
    with open_engine(store) as engine:
        position = engine.position()
    roots = {r["conversation"]: r for r in body["roots"]}
    assert status == 200 and body["position"] == position and body["live"] is True
    assert roots["R"]["children"][0]["name"] == "planner" and set(roots) == {"R", "S"}


def test_forest_at_an_earlier_position_is_not_live(server: LineageServer) -> None:
    status, body = get_json(server, "/forest?position=1")
    assert status == 200 and body["live"] is False
    assert [r["conversation"] for r in body["roots"]] == ["R"]


def test_agents_answers_each_node_with_its_relation(server: LineageServer) -> None:
    status, body = get_json(server, "/agents/A")
    relations = {m["conversation"]: m["relation"] for m in body}
    assert status == 200 and relations["A"] == "self" and relations["R"] == "parent"


def test_events_push_the_tree_of_a_root_another_writer_changed(
    server: LineageServer, store: str
) -> None:
    _, before = get_json(server, "/forest")
    with EventStream(server, f"/events?since={before['position']}") as stream:
        with open_engine(store) as writer:
            Feed(writer).child("S", "S", "B")
        kind, position, change = stream.next_event()
    with open_engine(store) as engine:
        last = engine.position()
    assert (kind, position, change["position"]) == ("change", last, last)
    assert [r["conversation"] for r in change["roots"]] == ["S"]
    assert [c["conversation"] for c in change["roots"][0]["children"]] == ["B"]


def test_events_catch_a_reconnecting_page_up_from_its_last_event_id(
    server: LineageServer, store: str
) -> None:
    _, before = get_json(server, "/forest")
    with open_engine(store) as writer:
        Feed(writer).child("R", "A", "C")
    with EventStream(server, Last_Event_ID=str(before["position"])) as stream:
        kind, _, change = stream.next_event()
    assert kind == "change" and change["from"] == before["position"]
    assert [r["conversation"] for r in change["roots"]] == ["R"]


def test_events_tell_a_page_from_a_later_position_to_reload(server: LineageServer) -> None:
    with EventStream(server, "/events?since=99999") as stream:
        kind, _, _ = stream.next_event()
    assert kind == "reload"


def test_events_say_a_deleted_root_is_gone(server: LineageServer, store: str) -> None:
    _, before = get_json(server, "/forest")
    with EventStream(server, f"/events?since={before['position']}") as stream:
        with open_engine(store) as writer:
            writer.delete("S")
        _, _, change = stream.next_event()
    assert change["gone"] == [{"host": "claude", "conversation": "S"}]


def test_the_server_stops_while_a_page_listens(store: str) -> None:
    with open_engine(store) as engine:
        running = make_server(engine, "127.0.0.1", 0)
        thread = serve_in_thread(running)
        with EventStream(running):
            running.shutdown()
        running.server_close()
    assert not thread.is_alive()
