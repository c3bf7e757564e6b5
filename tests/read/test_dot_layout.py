"""How ``lineage tree --format dot`` (and mermaid) name a node and lay out many roots: each
label names the node's host (a root) or subagent type (a child); the dot graph reads left to
right, one cluster (box) per root, so 25 roots make a long picture, not a wide one."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from lineage_es.model import ForestNode, Subagent
from lineage_es.read.render import forest_dot, forest_mermaid

NOW = datetime(2026, 1, 1, tzinfo=UTC).isoformat()


def node(
    conversation: str,
    depth: int,
    children: tuple[ForestNode, ...] = (),
    *,
    host: str = "claude",
    kind: str | None = None,
) -> ForestNode:
    return ForestNode(
        conversation=conversation,
        host=host,
        depth=depth,
        status="live",
        resolution="native" if depth == 0 else "confirmed",
        started_at=NOW,
        subagent=Subagent(id=conversation, type=kind) if kind else None,
        children=children,
    )


def forest(roots: int) -> tuple[ForestNode, ...]:
    """``roots`` roots of alternating hosts, each with one Explore child."""
    hosts = ("claude", "codex", "cursor")
    return tuple(
        node(f"r{i}", 0, (node(f"c{i}", 1, kind="Explore", host=hosts[i % 3]),), host=hosts[i % 3])
        for i in range(roots)
    )


def labels(dot: str) -> dict[str, str]:
    """Each node's label, by the id the graph gives it."""
    return dict(re.findall(r'^\s+(n\d+) \[label="([^"]*)"', dot, flags=re.MULTILINE))


def test_dot_names_a_childs_subagent_type() -> None:
    assert labels(forest_dot(forest(1)))["n1"] == "c0\\nExplore\\nlive"


def test_dot_names_a_roots_host() -> None:
    assert labels(forest_dot(forest(2)))["n2"] == "r1\\ncodex\\nlive"


def test_dot_leaves_out_a_type_the_host_did_not_say() -> None:
    untyped = (node("r0", 0, (node("c0", 1),)),)
    assert labels(forest_dot(untyped))["n1"] == "c0\\nlive"


def test_mermaid_names_a_roots_host_as_dot_does() -> None:
    assert '  n2["r1<br/>codex<br/>live"]' in forest_mermaid(forest(2)).splitlines()


def test_dot_reads_left_to_right() -> None:
    assert re.search(r"^\s+graph \[rankdir=LR\b", forest_dot(forest(3)), flags=re.MULTILINE)


def test_dot_puts_each_roots_tree_in_a_cluster_of_its_own() -> None:
    clusters = re.findall(r"subgraph (cluster_\d+) \{(.*?)\n  \}", forest_dot(forest(25)), re.S)
    members = {name: set(re.findall(r"(n\d+) \[label", body)) for name, body in clusters}
    assert len(members) == 25
    assert members["cluster_0"] == {"n0", "n1"} and members["cluster_24"] == {"n48", "n49"}


def test_dot_writes_the_first_root_last_so_dot_draws_it_on_top() -> None:
    """``dot`` stacks a left-to-right graph's clusters from the bottom up in the order they
    are written."""
    order = re.findall(r"subgraph cluster_(\d+)", forest_dot(forest(3)))
    assert order == ["2", "1", "0"]
