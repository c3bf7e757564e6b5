"""Binding a Cursor child's fresh conversation by order (shared/spec/HOSTS.md 3.2, 3.4;
shared/spec/LINEAGE.md, resolution ``inferred`` and "never guesses"), through real hook
payloads, on every store.

Root R spawns subagents with ``Task`` and ``subagentStart``; a child's own events arrive on a
conversation no payload links to R, in the same ``workspace_roots``.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.model import ForestNode
from tests.support.cursor_hooks import hook
from tests.support.feed import Feed
from tests.support.past_view import past_queries

ROOT = "R"


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


def read(engine: Engine, conversation: str, call: str = "t1") -> None:
    """A first (or later, with another ``call``) tool call from ``conversation``."""
    engine.observe(
        "cursor",
        hook(conversation, "preToolUse", tool_name="Read", tool_input={}, tool_use_id=call),
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


# -- a workspace learnt after a root's first event (HOSTS.md 3.1, 3.4.3) ----------------------


def unplaced(conversation: str, event: str, **fields: Any) -> dict[str, Any]:
    """A payload whose envelope leaves ``workspace_roots`` out."""
    payload = hook(conversation, event, **fields)
    del payload["workspace_roots"]
    return payload


def other_roots(engine: Engine, conversation: str) -> list[str]:
    tree = engine.tree_for(conversation, "cursor")
    assert tree is not None
    return [peer.conversation for peer in tree.roots]


@pytest.fixture
def unplaced_root(engine: Engine) -> Engine:
    """Root X was first seen mid-stream, on a prompt without ``workspace_roots``."""
    engine.observe("cursor", unplaced("X", "beforeSubmitPrompt", prompt="hi"))
    return engine


def test_a_root_first_seen_without_workspace_roots_learns_them_from_a_later_prompt(
    unplaced_root: Engine,
) -> None:
    unplaced_root.observe("cursor", hook("X", "beforeSubmitPrompt", prompt="hi"))
    unplaced_root.observe("cursor", hook("Y", "sessionStart"))
    assert (other_roots(unplaced_root, "Y"), other_roots(unplaced_root, "X")) == (["X"], ["Y"])


def test_a_root_learns_its_workspace_from_its_own_tool_call(unplaced_root: Engine) -> None:
    read(unplaced_root, "X")
    unplaced_root.observe("cursor", hook("Y", "sessionStart"))
    assert other_roots(unplaced_root, "Y") == ["X"]


def test_the_child_of_a_root_first_seen_without_workspace_roots_is_bound(
    unplaced_root: Engine,
) -> None:
    spawn(unplaced_root, "K", parent="X")
    read(unplaced_root, "C")
    lineage = unplaced_root.lineage("C", "cursor")
    assert (lineage.root, lineage.parent, lineage.depth) == ("X", "X", 1)
    assert listed(unplaced_root, "X") == ["C"]


def test_a_learnt_workspace_survives_a_rebuild(unplaced_root: Engine) -> None:
    read(unplaced_root, "X")
    unplaced_root.observe("cursor", hook("Y", "sessionStart"))
    unplaced_root.rebuild()
    assert other_roots(unplaced_root, "Y") == ["X"]


def test_a_root_keeps_the_first_workspace_it_learns(unplaced_root: Engine) -> None:
    unplaced_root.observe("cursor", hook("X", "beforeSubmitPrompt", prompt="hi"))
    unplaced_root.observe("cursor", hook("X", "stop", status="completed", workspace_roots=["/v"]))
    unplaced_root.observe("cursor", hook("Y", "sessionStart"))
    unplaced_root.observe("cursor", hook("Z", "sessionStart", workspace_roots=["/v"]))
    assert (other_roots(unplaced_root, "Y"), other_roots(unplaced_root, "Z")) == (["X"], [])


def test_workspace_roots_in_another_order_name_the_same_workspace(engine: Engine) -> None:
    both, reversed_ = ["/a", "/b"], ["/b", "/a"]
    engine.observe("cursor", hook(ROOT, "beforeSubmitPrompt", prompt="hi", workspace_roots=both))
    engine.observe("cursor", hook("Y", "sessionStart", workspace_roots=reversed_))
    assert other_roots(engine, "Y") == [ROOT]


def test_a_child_sent_workspace_roots_in_another_order_is_bound(engine: Engine) -> None:
    both = ["/a", "/b"]
    engine.observe("cursor", hook(ROOT, "beforeSubmitPrompt", prompt="hi", workspace_roots=both))
    engine.observe(
        "cursor",
        hook(
            ROOT,
            "subagentStart",
            subagent_id="K",
            parent_conversation_id=ROOT,
            workspace_roots=both,
        ),
    )
    engine.observe(
        "cursor",
        hook("C", "preToolUse", tool_name="Read", tool_input={}, workspace_roots=["/b", "/a"]),
    )
    assert engine.lineage("C", "cursor").parent == ROOT


def test_a_root_journaled_with_its_workspace_roots_unsorted_meets_the_same_workspace(
    engine: Engine,
) -> None:
    """Roots journaled before the adapter sorted ``workspace_roots`` kept the host's order."""
    Feed(engine, "cursor").cursor_root("X", ("/b", "/a"))
    engine.observe("cursor", hook("Y", "sessionStart", workspace_roots=["/a", "/b"]))
    assert other_roots(engine, "Y") == ["X"]


# -- undoing a wrong binding: what the unbound root started goes with it ----------------------


@pytest.fixture
def misbound(bound: Engine) -> Engine:
    """C, bound to R's K by order, has started its own subagent KC (its ``subagentStart``
    names C as the parent): that edge is C's own, not a guess."""
    spawn(bound, "KC", parent="C")
    return bound


def family(engine: Engine, root: str) -> dict[str, tuple[str | None, int, str]]:
    """Every node of ``root`` that is not deleted, as (parent, depth, status)."""
    return {m.conversation: (m.parent, m.depth, m.status) for m in engine.family(root, "cursor")}


def revoked(engine: Engine) -> list[str]:
    """The nodes journaled as deleted because they were placed on a wrong guess."""
    return [
        e.state["conversation"] or e.state["spawn_key"]
        for e in engine.journal()
        if e.topic.endswith(".Deleted") and e.state["reason"] == "revoked"
    ]


def undo(engine: Engine, conversation: str = "C") -> None:
    """A root-only event from ``conversation``: its binding by order was wrong."""
    engine.observe("cursor", hook(conversation, "stop", status="completed", loop_count=0))


def test_undoing_a_wrong_binding_takes_the_unbound_roots_own_subagent_with_it(
    misbound: Engine,
) -> None:
    undo(misbound)
    assert family(misbound, "C") == {"C": (None, 0, "live"), "KC": ("C", 1, "live")}
    assert family(misbound, ROOT) == {ROOT: (None, 0, "live"), "K": (ROOT, 1, "live")}


def test_undoing_a_wrong_binding_revokes_no_subagent_its_parent_named(misbound: Engine) -> None:
    undo(misbound)
    assert revoked(misbound) == []


def test_the_unbound_roots_own_spawn_is_not_lost_to_the_old_roots_spawn(
    misbound: Engine,
) -> None:
    undo(misbound)
    read(misbound, "H")  # R's K and C's KC both pend, in two roots: H is not placed by guess
    assert "H" not in children(misbound)
    assert listed(misbound) == ["K"]


def test_the_unbound_roots_own_pending_spawn_binds_its_child(misbound: Engine) -> None:
    undo(misbound)
    misbound.observe("cursor", hook(ROOT, "sessionEnd", reason="window_close"))
    read(misbound, "H")
    lineage = misbound.lineage("H", "cursor")
    assert (lineage.root, lineage.parent, lineage.depth) == ("C", "C", 1)
    assert lineage.subagent is not None and lineage.subagent.id == "KC"


def test_a_child_bound_to_the_unbound_roots_spawn_moves_with_it(misbound: Engine) -> None:
    read(misbound, "X")  # X is KC, C's own subagent, bound by order
    undo(misbound)
    lineage = misbound.lineage("X", "cursor")
    assert (lineage.root, lineage.parent, lineage.depth, lineage.resolution) == (
        "C",
        "C",
        1,
        "inferred",
    )
    assert lineage.subagent is not None and lineage.subagent.id == "KC"


def test_a_moved_child_is_routed_to_its_new_root(misbound: Engine) -> None:
    read(misbound, "X")
    undo(misbound)
    subagent_stop(misbound, "KC", parent="C")
    read(misbound, "X", call="t2")  # X's next event reaches it where it now lives
    assert family(misbound, "C")["X"] == ("C", 1, "live")
    assert "X" not in family(misbound, ROOT)


def test_a_moved_subtree_keeps_its_depths_below_the_new_root(misbound: Engine) -> None:
    read(misbound, "X")
    spawn(misbound, "KX", parent="X")
    undo(misbound)
    assert family(misbound, "C") == {
        "C": (None, 0, "live"),
        "X": ("C", 1, "live"),
        "KX": ("X", 2, "live"),
    }


def test_a_moved_subtree_keeps_the_subagent_type_and_name(misbound: Engine) -> None:
    misbound.rename("KC", "scout")
    undo(misbound)
    (kc,) = [m for m in misbound.family("C", "cursor") if m.conversation == "KC"]
    assert (kc.name, kc.subagent and kc.subagent.type) == ("scout", "explore")


def test_a_moved_subtree_survives_a_rebuild(misbound: Engine) -> None:
    read(misbound, "X")
    undo(misbound)
    before = (family(misbound, ROOT), family(misbound, "C"), misbound.lineage("X", "cursor"))
    misbound.rebuild()
    assert (family(misbound, ROOT), family(misbound, "C"), misbound.lineage("X", "cursor")) == (
        before
    )


EPOCH = datetime(2026, 5, 1, tzinfo=UTC)


def test_as_of_a_time_before_the_undo_the_conversation_is_the_old_roots_child_once() -> None:
    ticks = itertools.count(1)
    with open_engine("memory://", clock=lambda: EPOCH + timedelta(seconds=next(ticks))) as engine:
        engine.observe("cursor", hook(ROOT, "beforeSubmitPrompt", prompt="one task"))
        spawn(engine, "K")
        read(engine, "C")
        spawn(engine, "KC", parent="C")
        before = EPOCH + timedelta(seconds=next(ticks) - 0.5)
        undo(engine)
        rows = past_queries(engine, time=before).view.find("C")
    assert [(row.root, row.depth) for row in rows] == [(ROOT, 1)]


# -- a conversation no pending start can bind yet (HOSTS.md 3.4.7) ----------------------------


def test_a_tool_event_no_pending_start_can_bind_is_a_child_not_bound_yet_not_a_root(
    engine: Engine,
) -> None:
    """Only root-only events start a root; the engine cannot place it, so there is no tree,
    and nothing but its being a child (depth 1 at least, by ordering) is known: no root."""
    engine.observe("cursor", hook(ROOT, "beforeSubmitPrompt", prompt="no task"))
    before = engine.position()
    lineage = engine.observe(
        "cursor", hook("C", "preToolUse", tool_name="Read", tool_input={}, tool_use_id="t1")
    )
    assert lineage is not None
    assert (lineage.root, lineage.depth, lineage.parent, lineage.resolution, lineage.tree) == (
        None,
        1,
        None,
        "inferred",
        None,
    )
    assert engine.position() == before  # nothing journaled: no root for it, not a root
    assert [node.conversation for node in engine.forest(include_stopped=True)] == [ROOT]


# -- a Task resume names its child (HOSTS.md 3.2) ----------------------------------------------


def task_resume(engine: Engine, key: str, child: str, parent: str = ROOT) -> None:
    """``parent`` resumes subagent ``child`` with a ``Task`` call keyed ``key``."""
    engine.observe(
        "cursor",
        hook(
            parent,
            "preToolUse",
            tool_name="Task",
            tool_input={"prompt": "p", "subagent_type": "explore", "resume": child},
            tool_use_id=key,
        ),
    )


def subagent_start(engine: Engine, key: str, parent: str = ROOT) -> None:
    engine.observe(
        "cursor",
        hook(
            parent,
            "subagentStart",
            subagent_id=key,
            tool_call_id=key,
            parent_conversation_id=parent,
        ),
    )


@pytest.fixture
def resumed(bound: Engine) -> Engine:
    """C, R's subagent K, stopped; R resumed it with ``Task`` call KR, whose
    ``subagentStart`` arrived."""
    subagent_stop(bound, "K")
    task_resume(bound, "KR", "C")
    subagent_start(bound, "KR")
    return bound


def test_the_subagent_start_of_a_resume_adds_no_pending_child(resumed: Engine) -> None:
    assert listed(resumed) == ["C"]


def test_the_next_unseen_conversation_is_not_bound_to_the_start_of_a_resume(
    resumed: Engine,
) -> None:
    read(resumed, "D")
    assert "D" not in children(resumed)


def test_the_subagent_stop_of_a_resume_stops_the_resumed_child(resumed: Engine) -> None:
    subagent_stop(resumed, "KR")
    assert children(resumed)["C"].status == "stopped"


def test_a_late_stop_of_the_run_a_resume_interrupted_leaves_the_child_live(bound: Engine) -> None:
    task_resume(bound, "KR", "C")  # resumes C while it runs (``interrupt``) ...
    subagent_stop(bound, "K")  # ... and the interrupted run's stop comes after
    assert children(bound)["C"].status == "live"


def test_the_start_of_a_resume_lists_the_resumed_child_alone_after_a_rebuild(
    resumed: Engine,
) -> None:
    resumed.rebuild()
    assert listed(resumed) == ["C"]
