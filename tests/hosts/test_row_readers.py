"""The bytes and fields ``lineage import`` routes rows by, as the hosts' row modules give them
(hosts/codex_rows.py, the row readers of hosts/claude_rows.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from lineage_es.hosts import claude_rows, codex_rows
from lineage_es.hosts.detect import row_form
from tests.support.codex_sessions import CHILD, PARENT, event, line, message, meta, spawned

SPAWN = orjson.dumps(
    {
        "timestamp": "2026-09-03T08:00:01.000Z",
        "type": "response_item",
        "payload": {"type": "function_call", "name": "spawn_agent", "call_id": "c1"},
    }
)
OUTPUT = line(2, "response_item", {"type": "function_call_output", "call_id": "c1"})


def carries(raw: bytes, spawn_calls: set[str] | None = None, *, is_child: bool = False) -> bool:
    kind = codex_rows.whole_row_kind(raw)
    assert kind is not None
    return codex_rows.may_carry_fact(kind, raw, spawn_calls or set(), is_child=is_child)


def test_a_codex_line_is_judged_by_its_first_bytes() -> None:
    assert codex_rows.whole_row_kind(meta(0, PARENT)) == b"session_meta"
    assert carries(meta(0, PARENT)) and carries(spawned(0, CHILD, PARENT))
    assert carries(SPAWN)
    assert not carries(message(1))
    # A spawn's output only while the call is open.
    assert not carries(OUTPUT) and carries(OUTPUT, {"c1"}) and not carries(OUTPUT, {"c2"})
    # A turn's end only in a child's thread; sub-agent and collab events always.
    assert not carries(event(3, "task_complete"))
    assert carries(event(3, "turn_aborted"), is_child=True)
    assert carries(event(3, "sub_agent_activity")) and carries(event(3, "collab_close_end"))
    assert carries(event(3, "item_completed", item={"type": "SubAgentActivity"}))
    assert not carries(event(3, "item_completed", item={"type": "Reasoning"}))
    assert not carries(line(4, "turn_context", {"cwd": "/w"}))


def test_a_codex_line_of_no_known_type_or_no_whole_row_has_no_kind() -> None:
    assert codex_rows.whole_row_kind(line(0, "telemetry", {"type": "x"})) is None
    assert codex_rows.whole_row_kind(b'{"type":"event_msg"') is None  # cut off
    torn = meta(0, PARENT).rstrip(b"\n")[:-5] + meta(1, PARENT)  # the next write went on
    assert codex_rows.whole_row_kind(torn) is None
    assert codex_rows.whole_row_kind(b"not json") is None


def test_codex_lines_and_rows_are_read_for_their_shape_and_time() -> None:
    assert codex_rows.is_compact(message(1)) and not codex_rows.is_compact(b'{"type": "x"}')
    assert codex_rows.is_timed_line(message(1)) and not codex_rows.is_timed_line(b'{"type":"x"}')
    row = orjson.loads(meta(0, PARENT))
    assert codex_rows.is_known_row(row) and codex_rows.is_header(row)
    assert not codex_rows.is_header(orjson.loads(message(1)))
    assert not codex_rows.is_known_row({"type": "telemetry"})
    assert codex_rows.row_time(row) == datetime(2026, 9, 3, 8, 0, tzinfo=UTC)
    assert codex_rows.row_time({"timestamp": "soon"}) is None


def test_form_detection_shares_the_codex_row_types() -> None:
    for kind in codex_rows.ROW_TYPES:
        assert row_form({"type": kind, "payload": {}}) == "codex-rollout"
    assert row_form({"type": "telemetry", "payload": {}}) == "hooks"


def test_form_detection_keeps_its_own_claude_row_types() -> None:
    # Typed rows the importer reads that form detection takes for a transcript only with a
    # sessionId or uuid (hosts/detect.py says why).
    assert row_form({"type": "user"}) == "claude-transcript"
    assert row_form({"type": "tag"}) == "hooks"
    assert row_form({"type": "tag", "uuid": "u1"}) == "claude-transcript"
    assert claude_rows.is_known_row({"type": "tag"})


def test_claude_row_fields_are_read_as_written() -> None:
    row = {
        "type": "user",
        "uuid": "u1",
        "version": "2.1.3",
        "timestamp": "2026-09-03T08:00:00.000Z",
        "sessionId": "s1",
    }
    assert claude_rows.is_known_row(row) and not claude_rows.is_known_row({"type": "other"})
    assert claude_rows.row_uuid(row) == "u1" and claude_rows.row_uuid({"uuid": 7}) is None
    assert claude_rows.row_version(row) == "2.1.3" and claude_rows.row_version({}) is None
    assert claude_rows.row_time(row) == datetime(2026, 9, 3, 8, 0, tzinfo=UTC)
    assert claude_rows.is_timed(row) and not claude_rows.is_timed({"type": "mode"})
    assert claude_rows.is_timed({"timestamp": "garbled"})  # a time is there, if unreadable
    assert claude_rows.row_time({"timestamp": "garbled"}) is None


def test_a_made_up_claude_row_names_its_session_first() -> None:
    row = claude_rows.session_row("s1", fileless="end", at="2026-09-03T08:00:00+00:00")
    assert row == {"sessionId": "s1", "fileless": "end", "at": "2026-09-03T08:00:00+00:00"}
    assert list(row) == ["sessionId", "fileless", "at"]
    assert claude_rows.row_session(row) == "s1"
