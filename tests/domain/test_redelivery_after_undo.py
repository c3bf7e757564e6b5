"""A payload delivered again after a Cursor binding was undone is still a duplicate.

shared/spec/LINEAGE.md: "A host that delivers the same payload twice produces no second event."
HOSTS.md 3.2: a Cursor child is bound by order, and the binding is undone when that conversation
emits a root-only event; what it started moves with it to its own root. The idempotency keys of
the facts that placed or changed what moved go with it: delivered again, those payloads reach
the new root, which knows them as its old root did. The undo itself stands: the spawn it gave
back binds the next unseen conversation, and new facts of the moved nodes are applied.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from tests.support.cursor_hooks import hook

ROOT = "R"
AT = datetime(2026, 5, 1, tzinfo=UTC)


def subagent_start(parent: str, key: str) -> dict[str, Any]:
    """``parent``'s ``subagentStart`` (no ``Task`` call was seen: hooks may leave it out)."""
    return hook(
        parent,
        "subagentStart",
        subagent_id=key,
        tool_call_id=key,
        parent_conversation_id=parent,
        subagent_type="explore",
    )


def subagent_stop(parent: str, key: str) -> dict[str, Any]:
    return hook(parent, "subagentStop", subagent_id=key, parent_conversation_id=parent)


def read(conversation: str, tool_use_id: str = "t1") -> dict[str, Any]:
    return hook(
        conversation, "preToolUse", tool_name="Read", tool_input={}, tool_use_id=tool_use_id
    )


UNDO = hook("C", "stop", status="completed", loop_count=0)

#: R starts subagent K; C, bound to K by order, starts its own subagent KC, and X is bound to
#: KC; then C's root-only ``stop`` shows it is a root: X moves with it.
MISBOUND = (
    hook(ROOT, "beforeSubmitPrompt", prompt="one task"),
    subagent_start(ROOT, "K"),
    read("C"),
    subagent_start("C", "KC"),
    read("X"),
    UNDO,
)


def family(engine: Engine, root: str) -> dict[str, tuple[str | None, int, str]]:
    return {m.conversation: (m.parent, m.depth, m.status) for m in engine.family(root, "cursor")}


def deliver(engine: Engine, *payloads: dict[str, Any]) -> None:
    for payload in payloads:
        engine.observe("cursor", payload)


@pytest.fixture
def undone(memory: Engine) -> Engine:
    deliver(memory, *MISBOUND)
    return memory


def test_a_subagent_start_delivered_again_after_the_undo_journals_nothing(
    undone: Engine,
) -> None:
    before = undone.position()
    deliver(undone, subagent_start("C", "KC"))
    assert undone.position() == before
    assert family(undone, "C") == {"C": (None, 0, "live"), "X": ("C", 1, "live")}


def test_a_moved_childs_tool_call_delivered_again_after_its_stop_resumes_nothing(
    undone: Engine,
) -> None:
    deliver(undone, subagent_stop("C", "KC"))
    before = undone.position()
    deliver(undone, read("X"))
    assert undone.position() == before
    assert family(undone, "C")["X"] == ("C", 1, "stopped")


def test_a_redelivery_after_the_undo_is_a_duplicate_for_a_root_read_back_from_the_store(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'lineage.sqlite'}"
    with open_engine(url) as engine:
        deliver(engine, *MISBOUND)
    with open_engine(url) as engine:  # a new process: the roots are replayed from the store
        before = engine.position()
        deliver(engine, subagent_start("C", "KC"))
        assert engine.position() == before


def test_a_new_act_of_a_moved_child_after_its_stop_still_resumes_it(undone: Engine) -> None:
    deliver(undone, subagent_stop("C", "KC"), read("X", "t2"))
    assert family(undone, "C")["X"] == ("C", 1, "live")


def test_a_new_subagent_start_of_the_unbound_root_is_still_placed(undone: Engine) -> None:
    deliver(undone, subagent_start("C", "KC2"))
    assert family(undone, "C")["KC2"] == ("C", 1, "live")


def test_the_spawn_the_undo_gave_back_still_binds_the_next_conversation(undone: Engine) -> None:
    """C's start delivered again leaves nothing of C's pending: R's K alone binds D."""
    deliver(undone, subagent_start("C", "KC"), read("D"))
    lineage = undone.lineage("D", "cursor")
    assert (lineage.root, lineage.parent) == (ROOT, ROOT)
    assert lineage.subagent is not None and lineage.subagent.id == "K"


def test_a_tool_call_delivered_again_after_an_undo_that_moved_nothing_resumes_nothing(
    memory: Engine,
) -> None:
    deliver(
        memory,
        hook(ROOT, "beforeSubmitPrompt", prompt="one task"),
        subagent_start(ROOT, "K"),
        read("C"),
        hook("C", "sessionEnd", reason="user_close"),
    )
    before = memory.position()
    deliver(memory, read("C"))
    assert memory.position() == before
    assert family(memory, "C") == {"C": (None, 0, "stopped")}


# -- which keys go with the moved nodes, on the aggregates -------------------------------------


def second(n: int) -> datetime:
    return AT + timedelta(seconds=n)


def adopted() -> RootLineage:
    """C bound in R to K (key ``c-read``) started KC (``kc-start``), bound to X (``x-read``),
    which stopped (``x-stop``: a new lifetime of R); then C proved a root: its root adopts X."""
    r = RootLineage.start("cursor", ROOT, at=second(0), fact="r-prompt")
    r.start_pending(
        "K", ROOT, agent_type=None, subagent_id=None, description=None, at=second(1),
        fact="k-start",
    )  # fmt: skip
    r.bind_pending("K", "C", at=second(2), fact="c-read")
    r.start_pending(
        "KC", "C", agent_type=None, subagent_id=None, description=None, at=second(3),
        fact="kc-start",
    )  # fmt: skip
    r.bind_pending("KC", "X", at=second(4), fact="x-read")
    r.stop(None, "KC", at=second(5), fact="x-stop")
    leaving = r.move_subtree("C", at=second(6), fact="undo")
    r.undo_binding("C", at=second(6), fact="undo")
    c = RootLineage.start("cursor", "C", at=second(6), fact="undo")
    c.adopt(ROOT, leaving, {}, at=second(6), fact="undo")
    return c


def test_the_adopting_root_knows_each_fact_seen_since_the_unbound_child_joined() -> None:
    c = adopted()
    assert all(c.has_seen(key) for key in ("c-read", "kc-start", "x-read", "x-stop"))


def test_the_adopting_root_does_not_take_the_facts_seen_before_the_child_joined() -> None:
    c = adopted()
    assert not any(c.has_seen(key) for key in ("r-prompt", "k-start"))


def test_a_fact_of_the_old_roots_current_lifetime_is_a_duplicate_in_the_new_one() -> None:
    assert adopted().has_seen("x-stop", recurs=True)


def test_a_fact_of_an_ended_lifetime_of_the_old_root_may_recur_in_the_new_one() -> None:
    assert not adopted().has_seen("x-read", recurs=True, at=second(4))


def test_an_adopting_root_restored_from_a_snapshot_knows_the_same_facts() -> None:
    c = adopted()
    restored = RootLineage.Snapshot.take(c).mutate(None)
    assert isinstance(restored, RootLineage)
    assert (restored.seen, restored.lifetime) == (c.seen, c.lifetime)
