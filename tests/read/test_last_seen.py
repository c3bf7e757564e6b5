"""Every node in every answer carries ``last_seen``, the time of the latest fact about it (to
:data:`~lineage_es.domain.seen_events.SEEN_INTERVAL`), in the view of every store, as of any
moment when time travelling."""

from __future__ import annotations

import orjson

from lineage_es.domain.seen_events import SEEN_INTERVAL
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ToolCalled
from lineage_es.model import AgentLineage, ForestNode, Member, to_json
from lineage_es.read.render import forest_json
from tests.support.quiet_facts import CHILD, ROOT, act, at, send, stamp, start_family

INTERVAL = SEEN_INTERVAL.total_seconds()


def members(engine: Engine) -> dict[str, Member]:
    return {m.conversation: m for m in engine.family(ROOT, "claude")}


def test_a_new_node_was_last_seen_when_it_started(engine: Engine) -> None:
    start_family(engine)
    assert members(engine)[CHILD].last_seen == stamp(1)


def test_an_act_past_the_interval_moves_last_seen(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    assert members(engine)[CHILD].last_seen == stamp(600)


def test_an_act_moves_only_the_node_that_acted(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    assert members(engine)[ROOT].last_seen == stamp(0)


def test_last_seen_is_exact_to_the_interval(engine: Engine) -> None:
    """An act every sixth of an interval for 10 intervals: last_seen trails the last act by
    less than an interval."""
    start_family(engine)
    step = INTERVAL / 6
    for tick in range(1, 61):
        act(engine, CHILD, seconds=1 + step * tick)
    last = members(engine)[CHILD].last_seen
    assert last is not None and stamp(1 + step * 60 - INTERVAL) < last <= stamp(1 + step * 60)


def test_an_mcp_tool_call_moves_last_seen(engine: Engine) -> None:
    """A tool call journals its own event (the MCP caller index), which dates its node."""
    start_family(engine)
    send(engine, CHILD, ToolCalled(CHILD, "mcp__lineage__lineage", call="c1"), seconds=30)
    assert members(engine)[CHILD].last_seen == stamp(30)


def test_the_forest_carries_last_seen(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    (root,) = engine.forest("claude")
    assert (root.last_seen, root.children[0].last_seen) == (stamp(0), stamp(600))


def test_a_lineage_and_its_tree_carry_last_seen(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    found = engine.lineage(CHILD, "claude")
    assert found.last_seen == stamp(600)
    assert found.tree is not None
    assert [p.last_seen for p in found.tree.siblings] == [stamp(0)]


def test_a_time_travelling_forest_shows_last_seen_as_of_its_moment(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    act(engine, CHILD, seconds=1200)
    (root,) = engine.as_of(time=at(900)).forest("claude")
    assert root.children[0].last_seen == stamp(600)


def test_the_tree_json_writes_last_seen_before_children(engine: Engine) -> None:
    start_family(engine)
    root = orjson.loads(forest_json(engine.forest("claude")))["roots"][0]
    assert list(root)[-2:] == ["last_seen", "children"]
    assert root["last_seen"] == stamp(0)


def answers_of(engine: Engine) -> list[AgentLineage | Member | ForestNode]:
    """The child's node in each kind of answer that holds one."""
    return [
        engine.lineage(CHILD, "claude"),
        members(engine)[CHILD],
        engine.forest("claude")[0].children[0],
    ]


def test_every_node_answer_writes_last_seen_last_and_reads_it_back(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    for value in answers_of(engine):
        data = orjson.loads(orjson.dumps(to_json(value)))
        assert (list(data)[-1], data["last_seen"]) == ("last_seen", stamp(600))
        assert type(value).from_json(data) == value


def test_a_rebuilt_view_has_the_same_last_seen(engine: Engine) -> None:
    start_family(engine)
    act(engine, CHILD, seconds=600)
    before = members(engine)
    engine.rebuild()
    assert members(engine) == before


def test_a_view_made_before_last_seen_is_projected_again(shared_store_url: str) -> None:
    """A view whose table lacks the column (an older release's) is dropped on open and
    projected again from the journal: its answers then carry last_seen."""
    with open_engine(shared_store_url) as engine:
        start_family(engine)
        act(engine, CHILD, seconds=600)
        view = engine.view
        with view._write_transaction() as cursor:  # type: ignore[attr-defined]
            cursor.execute("ALTER TABLE lineage_nodes DROP COLUMN last_seen")
    with open_engine(shared_store_url, create=False) as engine:
        assert members(engine)[CHILD].last_seen == stamp(600)
