"""A small read-only HTTP JSON API over the engine, for runtimes written in other languages.

``GET /tree``, ``/lineage/{id}``, ``/relation?a=&b=``, ``/chain/{id}`` answer what the
``lineage`` command answers, as JSON; a query parameter an endpoint does not take, or a value
it cannot read, is a 400 naming it (never ignored). Nothing can be written through it. It
listens on the loopback address unless told otherwise, and on loopback it also refuses
requests whose ``Host`` header names another machine (a web page cannot reach it by DNS
rebinding) and sends no CORS headers (a web page cannot read its answers).
"""

from __future__ import annotations

import ipaddress
import itertools
import socket
import sys
import threading
from collections.abc import Callable
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

import orjson

from lineage_es.errors import (
    AmbiguousConversation,
    LineageError,
    StoreError,
    UnknownConversation,
)
from lineage_es.facts import HOSTS
from lineage_es.hosts.base import parse_time
from lineage_es.model import to_json
from lineage_es.read.render import dumps_deep, forest_data

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

#: Where ``lineage serve`` listens unless told otherwise: this machine only.
DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 7421

ENDPOINTS = {
    "/tree": (
        "the live forest: ?all=1 adds stopped nodes (0/1, false/true), ?host=H, ?root=R; "
        "?at=ISO-8601 time or ?position=N: as it was then"
    ),
    "/lineage/{id}": "a conversation's lineage and live tree (?host=H)",
    "/relation?a=A&b=B": "what A is to B (?host=H)",
    "/chain/{id}": "the delegation chain up to the root (?host=H)",
}

#: The query parameters each endpoint (as :func:`_endpoint_of` names it) takes: any other is a
#: 400, so a typo (``?al=1``) is not answered as if it were absent.
PARAMETERS: dict[str, tuple[str, ...]] = {
    "/": (),
    "/tree": ("all", "host", "root", "at", "position"),
    "/lineage/": ("host",),
    "/chain/": ("host",),
    "/relation": ("a", "b", "host"),
}


class ApiError(Exception):
    """An answer other than 200: its status and reason."""

    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def is_loopback(address: str) -> bool:
    """Whether ``address`` (a name or an IP address) names this machine only."""
    name = address.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Encoded(bytes):
    """An answer already written as JSON: the tree, which may be nested deeper than orjson
    writes (:func:`lineage_es.read.render.dumps_deep`)."""


def answer(engine: Engine, target: str) -> Any:
    """The JSON data for a GET of ``target`` (path and query), or :class:`Encoded` JSON;
    :class:`ApiError` otherwise."""
    parts = urlsplit(target)
    query = parse_qs(parts.query, keep_blank_values=True)
    path = parts.path
    endpoint = _endpoint_of(path)
    _refuse_unknown_parameters(query, endpoint)
    host = _host_parameter(query)
    if endpoint == "/":
        return {"endpoints": ENDPOINTS}
    if endpoint == "/tree":
        include = _yes_or_no(query, "all")
        root = _last_value(query, "root")
        at, position = _time_parameter(query, "at"), _position_parameter(query, "position")
        if position is not None and position > (last := engine.position()):
            raise ApiError(
                HTTPStatus.BAD_REQUEST,
                f"position {position} is past the journal's end: its last position is {last}",
            )
        if at is None and position is None:
            forest = engine.forest(host, include_stopped=include, root=root)
        else:
            past = engine.as_of(position=position, time=at)
            forest = past.forest(host, include_stopped=include, root=root)
        return Encoded(dumps_deep(forest_data(forest)))
    if endpoint == "/lineage/":
        return to_json(engine.lineage(_conversation_in_path(path, endpoint), host))
    if endpoint == "/chain/":
        return to_json(engine.chain(_conversation_in_path(path, endpoint), host))
    a, b = _last_value(query, "a"), _last_value(query, "b")  # /relation, the last of PARAMETERS
    if not a or not b:
        raise ApiError(HTTPStatus.BAD_REQUEST, "give both conversations: /relation?a=A&b=B")
    return {"a": a, "b": b, "relation": engine.relation(a, b, host)}


def _endpoint_of(path: str) -> str:
    """The endpoint ``path`` asks for, as :data:`PARAMETERS` names it; 404 for none."""
    if path in ("", "/"):
        return "/"
    for endpoint in list(PARAMETERS)[1:]:  # "/" itself is a prefix of every path
        if path == endpoint or (endpoint.endswith("/") and path.startswith(endpoint)):
            return endpoint
    raise ApiError(HTTPStatus.NOT_FOUND, f"no such endpoint {path!r}; try /")


def _refuse_unknown_parameters(query: dict[str, list[str]], endpoint: str) -> None:
    """Refuse the first parameter ``endpoint`` does not take, naming it and what it takes."""
    known = PARAMETERS[endpoint]
    for key in query:
        if key not in known:
            takes = f"it takes {', '.join(known)}" if known else "it takes none"
            raise ApiError(
                HTTPStatus.BAD_REQUEST, f"unknown parameter {key!r} for {endpoint}: {takes}"
            )


def _time_parameter(query: dict[str, list[str]], key: str) -> datetime | None:
    """An ISO-8601 time, read as ``lineage tree --at`` reads it (no zone: UTC)."""
    value = _last_value(query, key)
    if value is None:
        return None
    moment = parse_time(value)
    if moment is None:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"{key} must be an ISO-8601 time, not {value!r}")
    return moment


def _position_parameter(query: dict[str, list[str]], key: str) -> int | None:
    """A journal position: a whole number, 0 or more (ASCII digits only)."""
    value = _last_value(query, key)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()):
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"{key} must be a journal position (0 or more), not {value!r}"
        )
    return int(value)


def _last_value(query: dict[str, list[str]], key: str) -> str | None:
    """The value of parameter ``key`` (the last one, when it is given twice), else None."""
    values = query.get(key)
    return values[-1] if values else None


#: The spellings a yes/no parameter accepts (any case); anything else is a 400.
FLAGS = {"1": True, "true": True, "0": False, "false": False}


def _yes_or_no(query: dict[str, list[str]], key: str) -> bool:
    """A yes/no parameter (:data:`FLAGS`); absent is no."""
    value = _last_value(query, key)
    if value is None:
        return False
    try:
        return FLAGS[value.lower()]
    except KeyError:
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"{key} must be 1 or 0 (true or false), not {value!r}"
        ) from None


def _host_parameter(query: dict[str, list[str]]) -> str | None:
    """``?host=``: one of :data:`lineage_es.facts.HOSTS`; absent or empty is any host."""
    host = _last_value(query, "host")
    if host is not None and host not in HOSTS:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"host must be one of {', '.join(HOSTS)}")
    return host or None


def _conversation_in_path(path: str, prefix: str) -> str:
    """The URL-decoded conversation id after ``prefix`` in ``path``; 400 when it is empty."""
    conversation = unquote(path[len(prefix) :])
    if not conversation:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"name a conversation: {prefix}ID")
    return conversation


#: What a logged request line has its control characters and backslashes written as, as
#: the standard library's own ``log_message`` does: a client must not write escape sequences
#: to the operator's terminal.
CONTROL_ESCAPES = str.maketrans(
    {c: f"\\x{c:02x}" for c in itertools.chain(range(0x20), range(0x7F, 0xA0))}
    | {ord("\\"): "\\\\"}
)


def make_handler(engine: Engine, *, check_host_header: bool) -> type[BaseHTTPRequestHandler]:
    """A request handler class answering from ``engine``."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "lineage-es"
        sys_version = ""
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._reply(include_body=True)

        def do_HEAD(self) -> None:
            self._reply(include_body=False)

        def _refuse_write(self) -> None:
            self._send(
                HTTPStatus.METHOD_NOT_ALLOWED,
                {"error": "read-only: only GET and HEAD are answered"},
                extra={"Allow": "GET, HEAD"},
            )

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse_write  # noqa: N815

        def _reply(self, *, include_body: bool) -> None:
            try:
                asked_for = _host_of_header(self.headers.get("Host", ""))
                if check_host_header and not is_loopback(asked_for):
                    raise ApiError(HTTPStatus.FORBIDDEN, "this server answers loopback names only")
                body = answer(engine, self.path)
                status = HTTPStatus.OK
            except ApiError as exc:
                status, body = exc.status, {"error": exc.reason}
            except UnknownConversation as exc:
                status, body = HTTPStatus.NOT_FOUND, {"error": str(exc)}
            except AmbiguousConversation as exc:
                status, body = HTTPStatus.CONFLICT, {"error": str(exc), "hosts": exc.hosts}
            except StoreError as exc:  # the store failed, not the request: worth a retry
                status, body = HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(exc)}
            except LineageError as exc:
                status, body = HTTPStatus.BAD_REQUEST, {"error": str(exc)}
            except Exception as exc:  # the server keeps serving; the client learns why
                status = HTTPStatus.INTERNAL_SERVER_ERROR
                body = {"error": f"{type(exc).__name__}: {exc}"}
            self._send(status, body, include_body=include_body)

        def _send(
            self,
            status: HTTPStatus,
            body: Any,
            *,
            include_body: bool = True,
            extra: dict[str, str] | None = None,
        ) -> None:
            data = (body if isinstance(body, Encoded) else orjson.dumps(body)) + b"\n"
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            for key, value in (extra or {}).items():
                self.send_header(key, value)
            self.end_headers()
            if include_body:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            log = getattr(self.server, "log", None)
            if log is not None:
                message = (format % args).translate(CONTROL_ESCAPES)
                log(f"{self.address_string()} {message}")

    return Handler


def _host_of_header(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8080`` → ``::1``).

    Not :func:`urllib.parse.urlsplit`: it raises on an unclosed ``[``, and a header is the
    client's to get wrong; here it is kept whole, and refused as no loopback name."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class LineageServer(ThreadingHTTPServer):
    """The HTTP server; ``log`` receives one line per request when set."""

    daemon_threads = True
    log: Callable[[str], None] | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up early is not worth a traceback."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class LineageServer6(LineageServer):
    """The same, on an IPv6 address."""

    address_family = socket.AF_INET6


def make_server(
    engine: Engine,
    bind: str = DEFAULT_BIND,
    port: int = DEFAULT_PORT,
    *,
    allow_remote: bool = False,
    log: Callable[[str], None] | None = None,
) -> LineageServer:
    """A server listening on address ``bind``, port ``port`` (0: any free one), not yet
    serving.

    Refuses an address other than loopback unless ``allow_remote``: the journal names every
    project and prompt a person works on.
    """
    if not 0 <= port <= 65535:
        raise LineageError(f"port {port} is not a TCP port: use 0 (any free one) to 65535")
    if not is_loopback(bind) and not allow_remote:
        raise LineageError(
            f"refusing to listen on {bind} (--bind): it is reachable from other machines, and "
            "the journal names every project you work on; pass --allow-remote if you mean it"
        )
    try:
        kind = LineageServer6 if ":" in bind else LineageServer
        handler = make_handler(engine, check_host_header=not allow_remote)
        server = kind((bind.strip("[]"), port), handler)
    except OSError as exc:
        raise LineageError(f"cannot listen on {bind}:{port}: {exc.strerror}") from None
    server.log = log
    return server


def serve_in_thread(server: LineageServer, poll_interval: float = 0.05) -> threading.Thread:
    """Serve ``server`` on a daemon thread (tests, embedding); ``shutdown()`` stops it within
    ``poll_interval`` seconds."""
    thread = threading.Thread(
        target=server.serve_forever, args=(poll_interval,), name="lineage-serve", daemon=True
    )
    thread.start()
    return thread


def url_of(server: LineageServer) -> str:
    """The base URL the server answers on."""
    address, port = server.server_address[:2]
    name = address.decode() if isinstance(address, bytes) else str(address)
    shown = f"[{name}]" if ":" in name else name
    return f"http://{shown}:{port}"
