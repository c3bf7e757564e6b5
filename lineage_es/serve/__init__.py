"""``lineage serve``: a read-only HTTP JSON API over the engine, for runtimes written in other
languages, and a live web page of the agent forest for people.

The JSON answers are :mod:`lineage_es.serve.api`'s; the page, its files and its event stream
are :mod:`lineage_es.serve.app`'s and :mod:`lineage_es.serve.stream`'s; the server (uvicorn,
with connection limits) is :mod:`lineage_es.serve.server`'s. It listens on the loopback
address unless told otherwise.
"""

from __future__ import annotations

from lineage_es.serve.api import (
    DEFAULT_BIND,
    DEFAULT_PORT,
    ENDPOINTS,
    PARAMETERS,
    ApiError,
    answer,
    is_loopback,
)
from lineage_es.serve.server import LineageServer, make_server, serve_in_thread, url_of

__all__ = [
    "DEFAULT_BIND",
    "DEFAULT_PORT",
    "ENDPOINTS",
    "PARAMETERS",
    "ApiError",
    "LineageServer",
    "answer",
    "is_loopback",
    "make_server",
    "serve_in_thread",
    "url_of",
]
