"""Answers are frozen values: immutable, hashable, equal after pickling and a JSON trip."""

from __future__ import annotations

import dataclasses
import pickle

import orjson
import pytest

from lineage_es.model import AgentLineage, Chain, LineageTree, Peer, Subagent, to_json

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


def test_a_chain_round_trips_through_json() -> None:
    chain = Chain(("b", "a"), complete=False, unresolved="x")
    assert Chain.from_json(orjson.loads(orjson.dumps(to_json(chain)))) == chain
