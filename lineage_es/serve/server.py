"""The HTTP server of ``lineage serve``: uvicorn running :mod:`lineage_es.serve.app`.

One event loop serves every connection (a connection costs no thread), with limits a
loopback daemon needs against a misbehaving client: at most ``max_connections`` open at once
(one more is answered 503 and closed), and a connection with no request in progress for
``idle_timeout`` seconds (a request sent halfway and abandoned, say) is closed. Engine calls
run on a bounded pool of worker threads.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from lineage_es.errors import LineageError
from lineage_es.serve.api import DEFAULT_BIND, DEFAULT_PORT, is_loopback
from lineage_es.serve.app import Log, make_app
from lineage_es.serve.changes import ForestChanges
from lineage_es.serve.stream import POLL_INTERVAL, Broadcaster

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.read.readonly import ViewReader

#: Connections open at once; each page holds one for its event stream.
MAX_CONNECTIONS = 256

#: Seconds a connection may stay open with no request in progress.
IDLE_TIMEOUT = 10.0

#: The largest request head (request line and headers) read, in bytes.
MAX_REQUEST_HEAD = 64 * 1024

_TOO_MANY_BODY = b'{"error":"too many connections: try again shortly"}\n'

#: What a connection over :data:`MAX_CONNECTIONS` is answered before it is closed.
TOO_MANY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nRetry-After: 1\r\nConnection: close\r\n\r\n%s"
    % (len(_TOO_MANY_BODY), _TOO_MANY_BODY)
)


def _bounded_protocol(max_connections: int, idle_timeout: float) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol, refusing connections over ``max_connections`` and
    closing those idle for ``idle_timeout`` seconds (uvicorn's own keep-alive timer starts
    only after a first response, so a request never finished would hold its connection)."""

    class BoundedH11Protocol(H11Protocol):
        _deadline = 0.0
        _timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(TOO_MANY)
                transport.close()
                return
            self._deadline = time.monotonic() + idle_timeout
            self._timer = self.loop.call_later(idle_timeout, self._check_idle)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._timer is not None:
                self._timer.cancel()
            super().connection_lost(exc)

        def _check_idle(self) -> None:
            now = time.monotonic()
            if self.cycle is not None and not self.cycle.response_complete:
                self._deadline = now + idle_timeout  # answering (or streaming): not idle
            if now >= self._deadline:
                self.transport.close()
                return
            self._timer = self.loop.call_later(self._deadline - now, self._check_idle)

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            super().data_received(data)
            if self.cycle is not cycle:  # a whole request arrived: a fresh allowance
                self._deadline = time.monotonic() + idle_timeout

    return BoundedH11Protocol


class LineageServer:
    """``lineage serve``'s server: listening once made, serving in :meth:`serve_forever`.

    ``log`` receives one line per request when set; ``broadcaster`` feeds the page's live
    updates."""

    def __init__(
        self,
        engine: Engine | ViewReader,
        listener: socket.socket,
        *,
        check_host_header: bool,
        log: Log | None = None,
        max_connections: int = MAX_CONNECTIONS,
        idle_timeout: float = IDLE_TIMEOUT,
        poll_interval: float = POLL_INTERVAL,
    ) -> None:
        self.log = log
        self.socket = listener
        self.broadcaster = Broadcaster(ForestChanges(engine), interval=poll_interval)
        app = make_app(
            engine,
            self.broadcaster,
            check_host_header=check_host_header,
            log=lambda: self.log,
            stopping=lambda: self._server.should_exit,
        )
        config = uvicorn.Config(
            app,
            http=_bounded_protocol(max_connections, idle_timeout),
            loop="asyncio",
            lifespan="on",
            log_config=None,
            access_log=False,
            server_header=False,
            headers=[("Server", "lineage-es")],
            limit_concurrency=max_connections + 1,  # its own check counts every connection
            timeout_keep_alive=max(1, int(idle_timeout)),
            timeout_graceful_shutdown=2,
            h11_max_incomplete_event_size=MAX_REQUEST_HEAD,
        )
        self._server = uvicorn.Server(config)
        self._serving = threading.Event()
        self._stopped = threading.Event()

    @property
    def server_address(self) -> tuple[Any, ...]:
        """The address and port it listens on."""
        return tuple(self.socket.getsockname())

    def serve_forever(self, poll_interval: float = 0.1) -> None:
        """Serve until :meth:`shutdown` (or, in the main thread, Ctrl-C: it returns, and
        the interrupt is raised again as uvicorn hands the signal back). ``poll_interval``
        is kept for the standard library's signature; uvicorn checks ten times a second."""
        del poll_interval
        self._serving.set()
        try:
            self._server.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def wait_serving(self) -> None:
        """Return once :meth:`serve_forever` has begun (it listens already: a connection
        made before then waits in the backlog)."""
        self._serving.wait()

    def shutdown(self) -> None:
        """Stop serving, and wait until it has stopped (streams end within a second)."""
        self._server.should_exit = True
        if self._serving.is_set():
            self._stopped.wait()

    def server_close(self) -> None:
        """Close the listening socket."""
        self.socket.close()


def make_server(
    engine: Engine | ViewReader,
    bind: str = DEFAULT_BIND,
    port: int = DEFAULT_PORT,
    *,
    allow_remote: bool = False,
    log: Callable[[str], None] | None = None,
    max_connections: int = MAX_CONNECTIONS,
    idle_timeout: float = IDLE_TIMEOUT,
    poll_interval: float = POLL_INTERVAL,
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
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((bind.strip("[]"), port))
        listener.listen(128)
    except OSError as exc:
        listener.close()
        raise LineageError(f"cannot listen on {bind}:{port}: {exc.strerror}") from None
    listener.setblocking(False)
    return LineageServer(
        engine,
        listener,
        check_host_header=not allow_remote,
        log=log,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
        poll_interval=poll_interval,
    )


def serve_in_thread(server: LineageServer, poll_interval: float = 0.05) -> threading.Thread:
    """Serve ``server`` on a daemon thread (tests, embedding); ``shutdown()`` stops it."""
    thread = threading.Thread(
        target=server.serve_forever, args=(poll_interval,), name="lineage-serve", daemon=True
    )
    thread.start()
    server.wait_serving()
    return thread


def url_of(server: LineageServer) -> str:
    """The base URL the server answers on."""
    address, port = server.server_address[:2]
    name = address.decode() if isinstance(address, bytes) else str(address)
    shown = f"[{name}]" if ":" in name else name
    return f"http://{shown}:{port}"
