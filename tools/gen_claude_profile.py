"""Write a Claude Code projects folder shaped like a real heavy profile, for benchmarks.

The default is the profile the import issue measures against: 785 family members (179 roots,
523 depth-1 and 83 depth-2 subagents) in about 430 MB, spread over a dozen project folders and
three months. Rows have the host's shapes (2.1.x): prompts, assistant turns with thinking and
tool calls, tool results with file contents, attachments, ``system/turn_duration``, snapshots,
``permission-mode``/``ai-title``/``last-prompt`` tails; ``Agent`` spawns in parallel and in
the background (``async_launched`` then a ``<task-notification>``), agent files under
``<session>/subagents/``, ``.meta.json`` sidecars for every depth-2 agent (and some depth-1
ones), and a few ``agent-acompact-*`` helper files that are not children.

Everything is drawn from a seeded generator: the same arguments write the same bytes.

Usage: python tools/gen_claude_profile.py DIR [--roots 179] [--depth1 523] [--depth2 83]
       [--megabytes 430] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

START = datetime(2026, 6, 1, tzinfo=UTC)
VERSION = "2.1.143"
TOOLS = ("Read", "Bash", "Grep", "Edit", "Glob", "Write")


@dataclass
class Truth:
    """What the profile holds: every root with its subagents by depth."""

    roots: list[str] = field(default_factory=list)
    children: dict[str, str] = field(default_factory=dict)  # child -> parent
    depth: dict[str, int] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0

    def members(self) -> int:
        return len(self.roots) + len(self.children)


class Writer:
    """Draws rows with realistic shapes and sizes."""

    def __init__(self, seed: int, scale: float) -> None:
        self.rng = random.Random(seed)
        words = [
            "".join(self.rng.choices(string.ascii_lowercase, k=self.rng.randint(2, 9)))
            for _ in range(4000)
        ]
        self.text = " ".join(self.rng.choices(words, k=400_000))
        self.code = "\n".join(
            f"    {self.rng.choice(words)} = {self.rng.choice(words)}({self.rng.randint(0, 99)})"
            for _ in range(60_000)
        )
        self.scale = scale

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def agent_id(self) -> str:
        return "a" + "".join(self.rng.choices("0123456789abcdef", k=16))

    def tool_id(self) -> str:
        return "toolu_01" + "".join(self.rng.choices(string.ascii_letters + string.digits, k=22))

    def words(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.text) - size - 1)
        return self.text[start : start + size]

    def source(self, size: int) -> str:
        start = self.rng.randrange(0, len(self.code) - size - 1)
        return self.code[start : start + size]

    def size(self, median: int, spread: float = 0.9) -> int:
        return max(40, int(self.rng.lognormvariate(0, spread) * median * self.scale))


@dataclass
class Stream:
    """One transcript file being written: its rows and the clock of its writer."""

    path: Path
    w: Writer
    session: str
    cwd: str
    clock: datetime
    agent: str | None = None
    last_uuid: str | None = None
    lines: list[bytes] = field(default_factory=list)

    def tick(self, low: float = 0.2, high: float = 8.0) -> str:
        self.clock += timedelta(seconds=self.w.rng.uniform(low, high))
        return self.clock.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def row(self, kind: str, **fields: Any) -> dict[str, Any]:
        row: dict[str, Any] = {"parentUuid": self.last_uuid, "isSidechain": self.agent is not None}
        if self.agent is not None:
            row["agentId"] = self.agent
        row |= {"userType": "external", "cwd": self.cwd, "sessionId": self.session}
        row |= {"version": VERSION, "gitBranch": "main", "type": kind}
        row |= fields
        row["uuid"] = self.w.uuid()
        row["timestamp"] = self.tick()
        self.last_uuid = row["uuid"]
        self.put(row)
        return row

    def put(self, row: dict[str, Any]) -> None:
        self.lines.append(orjson.dumps(row))

    def prompt(self, text: str) -> None:
        self.row("user", message={"role": "user", "content": text})

    def assistant(self, blocks: list[dict[str, Any]], stop: str = "tool_use") -> None:
        w = self.w
        message = {
            "model": "claude-opus-4-7",
            "id": "msg_01" + w.tool_id()[8:],
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "stop_reason": stop,
            "usage": {
                "input_tokens": w.rng.randint(3, 900),
                "output_tokens": w.rng.randint(9, 2000),
            },
        }
        self.row("assistant", message=message, requestId="req_011" + w.tool_id()[8:])

    def thinking(self) -> dict[str, Any]:
        w = self.w
        return {
            "type": "thinking",
            "thinking": w.words(w.size(900)),
            "signature": w.words(w.size(400, 0.3)).replace(" ", "+"),
        }

    def tool_cycle(self) -> None:
        """One ordinary tool call and its result (file reads dominate a profile's bytes)."""
        w = self.w
        tool, key = w.rng.choice(TOOLS), w.tool_id()
        tool_input = {"file_path": f"{self.cwd}/src/{w.words(12).strip()}.py"}
        self.assistant(
            [self.thinking(), {"type": "tool_use", "id": key, "name": tool, "input": tool_input}]
        )
        content = w.source(w.size(2750, 1.2))
        result = {"type": "tool_result", "tool_use_id": key, "content": content}
        self.row(
            "user",
            message={"role": "user", "content": [result]},
            toolUseResult={
                "type": "text",
                "file": {"filePath": tool_input["file_path"], "content": content, "numLines": 120},
            },
        )

    def answer(self) -> None:
        w = self.w
        self.assistant([{"type": "text", "text": w.words(w.size(700))}], stop="end_turn")

    def write(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = b"\n".join(self.lines) + b"\n"
        self.path.write_bytes(data)
        return len(data)


class Profile:
    """Lays out sessions and their agents until the member counts are met."""

    def __init__(self, folder: Path, args: argparse.Namespace) -> None:
        self.folder = folder
        self.args = args
        # Row sizes scale with the byte target; 432 lands the default counts near 430 MB.
        self.w = Writer(args.seed, args.megabytes / 432)
        self.truth = Truth()

    def build(self) -> Truth:
        rng = self.w.rng
        args = self.args
        projects = [
            f"-Users-dev-projects-{name}"
            for name in (
                "api",
                "web",
                "infra",
                "ml",
                "docs",
                "cli",
                "sdk",
                "data",
                "ops",
                "site",
                "mobile",
                "bench",
            )
        ]
        depth1 = self._split(args.depth1, args.roots, rng, share=0.7)
        depth2 = self._split(args.depth2, args.depth1, rng, share=0.12)
        d2_iter = iter(depth2)
        for index in range(args.roots):
            project = projects[index % len(projects)]
            clock = START + timedelta(minutes=rng.uniform(0, 90 * 24 * 60))
            session = self.w.uuid()
            nested = [next(d2_iter) for _ in range(depth1[index])]
            self._session(project, session, clock, nested)
        return self.truth

    @staticmethod
    def _split(total: int, slots: int, rng: random.Random, share: float) -> list[int]:
        """``total`` items over ``slots``, heavy-tailed: a ``share`` of slots get any."""
        counts = [0] * slots
        takers = [i for i in range(slots) if rng.random() < share] or [0]
        weights = [rng.paretovariate(1.2) for _ in takers]
        for _ in range(total):
            counts[rng.choices(takers, weights)[0]] += 1
        return counts

    def _session(self, project: str, session: str, clock: datetime, nested: list[int]) -> None:
        w, rng = self.w, self.w.rng
        cwd = "/Users/dev/projects/" + project.rsplit("-", 1)[-1]
        main = Stream(self.folder / project / f"{session}.jsonl", w, session, cwd, clock)
        self.truth.roots.append(session)
        self.truth.depth[session] = 0
        main.put(
            {
                "type": "file-history-snapshot",
                "messageId": w.uuid(),
                "snapshot": {"trackedFileBackups": {}, "timestamp": main.tick()},
                "isSnapshotUpdate": False,
            }
        )
        turns = max(1, int(rng.lognormvariate(1.6, 0.7)))
        spawn_turns = sorted(rng.sample(range(turns * 4), min(len(nested), turns * 4)))
        pending = list(nested)
        for turn in range(turns):
            main.prompt(w.words(w.size(300)))
            main.row(
                "attachment", attachment={"type": "deferred_tools_delta", "addedNames": list(TOOLS)}
            )
            for _ in range(max(1, int(3.4 * rng.lognormvariate(1.3, 0.8)))):
                main.tool_cycle()
            while pending and spawn_turns and spawn_turns[0] // 4 <= turn:
                spawn_turns.pop(0)
                batch = [pending.pop(0) for _ in range(min(len(pending), rng.randint(1, 3)))]
                self._spawn(main, project, session, None, batch, depth=1)
            main.answer()
            main.row("system", subtype="turn_duration", durationMs=rng.randint(900, 90_000))
        while pending:  # whatever did not fit the turns goes in a last one
            main.prompt(w.words(w.size(200)))
            batch = [pending.pop(0) for _ in range(min(len(pending), 3))]
            self._spawn(main, project, session, None, batch, depth=1)
            main.answer()
        if rng.random() < 0.15:  # a compaction helper: the host's own, not a child
            helper = Stream(
                self._agent_path(project, session, "acompact-" + w.agent_id()[1:7]),
                w,
                session,
                cwd,
                main.clock,
                agent="acompact-x",
            )
            helper.prompt("Summarise the conversation so far.")
            helper.answer()
            self._finish(helper)
        for kind, fields in (
            ("last-prompt", {"lastPrompt": w.words(60)}),
            ("ai-title", {"aiTitle": w.words(30)}),
            ("permission-mode", {"permissionMode": "default"}),
        ):
            main.put({"type": kind, **fields, "sessionId": session})
        self._finish(main)

    def _agent_path(self, project: str, session: str, agent: str) -> Path:
        return self.folder / project / session / "subagents" / f"agent-{agent}.jsonl"

    def _spawn(
        self,
        parent: Stream,
        project: str,
        session: str,
        parent_agent: str | None,
        nested: list[int],
        depth: int,
    ) -> None:
        """Spawn one agent per entry of ``nested`` (its own depth-2 count) in one message."""
        w, rng = self.w, self.w.rng
        background = rng.random() < 0.35
        calls = []
        for _ in nested:
            key, agent = w.tool_id(), w.agent_id()
            kind = rng.choice(("Explore", "general-purpose", "Plan", "code-reviewer"))
            tool_input: dict[str, Any] = {
                "description": w.words(30),
                "prompt": w.words(w.size(600)),
                "subagent_type": kind,
            }
            if background:
                tool_input["run_in_background"] = True
            parent.assistant(
                [{"type": "tool_use", "id": key, "name": "Agent", "input": tool_input}]
            )
            calls.append((key, agent, kind, tool_input["prompt"]))
        children: list[Stream] = []
        for (key, agent, kind, prompt), grand in zip(calls, nested, strict=True):
            self.truth.children[agent] = parent_agent or session
            self.truth.depth[agent] = depth
            child = Stream(
                self._agent_path(project, session, agent),
                w,
                session,
                parent.cwd,
                parent.clock,
                agent=agent,
            )
            child.clock += timedelta(milliseconds=rng.randint(5, 400))
            if depth >= 2 or rng.random() < 0.3:
                meta: dict[str, Any] = {"agentType": kind, "toolUseId": key, "spawnDepth": depth}
                if parent_agent is not None:
                    meta["parentAgentId"] = parent_agent
                path = child.path.with_name(f"agent-{agent}.meta.json")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(orjson.dumps(meta))
            child.prompt(prompt)
            for _ in range(max(1, int(3.4 * rng.lognormvariate(1.5, 0.8)))):
                child.tool_cycle()
            if grand:
                self._spawn(child, project, session, agent, [0] * grand, depth=depth + 1)
            child.answer()
            children.append(child)
            if background:
                parent.row(
                    "user",
                    message={
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": key,
                                "content": f"Async agent launched successfully.\nagentId: {agent}",
                            }
                        ],
                    },
                    toolUseResult={
                        "isAsync": True,
                        "status": "async_launched",
                        "agentId": agent,
                        "description": "d",
                        "prompt": prompt[:80],
                    },
                )
        for (key, agent, kind, _), child in zip(calls, children, strict=True):
            parent.clock = max(parent.clock, child.clock)
            if background:
                note = (
                    f"<task-notification>\n<task-id>{agent}</task-id>\n<tool-use-id>{key}"
                    "</tool-use-id>\n<status>completed</status>\n<summary>Agent finished"
                    "</summary>\n</task-notification>"
                )
                parent.put(
                    {
                        "type": "queue-operation",
                        "operation": "enqueue",
                        "timestamp": parent.tick(),
                        "sessionId": session,
                        "content": note,
                    }
                )
                parent.row(
                    "user",
                    message={"role": "user", "content": note},
                    origin={"kind": "task-notification"},
                )
            else:
                text = w.words(w.size(900))
                parent.row(
                    "user",
                    message={
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": key,
                                "content": [{"type": "text", "text": text}],
                            }
                        ],
                    },
                    toolUseResult={
                        "status": "completed",
                        "prompt": "p",
                        "agentId": agent,
                        "agentType": kind,
                        "content": [{"type": "text", "text": text}],
                        "totalDurationMs": rng.randint(2000, 400_000),
                        "totalTokens": rng.randint(900, 90_000),
                        "totalToolUseCount": rng.randint(1, 40),
                    },
                )
            self._finish(child)

    def _finish(self, stream: Stream) -> None:
        self.truth.bytes += stream.write()
        self.truth.files += 1


def generate(folder: Path, **overrides: Any) -> Truth:
    """Write the profile into ``folder`` (created); returns what it holds."""
    defaults = {"roots": 179, "depth1": 523, "depth2": 83, "megabytes": 430.0, "seed": 7}
    args = argparse.Namespace(**(defaults | overrides))
    folder.mkdir(parents=True, exist_ok=True)
    return Profile(folder, args).build()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--roots", type=int, default=179)
    parser.add_argument("--depth1", type=int, default=523)
    parser.add_argument("--depth2", type=int, default=83)
    parser.add_argument("--megabytes", type=float, default=430.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    truth = generate(args.folder, **{k: v for k, v in vars(args).items() if k != "folder"})
    print(
        f"wrote {truth.files} files, {truth.bytes / 1e6:.0f} MB: {len(truth.roots)} roots, "
        f"{sum(1 for d in truth.depth.values() if d == 1)} depth-1, "
        f"{sum(1 for d in truth.depth.values() if d == 2)} depth-2",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
