"""Codex CLI hook payloads (0.147+) of one root thread and its children, and the spawn call."""

from __future__ import annotations

from typing import Any

ROOT = "019a0000-0000-7000-8000-0000000000a1"
CHILD = "019a0000-0000-7000-8000-0000000000b2"
GRANDCHILD = "019a0000-0000-7000-8000-0000000000c3"
ROLLOUT = f"/home/u/.codex/sessions/2026/09/03/rollout-2026-09-03T10-00-05-{ROOT}.jsonl"


def hook(event: str, **fields: Any) -> dict[str, Any]:
    """A Codex 0.147+ hook payload at the root thread unless ``agent_id`` is given."""
    payload: dict[str, Any] = {
        "session_id": ROOT,
        "turn_id": "019a0000-0000-7000-8000-0000000000f1",
        "transcript_path": ROLLOUT,
        "cwd": "/w",
        "hook_event_name": event,
        "model": "gpt-5",
        "permission_mode": "default",
    }
    payload.update(fields)
    return payload


def spawn_call(**fields: Any) -> dict[str, Any]:
    """A v1 ``spawn_agent`` PreToolUse at the root, with ``fields`` replacing any default."""
    call = {
        "tool_name": "spawn_agent",
        "tool_use_id": "call_1",
        "tool_input": {"message": "scan", "agent_type": "explorer"},
    }
    return hook("PreToolUse", **(call | fields))
