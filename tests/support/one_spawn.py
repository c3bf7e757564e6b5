"""A recording of one Claude root spawning one subagent, and an expected file that holds for
it: the smallest case the replay tools (the pytest plugin, the expected file's bounds) run."""

from __future__ import annotations

import json
from pathlib import Path

#: A recording of one Claude root spawning one subagent (row 3 is the spawn).
ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
CHILD = "a1000000000000001"
SESSION_ROWS = [
    {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"},
    {
        "session_id": ROOT,
        "hook_event_name": "PreToolUse",
        "tool_name": "Agent",
        "tool_use_id": "toolu_01A",
        "tool_input": {"prompt": "p", "subagent_type": "Explore"},
    },
    {
        "session_id": ROOT,
        "hook_event_name": "SubagentStart",
        "agent_id": CHILD,
        "agent_type": "Explore",
    },
]

#: An expected file that holds for :data:`SESSION_ROWS`.
HOLDS = f"""version: 1
host: claude
steps:
  - row: 3
    lineage: {{conversation: {CHILD}, parent: {ROOT}, depth: 1}}
"""


def write_recording(path: Path) -> None:
    """Write :data:`SESSION_ROWS` to ``path``, a capture of one payload per line."""
    path.write_text("".join(json.dumps(row) + "\n" for row in SESSION_ROWS))
