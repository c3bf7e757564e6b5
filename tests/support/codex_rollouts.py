"""Codex rollouts written for tests: the rows of a rollout of thread ``P`` (and its child ``C``),
the file's writer, and the observations a rollout reads as."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from lineage_es.facts import Acted, Fact, Observation
from lineage_es.hosts.codex_rollout import read_rollout
from lineage_es.hosts.transcript import TranscriptRow

# UUIDv7 ids: P created at …00a ms, C at …00b ms; turns before and after them.
P = "019a0000-000a-7000-8000-0000000000a1"
C = "019a0000-000b-7000-8000-0000000000b2"
F = "019a0000-000c-7000-8000-0000000000c3"
OLD_TURN = "019a0000-0001-7000-8000-0000000000e1"
NEW_TURN = "019a0000-00ff-7000-8000-0000000000e2"
STAMP = "2026-09-03T08:00:05.100Z"


def meta(thread: str, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {"id": thread, "cwd": "/w", "source": "cli"}
    payload.update(fields)
    return {"timestamp": STAMP, "type": "session_meta", "payload": payload}


def child_meta(thread: str, parent: str, depth: int = 1, **fields: Any) -> dict[str, Any]:
    spawn = {"parent_thread_id": parent, "depth": depth, "agent_role": "explorer"}
    return meta(thread, source={"subagent": {"thread_spawn": spawn}}, **fields)


def event(kind: str, /, **fields: Any) -> dict[str, Any]:
    return {"timestamp": STAMP, "type": "event_msg", "payload": {"type": kind, **fields}}


def item(kind: str, /, **fields: Any) -> dict[str, Any]:
    return {"timestamp": STAMP, "type": "response_item", "payload": {"type": kind, **fields}}


def call(name: str, call_id: str = "call_1", namespace: str | None = None, **args: Any) -> Any:
    fields: dict[str, Any] = {"name": name, "call_id": call_id, "arguments": orjson.dumps(args)}
    fields["arguments"] = fields["arguments"].decode()
    if namespace is not None:
        fields["namespace"] = namespace
    return item("function_call", **fields)


def activity(kind: str, child: str = C, **fields: Any) -> dict[str, Any]:
    body = {"type": "SubAgentActivity", "id": "call_9", "kind": kind, "agent_thread_id": child}
    return event("item_completed", item=body | fields)


def write(tmp_path: Path, *rows: Any, tail: bytes = b"") -> Path:
    path = tmp_path / f"rollout-2026-09-03T10-00-05-{P}.jsonl"
    lines = [row if isinstance(row, bytes) else orjson.dumps(row) for row in rows]
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    return path


def rows(path: Path) -> list[TranscriptRow]:
    return list(read_rollout(path))


def observations(path: Path) -> list[Observation]:
    return [row.observation for row in rows(path) if row.observation is not None]


def lineage_facts(path: Path) -> list[Fact]:
    """Every fact but ``Acted``, in row order."""
    return [f for o in observations(path) for f in o.facts if not isinstance(f, Acted)]
