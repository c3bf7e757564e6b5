"""Claude Code session transcripts written for tests: the rows of one session (``SESSION``)
and its agents' files, the files' writers, and the observations a transcript reads as."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from lineage_es.facts import ChildIdentified, ChildStarted, Fact, Observation
from lineage_es.hosts.claude_transcript import read_transcript
from lineage_es.hosts.transcript import TranscriptRow

SESSION = "5f1c2e4a-0000-4000-8000-000000000001"
OTHER = "fd023a54-0000-4000-8000-000000000002"
AGENT = "a1000000000000001"
CHILD = "a2000000000000002"


def ts(second: int) -> str:
    return f"2026-09-03T08:00:{second:02d}.000Z"


def at(second: int) -> datetime:
    return datetime(2026, 9, 3, 8, 0, second, tzinfo=UTC)


def row(kind: str, second: int | None, uuid: str | None, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"type": kind, "sessionId": SESSION, "cwd": "/w"}
    if second is not None:
        base["timestamp"] = ts(second)
    if uuid is not None:
        base["uuid"] = uuid
    return base | fields


def prompt(second: int, uuid: str, text: str = "hi") -> dict[str, Any]:
    return row("user", second, uuid, message={"role": "user", "content": text})


def tool_use(tool_id: str, name: str = "Agent", **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def assistant(second: int, uuid: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return row("assistant", second, uuid, message={"role": "assistant", "content": list(blocks)})


def result(second: int, uuid: str, tool_id: str, outcome: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": "done"}
    return row(
        "user", second, uuid, message={"role": "user", "content": [block]}, toolUseResult=outcome
    )


def notification(second: int, task: str, status: str) -> dict[str, Any]:
    text = f"<task-notification>\n<task-id>{task}</task-id>\n<status>{status}</status>\n"
    return row(
        "queue-operation", second, None, operation="enqueue", content=text + "</task-notification>"
    )


def write(path: Path, rows: Iterable[dict[str, Any] | str], *, final_newline: bool = True) -> Path:
    lines = [r if isinstance(r, str) else orjson.dumps(r).decode() for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + ("\n" if final_newline else ""))
    return path


def session_file(tmp_path: Path, rows: Iterable[dict[str, Any] | str], **kw: Any) -> Path:
    return write(tmp_path / f"{SESSION}.jsonl", rows, **kw)


def agent_rows(agent: str, *seconds: int) -> list[dict[str, Any]]:
    return [
        row("user" if i == 0 else "assistant", s, f"{agent}-{i}", agentId=agent, isSidechain=True)
        | {"message": {"role": "user", "content": "task"}}
        for i, s in enumerate(seconds)
    ]


def read(path: Path) -> list[TranscriptRow]:
    return list(read_transcript(path))


def observations(path: Path) -> list[Observation]:
    return [r.observation for r in read(path) if r.observation is not None]


def facts(path: Path) -> list[Fact]:
    return [f for o in observations(path) for f in o.facts]


def facts_of(path: Path, kind: type[Any]) -> list[Any]:
    return [f for f in facts(path) if isinstance(f, kind)]


def subagents(tmp_path: Path) -> Path:
    return tmp_path / SESSION / "subagents"


def placed(child: str = CHILD, key: str | None = "toolu_A") -> ChildIdentified:
    """An agent file's start placed by the transcripts under the root (its first prompt
    repeats the one open call's, ``toolu_A``'s in :func:`spawn_session`)."""
    return ChildIdentified(parent=SESSION, child=child, resolution="transcript", spawn_key=key)


def starts(path: Path) -> list[Fact]:
    """The starts agent files observe (their own first rows')."""
    return [
        f
        for o in observations(path)
        for f in o.facts
        if isinstance(f, ChildStarted | ChildIdentified) and f.child == o.requester
    ]


def spawn_session(tmp_path: Path) -> Path:
    return session_file(
        tmp_path,
        [
            prompt(1, "u1"),
            assistant(2, "a1", tool_use("toolu_A", prompt="task")),
            prompt(6, "u2"),
            result(9, "r1", "toolu_A", {"status": "completed", "agentId": CHILD}),
        ],
    )


def nodes(engine: Any, roots: Iterable[str]) -> dict[str, tuple[Any, ...]]:
    """Every node of ``roots``' families: parent, depth, resolution, agent type, start and (for
    a child) stop. A root's stop is left out: an import stops it at its file's last row, an
    ingest leaves it live."""
    found: dict[str, tuple[Any, ...]] = {}
    for root in roots:
        for m in engine.family(root):
            kind = m.subagent.type if m.subagent else None
            stop = m.stopped_at if m.depth else None
            found[m.conversation] = (m.parent, m.depth, m.resolution, kind, m.started_at, stop)
    return found
