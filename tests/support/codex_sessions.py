"""Codex sessions folders for import tests: rollout rows (``meta``, ``spawned``, ``event``,
``message``), the files that hold them (``rollout``), the trees the tests start from, and
how to read the imported family back, now or at each moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import ImportReport, import_codex
from lineage_es.model import Member
from lineage_es.read.answers import TreeReader

PARENT = "019a0000-0000-7000-8000-0000000000a1"
CHILD = "019a0000-0000-7000-8000-0000000000b2"
GRANDCHILD = "019a0000-0000-7000-8000-0000000000c3"
T0 = datetime(2026, 9, 3, 8, 0, tzinfo=UTC)


def iso(second: float) -> str:
    return (
        (T0 + timedelta(seconds=second)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def line(second: float, kind: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"timestamp": iso(second), "type": kind, "payload": payload}) + b"\n"


def meta(second: float, thread: str, **fields: Any) -> bytes:
    return line(second, "session_meta", {"id": thread, "cwd": "/w", "source": "cli"} | fields)


def spawned(second: float, thread: str, parent: str, depth: int = 1, **fields: Any) -> bytes:
    spawn = {"parent_thread_id": parent, "depth": depth, "agent_path": "/root/scan"}
    source = {"subagent": {"thread_spawn": spawn}}
    return meta(second, thread, source=source, session_id=PARENT, **fields)


def event(second: int, kind: str, **fields: Any) -> bytes:
    return line(second, "event_msg", {"type": kind} | fields)


def message(second: int, text: str = "working") -> bytes:
    content = [{"type": "output_text", "text": text}]
    return line(
        second, "response_item", {"type": "message", "role": "assistant", "content": content}
    )


def rollout(folder: Path, thread: str, *rows: bytes, name: str | None = None) -> Path:
    path = folder / "2026" / "09" / "03" / (name or f"rollout-2026-09-03T10-00-00-{thread}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as stream:
        stream.write(b"".join(rows))
    return path


def family(engine: Engine | TreeReader, root: str = PARENT) -> dict[str, Member]:
    return {m.conversation: m for m in engine.family(root)}


def run(engine: Engine, folder: Path, **options: Any) -> ImportReport:
    return import_codex(engine, folder, **options)


def parent_spawning(folder: Path) -> Path:
    """A root thread that spawns CHILD (v2: a SubAgentActivity item names it)."""
    call = {"type": "function_call", "namespace": "collaboration", "name": "spawn_agent"}
    call |= {"call_id": "call_1", "arguments": orjson.dumps({"task_name": "scan"}).decode()}
    started = {"type": "SubAgentActivity", "id": "call_1", "kind": "started"}
    started |= {"agent_thread_id": CHILD, "agent_path": "/root/scan"}
    done = started | {"kind": "completed"}
    return rollout(
        folder,
        PARENT,
        meta(0, PARENT),
        message(1),
        line(2, "response_item", call),
        event(3, "item_completed", item=started),
        message(4),
        event(9, "item_completed", item=done),
        event(10, "task_complete"),
    )


def live_at(engine: Engine, *seconds: float) -> list[set[str]]:
    """The conversations of PARENT's tree live at each moment (seconds after T0)."""
    moments = [engine.as_of(time=T0 + timedelta(seconds=s)).family(PARENT) for s in seconds]
    return [{m.conversation for m in members if m.status == "live"} for members in moments]


MOMENTS = (0.5, 1, 2, 2.5, 3, 4, 4.5, 5, 6, 7, 8, 9, 9.5, 10, 11, 20, 30)


def one_shot(folder: Path) -> Engine:
    engine = open_engine("memory://")
    run(engine, folder)
    return engine
