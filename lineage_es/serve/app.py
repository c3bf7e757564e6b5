"""The ASGI application behind ``lineage serve``: the JSON API, the web page and its stream.

A browser asking for HTML at ``/`` gets the page (``static/``, shipped in the wheel: plain
HTML, CSS and JavaScript, nothing fetched from elsewhere); every other client gets the JSON
API (:mod:`lineage_es.serve.api`), ``/events`` the page's Server-Sent Events
(:mod:`lineage_es.serve.stream`). Only GET and HEAD are answered. On loopback it refuses
requests whose ``Host`` header names another machine (a web page elsewhere cannot reach it by
DNS rebinding), and it sends no CORS headers (a web page elsewhere cannot read its answers).
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from http import HTTPStatus
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lineage_es.errors import AmbiguousConversation, LineageError, StoreError, UnknownConversation
from lineage_es.serve.api import ApiError, Encoded, answer, is_loopback
from lineage_es.serve.stream import Broadcaster

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.read.readonly import ViewReader

#: The page's files, by the path they are served at, and their media types.
STATIC = {
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
}

#: The page may load its own files and talk to its own server, nothing else.
PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

#: What a logged request line has its control characters and backslashes written as, as
#: the standard library's own ``log_message`` does: a client must not write escape sequences
#: to the operator's terminal.
CONTROL_ESCAPES = str.maketrans(
    {c: f"\\x{c:02x}" for c in itertools.chain(range(0x20), range(0x7F, 0xA0))}
    | {ord("\\"): "\\\\"}
)

#: The most characters of a request's target a log line shows.
LOGGED_TARGET = 512

Log = Callable[[str], None]


def read_static(name: str) -> bytes:
    """One of the page's files, from the installed package."""
    return files("lineage_es.serve").joinpath("static", name).read_bytes()


def make_app(
    engine: Engine | ViewReader,
    broadcaster: Broadcaster,
    *,
    check_host_header: bool,
    log: Callable[[], Log | None],
    stopping: Callable[[], bool],
) -> ASGIApp:
    """The application answering from ``engine``; ``log()`` is where request lines go (or
    ``None``), ``stopping()`` says the server is stopping (streams end)."""
    page = {path: (read_static(name), kind) for path, (name, kind) in STATIC.items()}
    index = read_static("index.html")

    async def endpoint(request: Request) -> Response:
        response = await _respond(request)
        writer = log()
        if writer is not None:
            writer(_log_line(request, response.status_code))
        return response

    async def _respond(request: Request) -> Response:
        if request.method not in ("GET", "HEAD"):
            return _json(
                HTTPStatus.METHOD_NOT_ALLOWED,
                {"error": "read-only: only GET and HEAD are answered"},
                {"Allow": "GET, HEAD"},
            )
        if check_host_header and not is_loopback(_host_of_header(request.headers.get("host", ""))):
            return _json(HTTPStatus.FORBIDDEN, {"error": "this server answers loopback names only"})
        path = request.url.path
        if path == "/" and _wants_html(request):
            return Response(index, media_type="text/html; charset=utf-8", headers=_page_headers())
        if path in page:
            body, kind = page[path]
            return Response(body, media_type=kind, headers=_page_headers())
        if path == "/events":
            return await _events(request)
        return await anyio.to_thread.run_sync(_answer, _target(request))

    async def _events(request: Request) -> Response:
        try:
            since = _since(request)
        except ApiError as exc:
            return _json(exc.status, {"error": exc.reason})
        stream: AsyncIterator[bytes] = broadcaster.events(since, stopping)
        return StreamingResponse(
            stream,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    def _answer(target: str) -> Response:
        try:
            return _json(HTTPStatus.OK, answer(engine, target, broadcaster.changes))
        except ApiError as exc:
            return _json(exc.status, {"error": exc.reason})
        except UnknownConversation as exc:
            return _json(HTTPStatus.NOT_FOUND, {"error": str(exc)})
        except AmbiguousConversation as exc:
            return _json(HTTPStatus.CONFLICT, {"error": str(exc), "hosts": exc.hosts})
        except StoreError as exc:  # the store failed, not the request: worth a retry
            return _json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": str(exc)})
        except LineageError as exc:
            return _json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except Exception as exc:  # the server keeps serving; the client learns why
            return _json(
                HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"}
            )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(broadcaster.run)
            yield
            tasks.cancel_scope.cancel()

    lifespan_only = Starlette(lifespan=lifespan)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        # Every path is this one endpoint's (ids may hold newlines, which routes do not match).
        if scope["type"] == "http":
            response = await endpoint(Request(scope, receive))
            await response(scope, receive, send)
        else:
            await lifespan_only(scope, receive, send)

    return app


def _json(status: HTTPStatus, body: Any, extra: dict[str, str] | None = None) -> Response:
    data = (body if isinstance(body, Encoded) else orjson.dumps(body)) + b"\n"
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} | (extra or {})
    return Response(data, status_code=status, media_type="application/json", headers=headers)


def _page_headers() -> dict[str, str]:
    return {
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": PAGE_POLICY,
        "Referrer-Policy": "no-referrer",
    }


def _wants_html(request: Request) -> bool:
    """Whether the client asks for a page (a browser's ``Accept`` names ``text/html``)."""
    return "text/html" in request.headers.get("accept", "")


def _target(request: Request) -> str:
    """The request's path (still URL-encoded) and query, as :func:`answer` reads them."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string", b"")
    target = raw.decode("latin-1")
    return f"{target}?{query.decode('latin-1')}" if query else target


def _since(request: Request) -> int | None:
    """Where a page's stream starts: ``Last-Event-ID`` (a reconnect), else ``?since=``."""
    given = request.headers.get("last-event-id") or request.query_params.get("since")
    unknown = set(request.query_params) - {"since"}
    if unknown:
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"unknown parameter {sorted(unknown)[0]!r} for /events"
        )
    if given is None or given == "":
        return None
    if not (given.isascii() and given.isdigit()) or len(given) > 19:
        raise ApiError(HTTPStatus.BAD_REQUEST, "since must be a journal position (0 or more)")
    return int(given)


def _log_line(request: Request, status: int) -> str:
    """``ADDRESS "METHOD TARGET HTTP/V" STATUS``, the target URL-decoded and escaped."""
    client = request.client.host if request.client else "-"
    target = unquote(_target(request), errors="replace")
    if len(target) > LOGGED_TARGET:
        target = f"{target[:LOGGED_TARGET]}... ({len(target)} characters)"
    version = request.scope.get("http_version", "1.1")
    line = f'"{request.method} {target} HTTP/{version}" {status}'
    return f"{client} {line.translate(CONTROL_ESCAPES)}"


def _host_of_header(header: str) -> str:
    """The host part of a ``Host`` header (``[::1]:8080`` → ``::1``).

    Not :func:`urllib.parse.urlsplit`: it raises on an unclosed ``[``, and a header is the
    client's to get wrong; here it is kept whole, and refused as no loopback name."""
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header
