"""``Engine.resolve`` and a Codex ``_meta`` that states its caller's parent: ``_meta`` is a
native statement (LINEAGE.md), stronger than a placement by spawn order, and an MCP call is
resolved, never journaled (REPLAY.md), so the answer follows ``_meta`` and the journal is left
as it is.

Codex hooks name the root but never the parent (HOSTS.md 2.1): a depth-2 thread is placed by
spawn order, ambiguous when two depth-1 threads both have a spawn open, or under the wrong
one when the real spawner's ``PreToolUse`` is delivered late (hooks run as separate
processes). The MCP call's ``_meta`` then names its parent outright.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import PayloadError
from tests.support.codex_hooks import ROOT, hook, spawn_call
from tests.support.codex_threads import A, B, G, two_children

UNSEEN = "019a0000-0000-7000-8000-0000000000e5"
OTHER_ROOT = "019a0000-0000-7000-8000-0000000000a9"


def meta(thread: str, parent: str, *, root: str = ROOT, turn: str = "t9") -> dict[str, Any]:
    """An MCP ``tools/call`` ``_meta`` from ``thread`` as Codex sends it (HOSTS.md 2.1)."""
    return {
        "threadId": thread,
        "x-codex-turn-metadata": {
            "session_id": root,
            "thread_id": thread,
            "parent_thread_id": parent,
            "thread_source": "subagent",
            "subagent_kind": "thread_spawn",
            "turn_id": turn,
        },
    }


@pytest.fixture
def ambiguous() -> Iterator[Engine]:
    """A and B each have a spawn open when G starts: G is under the root, no parent edge."""
    with open_engine("memory://") as engine:
        two_children(engine)
        engine.observe("codex", spawn_call(agent_id=A, tool_use_id="call_3"))
        engine.observe("codex", spawn_call(agent_id=B, tool_use_id="call_4"))
        engine.observe("codex", hook("SubagentStart", agent_id=G))
        left = engine.lineage(G, "codex")
        assert (left.parent, left.depth, left.resolution) == (None, 1, "inferred")
        yield engine


@pytest.fixture
def misplaced() -> Iterator[Engine]:
    """B spawned G, but B's ``PreToolUse`` comes after G's start: G is inferred under A,
    the only thread with a spawn open then."""
    with open_engine("memory://") as engine:
        two_children(engine)
        engine.observe("codex", spawn_call(agent_id=A, tool_use_id="call_3"))
        engine.observe("codex", hook("SubagentStart", agent_id=G))
        engine.observe("codex", spawn_call(agent_id=B, tool_use_id="call_4"))
        guessed = engine.lineage(G, "codex")
        assert (guessed.parent, guessed.depth, guessed.resolution) == (A, 2, "inferred")
        yield engine


def test_meta_places_a_thread_left_ambiguous_under_its_stated_parent(ambiguous: Engine) -> None:
    lineage = ambiguous.resolve("codex", meta(G, B))
    assert lineage is not None
    assert (lineage.parent, lineage.depth, lineage.resolution) == (B, 2, "native")
    assert lineage.tree is not None


def test_a_thread_placed_under_its_stated_parent_is_no_longer_marked_ambiguous(
    ambiguous: Engine,
) -> None:
    assert ambiguous.lineage(G, "codex").ambiguous
    lineage = ambiguous.resolve("codex", meta(G, B))
    assert lineage is not None and not lineage.ambiguous


def test_meta_corrects_a_parent_inferred_wrongly_by_spawn_order(misplaced: Engine) -> None:
    lineage = misplaced.resolve("codex", meta(G, B))
    assert lineage is not None
    assert (lineage.parent, lineage.depth, lineage.resolution) == (B, 2, "native")


def test_meta_contradicting_an_inference_journals_nothing(misplaced: Engine) -> None:
    position = misplaced.position()
    misplaced.resolve("codex", meta(G, B))
    assert misplaced.position() == position


def test_the_answer_following_meta_keeps_the_callers_live_tree(misplaced: Engine) -> None:
    registry = misplaced.lineage(G, "codex")
    lineage = misplaced.resolve("codex", meta(G, B))
    assert lineage is not None and lineage.tree is not None
    assert lineage.tree == registry.tree
    assert (lineage.root, lineage.subagent) == (registry.root, registry.subagent)


def test_the_same_meta_again_answers_the_same(misplaced: Engine) -> None:
    first = misplaced.resolve("codex", meta(G, B))
    position = misplaced.position()
    again = misplaced.resolve("codex", meta(G, B, turn="t10"))
    assert misplaced.position() == position
    assert again == first


def test_meta_agreeing_with_an_inferred_parent_journals_nothing(misplaced: Engine) -> None:
    position = misplaced.position()
    lineage = misplaced.resolve("codex", meta(G, A))
    assert misplaced.position() == position
    assert lineage is not None
    assert (lineage.parent, lineage.resolution) == (A, "registry")


def test_meta_does_not_override_a_confirmed_parent() -> None:
    with open_engine("memory://") as engine:
        two_children(engine)
        engine.observe("codex", spawn_call(agent_id=A, tool_use_id="call_3"))
        engine.observe("codex", hook("SubagentStart", agent_id=G))
        engine.observe(
            "codex",
            spawn_call(
                hook_event_name="PostToolUse",
                agent_id=A,
                tool_use_id="call_3",
                tool_response={"agent_id": G},
            ),
        )
        position = engine.position()
        lineage = engine.resolve("codex", meta(G, B))
        assert engine.position() == position
    assert lineage is not None
    assert (lineage.parent, lineage.resolution) == (A, "confirmed")


def test_meta_naming_a_parent_the_journal_never_saw_journals_nothing(misplaced: Engine) -> None:
    position = misplaced.position()
    lineage = misplaced.resolve("codex", meta(G, UNSEEN))
    assert misplaced.position() == position
    assert lineage is not None
    assert (lineage.parent, lineage.resolution) == (A, "registry")


def test_meta_naming_a_descendant_of_its_caller_as_parent_journals_nothing(
    misplaced: Engine,
) -> None:
    """A caller's own child stated as its parent would be a cycle: refused, not journaled."""
    misplaced.observe("codex", spawn_call(agent_id=G, tool_use_id="call_5"))
    misplaced.observe("codex", hook("SubagentStart", agent_id=UNSEEN))
    misplaced.observe(
        "codex",
        spawn_call(
            hook_event_name="PostToolUse",
            agent_id=G,
            tool_use_id="call_5",
            tool_response={"agent_id": UNSEEN},
        ),
    )
    assert misplaced.relation(UNSEEN, G, "codex") == "child"
    position = misplaced.position()
    lineage = misplaced.resolve("codex", meta(G, UNSEEN))
    assert misplaced.position() == position
    assert lineage is not None
    assert lineage.parent == A


def test_meta_naming_another_root_than_its_callers_journals_nothing(misplaced: Engine) -> None:
    misplaced.observe("codex", hook("SessionStart", source="startup", session_id=OTHER_ROOT))
    position = misplaced.position()
    lineage = misplaced.resolve("codex", meta(G, B, root=OTHER_ROOT))
    assert misplaced.position() == position
    assert lineage is not None
    assert lineage.parent == A


def test_meta_of_a_thread_never_seen_still_journals_nothing(misplaced: Engine) -> None:
    position = misplaced.position()
    lineage = misplaced.resolve("codex", meta(UNSEEN, B))
    assert misplaced.position() == position
    assert lineage is not None
    assert (lineage.parent, lineage.depth, lineage.resolution, lineage.tree) == (
        B,
        2,
        "native",
        None,
    )


def test_a_thread_never_seen_under_a_known_parent_takes_that_parents_root(
    misplaced: Engine,
) -> None:
    turn = {"thread_id": UNSEEN, "parent_thread_id": B}  # no session_id: no root named
    no_session = {"threadId": UNSEEN, "x-codex-turn-metadata": turn}
    lineage = misplaced.resolve("codex", no_session)
    assert lineage is not None
    assert (lineage.root, lineage.parent, lineage.depth) == (ROOT, B, 2)


@pytest.mark.parametrize(
    "depth", [-1, 2**63, 2**70], ids=["negative", "past-63-bits", "past-64-bits"]
)
def test_a_stated_depth_no_answer_can_carry_is_a_payload_error(
    misplaced: Engine, depth: int
) -> None:
    """An answer is JSON, which holds no integer past 64 bits, and no depth is negative."""
    stated = meta(UNSEEN, B)
    stated["x-codex-turn-metadata"]["depth"] = depth
    with pytest.raises(PayloadError, match="'depth' must be 0 or more"):
        misplaced.resolve("codex", stated)
