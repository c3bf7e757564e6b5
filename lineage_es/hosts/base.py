"""What every host adapter shares: the adapter interface, payload limits and idempotency keys."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson

from lineage_es.errors import PayloadError
from lineage_es.facts import Claim, Host, Observation

#: Payloads deeper than this are refused: no real hook payload nests this far.
MAX_DEPTH = 64


class HostAdapter(Protocol):
    """Turns one host's payloads into host-neutral observations."""

    host: Host

    def recognises(self, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` looks like this host's hook payload."""
        ...

    def observe(self, payload: Mapping[str, Any], *, at: datetime | None = None) -> Observation:
        """What the payload means; raises :class:`PayloadError` when it cannot be understood."""
        ...

    def claim(self, meta: Mapping[str, Any]) -> Claim | None:
        """What an MCP tool call's ``_meta`` states about its caller, if anything."""
        ...


def payload_key(payload: Mapping[str, Any], ignore: Iterable[str] = ()) -> str:
    """A digest of ``payload`` without the keys in ``ignore`` (receipt timestamps)."""
    skip = set(ignore)
    body = {k: v for k, v in payload.items() if k not in skip} if skip else dict(payload)
    try:
        raw = orjson.dumps(body, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)
    except TypeError as exc:
        raise PayloadError(f"payload is not plain JSON data: {exc}") from None
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def require_str(payload: Mapping[str, Any], key: str, host: Host) -> str:
    """The non-empty string field ``key``, or a :class:`PayloadError` naming it."""
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        if key not in payload:
            raise PayloadError(f"missing required field {key!r}", host=host)
        raise PayloadError(f"field {key!r} must be a non-empty string", host=host)
    return value


def optional_str(payload: Mapping[str, Any], key: str, host: Host) -> str | None:
    """The string field ``key`` when present and non-empty; a type error otherwise."""
    value = payload.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PayloadError(f"field {key!r} must be a string", host=host)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse absurdly deep payloads before any adapter walks them."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise PayloadError(f"payload nests deeper than {limit} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 time (``Z`` allowed) as an aware UTC datetime; ``None`` when absent or bad."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
