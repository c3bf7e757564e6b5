"""A Cursor child not bound to its parent yet is no root, and its root is not known: its
answer names no root (shared/spec/HOSTS.md 3.2, binding by order; LINEAGE.md, never guesses).
"""

from __future__ import annotations

import orjson

from lineage_es.engine.engine import Engine
from lineage_es.model import AgentLineage, to_json
from tests.support.cursor_hooks import hook


def unbound(engine: Engine) -> AgentLineage:
    """Root R is known; conversation X, in R's workspace, calls a tool while no spawn is
    pending: it cannot start a root and cannot be bound."""
    engine.observe("cursor", hook("R", "sessionStart"))
    answer = engine.observe(
        "cursor", hook("X", "preToolUse", tool_name="Read", tool_input={}, tool_use_id="t1")
    )
    assert answer is not None
    return answer


def test_an_unbound_cursor_child_reports_no_root(engine: Engine) -> None:
    answer = unbound(engine)
    assert (answer.conversation, answer.root, answer.parent) == ("X", None, None)


def test_an_unbound_cursor_childs_json_says_root_null_and_reads_back(engine: Engine) -> None:
    data = orjson.loads(orjson.dumps(to_json(unbound(engine))))
    assert data["root"] is None
    assert AgentLineage.from_json(data).root is None
