"""Generate a large capture in the recording form, with its expected file, for the replay benchmark.

The capture is ``{"host", "at", "payload"}`` a line: Claude Code, Codex CLI and Cursor sessions in
their own hook formats (shared/spec/HOSTS.md), interleaved as concurrent sessions would be, each
root spawning nested subagents (depth 3 at most), stopping them, and ending. The expected file is
written from the generator's own model of each tree, never by running the engine, with an
assertion at every spawn and every stop:

- a spawn (Claude/Codex ``SubagentStart``, Cursor ``subagentStart``): the requester's lineage and
  the parent's live children, the new child included (a Cursor child under its spawn key);
- a Cursor child's first own event: its lineage, bound by order to its spawn;
- a stop (``SubagentStop``, ``subagentStop``, a Codex child's next turn resuming it): the parent's
  live children; a session end: the root's tree, empty.

Usage: python tools/gen_capture.py OUT_DIR [--rows 100000] [--roots 1000] [--subagents 10000]
                                   [--calls-per-subagent N]
writes OUT_DIR/capture.jsonl and OUT_DIR/capture.expected.yaml.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

HOSTS = ("claude", "codex", "cursor")
EPOCH = datetime(2026, 9, 1, 8, 0, tzinfo=UTC)
MAX_DEPTH = 3
_ALNUM = string.ascii_letters + string.digits

Json = dict[str, Any]


@dataclass(slots=True)
class Check:
    """What must hold after one row: the requester's lineage, its tree, other nodes' views."""

    lineage: Json | None = None
    tree: Json | None = None
    views: dict[str, Json] | None = None


@dataclass(slots=True)
class Event:
    """One row of a root's script: a host payload (its ``at`` is given when interleaved)."""

    payload: Json
    check: Check | None = None
    #: A child that exists for the host only after a later row: it must not act before then.
    hide: Node | None = None


@dataclass(slots=True)
class Node:
    """A planned subagent: its conversation, spawn key, parent (``None`` for the root's own
    children is never used; the root is a Node too), depth, and where it is in its life."""

    conversation: str
    spawn_key: str
    parent: Node | None
    depth: int
    agent_type: str
    children: list[Node] = field(default_factory=list)
    state: str = "planned"  # planned, pending (Cursor, started, unbound), live, stopped, done
    turns: int = 1
    background: bool = False
    turn_id: str = ""

    @property
    def listed(self) -> str:
        """How a tree lists it: its spawn key while pending, else its conversation."""
        return self.spawn_key if self.state == "pending" else self.conversation


def _hex(rnd: random.Random, bits: int) -> str:
    return f"{rnd.getrandbits(bits):0{bits // 4}x}"


def _alnum(rnd: random.Random, count: int) -> str:
    return "".join(rnd.choice(_ALNUM) for _ in range(count))


def uuid4(rnd: random.Random) -> str:
    return str(uuid.UUID(int=rnd.getrandbits(128), version=4))


def uuid7(rnd: random.Random, moment: datetime) -> str:
    """A UUIDv7 for ``moment``: the form of every Codex thread and turn id."""
    millis = int(moment.timestamp() * 1000)
    value = (millis << 80) | (7 << 76) | (rnd.getrandbits(12) << 64)
    value |= (0b10 << 62) | rnd.getrandbits(62)
    return str(uuid.UUID(int=value))


class Root:
    """One root session: its planned tree, and the host's payload shapes for it."""

    host: str

    def __init__(self, rnd: random.Random, index: int, subagents: int, moment: datetime) -> None:
        self.rnd = rnd
        self.index = index
        self.moment = moment
        self.root = Node(self.new_root_id(), "", None, 0, "")
        self.root.state = "live"
        self.nodes: list[Node] = []
        for _ in range(subagents):
            parents = [n for n in (self.root, *self.nodes) if n.depth < MAX_DEPTH]
            weights = [4.0 if n.depth == 0 else 1.0 / n.depth for n in parents]
            parent = rnd.choices(parents, weights)[0]
            child = Node(
                self.new_child_id(),
                self.new_spawn_key(),
                parent,
                parent.depth + 1,
                rnd.choice(self.agent_types()),
            )
            child.background = rnd.random() < 0.5
            child.turns = 2 if self.host == "codex" and rnd.random() < 0.3 else 1
            parent.children.append(child)
            self.nodes.append(child)
        self.cascade = self.host != "codex" and rnd.random() < 0.3
        self.tool_calls = 0

    # Host specifics, overridden per host.
    def new_root_id(self) -> str:
        raise NotImplementedError

    def new_child_id(self) -> str:
        raise NotImplementedError

    def new_spawn_key(self) -> str:
        raise NotImplementedError

    def agent_types(self) -> tuple[str, ...]:
        raise NotImplementedError

    def start(self) -> list[Json]:
        raise NotImplementedError

    def turn(self) -> list[Json]:
        raise NotImplementedError

    def spawn(self, child: Node) -> list[Event]:
        raise NotImplementedError

    def stop(self, child: Node) -> list[Event]:
        raise NotImplementedError

    def resume(self, child: Node) -> list[Event]:
        raise NotImplementedError

    def end(self) -> list[Event]:
        raise NotImplementedError

    def act(self, actor: Node) -> Json:
        raise NotImplementedError

    # What the trees look like, from the model.
    def children_of(self, parent: Node) -> list[str]:
        return [c.listed for c in parent.children if c.state in ("live", "pending")]

    def view(self, parent: Node) -> dict[str, Json]:
        return {parent.conversation: {"children": self.children_of(parent)}}

    def child_lineage(self, child: Node) -> Json:
        assert child.parent is not None
        return {
            "conversation": child.conversation,
            "root": self.root.conversation,
            "parent": child.parent.conversation,
            "depth": child.depth,
            "resolution": "inferred",
        }

    def live_actors(self) -> list[Node]:
        return [self.root, *(n for n in self.nodes if n.state == "live")]

    def next_tool_id(self) -> int:
        self.tool_calls += 1
        return self.tool_calls

    def script(self) -> tuple[list[Event], list[list[Node]]]:
        """The root's structural rows in order, and after each the nodes that may act."""
        rnd = self.rnd
        events: list[Event] = []
        actors: list[list[Node]] = []

        def emit(batch: list[Event]) -> None:
            for event in batch:
                events.append(event)
                actors.append([a for a in self.live_actors() if a is not event.hide])

        emit([Event(p) for p in self.start()])
        waiting = list(self.nodes)
        while True:
            live = [n for n in self.nodes if n.state == "live"]
            stoppable = [
                n for n in live if all(c.state == "done" for c in n.children) and n.turns > 0
            ]
            resumable = [n for n in self.nodes if n.state == "stopped" and n.turns > 0]
            if not waiting and self.cascade and live and rnd.random() < 0.3:
                break
            if not waiting and not live and not resumable:
                break
            choices: list[str] = []
            weights: list[float] = []
            for name, weight, possible in (
                ("spawn", 0.45, bool(waiting)),
                ("stop", 0.35, bool(stoppable)),
                ("resume", 0.10, bool(resumable)),
                ("turn", 0.10, True),
            ):
                if possible:
                    choices.append(name)
                    weights.append(weight)
            action = rnd.choices(choices, weights)[0]
            if action == "spawn":
                emit(self.spawn(waiting.pop(0)))
            elif action == "stop":
                emit(self.stop(rnd.choice(stoppable)))
            elif action == "resume":
                emit(self.resume(rnd.choice(resumable)))
            else:
                emit([Event(p) for p in self.turn()])
        emit(self.end())
        return events, actors

    def finish(self, child: Node) -> None:
        """A stop: the node is done unless it has another turn to come (Codex)."""
        child.turns -= 1
        child.state = "stopped" if child.turns > 0 else "done"


class ClaudeRoot(Root):
    host = "claude"

    def __init__(self, rnd: random.Random, index: int, subagents: int, moment: datetime) -> None:
        super().__init__(rnd, index, subagents, moment)
        project = f"-home-dev-project{index}"
        self.cwd = f"/home/dev/project{index}"
        self.transcript = f"/home/dev/.claude/projects/{project}/{self.root.conversation}.jsonl"

    def new_root_id(self) -> str:
        return uuid4(self.rnd)

    def new_child_id(self) -> str:
        return "a" + _hex(self.rnd, 64)

    def new_spawn_key(self) -> str:
        return "toolu_01" + _alnum(self.rnd, 22)

    def agent_types(self) -> tuple[str, ...]:
        return ("general-purpose", "Explore", "Plan")

    def base(self, event: str, actor: Node | None = None) -> Json:
        payload: Json = {
            "session_id": self.root.conversation,
            "transcript_path": self.transcript,
            "cwd": self.cwd,
        }
        if event not in ("SessionStart", "SessionEnd", "SubagentStart", "SubagentStop"):
            payload["permission_mode"] = "default"
        payload["hook_event_name"] = event
        if actor is not None and actor.depth > 0:
            payload["agent_id"] = actor.conversation
            payload["agent_type"] = actor.agent_type
        return payload

    def agent_input(self, child: Node) -> Json:
        tool_input: Json = {
            "description": f"Task {child.spawn_key[-6:]}",
            "prompt": f"Look into part {child.spawn_key[-6:]} and report.",
            "subagent_type": child.agent_type,
        }
        if child.background:
            tool_input["run_in_background"] = True
        return tool_input

    def start(self) -> list[Json]:
        return [
            {**self.base("SessionStart"), "source": "startup", "model": "claude-sonnet-4-6"},
            {**self.base("UserPromptSubmit"), "prompt": f"Work on project {self.index}."},
        ]

    def turn(self) -> list[Json]:
        running = [
            {"id": n.conversation, "type": "subagent", "status": "running"}
            | {"agent_type": n.agent_type}
            for n in self.nodes
            if n.state == "live" and n.background
        ]
        return [
            {
                **self.base("Stop"),
                "stop_hook_active": False,
                "last_assistant_message": "Done for now.",
                "background_tasks": running,
            },
            {**self.base("UserPromptSubmit"), "prompt": "Carry on."},
        ]

    def spawn(self, child: Node) -> list[Event]:
        parent = child.parent
        assert parent is not None
        request = {
            **self.base("PreToolUse", parent),
            "tool_name": "Agent",
            "tool_input": self.agent_input(child),
            "tool_use_id": child.spawn_key,
        }
        child.state = "live"
        start = {
            **self.base("SubagentStart"),
            "agent_id": child.conversation,
            "agent_type": child.agent_type,
        }
        events = [
            Event(request, hide=child),
            Event(start, Check(lineage=self.child_lineage(child), views=self.view(parent))),
        ]
        if child.background:
            response = {
                "isAsync": True,
                "status": "async_launched",
                "agentId": child.conversation,
                "description": f"Task {child.spawn_key[-6:]}",
            }
            events.append(Event(self.agent_result(child, response)))
        return events

    def agent_result(self, child: Node, response: Json) -> Json:
        assert child.parent is not None
        return {
            **self.base("PostToolUse", child.parent),
            "tool_name": "Agent",
            "tool_input": self.agent_input(child),
            "tool_response": response,
            "tool_use_id": child.spawn_key,
            "duration_ms": 40 + self.next_tool_id(),
        }

    def stop(self, child: Node) -> list[Event]:
        assert child.parent is not None
        self.finish(child)
        stop = {
            **self.base("SubagentStop", child),
            "stop_hook_active": False,
            "agent_transcript_path": self.transcript[: -len(".jsonl")]
            + f"/subagents/agent-{child.conversation}.jsonl",
            "last_assistant_message": "Finished.",
            "background_tasks": [],
        }
        events = [Event(stop, Check(views=self.view(child.parent)))]
        if child.background:
            notification = (
                f"<task-notification>\n<task-id>{child.conversation}</task-id>\n"
                f"<tool-use-id>{child.spawn_key}</tool-use-id>\n<status>completed</status>\n"
                "</task-notification>"
            )
            events.append(Event({**self.base("UserPromptSubmit"), "prompt": notification}))
        else:
            response = {
                "status": "completed",
                "agentId": child.conversation,
                "agentType": child.agent_type,
                "content": [{"type": "text", "text": "Finished."}],
                "totalDurationMs": 5000 + self.next_tool_id(),
            }
            events.append(Event(self.agent_result(child, response)))
        return events

    def resume(self, child: Node) -> list[Event]:
        raise AssertionError("Claude subagents here take one turn")

    def end(self) -> list[Event]:
        for node in self.nodes:
            if node.state == "live":
                node.state = "done"
        self.root.state = "done"
        payload = {**self.base("SessionEnd"), "reason": "other"}
        return [Event(payload, end_check(self.root))]

    def act(self, actor: Node) -> Json:
        number = self.next_tool_id()
        kind = ("Read", "Grep", "Bash")[number % 3]
        tool_input: Json = (
            {"file_path": f"{self.cwd}/src/file{number}.py"}
            if kind == "Read"
            else {"pattern": f"symbol{number}", "path": self.cwd}
            if kind == "Grep"
            else {"command": f"pytest -q tests/test_{number}.py", "description": "Run a test"}
        )
        event = "PreToolUse" if number % 2 else "PostToolUse"
        payload = {
            **self.base(event, actor),
            "tool_name": kind,
            "tool_input": tool_input,
            "tool_use_id": "toolu_01" + _alnum(self.rnd, 22),
        }
        if event == "PostToolUse":
            payload["tool_response"] = {"type": "text", "ok": True}
        return payload


class CodexRoot(Root):
    host = "codex"

    def __init__(self, rnd: random.Random, index: int, subagents: int, moment: datetime) -> None:
        super().__init__(rnd, index, subagents, moment)
        self.cwd = f"/home/dev/service{index}"
        self.root.turn_id = uuid7(rnd, moment)

    def new_root_id(self) -> str:
        return uuid7(self.rnd, self.moment)

    def new_child_id(self) -> str:
        return uuid7(self.rnd, self.moment + timedelta(seconds=self.rnd.randint(1, 600)))

    def new_spawn_key(self) -> str:
        return "call_" + _alnum(self.rnd, 24)

    def agent_types(self) -> tuple[str, ...]:
        return ("default", "explorer", "worker")

    def rollout(self, node: Node) -> str:
        stamp = self.moment.strftime("%Y-%m-%dT%H-%M-%S")
        return f"/home/dev/.codex/sessions/2026/09/01/rollout-{stamp}-{node.conversation}.jsonl"

    def base(self, event: str, actor: Node | None = None, *, turn: bool = True) -> Json:
        who = actor or self.root
        payload: Json = {"session_id": self.root.conversation}
        if turn:
            payload["turn_id"] = who.turn_id or self.root.turn_id
        payload.update(
            {
                "transcript_path": self.rollout(who),
                "cwd": self.cwd,
                "hook_event_name": event,
                "model": "gpt-5.3-codex",
            }
        )
        if actor is not None and actor.depth > 0:
            payload["agent_id"] = actor.conversation
            payload["agent_type"] = actor.agent_type
        return payload

    def spawn_input(self, child: Node) -> Json:
        return {
            "task_name": f"task_{child.spawn_key[-6:].lower()}",
            "message": "gAAAAABo-encrypted-by-codex==",
            "fork_turns": "none",
        }

    def start(self) -> list[Json]:
        return [
            {**self.base("SessionStart", turn=False), "source": "startup"},
            {**self.base("UserPromptSubmit"), "prompt": f"Fix service {self.index}."},
        ]

    def turn(self) -> list[Json]:
        stop = {**self.base("Stop"), "stop_hook_active": False, "last_assistant_message": "Ok."}
        self.root.turn_id = uuid7(self.rnd, self.moment)
        return [stop, {**self.base("UserPromptSubmit"), "prompt": "Next step."}]

    def spawn(self, child: Node) -> list[Event]:
        parent = child.parent
        assert parent is not None
        request = {
            **self.base("PreToolUse", parent),
            "tool_name": "collaborationspawn_agent",
            "tool_input": self.spawn_input(child),
            "tool_use_id": child.spawn_key,
        }
        child.state = "live"
        child.turn_id = uuid7(self.rnd, self.moment)
        start = {
            **self.base("SubagentStart", parent),
            "agent_id": child.conversation,
            "agent_type": child.agent_type,
            "transcript_path": self.rollout(child),
        }
        result = {
            **self.base("PostToolUse", parent),
            "tool_name": "collaborationspawn_agent",
            "tool_input": self.spawn_input(child),
            "tool_response": {"task_name": self.spawn_input(child)["task_name"], "ok": True},
            "tool_use_id": child.spawn_key,
        }
        return [
            Event(request, hide=child),
            Event(start, Check(lineage=self.child_lineage(child), views=self.view(parent))),
            Event(result),
        ]

    def stop(self, child: Node) -> list[Event]:
        assert child.parent is not None
        self.finish(child)
        stop = {
            **self.base("SubagentStop", child),
            "transcript_path": self.rollout(child.parent),
            "agent_transcript_path": self.rollout(child),
            "last_assistant_message": "Done.",
        }
        return [Event(stop, Check(views=self.view(child.parent)))]

    def resume(self, child: Node) -> list[Event]:
        """A follow-up turn: the child acts again, so it is live again."""
        assert child.parent is not None
        child.state = "live"
        child.turn_id = uuid7(self.rnd, self.moment)
        return [Event(self.act(child), Check(views=self.view(child.parent)))]

    def end(self) -> list[Event]:
        self.root.state = "done"
        stop = {**self.base("Stop"), "stop_hook_active": False, "last_assistant_message": "Done."}
        return [Event(stop)]

    def act(self, actor: Node) -> Json:
        number = self.next_tool_id()
        event = "PreToolUse" if number % 2 else "PostToolUse"
        payload = {
            **self.base(event, actor),
            "tool_name": "exec_command",
            "tool_input": {"cmd": f"cargo test -q case_{number}"},
            "tool_use_id": "call_" + _alnum(self.rnd, 24),
        }
        if event == "PostToolUse":
            payload["tool_response"] = "ok"
        return payload


class CursorRoot(Root):
    host = "cursor"

    def __init__(self, rnd: random.Random, index: int, subagents: int, moment: datetime) -> None:
        super().__init__(rnd, index, subagents, moment)
        # A workspace of its own: order-based binding never has to choose between roots.
        self.workspace = [f"/Users/dev/src/app{index}"]
        self.generation = uuid4(rnd)

    def new_root_id(self) -> str:
        return uuid4(self.rnd)

    def new_child_id(self) -> str:
        return uuid4(self.rnd)

    def new_spawn_key(self) -> str:
        return f"call-{uuid4(self.rnd)}-{self.rnd.randint(1, 40)}\nfc_{uuid4(self.rnd)}_0"

    def agent_types(self) -> tuple[str, ...]:
        return ("explore", "generalPurpose", "shell")

    def base(self, conversation: str, event: str, generation: str) -> Json:
        return {
            "conversation_id": conversation,
            "generation_id": generation,
            "model": "claude-4.6-sonnet",
            "hook_event_name": event,
            "cursor_version": "3.18.25",
            "workspace_roots": self.workspace,
            "user_email": "dev@example.com",
            "transcript_path": None,
            "session_id": conversation,
        }

    def on_parent(self, parent: Node, event: str) -> Json:
        """Events that arrive on the parent's conversation (``generation_id`` = the
        conversation on subagent start and stop)."""
        return self.base(parent.conversation, event, parent.conversation)

    def start(self) -> list[Json]:
        root = self.root.conversation
        return [
            {
                **self.base(root, "sessionStart", ""),
                "is_background_agent": False,
                "composer_mode": "agent",
            },
            {
                **self.base(root, "beforeSubmitPrompt", self.generation),
                "prompt": f"Improve app {self.index}.",
                "attachments": [],
            },
        ]

    def turn(self) -> list[Json]:
        root = self.root.conversation
        stop = {**self.base(root, "stop", self.generation), "status": "completed", "loop_count": 0}
        self.generation = uuid4(self.rnd)
        prompt = {
            **self.base(root, "beforeSubmitPrompt", self.generation),
            "prompt": "Keep going.",
            "attachments": [],
        }
        return [stop, prompt]

    def spawn(self, child: Node) -> list[Event]:
        parent = child.parent
        assert parent is not None
        generation = self.generation if parent.depth == 0 else uuid4(self.rnd)
        request = {
            **self.base(parent.conversation, "preToolUse", generation),
            "tool_name": "Task",
            "tool_input": {
                "description": "Subtask",
                "prompt": f"Handle {child.conversation[:8]}.",
                "subagent_type": child.agent_type,
            },
            "tool_use_id": child.spawn_key,
        }
        child.state = "pending"
        start = {
            **self.on_parent(parent, "subagentStart"),
            "subagent_id": child.spawn_key,
            "tool_call_id": child.spawn_key,
            "parent_conversation_id": parent.conversation,
            "subagent_type": child.agent_type,
            "is_parallel_worker": False,
        }
        parent_lineage = {
            "conversation": parent.conversation,
            "root": self.root.conversation,
            "depth": parent.depth,
        }
        spawned = Event(start, Check(lineage=parent_lineage, views=self.view(parent)), hide=child)
        child.state = "live"
        first = Event(self.act(child), Check(lineage=self.child_lineage(child)))
        return [Event(request, hide=child), spawned, first]

    def stop(self, child: Node) -> list[Event]:
        parent = child.parent
        assert parent is not None
        self.finish(child)
        stop = {
            **self.on_parent(parent, "subagentStop"),
            "subagent_id": child.spawn_key,
            "tool_call_id": child.spawn_key,
            "parent_conversation_id": parent.conversation,
            "subagent_type": child.agent_type,
            "status": "completed",
            "duration_ms": 1000 + self.next_tool_id(),
            "message_count": 0,
            "tool_call_count": 0,
            "agent_transcript_path": None,
        }
        return [Event(stop, Check(views=self.view(parent)))]

    def resume(self, child: Node) -> list[Event]:
        raise AssertionError("Cursor subagents here take one turn")

    def end(self) -> list[Event]:
        for node in self.nodes:
            if node.state == "live":
                node.state = "done"
        self.root.state = "done"
        payload = {
            **self.base(self.root.conversation, "sessionEnd", ""),
            "reason": "user_close",
            "is_background_agent": False,
        }
        return [Event(payload, end_check(self.root))]

    def act(self, actor: Node) -> Json:
        number = self.next_tool_id()
        generation = self.generation if actor.depth == 0 else uuid4(self.rnd)
        kind = ("Read", "Grep", "Shell")[number % 3]
        tool_input: Json = (
            {"file_path": f"{self.workspace[0]}/src/f{number}.ts"}
            if kind == "Read"
            else {"pattern": f"fn{number}", "path": self.workspace[0]}
            if kind == "Grep"
            else {"command": f"npm test -- t{number}"}
        )
        return {
            **self.base(actor.conversation, "preToolUse", generation),
            "tool_name": kind,
            "tool_input": tool_input,
            "tool_use_id": f"call-{uuid4(self.rnd)}-{number}\nfc_{uuid4(self.rnd)}_0",
        }


def end_check(root: Node) -> Check:
    """A session end stops the root and every live descendant: its tree is empty."""
    return Check(
        lineage={"conversation": root.conversation, "depth": 0, "parent": None},
        tree={"siblings": [], "children": []},
    )


ROOT_CLASSES: dict[str, type[Root]] = {
    "claude": ClaudeRoot,
    "codex": CodexRoot,
    "cursor": CursorRoot,
}


@dataclass
class Capture:
    """The generated rows (payloads with their host and time) and the checks by row."""

    rows: list[tuple[str, datetime, Json]]
    checks: dict[int, Check]
    roots: int
    subagents: int
    hosts: dict[str, int]


def split(total: int, parts: int, rnd: random.Random) -> list[int]:
    """``total`` spread over ``parts`` around the mean, summing exactly to ``total``."""
    mean = total / parts
    counts = [max(0, round(rnd.gauss(mean, mean / 3))) for _ in range(parts)]
    while sum(counts) != total:
        i = rnd.randrange(parts)
        if sum(counts) < total:
            counts[i] += 1
        elif counts[i] > 0:
            counts[i] -= 1
    return counts


def generate(
    *,
    rows: int,
    roots: int,
    subagents: int,
    seed: int = 7,
    concurrency: int = 24,
    calls_per_subagent: int | None = None,
) -> Capture:
    """Plan every root, pad the scripts with ordinary tool activity up to ``rows``, and
    interleave the roots as concurrent sessions.

    With ``calls_per_subagent`` the capture is tool-call heavy instead: every root has the same
    number of subagents, ``rows`` is ignored, and each root's script is padded with that many
    tool calls per subagent, made by a live subagent wherever one is live (else the root)."""
    rnd = random.Random(seed)
    if calls_per_subagent is not None:
        sizes = [subagents // roots + (1 if i < subagents % roots else 0) for i in range(roots)]
    else:
        sizes = split(subagents, roots, rnd)
    planned: list[tuple[Root, list[Event], list[list[Node]]]] = []
    for index, size in enumerate(sizes):
        host = HOSTS[index % len(HOSTS)]
        root = ROOT_CLASSES[host](rnd, index, size, EPOCH + timedelta(minutes=index))
        events, actors = root.script()
        planned.append((root, events, actors))
    structural = sum(len(events) for _, events, _ in planned)
    if calls_per_subagent is not None:
        padding = [calls_per_subagent * size for size in sizes]
    elif structural > rows:
        raise SystemExit(f"{structural} structural rows already exceed --rows {rows}")
    else:
        padding = split(rows - structural, roots, rnd)
    scripts: list[tuple[Root, list[Event]]] = []
    for (root, events, actors), extra in zip(planned, padding, strict=True):
        # Activity goes after any structural row but the last (the session's end).
        slots = sorted(rnd.randrange(len(events) - 1) for _ in range(extra))
        padded: list[Event] = []
        cursor = 0
        for index, event in enumerate(events):
            padded.append(event)
            while cursor < len(slots) and slots[cursor] == index:
                who = actors[index]
                if calls_per_subagent is not None and len(who) > 1:
                    who = [actor for actor in who if actor is not root.root]
                padded.append(Event(root.act(rnd.choice(who))))
                cursor += 1
        scripts.append((root, padded))
    return interleave(scripts, rnd, concurrency, roots, subagents)


def interleave(
    scripts: list[tuple[Root, list[Event]]],
    rnd: random.Random,
    concurrency: int,
    roots: int,
    subagents: int,
) -> Capture:
    """Run up to ``concurrency`` sessions at once, taking each next row from one of them."""
    queue = iter(scripts)
    active: list[tuple[Root, Iterator[Event]]] = []
    out: list[tuple[str, datetime, Json]] = []
    checks: dict[int, Check] = {}
    hosts = dict.fromkeys(HOSTS, 0)
    moment = EPOCH
    while True:
        while len(active) < concurrency:
            nxt = next(queue, None)
            if nxt is None:
                break
            active.append((nxt[0], iter(nxt[1])))
            hosts[nxt[0].host] += 1
        if not active:
            break
        slot = rnd.randrange(len(active))
        root, events = active[slot]
        event = next(events, None)
        if event is None:
            active.pop(slot)
            continue
        moment += timedelta(milliseconds=rnd.randint(5, 400))
        out.append((root.host, moment, event.payload))
        if event.check is not None:
            checks[len(out)] = event.check
    return Capture(out, checks, roots, subagents, hosts)


def _flow(value: Any) -> str:
    """A value as a one-line YAML flow node (JSON strings are valid YAML strings)."""
    if isinstance(value, dict):
        inner = ", ".join(f"{_flow_key(k)}: {_flow(v)}" for k, v in value.items())
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_flow(v) for v in value) + "]"
    if value is None:
        return "null"
    return json.dumps(value)


def _flow_key(key: str) -> str:
    return key if key.isidentifier() else json.dumps(key)


def expected_text(capture: Capture, transcript: str) -> str:
    lines = [
        f"# Expected lineage for {transcript}, written by tools/gen_capture.py from its own",
        "# model of each tree (not by running the engine).",
        "version: 1",
        "steps:",
    ]
    for row in sorted(capture.checks):
        check = capture.checks[row]
        lines.append(f"  - row: {row}")
        if check.lineage is not None:
            lines.append(f"    lineage: {_flow(check.lineage)}")
        if check.tree is not None:
            lines.append(f"    tree: {_flow(check.tree)}")
        if check.views is not None:
            lines.append(f"    views: {_flow(check.views)}")
    return "\n".join(lines) + "\n"


def write(capture: Capture, folder: Path, name: str = "capture") -> tuple[Path, Path]:
    """Write ``name.jsonl`` and ``name.expected.yaml`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    transcript = folder / f"{name}.jsonl"
    expected = folder / f"{name}.expected.yaml"
    with transcript.open("wb") as stream:
        for host, moment, payload in capture.rows:
            at = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
            stream.write(orjson.dumps({"host": host, "at": at, "payload": payload}) + b"\n")
    expected.write_text(expected_text(capture, transcript.name), encoding="utf-8")
    return transcript, expected


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="folder for capture.jsonl and its expected file")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--roots", type=int, default=1_000)
    parser.add_argument("--subagents", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=24, help="sessions at once")
    parser.add_argument(
        "--calls-per-subagent",
        type=int,
        default=None,
        help="tool-call-heavy shape: this many tool calls per subagent, --subagents spread "
        "evenly over the roots (--rows is then ignored)",
    )
    args = parser.parse_args(argv)
    capture = generate(
        rows=args.rows,
        roots=args.roots,
        subagents=args.subagents,
        seed=args.seed,
        concurrency=args.concurrency,
        calls_per_subagent=args.calls_per_subagent,
    )
    transcript, expected = write(capture, args.out)
    hosts = ", ".join(f"{h} {n}" for h, n in capture.hosts.items())
    print(
        f"wrote {transcript} ({len(capture.rows)} rows; {capture.roots} roots: {hosts}; "
        f"{capture.subagents} subagents) and {expected} ({len(capture.checks)} steps)",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
