"""Claude Code projects folders for import tests: one session written in the host's own
layout, a row at a time (``Session``), the sessions the tests start from, and how to read the
imported family back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from lineage_es.engine.engine import Engine
from lineage_es.importers import ImportReport, import_claude
from lineage_es.model import Member
from lineage_es.read.answers import TreeReader

SESSION = "5f1c2e4a-0000-4000-8000-000000000001"
OTHER = "7e2d3f5b-0000-4000-8000-000000000002"
AGENT = "a1000000000000001"
CHILD = "a2000000000000002"
T0 = datetime(2026, 9, 3, 8, 0, tzinfo=UTC)


def at(second: int) -> datetime:
    return T0 + timedelta(seconds=second)


def iso(second: int) -> str:
    return at(second).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Session:
    """Writes one Claude Code session in the host's own layout, a row at a time."""

    def __init__(self, folder: Path, session: str = SESSION, project: str = "-w-app") -> None:
        self.project = folder / project
        self.session = session
        self.uuid = 0

    @property
    def main(self) -> Path:
        return self.project / f"{self.session}.jsonl"

    def agent_path(self, agent: str) -> Path:
        return self.project / self.session / "subagents" / f"agent-{agent}.jsonl"

    def write(self, path: Path, row: dict[str, Any] | bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        line = row if isinstance(row, bytes) else orjson.dumps(row) + b"\n"
        with path.open("ab") as stream:
            stream.write(line)

    def row(self, second: int | None, kind: str, agent: str | None = None, **fields: Any) -> None:
        self.uuid += 1
        row: dict[str, Any] = {"parentUuid": None, "isSidechain": agent is not None}
        if agent is not None:
            row["agentId"] = agent
        row |= {"sessionId": self.session, "version": "2.1.143", "type": kind}
        row |= {"uuid": f"{self.session[:8]}-{self.uuid}"}
        if second is not None:
            row["timestamp"] = iso(second)
        row |= fields
        self.write(self.agent_path(agent) if agent else self.main, row)

    def prompt(self, second: int, text: str = "hi", agent: str | None = None) -> None:
        self.row(second, "user", agent, message={"role": "user", "content": text})

    def spawn(self, second: int, key: str, agent: str | None = None, **tool: Any) -> None:
        block: dict[str, Any] = {"type": "tool_use", "id": key, "name": "Agent"}
        block["input"] = {"prompt": "do it", "subagent_type": "Explore"} | tool
        self.row(second, "assistant", agent, message={"role": "assistant", "content": [block]})

    def result(
        self, second: int, key: str, child: str, status: str = "completed", agent: str | None = None
    ) -> None:
        block = {"type": "tool_result", "tool_use_id": key, "content": "done"}
        outcome = {"status": status, "agentId": child, "agentType": "Explore"}
        self.row(
            second,
            "user",
            agent,
            message={"role": "user", "content": [block]},
            toolUseResult=outcome,
        )

    def notice(self, second: int, child: str, status: str = "completed") -> None:
        text = f"<task-notification>\n<task-id>{child}</task-id>\n<status>{status}</status>\n"
        self.uuid += 1
        self.write(
            self.main,
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": iso(second),
                "sessionId": self.session,
                "content": text + "</task-notification>",
            },
        )

    def answer(self, second: int, agent: str | None = None) -> None:
        content = [{"type": "text", "text": "ok"}]
        self.row(second, "assistant", agent, message={"role": "assistant", "content": content})

    def tail(self) -> None:
        """The untimed rows Claude Code appends after a turn."""
        self.write(self.main, {"type": "ai-title", "aiTitle": "t", "sessionId": self.session})
        self.write(self.main, {"type": "permission-mode", "permissionMode": "default"})

    def meta(self, agent: str, **fields: Any) -> None:
        path = self.agent_path(agent).with_name(f"agent-{agent}.meta.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(fields))


def one_child(folder: Path, *, background: bool = False) -> Session:
    """A session whose root spawns AGENT, which runs from second 3 to 6."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A", run_in_background=background)
    if background:
        s.result(2, "toolu_A", AGENT, status="async_launched")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    if background:
        s.notice(8, AGENT)
    else:
        s.result(7, "toolu_A", AGENT)
    s.answer(9)
    s.tail()
    return s


def spawned_agent(folder: Path) -> Session:
    """A session whose root has spawned AGENT (call toolu_A), which has begun to work; the
    call's result is not written yet."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    return s


def clear(s: Session, second: int) -> None:
    """``/clear`` at ``second`` starts OTHER, whose rows a recorder appended to SESSION's file
    (as in the irrlicht 1-5 recording): its command row, then a turn."""
    command = {"role": "user", "content": "<command-name>/clear</command-name>"}
    s.row(second, "user", message=command, sessionId=OTHER)
    s.row(second + 1, "user", message={"role": "user", "content": "hi"}, sessionId=OTHER)
    text = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    s.row(second + 3, "assistant", message=text, sessionId=OTHER)


def members(engine: Engine | TreeReader, root: str = SESSION) -> dict[str, Member]:
    return {m.conversation: m for m in engine.family(root)}


def run(engine: Engine, folder: Path, **options: Any) -> ImportReport:
    return import_claude(engine, folder, **options)
