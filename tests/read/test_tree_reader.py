"""A TreeReader answers as the engine does at the same moment, refuses what the engine
refuses, raises for an unknown conversation, and hands out frozen answers only."""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import Engine
from lineage_es.errors import InvalidArgument, UnknownConversation
from lineage_es.facts import (
    ChildIdentified,
    ChildStarted,
    Fact,
    Observation,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.model import Answer, to_json
from lineage_es.read.answers import TreeReader
from lineage_es.read.projection import Projector
from lineage_es.read.queries import Queries
from lineage_es.read.view import MemoryView

Answers = dict[str, Any]

#: Every read method of the engine, each of which a TreeReader has too.
READ_METHODS = frozenset(
    {
        "lineage",
        "tree_for",
        "relation",
        "chain",
        "provenance",
        "family",
        "families",
        "agents",
        "forest",
    }
)


class Feed:
    """Claude-shaped observations for one engine, one second apart from 2026-01-01."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.tick = 0

    def send(self, root: str, requester: str, fact: Fact) -> None:
        self.tick += 1
        self.engine.observe(
            "claude",
            Observation(
                host="claude",
                requester=requester,
                key=f"step-{self.tick}",
                facts=(fact,),
                root=root,
                at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=self.tick),
            ),
        )

    def root(self, root: str) -> None:
        self.send(root, root, RootSeen(root, "startup"))

    def child(self, root: str, parent: str, child: str) -> None:
        """``child`` spawned by ``parent``, started and confirmed."""
        self.send(root, parent, SpawnRequested(parent, f"spawn-{child}"))
        self.send(root, child, ChildStarted(child=child))
        self.send(root, parent, ChildIdentified(parent, child, "confirmed", f"spawn-{child}"))

    def stop(self, root: str, who: str) -> None:
        self.send(root, who, Stopped(who))

    def end(self, root: str) -> None:
        self.send(root, root, SessionEnded(root))


def reader_at(engine: Engine, position: int) -> TreeReader:
    """A reader over a view of ``engine``'s journal replayed up to ``position``."""
    view = MemoryView()
    Projector(engine.app.recorder, view).catch_up(stop=position)
    return TreeReader(Queries(view))


def answers(source: Engine | TreeReader, names: list[str]) -> Answers:
    """Every answer ``source`` gives about ``names``: each alone, each pair, each forest."""
    found: Answers = {}
    for name in names:
        found[f"lineage {name}"] = source.lineage(name)
        found[f"tree {name}"] = source.tree_for(name)
        found[f"chain {name}"] = source.chain(name)
        found[f"agents {name}"] = source.agents(name, "claude")
        if source.lineage(name).depth == 0:
            found[f"family {name}"] = source.family(name)
            found[f"forest of {name}"] = source.forest(root=name, include_stopped=True)
    roots = [name for name in names if source.lineage(name).depth == 0]
    for root, members in zip(roots, source.families([(r, None) for r in roots]), strict=True):
        found[f"families, {root}'s"] = members
    for a, b in itertools.product(names, repeat=2):
        found[f"relation {a} {b}"] = source.relation(a, b)
        found[f"provenance {a} {b}"] = source.provenance(a, b, "claude")
    found["forest"] = source.forest()
    found["forest with stopped"] = source.forest("claude", include_stopped=True)
    return found


@pytest.fixture
def moments(engine: Engine) -> list[tuple[int, list[str], Answers]]:
    """Two families grown one step at a time: after each step, the journal's position, the
    conversations known, and every answer the engine gave then."""
    feed = Feed(engine)
    known: list[str] = []
    taken: list[tuple[int, list[str], Answers]] = []
    steps: list[tuple[Callable[[], object], list[str]]] = [
        (lambda: feed.root("R"), ["R"]),
        (lambda: feed.child("R", "R", "A"), ["A"]),
        (lambda: feed.child("R", "A", "B"), ["B"]),
        (lambda: feed.root("S"), ["S"]),
        (lambda: feed.child("S", "S", "C"), ["C"]),
        (lambda: feed.stop("R", "B"), []),
        (lambda: feed.end("S"), []),
    ]
    for step, new in steps:
        step()
        known += new
        taken.append((engine.position(), list(known), answers(engine, known)))
    return taken


def test_a_reader_answers_as_the_engine_did_at_each_moment(
    engine: Engine, moments: list[tuple[int, list[str], Answers]]
) -> None:
    for position, known, then in moments:
        assert answers(reader_at(engine, position), known) == then, position


def test_the_engine_as_of_a_moment_answers_as_it_did_then(
    engine: Engine, moments: list[tuple[int, list[str], Answers]]
) -> None:
    for position, known, then in moments:
        past = engine.as_of(position=position)
        assert isinstance(past, TreeReader)
        assert answers(past, known) == then, position


def test_every_answer_is_equal_after_pickling_and_after_a_json_round_trip(
    moments: list[tuple[int, list[str], Answers]],
) -> None:
    for _, _, then in moments:
        for question, answer in then.items():
            assert pickle.loads(pickle.dumps(answer)) == answer, question
            data = orjson.loads(orjson.dumps(to_json(answer)))
            if isinstance(answer, Answer):
                assert type(answer).from_json(data) == answer, question
            elif isinstance(answer, tuple) and answer:
                kind = type(answer[0])
                assert tuple(kind.from_json(item) for item in data) == answer, question


@pytest.fixture
def reader(memory: Engine) -> TreeReader:
    feed = Feed(memory)
    feed.root("R")
    feed.child("R", "R", "A")
    return reader_at(memory, memory.position())


@pytest.mark.parametrize(
    "ask",
    [
        pytest.param(lambda r: r.lineage("nobody"), id="lineage"),
        pytest.param(lambda r: r.chain("nobody"), id="chain"),
        pytest.param(lambda r: r.family("nobody"), id="family"),
        pytest.param(lambda r: r.families([("R", None), ("nobody", None)]), id="families"),
        pytest.param(lambda r: r.agents("nobody"), id="agents"),
        pytest.param(lambda r: r.forest(root="nobody"), id="forest-of-a-root"),
        pytest.param(lambda r: r.lineage("A", "codex"), id="lineage-on-another-host"),
    ],
)
def test_an_unknown_conversation_raises(
    reader: TreeReader, ask: Callable[[TreeReader], object]
) -> None:
    with pytest.raises(UnknownConversation):
        ask(reader)


def test_an_unknown_conversation_has_no_tree_no_relation_and_a_noted_provenance(
    reader: TreeReader,
) -> None:
    assert reader.tree_for("nobody") is None
    assert reader.relation("nobody", "A") == "unrelated"
    assert reader.provenance("nobody", "A").note == "nobody is unknown"


@pytest.mark.parametrize("unfit", [5, None, b"A", "A\x00"], ids=repr)
@pytest.mark.parametrize(
    "ask",
    [
        pytest.param(lambda r, x: r.lineage(x), id="lineage"),
        pytest.param(lambda r, x: r.tree_for(x), id="tree_for"),
        pytest.param(lambda r, x: r.relation("A", x), id="relation"),
        pytest.param(lambda r, x: r.chain(x), id="chain"),
        pytest.param(lambda r, x: r.provenance(x, "R"), id="provenance"),
        pytest.param(lambda r, x: r.family(x), id="family"),
        pytest.param(lambda r, x: r.families([("R", None), (x, None)]), id="families"),
        pytest.param(lambda r, x: r.families([("R", x or 5)]), id="families-host"),
        pytest.param(lambda r, x: r.agents(x), id="agents"),
        pytest.param(lambda r, x: r.lineage("A", x or 5), id="host"),
        pytest.param(lambda r, x: r.forest(x or 5), id="forest-host"),
        pytest.param(lambda r, x: r.forest(root=x or 5), id="forest-root"),
    ],
)
def test_an_id_that_is_not_a_str_or_holds_nul_is_refused(
    reader: TreeReader, ask: Callable[[TreeReader, object], object], unfit: object
) -> None:
    with pytest.raises(InvalidArgument):
        ask(reader, unfit)


@pytest.mark.parametrize("unfit", [5, "A\x00"], ids=repr)
def test_the_engine_and_a_reader_refuse_an_id_in_the_same_words(
    memory: Engine, reader: TreeReader, unfit: Any
) -> None:
    said = []
    for source in (memory, reader):
        with pytest.raises(InvalidArgument) as refused:
            source.chain(unfit)
        said.append(str(refused.value))
    assert said[0] == said[1]


def test_a_reader_exposes_its_read_methods_only(reader: TreeReader) -> None:
    public = {name for name in dir(reader) if not name.startswith("_")}
    assert public == READ_METHODS | {"opening"}
    for internal in ("view", "queries", "absorb", "snapshot", "require", "find", "lineage_of"):
        assert not hasattr(reader, internal), internal


def test_the_engine_hands_out_no_queries_of_a_past_view(memory: Engine) -> None:
    public = {name for name in dir(memory) if not name.startswith("_")}
    assert not {name for name in public if name.startswith("queries_")}, public
    assert isinstance(memory.as_of(position=0), TreeReader)


def test_a_reader_cannot_be_given_new_attributes(reader: TreeReader) -> None:
    with pytest.raises(AttributeError):
        reader.view = MemoryView()  # type: ignore[attr-defined]
