"""How `lineage tree` draws the forest in a terminal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lineage_es.facts import LOGICAL_EPOCH
from lineage_es.model import ForestNode
from lineage_es.render import forest_text

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def node(started: datetime) -> ForestNode:
    return ForestNode(
        conversation="r1",
        host="claude",
        depth=0,
        status="live",
        resolution="native",
        started_at=started.isoformat(timespec="microseconds"),
    )


def test_a_node_shows_how_long_ago_it_started() -> None:
    assert " 3h" in forest_text((node(NOW - timedelta(hours=3, minutes=5)),), now=NOW)


def test_a_node_replayed_without_a_time_of_its_own_shows_its_row() -> None:
    text = forest_text((node(LOGICAL_EPOCH + timedelta(seconds=12)),), now=NOW)
    assert " row 12" in text and "d " not in text.split("live", 1)[1]
