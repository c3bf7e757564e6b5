"""The JSON answers of ``lineage serve``, for runtimes written in other languages and for
its own web page.

``GET /tree``, ``/lineage/{id}``, ``/relation?a=&b=``, ``/chain/{id}`` answer what the
``lineage`` command answers, as JSON; ``/forest`` and ``/agents?as=`` answer what the page
draws. A query parameter an endpoint does not take, or a value it cannot read, is a 400
naming it (never ignored). Nothing can be written through it.
"""

from __future__ import annotations

import ipaddress
from datetime import datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from lineage_es.hosts.base import parse_time
from lineage_es.model import to_json
from lineage_es.read.prefixes import resolve_prefix
from lineage_es.read.render import dumps_deep, forest_data
from lineage_es.serve.changes import ForestChanges, node_data
from lineage_es.vocabulary import HOSTS

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.read.readonly import ViewReader

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
    "/agents/{id}": "every node of its host, each with its relation to it (?host=H)",
    "/forest": (
        "what the web page draws: {position, roots}, stopped nodes included, names and "
        "last_seen where known (?host=H; ?at= or ?position=: as it was then)"
    ),
    "/events": (
        "Server-Sent Events: each a change, {from, position, roots, gone}, the touched roots' "
        "trees whole, as /forest draws them (?since=N or Last-Event-ID: catch up from N)"
    ),
}

#: The query parameters each endpoint (as :func:`_endpoint_of` names it) takes: any other is a
#: 400, so a typo (``?al=1``) is not answered as if it were absent.
PARAMETERS: dict[str, tuple[str, ...]] = {
    "/": (),
    "/tree": ("all", "host", "root", "at", "position"),
    "/lineage/": ("host",),
    "/chain/": ("host",),
    "/relation": ("a", "b", "host"),
    "/agents/": ("host",),
    "/forest": ("host", "at", "position"),
    "/events": ("since",),
}

#: The most digits a journal position may have: a 64-bit integer's. More is a 400 (Python
#: refuses to read an integer of over 4,300 digits, and no journal is that long).
POSITION_DIGITS = 19


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


def answer(engine: Engine | ViewReader, target: str, changes: ForestChanges | None = None) -> Any:
    """The JSON data for a GET of ``target`` (path and query), or :class:`Encoded` JSON;
    :class:`ApiError` otherwise. ``/forest`` tells ``changes`` (when given) the roots it
    drew, so that later changes to them can be named."""
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
        at, position = _moment_parameters(engine, query)
        if at is None and position is None:
            forest = engine.forest(host, include_stopped=include, root=root)
        else:
            past = engine.as_of(position=position, time=at)
            forest = past.forest(host, include_stopped=include, root=root)
        return Encoded(dumps_deep(forest_data(forest)))
    if endpoint == "/forest":
        return _page_forest(engine, query, host, changes)
    if endpoint == "/agents/":
        return to_json(engine.agents(_named_in_path(engine, path, endpoint, host), host))
    if endpoint == "/lineage/":
        return to_json(engine.lineage(_named_in_path(engine, path, endpoint, host), host))
    if endpoint == "/chain/":
        return to_json(engine.chain(_named_in_path(engine, path, endpoint, host), host))
    if endpoint != "/relation":  # /events streams: the app answers it, never this function
        raise ApiError(HTTPStatus.NOT_ACCEPTABLE, f"{endpoint} is a stream of events")
    a, b = _last_value(query, "a"), _last_value(query, "b")
    if not a or not b:
        raise ApiError(HTTPStatus.BAD_REQUEST, "give both conversations: /relation?a=A&b=B")
    a, b = _resolved(engine, a, host), _resolved(engine, b, host)
    return {"a": a, "b": b, "relation": engine.relation(a, b, host)}


def _page_forest(
    engine: Engine | ViewReader,
    query: dict[str, list[str]],
    host: str | None,
    changes: ForestChanges | None,
) -> Encoded:
    """``/forest``: the whole forest as the page draws it, with the position it is as of
    (the live one is read first, so a change after it is never missed, only sent twice)."""
    at, position = _moment_parameters(engine, query)
    if at is None and position is None:
        position = engine.position()
        forest = engine.forest(host, include_stopped=True)
        if changes is not None:
            changes.remember(forest)
        moment: dict[str, object] = {"position": position, "live": True}
    else:
        forest = engine.as_of(position=position, time=at).forest(host, include_stopped=True)
        moment = {"position": position, "at": at.isoformat() if at else None, "live": False}
    return Encoded(dumps_deep({**moment, "roots": node_data(forest)}))


def _moment_parameters(
    engine: Engine | ViewReader, query: dict[str, list[str]]
) -> tuple[datetime | None, int | None]:
    """``?at=`` and ``?position=``: a time and a position no later than the journal's end."""
    at, position = _time_parameter(query, "at"), _position_parameter(query, "position")
    if position is not None and position > (last := engine.position()):
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            f"position {position} is past the journal's end: its last position is {last}",
        )
    return at, position


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
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            f"{key} must be an ISO-8601 time in the years 1 to 9999 (UTC), not {value!r}",
        )
    return moment


def _position_parameter(query: dict[str, list[str]], key: str) -> int | None:
    """A journal position: a whole number, 0 or more (ASCII digits only, at most
    :data:`POSITION_DIGITS` of them)."""
    value = _last_value(query, key)
    if value is None:
        return None
    if not (value.isascii() and value.isdigit()):
        shown = repr(value) if len(value) <= 40 else f"{value[:40]!r}... ({len(value)} characters)"
        raise ApiError(
            HTTPStatus.BAD_REQUEST, f"{key} must be a journal position (0 or more), not {shown}"
        )
    if len(value.lstrip("0")) > POSITION_DIGITS:
        raise ApiError(
            HTTPStatus.BAD_REQUEST,
            f"{key} is too large ({len(value)} digits): a journal position has at most "
            f"{POSITION_DIGITS}",
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


def _resolved(engine: Engine | ViewReader, given: str, host: str | None) -> str:
    """The conversation id ``given`` names, whole or as a unique prefix, as the ``lineage``
    command reads it (:func:`~lineage_es.read.prefixes.resolve_prefix`)."""
    engine.catch_up()
    return resolve_prefix(engine.queries.view, given, host)


def _named_in_path(engine: Engine | ViewReader, path: str, prefix: str, host: str | None) -> str:
    """The conversation the id (or unique prefix) after ``prefix`` in ``path`` names."""
    return _resolved(engine, _conversation_in_path(path, prefix), host)


def _conversation_in_path(path: str, prefix: str) -> str:
    """The URL-decoded conversation id after ``prefix`` in ``path``; 400 when it is empty."""
    conversation = unquote(path[len(prefix) :])
    if not conversation:
        raise ApiError(HTTPStatus.BAD_REQUEST, f"name a conversation: {prefix}ID")
    return conversation
