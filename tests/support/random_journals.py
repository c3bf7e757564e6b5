"""Random journals for time travel's property tests: two Claude sessions and their children,
fed facts at random seconds, out of time order (so starts are re-dated, stops held in the
past, and a journal's positions are not in time order), and the answers a view gives, to
compare a checkpointed view of the past with a full replay's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from lineage_es.engine.engine import Engine
from lineage_es.errors import LineageError, StoreError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    Deleted,
    Observation,
    Renamed,
    RootSeen,
    SessionEnded,
    Stopped,
    ToolCalled,
)
from lineage_es.read.answers import TreeReader
from lineage_es.read.queries import Queries

EPOCH = datetime(2026, 3, 1, tzinfo=UTC)
ROOTS = ("5f1c2e4a-0000-4000-8000-0000000000r0", "5f1c2e4a-0000-4000-8000-0000000000r1")
KINDS = (
    "seen",
    "child",
    "acted",
    "stopped",
    "ended",
    "root-acted",
    "renamed",
    "tool",
    "deleted",
    "held",
)

#: The facts of a "held" step, by seconds after the step's own: the root ends and resumes,
#: a child first heard acting after that, whose start, read last, was before the end (its
#: start is re-dated, and the root's end holds it stopped in the past until its act).
HELD = ((0, "seen"), (2, "ended"), (4, "root-acted"), (6, "acted"), (1, "child"))

#: One step: what happens, to which root and child, the child's parent, at which second.
steps = st.lists(
    st.tuples(
        st.sampled_from(KINDS),
        st.integers(0, 1),
        st.integers(0, 3),
        st.integers(-1, 3),
        st.integers(0, 40),
    ),
    min_size=1,
    max_size=40,
)


def child_of(root: int, child: int) -> str:
    return f"{ROOTS[root][:-2]}c{root}{child}"


def moment(second: int) -> datetime:
    return EPOCH + timedelta(seconds=second)


def feed_steps(engine: Engine, journal: list[tuple[str, int, int, int, int]]) -> None:
    """Observe each step; a step the engine refuses (a child of a child it does not know, a
    command about an unknown node) is left out, as a host's would be."""
    for number, (kind, r, c, parent, second) in enumerate(journal):
        root, child = ROOTS[r], child_of(r, c)
        upper = child_of(r, parent) if parent >= 0 and kind != "held" else root
        parts = HELD if kind == "held" else ((0, kind),)
        for part, (later, what) in enumerate(parts):
            requester, fact = _fact(what, root, child, upper)
            observation = Observation(
                host="claude",
                requester=requester,
                key=f"step{number}.{part}",
                facts=(fact,),
                root=root,
                at=moment(second + later),
            )
            try:
                engine.observe("claude", observation, answer=False)
            except StoreError:
                raise
            except LineageError:
                continue


def _fact(kind: str, root: str, child: str, parent: str) -> tuple[str, Any]:
    if kind == "seen":
        return root, RootSeen(root, "startup")
    if kind == "child":
        return root, ChildIdentified(parent, child, "native")
    if kind == "acted":
        return child, Acted(child)
    if kind == "stopped":
        return child, Stopped(conversation=child)
    if kind == "ended":
        return root, SessionEnded(root)
    if kind == "renamed":
        return child, Renamed(child, f"name of {child[-3:]}")
    if kind == "tool":
        return child, ToolCalled(child, "Bash")
    if kind == "deleted":
        return child, Deleted(child, "user")
    return root, Acted(root)


def answers(reader: TreeReader | Queries) -> dict[str, Any]:
    """What a view answers: its forest, stopped nodes too, each root's family (with
    ``last_seen``) and each known node's lineage."""
    if isinstance(reader, Queries):
        reader = TreeReader(reader)
    found: dict[str, Any] = {"forest": reader.forest(include_stopped=True)}
    for root in ROOTS:
        try:
            found[root] = reader.family(root)
        except LineageError:
            found[root] = None
    for r in (0, 1):
        for c in range(4):
            try:
                found[child_of(r, c)] = reader.lineage(child_of(r, c))
            except LineageError:
                found[child_of(r, c)] = None
    return found
