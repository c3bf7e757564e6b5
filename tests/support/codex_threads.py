"""Two Codex depth-1 threads, A and B, of the root, and G, a depth-2 thread one of them
spawns: the start the ``_meta`` resolution and the spawn-release tests share."""

from __future__ import annotations

from lineage_es.engine.engine import Engine
from tests.support.codex_hooks import hook, spawn_call

A = "019a0000-0000-7000-8000-0000000000b2"
B = "019a0000-0000-7000-8000-0000000000b3"
G = "019a0000-0000-7000-8000-0000000000c3"


def two_children(engine: Engine) -> None:
    """The root spawns A, then B; both start."""
    engine.observe("codex", hook("SessionStart", source="startup"))
    engine.observe("codex", spawn_call(tool_use_id="call_1"))
    engine.observe("codex", hook("SubagentStart", agent_id=A))
    engine.observe("codex", spawn_call(tool_use_id="call_2"))
    engine.observe("codex", hook("SubagentStart", agent_id=B))
