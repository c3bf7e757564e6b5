"""What a root's subtree holds (shared/spec/LINEAGE.md): a root's session end "stops its live
descendants with it", a delete "cascades" to the whole subtree, and both reach the nodes placed
ambiguous under the root, which descend from it without a parent edge. And a node is "a
conversation the engine knows, or a pending child known only by its spawn key": a rename
reaches a pending child too. On every store; the rebuilt view must answer the same.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from eventsourcing.persistence import StoredEvent

from lineage_es.cli import main
from lineage_es.domain import ConversationIndex, RootLineage
from lineage_es.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, RootSeen, SessionEnded
from tests.helpers import Feed

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
