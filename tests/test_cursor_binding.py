"""Binding a Cursor child's fresh conversation by order (shared/spec/HOSTS.md 3.2, 3.4;
shared/spec/LINEAGE.md, resolution ``inferred`` and "never guesses"), through real hook
payloads, on every store.

Root R spawns subagents with ``Task`` and ``subagentStart``; a child's own events arrive on a
conversation no payload links to R, in the same ``workspace_roots``.
"""

from __future__ import annotations

from typing import Any

import pytest

from lineage_es.engine import Engine
from lineage_es.model import ForestNode

ROOT = "R"


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


def spawn(engine: Engine, key: str, parent: str = ROOT) -> None:
    """``parent`` calls ``Task`` and its ``subagentStart`` arrives."""
    engine.observe(
        "cursor",
        hook(
            parent,
            "preToolUse",
            tool_name="Task",
            tool_input={"prompt": "p", "subagent_type": "explore"},
            tool_use_id=key,
        ),
    )
    engine.observe(
        "cursor",
        hook(
            parent,
            "subagentStart",
            subagent_id=key,
            tool_call_id=key,
            parent_conversation_id=parent,
            subagent_type="explore",
        ),
    )


def read(engine: Engine, conversation: str) -> None:
    """A first (or later) tool call from ``conversation``."""
    engine.observe(
        "cursor",
        hook(conversation, "preToolUse", tool_name="Read", tool_input={}, tool_use_id="t1"),
    )


def subagent_stop(engine: Engine, key: str, parent: str = ROOT) -> None:
    engine.observe(
        "cursor",
        hook(parent, "subagentStop", subagent_id=key, parent_conversation_id=parent),
    )


def children(engine: Engine, root: str = ROOT) -> dict[str, ForestNode]:
    """Every child of ``root`` the journal knows, stopped ones too, by how it is listed."""
    (top,) = engine.forest("cursor", include_stopped=True, root=root)
    return {child.conversation: child for child in top.children}


def listed(engine: Engine, conversation: str = ROOT) -> list[str]:
    """The live children ``conversation``'s tree lists."""
    tree = engine.tree_for(conversation, "cursor")
    assert tree is not None
    return [peer.conversation for peer in tree.children]


@pytest.fixture
def parallel(engine: Engine) -> Engine:
    """R has started two subagents, K1 then K2; neither conversation is known yet."""
    engine.observe("cursor", hook(ROOT, "beforeSubmitPrompt", prompt="two tasks"))
    spawn(engine, "K1")
    spawn(engine, "K2")
    return engine


@pytest.fixture
def bound(engine: Engine) -> Engine:
    """R has started subagent K, and conversation C has been bound to it by order."""
    engine.observe("cursor", hook(ROOT, "beforeSubmitPrompt", prompt="one task"))
    spawn(engine, "K")
    read(engine, "C")
    return engine


# -- parallel subagents of one parent --------------------------------------------------------


def test_parallel_children_of_one_parent_bind_in_start_order(parallel: Engine) -> None:
    read(parallel, "C")
    read(parallel, "D")
    c, d = parallel.lineage("C", "cursor"), parallel.lineage("D", "cursor")
    assert (c.parent, c.resolution, c.subagent and c.subagent.id) == (ROOT, "inferred", "K1")
    assert (d.parent, d.resolution, d.subagent and d.subagent.id) == (ROOT, "inferred", "K2")


def test_the_first_of_parallel_children_is_answered_as_inferred(parallel: Engine) -> None:
    payload = hook("C", "preToolUse", tool_name="Read", tool_input={}, tool_use_id="t1")
    lineage = parallel.observe("cursor", payload)
    assert lineage is not None
    assert (lineage.parent, lineage.depth, lineage.resolution) == (ROOT, 1, "inferred")
    assert lineage.subagent is not None and lineage.subagent.id == "K1"


def test_a_bound_parallel_child_replaces_its_spawn_key_in_the_listing(parallel: Engine) -> None:
    read(parallel, "C")
    assert listed(parallel) == ["C", "K2"]
    read(parallel, "D")
    assert listed(parallel) == ["C", "D"]


def test_subagent_stops_reach_parallel_children_bound_by_order(parallel: Engine) -> None:
    read(parallel, "C")
    read(parallel, "D")
    subagent_stop(parallel, "K1")
    subagent_stop(parallel, "K2")
    assert {key: node.status for key, node in children(parallel).items()} == {
        "C": "stopped",
        "D": "stopped",
    }


def test_a_spawn_whose_binding_is_undone_is_bound_first_again(parallel: Engine) -> None:
    read(parallel, "X")  # takes K1 ...
    parallel.observe("cursor", hook("X", "stop", status="completed"))  # ... and gives it back
    read(parallel, "C")
    assert parallel.lineage("C", "cursor").subagent.id == "K1"  # type: ignore[union-attr]


def test_pending_starts_of_different_parents_are_never_guessed_between(parallel: Engine) -> None:
    read(parallel, "C")  # C is K1, and starts its own subagent K3: K2 (R's) and K3 (C's) pend
    spawn(parallel, "K3", parent="C")
    read(parallel, "E")
    assert parallel.lineage("E", "cursor").parent is None
    assert children(parallel)["E"].ambiguous


# -- a session end from a child bound by order -----------------------------------------------


def test_a_session_end_from_a_bound_child_gives_its_spawn_back(bound: Engine) -> None:
    bound.observe("cursor", hook("C", "sessionEnd", reason="user_close"))
    assert listed(bound) == ["K"]


def test_a_session_end_from_a_bound_child_ends_it_as_a_root(bound: Engine) -> None:
    bound.observe("cursor", hook("C", "sessionEnd", reason="user_close"))
    lineage = bound.lineage("C", "cursor")
    assert (lineage.root, lineage.depth, lineage.parent) == ("C", 0, None)
    (root,) = bound.forest("cursor", include_stopped=True, root="C")
    assert root.status == "stopped"


def test_the_spawn_a_session_end_gave_back_binds_the_next_child(bound: Engine) -> None:
    bound.observe("cursor", hook("C", "sessionEnd", reason="user_close"))
    read(bound, "D")
    assert bound.lineage("D", "cursor").subagent.id == "K"  # type: ignore[union-attr]


def test_a_session_end_from_a_root_still_ends_its_session(bound: Engine) -> None:
    bound.observe("cursor", hook(ROOT, "sessionEnd", reason="window_close"))
    (root,) = bound.forest("cursor", include_stopped=True, root=ROOT)
    assert root.status == "stopped"
    assert [(child.conversation, child.status) for child in root.children] == [("C", "stopped")]
