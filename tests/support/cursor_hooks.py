"""Cursor hook payloads as Cursor sends them: one conversation's event, in workspace ``/w``."""

from __future__ import annotations

from typing import Any


def hook(conversation: str, event: str, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "conversation_id": conversation,
        "generation_id": "g1",
        "hook_event_name": event,
        "cursor_version": "3.18.25",
        "workspace_roots": ["/w"],
        "session_id": conversation,
        "transcript_path": None,
    }
    payload.update(fields)
    return payload
