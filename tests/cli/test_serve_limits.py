"""`lineage serve` holds up against clients that misbehave: bounded connections, idle
timeouts, bounded parameters."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.serve import LineageServer, make_server, serve_in_thread
from tests.support.feed import Feed
from tests.support.web_server import get, get_json


@pytest.fixture
def engine() -> Iterator[Engine]:
    with open_engine("memory://") as opened:
        Feed(opened).root("R")
        yield opened


@contextmanager
def running(engine: Engine, **limits: float) -> Iterator[LineageServer]:
    server = make_server(engine, "127.0.0.1", 0, **limits)  # type: ignore[arg-type]
    serve_in_thread(server)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def half_sent(server: LineageServer) -> socket.socket:
    """A connection that sent the start of a request and never the rest."""
    address, port = server.server_address[:2]
    client = socket.create_connection((str(address), port), timeout=10)
    client.sendall(b"GET /tree HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return client


@pytest.mark.parametrize("digits", [20, 5000])
def test_a_position_with_too_many_digits_is_400_naming_it(engine: Engine, digits: int) -> None:
    with running(engine) as server:
        status, body = get_json(server, f"/tree?position={'9' * digits}")
    assert status == 400 and "position is too large" in body["error"]


def test_a_position_with_leading_zeros_is_still_read(engine: Engine) -> None:
    with running(engine) as server:
        status, _ = get_json(server, f"/tree?position={'0' * 30}1")
    assert status == 200


def test_half_sent_requests_do_not_hold_a_thread_each(engine: Engine) -> None:
    with running(engine) as server, ExitStack() as clients:
        before = threading.active_count()
        for _ in range(100):
            clients.enter_context(half_sent(server))
        assert get(server, "/tree")[0] == 200
        assert threading.active_count() - before < 10


def test_a_connection_over_the_limit_is_answered_503_and_closed(engine: Engine) -> None:
    with running(engine, max_connections=3) as server, ExitStack() as clients:
        for _ in range(3):
            clients.enter_context(half_sent(server))
        address, port = server.server_address[:2]
        with socket.create_connection((str(address), port), timeout=10) as extra:
            answer = extra.recv(65536)
    assert answer.startswith(b"HTTP/1.1 503 ") and b"too many connections" in answer


def test_a_request_left_half_sent_is_closed_after_the_idle_timeout(engine: Engine) -> None:
    with running(engine, idle_timeout=0.2) as server, half_sent(server) as client:
        assert client.recv(65536) == b""  # closed by the server (the socket waits up to 10 s)


def test_the_server_answers_again_once_idle_connections_are_closed(engine: Engine) -> None:
    with running(engine, max_connections=2, idle_timeout=0.2) as server:
        with half_sent(server) as first, half_sent(server) as second:
            assert first.recv(1) == b"" and second.recv(1) == b""
        assert get(server, "/tree")[0] == 200
