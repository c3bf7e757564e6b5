"""A Codex rollout's rows as ``lineage import`` looks at them: their types, the bytes that tell
which can carry a lineage fact unparsed, the few fields it routes parsed rows by.

A Codex row names its kind in its first bytes (``{"timestamp":…,"type":…,"payload":{"type":…``),
so each line is looked at there (:func:`whole_row_kind`, :func:`may_carry_fact`) and parsed
only when it can carry a lineage fact: headers, spawn, close and resume calls and the outputs of
spawn calls, sub-agent activity, a child's turn ends. What a parsed row means is
:class:`~lineage_es.hosts.codex_rollout.RolloutReader`'s business. Light (no adapter): form
detection (:mod:`.detect`) reads :data:`ROW_TYPES` too.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from lineage_es.hosts.base import parse_time

#: Rollout line types (0.7x to 0.15x) that can say something of lineage, or that a thread's
#: reader keeps track of (a header, a compaction, a continuation file's base).
LINEAGE_ROW_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted", "history_base"}
)

#: Rollout line types that say nothing of lineage (the world state a turn saw): ``lineage
#: import`` passes over them as known rows, never counting them as rows of an unknown type.
NO_LINEAGE_ROW_TYPES = frozenset({"world_state"})

#: Every rollout line type. Others are counted as unknown and passed over.
ROW_TYPES = LINEAGE_ROW_TYPES | NO_LINEAGE_ROW_TYPES

_ROW_TYPE_BYTES = frozenset(kind.encode() for kind in ROW_TYPES)

#: How far into a line its kind (and its payload's) is looked for.
_HEAD_BYTES = 256
_TYPE_FIELD = re.compile(rb'"type":"([^"]*)"')
#: What every row in the compact JSON Codex writes holds (not a spaced-out rewrite).
_COMPACT_TYPE_BYTES = b'"type":"'
_TIMESTAMP_BYTES = b'"timestamp"'
#: Events that can carry a lineage fact, as they appear in a line's first bytes.
_EVENTS = (b'"sub_agent_activity"', b'"collab_agent_spawn_end"', b'"collab_close_end"')
#: A child's turn ends (they stop it until its next row).
_TURN_ENDS = (b'"task_complete"', b'"turn_aborted"')
_CALLS = (b"spawn_agent", b"close_agent", b"resume_agent")


def is_compact(raw: bytes) -> bool:
    """Whether a line is in Codex's compact JSON (else every line of its file is parsed)."""
    return _COMPACT_TYPE_BYTES in raw


def is_timed_line(raw: bytes) -> bool:
    """Whether a line's first bytes hold a row's time."""
    return _TIMESTAMP_BYTES in raw[:_HEAD_BYTES]


def whole_row_kind(raw: bytes) -> bytes | None:
    """The type a line's first bytes name, when it is a known row type and the line looks
    like one whole row; ``None`` otherwise (the line is parsed to count it by its fault)."""
    kind = _TYPE_FIELD.search(raw[:_HEAD_BYTES])
    if kind is None or kind.group(1) not in _ROW_TYPE_BYTES or not _looks_whole_row(raw):
        return None
    return kind.group(1)


def may_carry_fact(
    kind: bytes, raw: bytes, spawn_calls: Collection[str], *, is_child: bool
) -> bool:
    """Whether a whole row of type ``kind`` (:func:`whole_row_kind`) can carry a lineage
    fact, judged from its bytes, in a thread with the open ``spawn_calls`` (a child's when
    ``is_child``)."""
    head = raw[:_HEAD_BYTES]
    if kind == b"session_meta":
        return True
    if kind == b"response_item":
        if b'"function_call"' in head:
            return any(call in raw for call in _CALLS)
        if b'"function_call_output"' in head and spawn_calls:
            return any(key.encode() in raw for key in spawn_calls)
        return False
    if kind == b"event_msg":
        if b'"item_completed"' in head:
            return b"SubAgentActivity" in raw
        if is_child and any(end in head for end in _TURN_ENDS):
            return True
        return any(event in head for event in _EVENTS)
    return False


def _looks_whole_row(raw: bytes) -> bool:
    """Whether a line looks like one whole row, judged without parsing it: it ends its
    object, and no second row begins inside it (a line torn off where the next write went
    on). A nested object keyed ``timestamp`` looks like the latter; parsing settles it."""
    return raw.endswith((b"}\n", b"}", b"}\r\n")) and raw.find(b'{"timestamp"', 1) < 0


def is_known_row(row: Mapping[str, Any]) -> bool:
    """Whether a parsed row is of a known type (:data:`ROW_TYPES`)."""
    return row.get("type") in ROW_TYPES


def is_header(row: Mapping[str, Any]) -> bool:
    """Whether a parsed row is a ``session_meta`` (a thread's header, or a copy of one)."""
    return row.get("type") == "session_meta"


def row_time(row: Mapping[str, Any]) -> datetime | None:
    """When a row was written; ``None`` when it has no readable time."""
    return parse_time(row.get("timestamp"))
