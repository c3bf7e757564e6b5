"""Deterministic streams of real Claude Code hook payloads, shared by the tests and the worker
processes they spawn: both sides rebuild the same payloads from the same arguments, so a test
knows exactly what a killed or concurrent writer was asked to observe.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from lineage_es.hosts.base import payload_key

EPOCH = datetime(2026, 3, 1, tzinfo=UTC)

Payload = dict[str, Any]


@dataclass(frozen=True)
class Item:
    """One payload of a stream, with the receipt time every replay of it uses."""

    index: int
    payload: Payload
    at: datetime

    @property
    def key(self) -> str:
        """The idempotency key the Claude adapter gives it (events carry it as ``fact``)."""
        return payload_key(self.payload)


def session(n: int) -> str:
    return f"5f1c2e4a-0000-4000-8000-{n:012d}"


def _hook(sid: str, event: str, **fields: Any) -> Payload:
    return {"session_id": sid, "hook_event_name": event, **fields}


def _spawn(sid: str, spawner: str | None, key: str, kind: str) -> Payload:
    fields: dict[str, Any] = {
        "tool_name": "Agent",
        "tool_use_id": key,
        "tool_input": {"prompt": "p", "subagent_type": kind},
    }
    if spawner is not None:
        fields["agent_id"] = spawner
    return _hook(sid, "PreToolUse", **fields)


def _confirm(sid: str, spawner: str | None, key: str, child: str, status: str) -> Payload:
    fields: dict[str, Any] = {
        "tool_name": "Agent",
        "tool_use_id": key,
        "tool_input": {"prompt": "p"},
        "tool_response": {"status": status, "agentId": child},
    }
    if spawner is not None:
        fields["agent_id"] = spawner
    return _hook(sid, "PostToolUse", **fields)


def crash_stream(length: int, seed: int = 11) -> list[Item]:
    """A single writer's stream: roots start, spawn (nested), children start, get confirmed,
    act, stop, sessions end and resume, and some payloads are delivered twice."""
    rnd = random.Random(seed)
    payloads: list[Payload] = []
    live_roots: list[str] = []
    ended_roots: list[str] = []
    agents: dict[str, list[str]] = {}
    spawns: dict[str, list[tuple[str | None, str]]] = {}
    started: dict[str, list[tuple[str | None, str, str]]] = {}
    counter = 0

    def fresh() -> int:
        nonlocal counter
        counter += 1
        return counter

    while len(payloads) < length:
        roll = rnd.random()
        if not live_roots or (roll < 0.04 and len(live_roots) < 8):
            sid = session(fresh())
            live_roots.append(sid)
            agents[sid], spawns[sid], started[sid] = [], [], []
            payloads.append(_hook(sid, "SessionStart", source="startup"))
            continue
        sid = rnd.choice(live_roots)
        if roll < 0.22:
            spawner = rnd.choice([None, *agents[sid]])
            key = f"toolu_{fresh():06d}"
            spawns[sid].append((spawner, key))
            payloads.append(_spawn(sid, spawner, key, rnd.choice(["Explore", "general-purpose"])))
        elif roll < 0.40 and spawns[sid]:
            spawner, key = spawns[sid].pop(0)
            child = f"a{fresh():016x}"
            agents[sid].append(child)
            started[sid].append((spawner, key, child))
            payloads.append(_hook(sid, "SubagentStart", agent_id=child, agent_type="Explore"))
        elif roll < 0.52 and started[sid]:
            spawner, key, child = started[sid].pop(0)
            status = rnd.choice(["async_launched", "completed"])
            payloads.append(_confirm(sid, spawner, key, child, status))
        elif roll < 0.68 and agents[sid]:
            who = rnd.choice(agents[sid])
            payloads.append(_hook(sid, "PreToolUse", agent_id=who, tool_name="Bash"))
        elif roll < 0.78 and agents[sid]:
            who = rnd.choice(agents[sid])
            payloads.append(_hook(sid, "SubagentStop", agent_id=who, agent_type="Explore"))
        elif roll < 0.84:
            payloads.append(_hook(sid, "UserPromptSubmit", prompt=f"turn {fresh()}"))
        elif roll < 0.88:
            live_roots.remove(sid)
            ended_roots.append(sid)
            payloads.append(_hook(sid, "SessionEnd", reason="other"))
        elif roll < 0.91 and ended_roots:
            back = ended_roots.pop(0)
            live_roots.append(back)
            payloads.append(_hook(back, "SessionStart", source="resume"))
        elif roll < 0.96 and payloads:
            payloads.append(dict(rnd.choice(payloads)))  # a host delivering one payload twice
        else:
            payloads.append(_hook(sid, "PreToolUse", tool_name="Read"))
    return [Item(i, p, EPOCH + timedelta(seconds=i)) for i, p in enumerate(payloads)]


#: One episode of the contention stream: every step journals at least one event whatever
#: other writers did to the same root in between, so every payload's key must be found.
EPISODE = (
    "spawn",
    "start",
    "confirm",
    "spawn-nested",
    "start-nested",
    "confirm-nested",
    "stop-nested",
    "stop",
)


def contention_stream(worker: int, count: int, roots: int, lanes: int = 4) -> list[Item]:
    """Worker ``worker``'s payloads: episodes on roots shared with every other worker, several
    episodes interleaved step by step so that the same roots are written concurrently.

    Each episode spawns a child from the root, starts and confirms it, has the child spawn a
    grandchild (placed ambiguous while spawns from several parents are open), confirms and
    stops both. Ids are unique per worker.
    """
    items: list[Item] = []
    episode = 0
    base = worker * 1_000_000
    while len(items) < count:
        lane_items: list[list[Payload]] = []
        for lane in range(lanes):
            n = episode + lane
            sid = session(100 + (worker + n) % roots)
            tag = f"w{worker:02d}e{n:04d}"
            child, grandchild = f"a{worker:02x}{n:06x}c0000000", f"a{worker:02x}{n:06x}g0000000"
            key, nested = f"toolu_{tag}_c", f"toolu_{tag}_g"
            lane_items.append(
                [
                    _spawn(sid, None, key, "general-purpose"),
                    _hook(sid, "SubagentStart", agent_id=child, agent_type="general-purpose"),
                    _confirm(sid, None, key, child, "async_launched"),
                    _spawn(sid, child, nested, "Explore"),
                    _hook(sid, "SubagentStart", agent_id=grandchild, agent_type="Explore"),
                    _confirm(sid, child, nested, grandchild, "async_launched"),
                    _hook(sid, "SubagentStop", agent_id=grandchild, agent_type="Explore"),
                    _hook(sid, "SubagentStop", agent_id=child, agent_type="general-purpose"),
                ]
            )
        episode += lanes
        for step in range(len(EPISODE)):
            for steps in lane_items:
                items.append(Item(len(items), steps[step], EPOCH))
    items = items[:count]
    return [
        Item(i, item.payload, EPOCH + timedelta(milliseconds=base + i))
        for i, item in enumerate(items)
    ]
