"""Answers are frozen values: immutable, hashable, equal after pickling and a JSON trip."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import orjson
import pytest

from lineage_es.model import (
    AgentLineage,
    Chain,
    ForestNode,
    LineageTree,
    Member,
    Peer,
    Provenance,
    Subagent,
    to_json,
)

PEER = Peer(
    conversation="a1",
    depth=1,
    started_at="2026-01-01T00:00:00.000000+00:00",
    resolution="confirmed",
    parent="r",
    subagent=Subagent("a1", "Explore"),
)
LINEAGE = AgentLineage(
    conversation="a1",
    root="r",
    depth=1,
    resolution="inferred",
    parent="r",
    subagent=Subagent("a1", "Explore"),
    tree=LineageTree(siblings=(PEER,), children=(), roots=(PEER,)),
    host="claude",
)


def test_a_lineage_cannot_be_changed() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        LINEAGE.depth = 2  # type: ignore[misc]


def test_a_lineage_is_hashable() -> None:
    assert hash(LINEAGE) == hash(AgentLineage.from_json(to_json(LINEAGE)))


def test_a_lineage_is_equal_after_pickling() -> None:
    assert pickle.loads(pickle.dumps(LINEAGE)) == LINEAGE


def test_a_lineage_is_equal_after_a_json_round_trip() -> None:
    assert AgentLineage.from_json(orjson.loads(orjson.dumps(to_json(LINEAGE)))) == LINEAGE


def test_a_lineage_without_a_tree_round_trips_as_null() -> None:
    bare = dataclasses.replace(LINEAGE, tree=None)
    data = to_json(bare)
    assert data["tree"] is None and AgentLineage.from_json(data) == bare


def test_a_named_ambiguous_lineage_round_trips_through_json() -> None:
    flagged = dataclasses.replace(LINEAGE, parent=None, name="scout", ambiguous=True)
    assert AgentLineage.from_json(round_trip(flagged)) == flagged


def test_a_lineage_without_a_name_or_flag_writes_neither_key() -> None:
    assert {"name", "ambiguous"}.isdisjoint(to_json(LINEAGE))


def test_a_lineage_that_names_a_parent_is_not_ambiguous() -> None:
    assert not dataclasses.replace(LINEAGE, parent="r", ambiguous=True).ambiguous


def test_an_ambiguous_peer_and_member_round_trip_with_the_flag() -> None:
    peer = dataclasses.replace(PEER, parent=None, ambiguous=True)
    member = Member("x", "r", 1, "live", "inferred", "t", ambiguous=True)
    assert round_trip(peer)["ambiguous"] is True and Peer.from_json(round_trip(peer)) == peer
    assert Member.from_json(round_trip(member)) == member


def test_a_chain_round_trips_through_json() -> None:
    chain = Chain(("b", "a"), complete=False, unresolved="x")
    assert Chain.from_json(orjson.loads(orjson.dumps(to_json(chain)))) == chain


def round_trip(value: Any) -> Any:
    return orjson.loads(orjson.dumps(to_json(value)))


def test_a_provenance_round_trips_through_json() -> None:
    provenance = Provenance("b", "r", "descendant", ("b", "a", "r"), "relayed")
    assert Provenance.from_json(round_trip(provenance)) == provenance


def test_a_member_round_trips_through_json() -> None:
    member = Member(
        "a1",
        "r",
        1,
        "stopped",
        "confirmed",
        "2026-01-01T00:00:00Z",
        parent="r",
        name="scout",
        subagent=Subagent("a1", "Explore"),
        stopped_at="2026-01-01T00:01:00Z",
        relation="child",
    )
    assert Member.from_json(round_trip(member)) == member


def test_a_forest_node_round_trips_through_json_with_its_subtree() -> None:
    leaf = ForestNode("b", "claude", 2, "live", "inferred", "t2", ambiguous=True)
    node = ForestNode("a", "claude", 1, "live", "confirmed", "t1", Subagent("a", "Plan"))
    root = ForestNode(
        "r",
        "claude",
        0,
        "live",
        "native",
        "t0",
        name="main",
        children=(dataclasses.replace(node, children=(leaf,)),),
    )
    assert ForestNode.from_json(round_trip(root)) == root


def test_a_forest_deeper_than_the_recursion_limit_is_read_back() -> None:
    data: dict[str, Any] = {"children": []}
    top = data
    for depth in range(3000):
        data["children"] = [{"conversation": f"n{depth}", "host": "claude", "depth": depth}]
        data = data["children"][0]
        data |= {"status": "live", "resolution": "inferred", "started_at": "t"}
    node = ForestNode.from_json(top["children"][0])
    for depth in range(3000):
        assert node.conversation == f"n{depth}"
        node = node.children[0] if node.children else node
