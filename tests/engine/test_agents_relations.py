"""Listing agents relates each to the caller exactly as asking the relation of each does,
though nodes of other roots are not looked up one by one."""

from __future__ import annotations

import json
from typing import Any

from lineage_es import open_engine
from tests.support.mcp_families import FIRST, GRANDCHILD, ROOT, SECOND, claude_family

OTHER_ROOT = "9d0c1b2a-0000-4000-8000-00000000abcd"


def _family_of(session: str) -> list[dict[str, Any]]:
    """The Claude family, under another session id (the same subagent ids: each root lists
    its own)."""
    payloads: list[dict[str, Any]] = json.loads(json.dumps(claude_family()).replace(ROOT, session))
    return payloads


def test_every_listed_agents_relation_is_the_relation_asked_of_it() -> None:
    engine = open_engine("memory://")
    try:
        for payload in claude_family():
            engine.observe("claude", payload)
        for payload in _family_of(OTHER_ROOT)[:3]:  # a root and two pending spawns
            engine.observe("claude", payload)
        callers = [ROOT, FIRST, SECOND, GRANDCHILD, OTHER_ROOT]
        for caller in callers:
            listed = engine.agents(caller, "claude")
            assert {m.conversation for m in listed} >= set(callers)
            for member in listed:
                assert member.relation == engine.relation(member.conversation, caller, "claude")
        related = {m.conversation: m.relation for m in engine.agents(GRANDCHILD, "claude")}
        assert related[OTHER_ROOT] == "unrelated"
        assert related[FIRST] == "parent"
    finally:
        engine.close()
