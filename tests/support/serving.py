"""A ``lineage serve`` server running in a thread of the test, on a free local port."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from lineage_es.serve import LineageServer, make_server, serve_in_thread


@contextmanager
def serving(answerer: Any, **options: Any) -> Iterator[LineageServer]:
    """A server answering from ``answerer`` (an engine or a view reader) on 127.0.0.1, any
    free port, serving while in use; ``options`` go to :func:`make_server`."""
    running = make_server(answerer, "127.0.0.1", 0, **options)
    serve_in_thread(running)
    try:
        yield running
    finally:
        running.shutdown()
        running.server_close()
