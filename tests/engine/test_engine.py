"""The lineage contract (shared/spec/LINEAGE.md), on every store: memory, SQLite, PostgreSQL."""

from __future__ import annotations

import pytest

from lineage_es.engine.engine import Engine
from lineage_es.errors import LineageError, UnknownConversation
from lineage_es.facts import ChildIdentified, Resumed, RootSeen, SessionEnded, SpawnRequested
from lineage_es.model import AgentLineage, LineageTree
from tests.support.feed import EPOCH, Feed, keys

#: The one Cursor workspace the Cursor-shaped tests share.
W = ("/w",)


@pytest.fixture
def feed(engine: Engine) -> Feed:
    return Feed(engine)


@pytest.fixture
def three_generations(feed: Feed) -> Feed:
    """Root R, its confirmed child A, and A's confirmed child B."""
    feed.root("R")
    feed.child("R", "R", "A")
    feed.child("R", "A", "B")
    return feed


@pytest.fixture
def stopped_child(feed: Feed) -> Feed:
    """Root R and its confirmed child A, which has stopped."""
    feed.root("R")
    feed.child("R", "R", "A")
    feed.stop("R", "A")
    return feed


@pytest.fixture
def ambiguous_spawn(feed: Feed) -> Feed:
    """Root R with child A; R and A each have a spawn open, and X starts: whose is it?"""
    feed.root("R")
    feed.child("R", "R", "A")
    feed.spawn("R", "R", "K-root")
    feed.spawn("R", "A", "K-a")
    return feed


@pytest.fixture
def cursor(engine: Engine) -> Feed:
    """A Cursor feed in which conversation P has started in workspace W."""
    feed = Feed(engine, "cursor")
    feed.cursor_root("P", W)
    return feed


@pytest.fixture
def pending(cursor: Feed) -> Feed:
    """P has spawned subagent K in W; no conversation has been bound to K yet."""
    cursor.cursor_start("P", "K", W)
    return cursor


def tree(lineage: AgentLineage | None) -> LineageTree:
    """The tree of an answer that must have one."""
    assert lineage is not None and lineage.tree is not None
    return lineage.tree


def test_a_root_is_native_at_depth_zero_with_an_empty_tree(feed: Feed) -> None:
    lineage = feed.root("R")
    assert lineage is not None
    assert (lineage.conversation, lineage.root, lineage.depth, lineage.parent) == (
        "R",
        "R",
        0,
        None,
    )
    assert lineage.resolution == "native"
    assert lineage.tree is not None
    assert (lineage.tree.siblings, lineage.tree.children, lineage.tree.roots) == ((), (), ())


def test_a_live_agent_acting_is_answered_without_loading_its_root(
    feed: Feed, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    before = engine.position()

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("the root aggregate was loaded")

    monkeypatch.setattr(engine.app.repository, "get", no_load)
    lineage = feed.act("R", "A")
    assert lineage is not None and (lineage.parent, lineage.depth) == ("R", 1)
    assert engine.position() == before


def test_a_spawn_request_alone_is_not_a_node(feed: Feed) -> None:
    feed.root("R")
    assert tree(feed.spawn("R", "R", "K1")).children == ()


def test_a_child_starting_after_one_spawn_is_inferred_under_the_spawner(feed: Feed) -> None:
    feed.root("R")
    feed.spawn("R", "R", "K1")
    lineage = feed.start("R", "A")
    assert lineage is not None
    assert (lineage.parent, lineage.depth, lineage.resolution) == ("R", 1, "inferred")
    assert keys(tree(lineage).siblings) == ["R"]


def test_the_spawners_post_tool_use_confirms_the_inferred_edge(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    feed.spawn("R", "R", "K1")
    feed.start("R", "A")
    feed.confirm("R", "R", "A", "K1")
    assert engine.lineage("A").resolution == "confirmed"


def test_a_later_request_from_an_inferred_child_answers_registry(feed: Feed) -> None:
    feed.root("R")
    feed.spawn("R", "R", "K1")
    feed.start("R", "A")
    lineage = feed.act("R", "A")
    assert lineage is not None and lineage.resolution == "registry"


def test_a_child_with_no_open_spawn_goes_under_the_root(feed: Feed) -> None:
    feed.root("R")
    lineage = feed.start("R", "A")
    assert lineage is not None and (lineage.parent, lineage.depth) == ("R", 1)


def test_spawns_from_different_parents_are_never_guessed_between(ambiguous_spawn: Feed) -> None:
    lineage = ambiguous_spawn.start("R", "X")
    assert lineage is not None
    assert lineage.parent is None and lineage.depth == 1
    assert lineage.resolution == "inferred"


def test_a_later_fact_places_an_ambiguous_child(ambiguous_spawn: Feed, engine: Engine) -> None:
    ambiguous_spawn.start("R", "X")
    ambiguous_spawn.confirm("R", "A", "X", "K-a")
    lineage = engine.lineage("X")
    assert (lineage.parent, lineage.depth, lineage.resolution) == ("A", 2, "confirmed")


def test_a_contradicting_confirmation_corrects_the_parent_and_the_subtree_depths(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    feed.spawn("R", "R", "K-x")
    feed.start("R", "X")  # inferred under R
    feed.child("R", "X", "Y")
    feed.confirm("R", "A", "X", "K-elsewhere")
    assert (engine.lineage("X").parent, engine.lineage("X").depth) == ("A", 2)
    assert engine.lineage("Y").depth == 3


def test_an_edge_that_would_make_a_cycle_is_rejected(
    three_generations: Feed, engine: Engine
) -> None:
    three_generations.send("B", ChildIdentified("B", "A", "confirmed"), root="R")
    assert engine.lineage("A").parent == "R"
    assert engine.chain("B").conversations == ("B", "A", "R")


def test_a_depth_contradiction_drops_the_edge_and_keeps_the_family(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.send("R", ChildIdentified("R", "C", "native", depth=3), root="R")
    lineage = engine.lineage("C")
    assert lineage.parent is None
    assert [m.conversation for m in engine.family("R")] == ["R", "C"]


def test_siblings_are_every_other_live_node_of_the_root_oldest_first(
    three_generations: Feed,
) -> None:
    three_generations.child("R", "R", "C")
    assert keys(tree(three_generations.act("R", "B")).siblings) == ["R", "A", "C"]


def test_children_are_the_direct_live_children_oldest_first(three_generations: Feed) -> None:
    three_generations.child("R", "R", "C")
    assert keys(tree(three_generations.act("R", "R")).children) == ["A", "C"]


def test_roots_lists_the_other_live_roots(feed: Feed) -> None:
    feed.root("R1")
    feed.root("R2")
    assert keys(tree(feed.act("R1", "R1")).roots) == ["R2"]


def test_a_stopped_subagent_leaves_the_tree(stopped_child: Feed) -> None:
    assert tree(stopped_child.act("R", "R")).children == ()


def test_a_stopped_subagent_that_acts_again_is_live_again(stopped_child: Feed) -> None:
    stopped_child.act("R", "A")
    assert keys(tree(stopped_child.act("R", "R")).children) == ["A"]


def test_a_roots_session_end_stops_its_live_descendants(
    three_generations: Feed, engine: Engine
) -> None:
    three_generations.root("Other")
    three_generations.end("R")
    assert [m.status for m in engine.family("R")] == ["stopped", "stopped", "stopped"]
    assert tree(three_generations.act("Other", "Other")).roots == ()


def test_a_resumed_root_is_live_again(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    feed.end("R")
    feed.send("R", RootSeen("R", "resume"), root="R")
    assert engine.family("R")[0].status == "live"


def test_an_explicit_resume_revives_a_stopped_subagent(stopped_child: Feed, engine: Engine) -> None:
    stopped_child.send("R", Resumed("A"), root="R")
    assert engine.lineage("A").tree is not None
    assert [m.status for m in engine.family("R")] == ["live", "live"]


def test_the_same_payload_twice_journals_nothing_the_second_time(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    feed.send("R", SpawnRequested("R", "K1"), root="R", key="dup")
    before = engine.position()
    feed.send("R", SpawnRequested("R", "K1"), root="R", key="dup")
    assert engine.position() == before


def test_a_pending_child_is_listed_under_its_spawn_key(cursor: Feed) -> None:
    lineage = cursor.cursor_start("P", "call-1\nfc_1", W)
    assert keys(tree(lineage).children) == ["call-1\nfc_1"]


def test_the_first_unseen_conversation_in_the_workspace_binds_the_pending_child(
    pending: Feed,
) -> None:
    lineage = pending.cursor_act("C", W)
    assert lineage is not None
    assert (lineage.conversation, lineage.parent, lineage.resolution) == ("C", "P", "inferred")
    assert lineage.subagent is not None and lineage.subagent.id == "K"


def test_an_unseen_conversation_in_another_workspace_is_not_placed(pending: Feed) -> None:
    lineage = pending.cursor_act("C", ("/elsewhere",))
    assert lineage is not None and lineage.tree is None


def test_a_bound_child_that_emits_a_root_only_event_becomes_a_root(
    pending: Feed, engine: Engine
) -> None:
    pending.cursor_act("C", W)
    lineage = pending.cursor_root("C", W)
    assert lineage is not None and (lineage.root, lineage.depth) == ("C", 0)
    assert keys(tree(engine.lineage("P")).children) == ["K"]


def test_cursor_roots_are_scoped_to_the_callers_workspace(cursor: Feed) -> None:
    cursor.cursor_root("Q", W)
    cursor.cursor_root("Z", ("/z",))
    assert keys(tree(cursor.cursor_act("P", W)).roots) == ["Q"]


def test_relations_cover_every_kind(three_generations: Feed, engine: Engine) -> None:
    three_generations.child("R", "R", "C")
    three_generations.root("Other")
    assert engine.relation("A", "A") == "self"
    assert engine.relation("A", "R") == "child"
    assert engine.relation("B", "R") == "descendant"
    assert engine.relation("R", "A") == "parent"
    assert engine.relation("R", "B") == "ancestor"
    assert engine.relation("A", "C") == "sibling"
    assert engine.relation("B", "C") == "kin"
    assert engine.relation("B", "Other") == "unrelated"
    assert engine.relation("B", "nobody") == "unrelated"


def test_relation_resolves_against_stopped_and_deleted_nodes(
    stopped_child: Feed, engine: Engine
) -> None:
    assert engine.relation("A", "R") == "child"
    engine.delete("A")
    assert engine.relation("A", "R") == "child"


def test_chain_runs_from_the_node_up_to_its_root(three_generations: Feed, engine: Engine) -> None:
    chain = engine.chain("B")
    assert chain.conversations == ("B", "A", "R") and chain.complete


def test_chain_is_capped_at_twenty_hops(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    parent = "R"
    for i in range(25):
        feed.child("R", parent, f"n{i}")
        parent = f"n{i}"
    chain = engine.chain("n24")
    assert chain.capped and not chain.complete
    assert len(chain.conversations) == 21


def test_provenance_of_a_skip_level_message_carries_the_chain_and_a_note(
    three_generations: Feed, engine: Engine
) -> None:
    found = engine.provenance("B", "R")
    assert found.sender_relation == "descendant"
    assert found.chain == ("B", "A", "R")
    assert found.note is not None and "skipping A" in found.note


def test_provenance_of_a_direct_child_carries_no_chain(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    found = engine.provenance("A", "R")
    assert (found.sender_relation, found.chain, found.note) == ("child", (), None)


def test_a_child_placed_ambiguous_is_a_descendant_of_its_root(
    ambiguous_spawn: Feed, engine: Engine
) -> None:
    ambiguous_spawn.start("R", "X")
    assert engine.relation("X", "R") == "descendant"


def test_the_root_is_an_ancestor_not_the_parent_of_a_child_placed_ambiguous(
    ambiguous_spawn: Feed, engine: Engine
) -> None:
    ambiguous_spawn.start("R", "X")
    assert engine.relation("R", "X") == "ancestor"


def test_a_child_placed_ambiguous_is_kin_to_the_spawner_it_may_belong_to(
    ambiguous_spawn: Feed, engine: Engine
) -> None:
    ambiguous_spawn.start("R", "X")
    assert (engine.relation("X", "A"), engine.relation("A", "X")) == ("kin", "kin")


def test_the_root_is_an_ancestor_of_what_an_ambiguous_child_spawns(
    ambiguous_spawn: Feed, engine: Engine
) -> None:
    ambiguous_spawn.start("R", "X")
    ambiguous_spawn.child("R", "X", "Y")
    assert (engine.relation("Y", "X"), engine.relation("Y", "R")) == ("child", "descendant")
    assert engine.relation("R", "Y") == "ancestor"


def test_the_chain_of_an_ambiguous_child_stops_at_it_incomplete(
    ambiguous_spawn: Feed, engine: Engine
) -> None:
    ambiguous_spawn.start("R", "X")
    chain = engine.chain("X")
    assert chain.conversations == ("X",) and not chain.complete


def test_provenance_from_an_ambiguous_child_to_its_root_says_where_the_chain_stops(
    ambiguous_spawn: Feed, engine: Engine
) -> None:
    ambiguous_spawn.start("R", "X")
    found = engine.provenance("X", "R")
    assert (found.sender_relation, found.chain) == ("descendant", ("X",))
    assert found.note is not None and "ancestor R" in found.note and "ambiguous" in found.note


def test_family_lists_every_node_that_is_not_deleted(stopped_child: Feed, engine: Engine) -> None:
    stopped_child.child("R", "R", "B")
    engine.delete("B")
    family = engine.family("R")
    assert [(m.conversation, m.status) for m in family] == [("R", "live"), ("A", "stopped")]


def test_a_delete_cascades_to_the_subtree_as_parent_teardown(
    three_generations: Feed, engine: Engine
) -> None:
    engine.delete("A", "revoked")
    reasons = [
        (e.state["conversation"], e.state["reason"])
        for e in engine.journal()
        if e.topic.endswith(".Deleted")
    ]
    assert reasons == [("A", "revoked"), ("B", "parent-teardown")]


def test_the_last_rename_wins(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    engine.rename("R", "first")
    engine.rename("R", "second")
    assert engine.family("R")[0].name == "second"


def test_deleting_an_unknown_node_is_a_typed_error(engine: Engine) -> None:
    with pytest.raises(UnknownConversation):
        engine.delete("nobody")


def test_an_unknown_delete_reason_is_refused(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    with pytest.raises(LineageError):
        engine.delete("R", "because")


def test_agents_lists_every_node_with_its_relation_to_the_caller(
    three_generations: Feed, engine: Engine
) -> None:
    listed = {m.conversation: m.relation for m in engine.agents(as_="A")}
    assert listed == {"R": "parent", "A": "self", "B": "child"}


def test_the_tree_as_of_a_position_is_the_tree_then(feed: Feed, engine: Engine) -> None:
    feed.root("R")
    feed.child("R", "R", "A")
    position = engine.position()
    feed.child("R", "R", "B")
    then = engine.as_of(position=position)
    assert [n.conversation for n in then.forest()[0].children] == ["A"]


def test_the_tree_as_of_a_time_is_the_tree_then(feed: Feed, engine: Engine) -> None:
    feed.root("R")  # t=1s
    feed.child("R", "R", "A")  # t=2..4s
    feed.child("R", "R", "B")  # t=5..7s
    then = engine.as_of(time=EPOCH.replace(second=4))
    assert [n.conversation for n in then.forest()[0].children] == ["A"]


def test_a_stop_for_a_conversation_never_started_changes_nothing(
    feed: Feed, engine: Engine
) -> None:
    feed.root("R")
    before = engine.position()
    lineage = feed.stop("R", "ghost")
    assert engine.position() == before
    assert lineage is not None and lineage.tree is None


def test_forest_hides_stopped_nodes_unless_asked(stopped_child: Feed, engine: Engine) -> None:
    assert engine.forest()[0].children == ()
    assert [n.status for n in engine.forest(include_stopped=True)[0].children] == ["stopped"]


def test_the_end_of_a_session_never_seen_binds_nothing(pending: Feed, engine: Engine) -> None:
    pending.send("Z", SessionEnded("Z"), workspace=W)
    assert keys(tree(engine.lineage("P")).children) == ["K"]


def test_a_resume_naming_an_unknown_conversation_places_it_under_the_caller(
    cursor: Feed, engine: Engine
) -> None:
    cursor.send("P", ChildIdentified("P", "C", "native"), Resumed("C"), workspace=W)
    assert (engine.lineage("C").parent, engine.lineage("C").resolution) == ("P", "native")
