"""Upcasting: events carry a class version; version-1 ``ChildPlaced`` events (before ``name``)
are read through the version-2 upcaster by the aggregate, the projection and journal import."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import orjson
import pytest
from eventsourcing.persistence import StoredEvent

from lineage_es.domain.ids import root_id
from lineage_es.domain.index import ConversationIndex
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.journal import export_journal, import_journal
from lineage_es.journal_read import FORMAT, VERSION

AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
PLACED = "lineage:RootLineage.ChildPlaced"


def stored_events(engine: Engine) -> list[StoredEvent]:
    """A root R with a child A placed under it, as the current code writes them."""
    root = RootLineage.start("claude", "R", at=AT, source="startup", fact="k0")
    root.place_unknown_child(
        "A", agent_type="Explore", subagent_id=None, description=None, at=AT, fact="k1"
    )
    index = [ConversationIndex.create("claude", c, "R", AT) for c in ("R", "A")]
    events = [*root.collect_events(), *(e for i in index for e in i.collect_events())]
    return [engine.app.mapper.to_stored_event(e) for e in events]


def as_version_1(stored: StoredEvent) -> StoredEvent:
    """The event as version 1 wrote it: no ``name``, no class version."""
    if stored.topic != PLACED:
        return stored
    state = orjson.loads(stored.state)
    assert state.pop("class_version") == 2
    del state["name"]
    return StoredEvent(
        stored.originator_id, stored.originator_version, stored.topic, orjson.dumps(state)
    )


@pytest.fixture
def upcasts(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The states the v1-to-v2 upcaster is given, as it is given them."""
    calls: list[dict[str, Any]] = []
    original: Callable[[dict[str, Any]], None] = RootLineage.ChildPlaced.upcast_v1_v2

    def spy(state: dict[str, Any]) -> None:
        calls.append(dict(state))
        original(state)

    monkeypatch.setattr(RootLineage.ChildPlaced, "upcast_v1_v2", staticmethod(spy))
    return calls


def old_store() -> Engine:
    engine = open_engine("memory://")
    engine.app.recorder.insert_events([as_version_1(s) for s in stored_events(engine)])
    return engine


def test_a_child_placed_event_is_written_at_class_version_2() -> None:
    with open_engine("memory://") as engine:
        placed = next(s for s in stored_events(engine) if s.topic == PLACED)
    state = orjson.loads(placed.state)
    assert state["class_version"] == 2 and "name" in state


def test_the_aggregate_reads_a_version_1_event_through_the_upcaster(
    upcasts: list[dict[str, Any]],
) -> None:
    with old_store() as engine:
        aggregate_id = root_id("claude", "R")
        placed = [
            e for e in engine.app.events.get(aggregate_id) if type(e).__name__ == "ChildPlaced"
        ]
        root: RootLineage = engine.app.repository.get(aggregate_id)
    assert len(upcasts) >= 1 and "name" not in upcasts[0]
    assert vars(placed[0])["name"] is None  # set on the event by the upcaster itself
    assert root.node("A") is not None and root.node("A")["parent"] == "R"  # type: ignore[index]


def test_the_projection_reads_a_version_1_event_through_the_upcaster(
    upcasts: list[dict[str, Any]],
) -> None:
    with open_engine("memory://") as current:
        current.app.recorder.insert_events(stored_events(current))
        current.catch_up()
        expected = current.view.all_rows()
    upcasts.clear()
    with old_store() as engine:
        engine.catch_up()
        rows = engine.view.all_rows()
        decoded = [e for e in engine.journal() if e.topic == PLACED]
    assert upcasts and "name" not in upcasts[0]
    assert rows == expected and len(rows) == 2
    assert decoded[0].state["name"] is None and "class_version" not in decoded[0].state


def test_a_journal_import_reads_version_1_events_through_the_upcaster(
    tmp_path: Path, upcasts: list[dict[str, Any]]
) -> None:
    path = tmp_path / "v1.jsonl"
    with open_engine("memory://") as engine:
        lines = [orjson.dumps({"format": FORMAT, "version": VERSION})]
        for position, stored in enumerate(map(as_version_1, stored_events(engine)), start=1):
            lines.append(
                orjson.dumps(
                    {
                        "position": position,
                        "originator_id": UUID(str(stored.originator_id)).hex,
                        "version": stored.originator_version,
                        "topic": stored.topic,
                        "state": orjson.loads(stored.state),
                    }
                )
            )
    path.write_bytes(b"\n".join(lines) + b"\n")
    with open_engine("memory://") as imported:
        import_journal(imported, path)
        assert imported.lineage("A").parent == "R"
        root: RootLineage = imported.app.repository.get(root_id("claude", "R"))
        placed = [e for e in imported.journal() if e.topic == PLACED]
    assert upcasts and all("name" not in call for call in upcasts)
    assert root.node("A") is not None
    assert placed[0].state["name"] is None


def test_an_export_keeps_each_events_class_version(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    with open_engine("memory://") as engine:
        engine.observe(
            "claude", {"session_id": "R", "hook_event_name": "SubagentStart", "agent_id": "A"}
        )
        with path.open("wb") as out:
            export_journal(engine, out)
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()[1:]]
    placed = next(line for line in lines if line["topic"] == PLACED)
    assert placed["state"].get("class_version") == 2
