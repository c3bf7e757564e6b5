"""Invariants that must hold for any sequence of facts, in any order, duplicates included."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from tempfile import TemporaryDirectory

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_es.domain.ids import root_id
from lineage_es.domain.nodes import DELETED, LIVE
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Deleted,
    Fact,
    Observation,
    Renamed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.journal import export_journal, import_journal
from lineage_es.model import ForestNode
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView
from tests.support.feed import EPOCH

#: LINEAGE_HYPOTHESIS=deep runs twenty times as many examples (for a long local hunt).
SCALE = 20 if os.environ.get("LINEAGE_HYPOTHESIS") == "deep" else 1

ROOTS = ["R1", "R2"]
NODES = ["R1", "R2", "a", "b", "c", "d"]
KEYS = ["k1", "k2", "k3"]
WORKSPACES = [("/w",), ("/v",)]

node = st.sampled_from(NODES)
key = st.sampled_from(KEYS)
#: A rename names a node by its conversation, or a pending child by its spawn key.
name = st.sampled_from(["x", "y"])


def claude_facts(requester: str) -> st.SearchStrategy[Fact]:
    """Facts as Claude hooks send them: mostly about the requester itself."""
    me = st.just(requester)
    return st.one_of(
        st.builds(RootSeen, st.sampled_from(ROOTS), st.just("startup")),
        st.builds(SpawnRequested, me | node, key),
        st.builds(lambda c: ChildStarted(child=c), me | node),
        # A child a transcript shows started, known by its spawn key until a later fact names it.
        st.builds(
            lambda k, p: ChildStarted(spawn_key=k, parent=p, resolution="transcript"),
            key,
            me | node,
        ),
        st.builds(
            ChildIdentified,
            me | node,
            node,
            st.sampled_from(["confirmed", "transcript", "native"]),
            spawn_key=st.none() | key,
            depth=st.none() | st.integers(0, 4),
        ),
        st.builds(Acted, me),
        st.builds(lambda c: Stopped(conversation=c), me | node),
        st.builds(SessionEnded, st.sampled_from(ROOTS)),
        st.builds(Renamed, key | me, name),
        st.builds(Deleted, node | key),
    )


def cursor_facts(requester: str) -> st.SearchStrategy[Fact]:
    """Facts as Cursor hooks send them: a subagentStart arrives on the parent."""
    return st.one_of(
        st.builds(RootSeen, st.just(requester), st.just("sessionStart")),
        st.builds(lambda k: ChildStarted(spawn_key=k, parent=requester, subagent_id=k), key),
        st.builds(Acted, st.just(requester)),
        st.builds(lambda k: Stopped(spawn_key=k), key),
        st.builds(SessionEnded, st.just(requester)),
        st.builds(Renamed, key | st.just(requester), name),
    )


@st.composite
def observation(
    draw: st.DrawFn,
    /,
    facts: Callable[[str], st.SearchStrategy[Fact]],
    *,
    most: int,
    prefix: str,
    **fields: st.SearchStrategy[object],
) -> Observation:
    """A payload: a requester, one to ``most`` of its ``facts``, one of 40 keys (``prefix`` and a
    number, so that some repeat), and its other ``fields`` (host, and root or workspace) drawn as
    given."""
    requester = draw(node)
    drawn = tuple(draw(st.lists(facts(requester), min_size=1, max_size=most)))
    return Observation(
        requester=requester,
        key=draw(st.sampled_from([f"{prefix}{i}" for i in range(40)])),
        facts=drawn,
        **{name: draw(field) for name, field in fields.items()},  # type: ignore[arg-type]
    )


claude_observation = observation(
    claude_facts, most=3, prefix="p", host=st.just("claude"), root=st.sampled_from(ROOTS)
)
cursor_observation = observation(
    cursor_facts, most=2, prefix="q", host=st.just("cursor"), workspace=st.sampled_from(WORKSPACES)
)
#: A child a transcript shows started, renamed at once by its spawn key: later facts bind it
#: (a ``ChildIdentified`` with that key), stop it or delete it.
named_start = st.builds(
    lambda root, parent, spawn_key, name, i: Observation(
        host="claude",
        requester=parent,
        key=f"n{i}",
        facts=(
            ChildStarted(spawn_key=spawn_key, parent=parent, resolution="transcript"),
            Renamed(spawn_key, name),
        ),
        root=root,
    ),
    st.sampled_from(ROOTS),
    node,
    key,
    name,
    st.integers(0, 39),
)
streams = st.lists(
    st.one_of(claude_observation, cursor_observation, named_start),
    max_size=30,
)


def examples(n: int) -> settings:
    """``n`` examples a test (``SCALE`` times as many in a deep run), however long they take."""
    return settings(
        max_examples=n * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )


SETTINGS = examples(60)


def feed(engine: Engine, stream: list[Observation]) -> None:
    for i, observation in enumerate(stream):
        engine.observe(observation.host, observation, at=EPOCH + timedelta(seconds=i))


def shape(forest: tuple[ForestNode, ...]) -> list[object]:
    return [
        (n.conversation, n.host, n.depth, n.status, n.resolution, n.started_at, shape(n.children))
        for n in forest
    ]


def every_answer(engine: Engine) -> list[object]:
    """Everything the engine would answer, in a comparable form."""
    answers: list[object] = [shape(engine.forest(include_stopped=True))]
    for row in engine.view.all_rows():
        if row.status != "deleted":
            answers.append(engine.queries.lineage_of(row))
    return answers


@contextmanager
def fed(stream: list[Observation]) -> Iterator[Engine]:
    """A memory engine that has observed ``stream``."""
    with open_engine("memory://") as engine:
        feed(engine, stream)
        yield engine


@contextmanager
def sqlite_engine() -> Iterator[Engine]:
    with TemporaryDirectory() as tmp, open_engine(f"sqlite:///{tmp}/j.sqlite") as engine:
        yield engine


def exported(engine: Engine, folder: str) -> Path:
    """The engine's journal, exported to ``folder``/journal.jsonl."""
    path = Path(folder) / "journal.jsonl"
    with path.open("wb") as out:
        export_journal(engine, out)
    return path


@SETTINGS
@given(streams)
def test_the_view_rebuilt_from_the_journal_equals_the_live_view(
    stream: list[Observation],
) -> None:
    with fed(stream) as engine:
        rebuilt = MemoryView()
        Projector(engine.app.recorder, rebuilt).catch_up()
        assert rebuilt.all_rows() == engine.view.all_rows()


@examples(15)
@given(streams)
def test_the_sqlite_view_rebuilt_from_the_journal_equals_the_live_view(
    stream: list[Observation],
) -> None:
    with sqlite_engine() as engine:
        feed(engine, stream)
        live = engine.view.all_rows()
        engine.rebuild()
        assert engine.view.all_rows() == live


@SETTINGS
@given(streams)
def test_the_trees_rules_hold_for_any_sequence(stream: list[Observation]) -> None:
    with fed(stream) as engine:
        # A key names one node within its root: one spawn key may be pending under two roots.
        rows = {(r.host, r.root, r.key): r for r in engine.view.all_rows()}
        for row in rows.values():
            if row.status == "deleted":
                continue
            tree = engine.queries.tree_of(row)
            assert row.key not in [p.conversation for p in tree.siblings]
            for peers, own_root in (
                (tree.siblings, True),
                (tree.children, True),
                (tree.roots, False),
            ):
                listed = [
                    rows[(row.host, row.root if own_root else p.conversation, p.conversation)]
                    for p in peers
                ]
                assert all(node.status == "live" for node in listed)
                order = [(p.started_at, node.nid) for p, node in zip(peers, listed, strict=True)]
                assert order == sorted(order)
            if row.is_root:
                assert set(tree.children) <= set(tree.siblings)


@SETTINGS
@given(streams, st.randoms(use_true_random=False))
def test_any_order_of_delivery_with_duplicates_keeps_every_node_at_its_parents_depth_plus_one(
    stream: list[Observation], rnd: object
) -> None:
    delivered = stream + stream[: len(stream) // 2]
    rnd.shuffle(delivered)  # type: ignore[attr-defined]
    with fed(delivered) as engine:
        rows = engine.view.all_rows()
        by_key = {(r.root_id, r.key): r for r in rows}
        for row in rows:
            if row.status == "deleted":
                continue
            if row.parent is not None:
                parent = by_key[(row.root_id, row.parent)]
                assert row.depth == parent.depth + 1
            assert engine.chain(row.key, row.host).conversations[0] == row.key


@examples(25)
@given(streams)
def test_export_import_and_rebuild_give_identical_answers(stream: list[Observation]) -> None:
    with TemporaryDirectory() as tmp, fed(stream) as engine:
        before = every_answer(engine)
        path = exported(engine, tmp)
        with open_engine("memory://") as imported:
            import_journal(imported, path)
            assert every_answer(imported) == before
        engine.rebuild()
        assert every_answer(engine) == before


@examples(25)
@given(streams, st.integers(min_value=0, max_value=200))
def test_the_tree_as_of_position_n_equals_the_tree_of_the_journal_truncated_at_n(
    stream: list[Observation], cut: int
) -> None:
    with TemporaryDirectory() as tmp, fed(stream) as engine:
        position = min(cut, engine.position())
        path = exported(engine, tmp)
        lines = path.read_bytes().splitlines(keepends=True)
        # The export of the journal as it was at ``position``: its header says so.
        header = orjson.loads(lines[0]) | {"position": position, "events": position}
        truncated = Path(tmp) / "truncated.jsonl"
        truncated.write_bytes(orjson.dumps(header) + b"\n" + b"".join(lines[1 : position + 1]))
        with open_engine("memory://") as short:
            import_journal(short, truncated)
            expected = shape(short.forest(include_stopped=True))
        assert shape(engine.as_of(position=position).forest(include_stopped=True)) == expected


def placements(engine: Engine) -> set[tuple[object, ...]]:
    return {
        (r.host, r.root, r.key, r.parent, r.depth, r.status, r.resolution, r.started_at)
        for r in engine.view.all_rows()
    }


@SETTINGS
@given(streams, st.integers(min_value=1, max_value=7))
def test_observing_in_batches_places_every_node_as_observing_one_by_one(
    stream: list[Observation], batch: int
) -> None:
    timed = [
        replace(observation, at=EPOCH + timedelta(seconds=i))
        for i, observation in enumerate(stream)
    ]
    with open_engine("memory://") as one_by_one, open_engine("memory://") as batched:
        for observation in timed:
            one_by_one.observe(observation.host, observation)
        batched.observe_many(timed, batch=batch)
        assert placements(batched) == placements(one_by_one)


def roots_of(engine: Engine) -> Iterator[RootLineage]:
    """A copy of every root aggregate that is not deleted, to try a command on."""
    for row in engine.view.roots(None, live_only=False):
        root: RootLineage = engine.app.repository.get(root_id(row.host, row.root))
        yield deepcopy(root)


def statuses(root: RootLineage) -> set[str]:
    """The status of every node of ``root``, pending children included."""
    return {n["status"] for n in (*root.nodes.values(), *root.pending.values())}


@SETTINGS
@given(streams)
def test_a_roots_session_end_leaves_no_node_of_its_root_live(stream: list[Observation]) -> None:
    with fed(stream) as engine:
        for root in roots_of(engine):
            root.end_session(at=EPOCH, fact="")
            assert LIVE not in statuses(root)


@SETTINGS
@given(streams)
def test_deleting_a_root_deletes_every_node_of_its_root(stream: list[Observation]) -> None:
    with fed(stream) as engine:
        for root in roots_of(engine):
            root.delete(root.conversation, "user", at=EPOCH)
            assert statuses(root) == {DELETED}
