"""An orjson transcoder for stored events, compatible with eventsourcing's JSON format.

Events and snapshots hold plain JSON data apart from eventsourcing's own datetimes, which are
written as ``{"_type_": "datetime_iso", "_data_": ...}`` exactly as the library's
``JSONTranscoder`` writes them, so either can read the other's journal.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

import orjson
from eventsourcing.persistence import Transcoder

_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_NON_STR_KEYS


def _encode_extra(obj: Any) -> Any:
    if isinstance(obj, datetime):
        return {"_type_": "datetime_iso", "_data_": obj.isoformat()}
    if isinstance(obj, UUID):
        return {"_type_": "uuid_hex", "_data_": obj.hex}
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    raise TypeError(f"cannot store a {type(obj).__name__}")


def _revive_tagged(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 2 and "_type_" in value and "_data_" in value:
        kind = value["_type_"]
        if kind == "datetime_iso":
            return datetime.fromisoformat(value["_data_"])
        if kind == "uuid_hex":
            return UUID(value["_data_"])
    return value


#: Encoded states at least this long are kept as orjson returns them.
_COPY_BELOW = 2048


class OrjsonTranscoder(Transcoder):
    """Encodes event state with orjson; revives tagged values one level into the state (and
    one level into a snapshot's ``state``), which is as deep as eventsourcing puts them."""

    def encode(self, obj: Any) -> bytes:
        encoded = orjson.dumps(obj, default=_encode_extra, option=_ORJSON_OPTIONS)
        # orjson 3.13 returns a small result inside a 4 KiB allocation; a
        # memory store keeps every one, so keep an exact copy instead (about 15x smaller).
        return bytes(memoryview(encoded)) if len(encoded) < _COPY_BELOW else encoded

    def decode(self, data: bytes) -> Any:
        state = orjson.loads(data)
        if isinstance(state, dict):
            for key, value in state.items():
                if isinstance(value, dict):
                    state[key] = _revive_tagged(value)
            inner = state.get("state")
            if isinstance(inner, dict):
                for key, value in inner.items():
                    if isinstance(value, dict):
                        inner[key] = _revive_tagged(value)
        return state
