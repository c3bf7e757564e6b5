"""Claude Code hook payloads of one session, as Claude sends them: no timestamp, the same
envelope always (so a fact that happens again can be byte-identical to the first)."""

from __future__ import annotations

from typing import Any

SESSION = "5f1c2e4a-0000-4000-8000-000000000001"
AGENT = "a1000000000000001"


def claude(event: str, **fields: Any) -> dict[str, Any]:
    """A Claude Code hook payload as Claude sends it: no timestamp, the same envelope always."""
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/u/.claude/projects/-w/{SESSION}.jsonl",
        "cwd": "/w",
        "hook_event_name": event,
        **fields,
    }
