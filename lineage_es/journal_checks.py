"""Checking an export's entries against the domain before an import writes any of them.

Each entry is decoded into its domain event exactly as the store decodes it when it loads an
aggregate (the application's mapper: its transcoder, then the event class's upcasting), and
applied to its aggregate with the domain's own ``mutate``, in file order. An entry is refused,
naming its line, when that fails, or when what it holds breaks a rule the domain keeps when it
journals: a field whose value is not of the type the event class declares, a time without a
zone, a NUL character (PostgreSQL text cannot hold one, and hooks refuse it), an aggregate id
that is not the one its creating event names, an event applied to another kind of aggregate,
or a child placed at a depth that does not follow its parent's in the same root. The rules
are read from the event classes themselves (their annotations, their ``TOPIC``, their
``mutate``), so a new event type is checked with no change here.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints
from uuid import UUID

import orjson
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import Mapper, StoredEvent

from lineage_es.domain import edge_events, events
from lineage_es.domain.ids import index_id, ledger_id, root_id
from lineage_es.domain.index import IndexCreated
from lineage_es.domain.ledger import LedgerOpened
from lineage_es.domain.topics import EVENT_CLASSES
from lineage_es.engine.guards import name_problem
from lineage_es.errors import JournalFormatError

#: Fields every event has that the mapper fills from the stored entry, not its state.
_FROM_THE_ENTRY = frozenset({"originator_id", "originator_version"})

#: What a created aggregate's id must be, by its creating event: the domain's own ids.
_CREATED_IDS: dict[str, Callable[[Any], UUID]] = {
    events.RootCreated.TOPIC: lambda e: root_id(e.host, e.conversation),
    IndexCreated.TOPIC: lambda e: index_id(e.host, e.conversation),
    LedgerOpened.TOPIC: lambda e: ledger_id(e.host, e.folder),
}

#: Events that place a node at a depth: (the node's parent, its depth) must fit the root.
_PLACING = (events.ChildPlaced, events.ChildRedated, events.ChildAdopted)


class _Refused(Exception):
    """An entry breaks a rule of the domain: the reason, for the caller to place at a line."""


def check_entries(mapper: Mapper[UUID], entries: Iterable[tuple[int, StoredEvent]]) -> None:
    """Decode and apply every ``(line, stored event)`` in order, as the store would; raise
    :class:`JournalFormatError` naming the first line whose event the domain refuses."""
    aggregates: dict[UUID, Aggregate] = {}
    for line, stored in entries:
        try:
            _check_entry(mapper, stored, aggregates)
        except _Refused as refused:
            raise JournalFormatError(str(refused), line=line) from None
        except Exception as exc:
            # Whatever the decoder or the domain's own ``mutate`` raises on this entry is the
            # reason it cannot be loaded: the store would fail the same way on every later load
            # of its aggregate, so it is refused here, with the error's own words.
            raise JournalFormatError(_failure(stored, exc), line=line) from None


def _failure(stored: StoredEvent, exc: Exception) -> str:
    """Why the decoder or the domain failed on an entry, in words."""
    what = _short(stored.topic)
    if isinstance(exc, KeyError) and exc.args:
        return f"{what} names {exc.args[0]!r}, which its aggregate does not hold"
    field = _unreadable_time(stored.state)
    if field is not None:
        return f"{field} is not a time: {exc}"
    return f"{what} cannot be applied: {type(exc).__name__}: {exc}"


def _unreadable_time(state: bytes) -> str | None:
    """The first field of a stored state tagged as a time whose text is none."""
    for name, value in orjson.loads(state).items():
        if type(value) is dict and value.get("_type_") == "datetime_iso":
            try:
                datetime.fromisoformat(value["_data_"])
            except (KeyError, TypeError, ValueError):
                return str(name)
    return None


def _short(topic: str) -> str:
    return topic.rsplit(":", maxsplit=1)[-1]


def _check_entry(
    mapper: Mapper[UUID], stored: StoredEvent, aggregates: dict[UUID, Aggregate]
) -> None:
    EVENT_CLASSES[stored.topic]  # registers the import ledger's topics on first use
    event: Any = mapper.to_domain_event(stored)
    _check_fields(event)
    aggregate_id = stored.originator_id
    assert isinstance(aggregate_id, UUID)
    aggregate = aggregates.get(aggregate_id)
    creates = isinstance(event, Aggregate.Created)
    if stored.originator_version == 1 and not creates:
        raise _Refused(f"{_short(stored.topic)} cannot begin aggregate {aggregate_id.hex}")
    if creates and stored.originator_version != 1:
        raise _Refused(f"{_short(stored.topic)} can only be version 1 of its aggregate")
    if creates:
        expected = _CREATED_IDS.get(stored.topic)
        if expected is not None and expected(event) != aggregate_id:
            raise _Refused(
                f"aggregate id {aggregate_id.hex} is not the id its fields name "
                f"({expected(event).hex})"
            )
    elif aggregate is not None and not stored.topic.startswith(
        f"{getattr(type(aggregate), 'TOPIC', '')}."
    ):
        raise _Refused(f"{_short(stored.topic)} cannot apply to a {type(aggregate).__name__}")
    if isinstance(event, _PLACING):
        assert aggregate is not None
        _check_placed(event, aggregate)
    if isinstance(event, events.Renamed) and (problem := name_problem(event.name)) is not None:
        raise _Refused(problem)
    aggregate = event.mutate(aggregate)
    assert aggregate is not None
    aggregates[aggregate_id] = aggregate
    if isinstance(event, edge_events.EdgeCorrected):
        nodes = getattr(aggregate, "nodes", {})
        for conversation in event.depths:
            node = nodes[conversation]
            _check_depth(conversation, node.get("parent"), node.get("depth"), nodes)


def _check_placed(event: Any, aggregate: Aggregate) -> None:
    """The depth a placing event gives its node must follow its parent's in the root."""
    if isinstance(event, events.ChildAdopted):
        parent, depth = event.node.get("parent"), event.node.get("depth")
    else:
        parent, depth = event.parent, event.depth
    name = event.conversation if event.conversation is not None else event.spawn_key
    _check_depth(name, parent, depth, getattr(aggregate, "nodes", {}))


def _check_depth(name: object, parent: object, depth: object, nodes: Mapping[str, Any]) -> None:
    if type(depth) is not int:
        raise _Refused(f"the depth of {name!r} is not a whole number: {depth!r}")
    if parent is None:  # hangs from its root with no edge (ambiguous): at a stated depth
        if depth < 1:
            raise _Refused(f"{name!r} is a child, at depth 1 or more, not {depth}")
        return
    parent_node = nodes.get(parent) if isinstance(parent, str) else None
    if parent_node is None:
        raise _Refused(f"{name!r} is placed under {parent!r}, which is no node of its root")
    if depth != parent_node.get("depth", -1) + 1:
        raise _Refused(
            f"{name!r} is at depth {depth} under {parent!r}, which is at depth "
            f"{parent_node.get('depth')}"
        )


def _check_fields(event: Any) -> None:
    """Every field the event's class declares holds a value of its declared type, and no
    text anywhere holds a NUL. A field the class gives a default is still required: events
    are stored whole, the view reads their stored state, and upcasting an older version
    fills the fields it lacked."""
    state = vars(event)
    for name, (hint, fits) in _field_checks(type(event)).items():
        if name not in state:  # every event is stored whole (upcasting fills older ones)
            raise _Refused(f"{_short(event.TOPIC)} has no {name}")
        value = state[name]
        if not fits(value):
            raise _Refused(f"{name} is not {_hint_name(hint)}: {value!r}")
    for name, value in state.items():
        if _holds_nul(value):
            raise _Refused(f"{name} holds a NUL character")


Check = Callable[[Any], bool]

_FIELD_CHECKS: dict[type[Any], dict[str, tuple[Any, Check]]] = {}


def _field_checks(cls: type[Any]) -> dict[str, tuple[Any, Check]]:
    """The fields an event class declares (its own and its bases'): each declared type, and
    the check of a value against it (made once per class)."""
    known = _FIELD_CHECKS.get(cls)
    if known is None:
        known = {
            name: (hint, _checker(hint))
            for name, hint in get_type_hints(cls).items()
            if name not in _FROM_THE_ENTRY and get_origin(hint) is not ClassVar
        }
        _FIELD_CHECKS[cls] = known
    return known


def _checker(hint: Any) -> Check:
    """Whether a value is of the declared type ``hint``, as strictly as the domain writes it
    (a bool is no int, a time must carry its zone). Hand-written over the few forms the event
    classes use (``str``, ``int``, ``bool``, ``datetime``, ``X | None``, ``list[X]``,
    ``dict[K, V]``, ``Any``): a validation library would be a new dependency for these
    dozen lines."""
    origin = get_origin(hint)
    if hint is Any:
        return lambda value: True
    if origin in (Union, types.UnionType):
        options = [_checker(arg) for arg in get_args(hint)]
        return lambda value: any(fits(value) for fits in options)
    if origin is list:
        item = _checker(get_args(hint)[0])
        return lambda value: type(value) is list and all(item(v) for v in value)
    if origin is dict:
        key, item = (_checker(arg) for arg in get_args(hint))
        return lambda value: (
            type(value) is dict and all(key(k) and item(v) for k, v in value.items())
        )
    if hint is type(None):
        return lambda value: value is None
    if hint is datetime:
        return lambda value: isinstance(value, datetime) and value.utcoffset() is not None
    if hint in (int, bool, str):
        return lambda value: type(value) is hint
    return lambda value: isinstance(value, hint)


def _hint_name(hint: Any) -> str:
    if hint is datetime:
        return "a time with its zone"
    return {int: "a whole number", bool: "true or false", str: "a string"}.get(
        hint, f"of type {hint}".replace("typing.", "").replace("NoneType", "None")
    )


def _holds_nul(value: Any) -> bool:
    if type(value) is str:
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(v) for v in value)
    return False
