"""What a root's subtree holds (shared/spec/LINEAGE.md): a root's session end "stops its live
descendants with it", a delete "cascades" to the whole subtree, and both reach the nodes placed
ambiguous under the root, which descend from it without a parent edge. And a node is "a
conversation the engine knows, or a pending child known only by its spawn key": a rename
reaches a pending child too. On every store; the rebuilt view must answer the same.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from eventsourcing.persistence import StoredEvent

from lineage_es.cli.main import main
from lineage_es.domain.index import ConversationIndex
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import (
    ChildIdentified,
    ChildStarted,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
)
from tests.support.feed import Feed

#: The Cursor workspace of the pending-child tests.
W = ("/w",)
AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def feed(engine: Engine) -> Feed:
    return Feed(engine)


@pytest.fixture
def ambiguous_branch(feed: Feed) -> Feed:
    """Root R with confirmed child A; R and A each have a spawn open when Q starts, so Q is
    placed ambiguous under R; Q then spawns G (confirmed)."""
    feed.root("R")
    feed.child("R", "R", "A")
    feed.spawn("R", "R", "toolu_R1")
    feed.spawn("R", "A", "toolu_A1")
    feed.start("R", "Q")
    feed.child("R", "Q", "G")
    return feed


@pytest.fixture
def pending(engine: Engine) -> Feed:
    """Cursor root P has started subagent K; no conversation is bound to K yet."""
    cursor = Feed(engine, "cursor")
    cursor.cursor_root("P", W)
    cursor.cursor_start("P", "K", W)
    return cursor


def statuses(engine: Engine, root: str = "R") -> dict[str, str]:
    return {m.conversation: m.status for m in engine.family(root)}


def names(engine: Engine, root: str = "P") -> dict[str, str | None]:
    return {m.conversation: m.name for m in engine.family(root, "cursor")}


def deletes(engine: Engine) -> list[tuple[str, str]]:
    """Each journaled delete, as (the node it names, its reason)."""
    return [
        (e.state["conversation"] or e.state["spawn_key"], e.state["reason"])
        for e in engine.journal()
        if e.topic.endswith(".Deleted")
    ]


# -- a root's session end ---------------------------------------------------------------------


def test_the_ambiguous_branch_is_the_roots_descendant(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    assert engine.lineage("Q").parent is None
    assert (engine.relation("Q", "R"), engine.relation("G", "R")) == ("descendant", "descendant")


def test_a_roots_session_end_stops_a_child_placed_ambiguous_and_its_subtree(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    ambiguous_branch.end("R")
    assert statuses(engine) == {"R": "stopped", "A": "stopped", "Q": "stopped", "G": "stopped"}


def test_after_a_roots_session_end_no_tree_lists_the_ambiguous_branch(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    ambiguous_branch.end("R")
    tree = engine.tree_for("Q")
    assert tree is not None and (tree.siblings, tree.children) == ((), ())
    assert engine.forest("claude") == ()


def test_the_rebuilt_view_stops_the_ambiguous_branch_with_its_root(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    ambiguous_branch.end("R")
    engine.rebuild()
    assert set(statuses(engine).values()) == {"stopped"}


def test_a_roots_session_end_stops_a_child_placed_ambiguous_by_a_depth_contradiction(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.send("R", ChildIdentified("R", "D", "native", depth=3), root="R")
    assert engine.lineage("D").parent is None
    feed.end("R")
    assert statuses(engine) == {"R": "stopped", "D": "stopped"}


def test_a_roots_session_end_stops_a_child_placed_ambiguous_under_an_unknown_parent(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.send("R", ChildIdentified("ghost", "U", "native"), root="R")
    assert engine.lineage("U").parent is None
    feed.end("R")
    assert statuses(engine) == {"R": "stopped", "U": "stopped"}


def test_a_cursor_roots_session_end_stops_a_child_bound_ambiguous(engine: Engine) -> None:
    cursor = Feed(engine, "cursor")
    cursor.cursor_root("P", W)
    cursor.cursor_start("P", "K1", W)
    cursor.cursor_act("C", W)  # C is K1 ...
    cursor.cursor_start("C", "K2", W)  # ... and starts K2 while P starts K3: who is E?
    cursor.cursor_start("P", "K3", W)
    cursor.cursor_act("E", W)
    assert engine.lineage("E", "cursor").parent is None
    cursor.send("P", RootSeen("P", "sessionEnd"), SessionEnded("P"), workspace=W)
    assert statuses(engine, "P")["E"] == "stopped"


# -- a late event after the root's session end -------------------------------------------------

SESSION = "5f1c2e4a-0000-4000-8000-00000000000a"
AGENT = "a1000000000000aaa"


def claude(event: str, agent: str | None = None, **fields: Any) -> dict[str, Any]:
    """A Claude Code hook payload of the root session, or of ``agent`` inside it."""
    payload: dict[str, Any] = {"session_id": SESSION, "hook_event_name": event, **fields}
    if agent is not None:
        payload["agent_id"] = agent
    return payload


def observe(engine: Engine, host: str, *payloads: dict[str, Any]) -> None:
    for payload in payloads:
        engine.observe(host, payload)


@pytest.fixture
def ended(engine: Engine) -> Engine:
    """Claude session S started background subagent A, then its session ended."""
    observe(
        engine,
        "claude",
        claude("SessionStart", source="startup"),
        claude(
            "PreToolUse",
            tool_name="Agent",
            tool_use_id="toolu_A",
            tool_input={"prompt": "p", "run_in_background": True},
        ),
        claude("SubagentStart", AGENT, agent_type="Explore"),
        claude("SessionEnd", reason="other"),
    )
    return engine


def late_tool_call(engine: Engine) -> None:
    engine.observe(
        "claude",
        claude("PostToolUse", AGENT, tool_name="Read", tool_use_id="toolu_r", tool_input={}),
    )


def test_a_subagents_late_event_after_its_roots_session_end_does_not_revive_it(
    ended: Engine,
) -> None:
    late_tool_call(ended)
    assert statuses(ended, SESSION) == {SESSION: "stopped", AGENT: "stopped"}


def test_a_subagents_late_event_after_its_roots_session_end_lists_nothing_live(
    ended: Engine,
) -> None:
    late_tool_call(ended)
    assert ended.forest("claude") == ()


def test_a_subagent_acts_again_once_its_root_session_resumed(ended: Engine) -> None:
    ended.observe("claude", claude("SessionStart", source="resume"))
    late_tool_call(ended)
    assert statuses(ended, SESSION) == {SESSION: "live", AGENT: "live"}


def test_a_subagent_resumed_by_its_resumed_root_is_live(ended: Engine) -> None:
    ended.observe("claude", claude("SessionStart", source="resume"))
    ended.observe(
        "claude",
        claude(
            "PreToolUse",
            tool_name="Agent",
            tool_use_id="toolu_R",
            tool_input={"prompt": "go on", "resume": AGENT},
        ),
    )
    assert statuses(ended, SESSION)[AGENT] == "live"


def test_a_subagent_started_again_in_its_resumed_root_is_live(ended: Engine) -> None:
    ended.observe("claude", claude("SessionStart", source="resume"))
    ended.observe("claude", claude("SubagentStart", AGENT, agent_type="Explore"))
    assert statuses(ended, SESSION)[AGENT] == "live"


def test_a_subagent_started_again_after_its_roots_session_end_stays_stopped(
    ended: Engine,
) -> None:
    ended.observe("claude", claude("SubagentStart", AGENT, agent_type="Explore"))
    assert statuses(ended, SESSION)[AGENT] == "stopped"


def test_an_explicit_resume_after_its_roots_session_end_does_not_revive_a_subagent(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    feed.end("R")
    feed.send("A", Resumed("A"), root="R")
    assert statuses(engine) == {"R": "stopped", "A": "stopped"}


def test_a_grandchilds_late_event_after_its_roots_session_end_does_not_revive_it(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    feed.child("R", "A", "G")
    feed.end("R")
    feed.act("R", "G")
    assert statuses(engine) == {"R": "stopped", "A": "stopped", "G": "stopped"}


def test_the_roots_own_late_event_still_revives_it(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    feed.end("R")
    feed.act("R", "R")
    assert statuses(engine) == {"R": "live", "A": "stopped"}


def test_a_rebuild_keeps_a_subagent_stopped_after_its_late_event(ended: Engine) -> None:
    late_tool_call(ended)
    ended.rebuild()
    assert statuses(ended, SESSION) == {SESSION: "stopped", AGENT: "stopped"}


@pytest.fixture
def cursor_ended(pending: Feed, engine: Engine) -> Feed:
    """Cursor root P's child C is bound to its spawn K; then P's session ended."""
    pending.cursor_act("C", W)
    pending.send("P", RootSeen("P", "sessionEnd"), SessionEnded("P"), workspace=W)
    return pending


def test_a_cursor_childs_event_after_its_roots_session_end_does_not_revive_it(
    cursor_ended: Feed, engine: Engine
) -> None:
    cursor_ended.cursor_act("C", W)
    assert statuses(engine, "P") == {"P": "stopped", "C": "stopped"}


def test_a_cursor_child_acts_again_once_its_root_prompts_again(
    cursor_ended: Feed, engine: Engine
) -> None:
    cursor_ended.send("P", RootSeen("P", "beforeSubmitPrompt"), workspace=W)
    cursor_ended.cursor_act("C", W)
    assert statuses(engine, "P") == {"P": "live", "C": "live"}


def test_a_cursor_task_resume_revives_a_child_once_its_root_is_live(
    cursor_ended: Feed, engine: Engine
) -> None:
    engine.observe(
        "cursor",
        {
            "conversation_id": "P",
            "hook_event_name": "preToolUse",
            "workspace_roots": list(W),
            "tool_name": "Task",
            "tool_use_id": "t-resume",
            "tool_input": {"prompt": "go on", "resume": "C"},
        },
    )
    assert statuses(engine, "P") == {"P": "live", "C": "live"}


# -- a root's delete ----------------------------------------------------------------------------


def test_deleting_a_root_deletes_a_child_placed_ambiguous_and_its_subtree(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    engine.delete("R")
    assert deletes(engine) == [
        ("R", "user"),
        ("A", "parent-teardown"),
        ("Q", "parent-teardown"),
        ("G", "parent-teardown"),
    ]


def test_after_a_roots_delete_no_view_lists_the_ambiguous_branch(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    engine.delete("R")
    assert engine.family("R") == ()
    assert (engine.tree_for("Q"), engine.tree_for("G")) == (None, None)
    assert engine.forest("claude", include_stopped=True) == ()


def test_the_rebuilt_view_deletes_the_ambiguous_branch_with_its_root(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    engine.delete("R")
    engine.rebuild()
    assert engine.family("R") == ()
    assert engine.tree_for("Q") is None
    assert engine.forest("claude", include_stopped=True) == ()


def test_deleting_a_root_deletes_a_child_placed_ambiguous_under_an_unknown_parent(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.send("R", ChildIdentified("ghost", "U", "native"), root="R")
    engine.delete("R", "gc")
    assert deletes(engine) == [("R", "gc"), ("U", "parent-teardown")]


def test_deleting_a_spawner_leaves_the_ambiguous_child_it_may_not_own(
    ambiguous_branch: Feed, engine: Engine
) -> None:
    engine.delete("A")
    assert statuses(engine) == {"R": "live", "Q": "live", "G": "live"}


# -- renaming a pending child -------------------------------------------------------------------


def test_a_pending_child_is_renamed_by_its_spawn_key(pending: Feed, engine: Engine) -> None:
    engine.rename("K", "scout")
    assert names(engine) == {"P": None, "K": "scout"}


def test_renaming_a_pending_child_journals_the_rename_under_its_spawn_key(
    pending: Feed, engine: Engine
) -> None:
    engine.rename("K", "scout")
    (renamed,) = [e.state for e in engine.journal() if e.topic.endswith(".Renamed")]
    assert (renamed["conversation"], renamed["spawn_key"], renamed["name"]) == (None, "K", "scout")


def test_a_renamed_pending_child_keeps_its_name_once_bound(pending: Feed, engine: Engine) -> None:
    engine.rename("K", "scout")
    pending.cursor_act("C", W)
    assert names(engine) == {"P": None, "C": "scout"}


def test_the_name_of_a_pending_child_survives_a_rebuild(pending: Feed, engine: Engine) -> None:
    engine.rename("K", "scout")
    pending.cursor_act("C", W)
    engine.rebuild()
    assert names(engine) == {"P": None, "C": "scout"}


def test_a_rename_after_the_binding_wins_over_the_pending_name(
    pending: Feed, engine: Engine
) -> None:
    engine.rename("K", "scout")
    pending.cursor_act("C", W)
    engine.rename("C", "reader")
    assert names(engine)["C"] == "reader"


def test_a_pending_childs_name_stays_with_its_spawn_when_a_wrong_binding_is_undone(
    pending: Feed, engine: Engine
) -> None:
    engine.rename("K", "scout")
    pending.cursor_act("C", W)
    pending.cursor_root("C", W)  # C was a root all along: K is pending again
    assert names(engine) == {"P": None, "K": "scout"}
    assert names(engine, "C") == {"C": None}


def test_a_deleted_pending_child_is_not_renamed(pending: Feed, engine: Engine) -> None:
    engine.delete("K")
    before = engine.position()
    engine.rename("K", "scout")
    assert engine.position() == before


def test_cli_rename_of_a_pending_child_shows_in_its_family(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(store) as engine:
        cursor = Feed(engine, "cursor")
        cursor.cursor_root("P", W)
        cursor.cursor_start("P", "K", W)
    runner = CliRunner()
    renamed = runner.invoke(main, ["rename", "K", "scout", "--store", store])
    assert renamed.exit_code == 0, renamed.output
    assert runner.invoke(main, ["journal", "rebuild", "--store", store]).exit_code == 0
    family = runner.invoke(main, ["family", "P", "--json", "--store", store])
    assert {m["conversation"]: m.get("name") for m in orjson.loads(family.output)} == {
        "P": None,
        "K": "scout",
    }


def test_a_rename_journaled_before_pending_children_could_be_renamed_still_applies() -> None:
    """A version-1 ``Renamed`` (no ``spawn_key``, no class version) names a conversation."""
    with open_engine("memory://") as engine:
        root = RootLineage.start("claude", "R", at=AT, source="startup", fact="k0")
        root.rename("R", "old name", at=AT, fact="k1")
        index = ConversationIndex.create("claude", "R", "R", AT)
        stored: list[StoredEvent] = []
        events = [*root.collect_events(), *index.collect_events()]
        for event in events:
            record = engine.app.mapper.to_stored_event(event)
            if record.topic.endswith(".Renamed"):
                state = orjson.loads(record.state)
                assert state.pop("class_version") == 2
                del state["spawn_key"]
                record = StoredEvent(
                    record.originator_id,
                    record.originator_version,
                    record.topic,
                    orjson.dumps(state),
                )
            stored.append(record)
        engine.app.recorder.insert_events(stored)
        engine.catch_up()
        assert engine.family("R")[0].name == "old name"
        reloaded: RootLineage = engine.app.repository.get(root.id)
        assert reloaded.node("R") is not None


# -- a child confirmed under another spawn than the one it was first bound to ------------------


@pytest.fixture
def misplaced(feed: Feed) -> Feed:
    """R asked for a code reviewer (toolu_A), then an explorer (toolu_B); child C started
    naming neither, and was bound by order to the latest, toolu_B: an explorer."""
    feed.root("R")
    feed.send("R", SpawnRequested("R", "toolu_A", "code-reviewer", "review it"), root="R")
    feed.send("R", SpawnRequested("R", "toolu_B", "Explore", "look around"), root="R")
    feed.send("C", ChildStarted(child="C"), root="R")
    return feed


def subagent_of(engine: Engine, conversation: str) -> tuple[str | None, str | None, str | None]:
    """A node's subagent type and description, and its spawn key, as the view shows them."""
    (row,) = [r for r in engine.view.find(conversation) if r.status != "deleted"]
    return row.agent_type, row.description, row.spawn_key


def test_the_misplaced_child_first_takes_the_type_of_the_spawn_it_was_bound_to(
    misplaced: Feed, engine: Engine
) -> None:
    assert subagent_of(engine, "C") == ("Explore", None, "toolu_B")


def test_a_child_confirmed_under_another_spawn_takes_that_spawns_type(
    misplaced: Feed, engine: Engine
) -> None:
    misplaced.send("R", ChildIdentified("R", "C", "confirmed", spawn_key="toolu_A"), root="R")
    assert subagent_of(engine, "C") == ("code-reviewer", "review it", "toolu_A")
    lineage = engine.lineage("C")
    assert lineage.subagent is not None and lineage.subagent.type == "code-reviewer"


def test_a_type_the_confirming_fact_states_wins_over_the_spawns(
    misplaced: Feed, engine: Engine
) -> None:
    misplaced.send(
        "R",
        ChildIdentified(
            "R", "C", "confirmed", spawn_key="toolu_A", agent_type="auditor", description="d"
        ),
        root="R",
    )
    assert subagent_of(engine, "C") == ("auditor", "d", "toolu_A")


def test_a_child_corrected_under_another_parents_spawn_takes_that_spawns_type(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    feed.send("A", SpawnRequested("A", "toolu_X", "Explore", "look"), root="R")
    feed.send("C", ChildStarted(child="C"), root="R")  # A's toolu_X is the only open spawn
    feed.send("R", SpawnRequested("R", "toolu_Y", "Plan", "plan it"), root="R")
    feed.send("R", ChildIdentified("R", "C", "confirmed", spawn_key="toolu_Y"), root="R")
    assert engine.lineage("C").parent == "R"
    assert subagent_of(engine, "C") == ("Plan", "plan it", "toolu_Y")


def test_a_confirmation_under_the_same_spawn_keeps_the_childs_own_type(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.send("R", SpawnRequested("R", "toolu_A", "Explore", "look"), root="R")
    feed.send("C", ChildStarted(child="C", agent_type="Explore-fast"), root="R")
    feed.send("R", ChildIdentified("R", "C", "confirmed", spawn_key="toolu_A"), root="R")
    assert subagent_of(engine, "C") == ("Explore-fast", None, "toolu_A")


def test_the_new_spawns_type_survives_a_rebuild(misplaced: Feed, engine: Engine) -> None:
    misplaced.send("R", ChildIdentified("R", "C", "confirmed", spawn_key="toolu_A"), root="R")
    engine.rebuild()
    assert subagent_of(engine, "C") == ("code-reviewer", "review it", "toolu_A")


def test_a_confirmation_journaled_before_it_carried_the_spawns_type_still_applies() -> None:
    """A version-1 ``EdgeConfirmed`` (no type, no description, no class version) moves the
    child to its new spawn and leaves the type it had."""
    with open_engine("memory://") as engine:
        root = RootLineage.start("claude", "R", at=AT, source="startup", fact="k0")
        root.request_spawn(
            "R", "toolu_A", agent_type="code-reviewer", description=None, at=AT, fact="k1"
        )
        root.request_spawn("R", "toolu_B", agent_type="Explore", description=None, at=AT, fact="k2")
        root.place_unknown_child(
            "C", agent_type=None, subagent_id=None, description=None, at=AT, fact="k3"
        )
        root.apply_identified(
            ChildIdentified("R", "C", "confirmed", spawn_key="toolu_A"), at=AT, fact="k4"
        )
        stored: list[StoredEvent] = []
        indexes = [ConversationIndex.create("claude", name, "R", AT) for name in ("R", "C")]
        events = [*root.collect_events(), *(e for i in indexes for e in i.collect_events())]
        for event in events:
            record = engine.app.mapper.to_stored_event(event)
            if record.topic.endswith(".EdgeConfirmed"):
                state = orjson.loads(record.state)
                assert state.pop("class_version") == 2
                for name in ("agent_type", "description", "retyped"):
                    del state[name]
                record = StoredEvent(
                    record.originator_id,
                    record.originator_version,
                    record.topic,
                    orjson.dumps(state),
                )
            stored.append(record)
        engine.app.recorder.insert_events(stored)
        engine.catch_up()
        assert subagent_of(engine, "C") == ("Explore", None, "toolu_A")
        reloaded: RootLineage = engine.app.repository.get(root.id)
        assert reloaded.node("C") is not None and reloaded.node("C")["spawn"] == "toolu_A"  # type: ignore[index]


def test_a_child_not_bound_yet_moves_with_its_parent_when_the_parents_edge_is_corrected(
    engine: Engine,
) -> None:
    """C is placed under D (depth 2) and starts a child not bound yet (k1, depth 3); a later
    fact corrects C's edge to the root: k1 goes with it, at its new parent's depth plus one."""
    feed = Feed(engine)
    feed.root("R")
    feed.child("R", "R", "D")
    feed.send("D", ChildIdentified("D", "C", "confirmed"), root="R")
    feed.send("C", ChildStarted(spawn_key="k1", parent="C", resolution="transcript"), root="R")
    feed.send("R", ChildIdentified("R", "C", "confirmed"), root="R")
    depths = {m.conversation: m.depth for m in engine.family("R")}
    assert (depths["C"], depths["k1"]) == (1, 2)
    engine.rebuild()
    assert {m.conversation: m.depth for m in engine.family("R")} == depths
