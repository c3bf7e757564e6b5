"""The Cursor hook adapter (shared/spec/HOSTS.md section 3)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.errors import PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Observation,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.cursor import CursorAdapter, unwrap_fixture
from lineage_es.hosts.detect import payload_host as detect
from tests.support.hosts_examples import HOSTS_CLAUDE, HOSTS_CODEX, HOSTS_CURSOR

CONV = "b3f17b66-e4ba-5fd0-8f3b-dc5b32fc4f8c"
SPAWN_KEY = "call-5d8d6ed2-70\nfc_c1d1e033_0"
CURSOR = Path("cursor")
RUN4 = CURSOR / "rosetta_run4-task-subagent_v3.9.16" / "DERIVED_rosetta_run4_stdin.ndjson"
RESUME = CURSOR / "fusengine_task-subagent-resume_v3.18.9"


@pytest.fixture
def cursor() -> CursorAdapter:
    return CursorAdapter()


def hook(event: str, **fields: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "conversation_id": CONV,
        "generation_id": "g1",
        "hook_event_name": event,
        "cursor_version": "3.18.9",
        "workspace_roots": ["/w"],
        "session_id": CONV,
        "transcript_path": None,
    }
    payload.update(fields)
    return payload


def task(**tool_input: Any) -> dict[str, Any]:
    body = {"description": "look", "prompt": "p", "subagent_type": "explore"} | tool_input
    return hook("preToolUse", tool_name="Task", tool_input=body, tool_use_id=SPAWN_KEY)


def start(**fields: Any) -> dict[str, Any]:
    base = {
        "subagent_id": SPAWN_KEY,
        "tool_call_id": SPAWN_KEY,
        "parent_conversation_id": CONV,
        "subagent_type": "general-purpose",
        "is_parallel_worker": False,
    }
    return hook("subagentStart", **(base | fields))


def derived_payloads(corpus: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted((corpus / CURSOR).rglob("DERIVED_*_stdin.ndjson")):
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            yield f"{path.name}:{number}", orjson.loads(line)


def fixture_payloads(corpus: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted((corpus / CURSOR).rglob("*.json")):
        yield path.name, unwrap_fixture(orjson.loads(path.read_bytes()))


# -- recognises -------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", HOSTS_CURSOR, ids=["Task", "start", "child", "stop"])
def test_recognises_the_cursor_examples_of_hosts_md(
    cursor: CursorAdapter, payload: dict[str, Any]
) -> None:
    assert cursor.recognises(payload)


@pytest.mark.parametrize(
    "payload", HOSTS_CLAUDE + HOSTS_CODEX, ids=["c-start", "c-post", "c-stop", "c-Stop", "x", "y"]
)
def test_does_not_recognise_claude_or_codex_examples(
    cursor: CursorAdapter, payload: dict[str, Any]
) -> None:
    assert not cursor.recognises(payload)


def test_recognises_any_payload_naming_its_cursor_version(cursor: CursorAdapter) -> None:
    assert cursor.recognises({"cursor_version": "3.9.16", "hook_event_name": "SessionStart"})


def test_does_not_recognise_a_non_object(cursor: CursorAdapter) -> None:
    assert not cursor.recognises("conversation_id")  # type: ignore[arg-type]


# -- what only Cursor sends --------------------------------------------------------------------


def test_own_fields_are_its_envelope_and_a_camel_case_event(cursor: CursorAdapter) -> None:
    assert cursor.own_fields(hook("stop")) == (
        "conversation_id",
        "cursor_version",
        "generation_id",
        "workspace_roots",
        "hook_event_name",
    )


@pytest.mark.parametrize("payload", HOSTS_CLAUDE + HOSTS_CODEX, ids=["a", "b", "c", "d", "x", "y"])
def test_claude_and_codex_examples_carry_no_cursor_own_fields(
    cursor: CursorAdapter, payload: dict[str, Any]
) -> None:
    assert cursor.own_fields(payload) == ()


def test_an_mcp_meta_names_no_cursor_conversation(cursor: CursorAdapter) -> None:
    assert not cursor.mcp_meta
    assert not cursor.meta_names_thread({"threadId": CONV})


# -- observe: who and where --------------------------------------------------------------------


def test_the_requester_is_the_conversation_and_the_root_is_left_to_the_engine(
    cursor: CursorAdapter,
) -> None:
    observation = cursor.observe(hook("afterAgentThought"))
    assert (observation.requester, observation.root, observation.workspace) == (
        CONV,
        None,
        ("/w",),
    )


def test_a_payload_without_workspace_roots_has_no_workspace(cursor: CursorAdapter) -> None:
    payload = hook("stop")
    del payload["workspace_roots"]
    assert cursor.observe(payload).workspace == ()


def test_a_pre_tool_use_delivered_twice_has_one_key(cursor: CursorAdapter) -> None:
    payload = hook("preToolUse", tool_name="Read", tool_use_id="t1")
    assert cursor.observe(payload).key == cursor.observe(dict(payload)).key


def test_the_key_of_a_task_call_does_not_change(cursor: CursorAdapter) -> None:
    """Keys are stored in journals (the idempotency key of a payload's events)."""
    sent = {
        "conversation_id": CONV,
        "hook_event_name": "preToolUse",
        "tool_name": "Task",
        "tool_use_id": "call-1",
        "tool_input": {"subagent_type": "explore", "description": "scan"},
        "workspace_roots": ["/w"],
        "cursor_version": "3.9.16",
    }
    assert cursor.observe(sent).key == "29b4834c0aa10193db3a8a16b5365e9e"


def test_the_receipt_time_is_kept(cursor: CursorAdapter) -> None:
    at = datetime(2026, 9, 3, tzinfo=UTC)
    assert cursor.observe(hook("stop"), at=at).at == at


def test_the_empty_window_placeholder_is_no_root(cursor: CursorAdapter) -> None:
    observation = cursor.observe(hook("sessionStart", conversation_id="empty-state-draft"))
    assert (observation.requester, observation.facts) == (None, ())


# -- observe: facts ----------------------------------------------------------------------------


@pytest.mark.parametrize("event", ["sessionStart", "beforeSubmitPrompt", "stop", "preCompact"])
def test_a_root_only_event_sees_a_root(cursor: CursorAdapter, event: str) -> None:
    assert cursor.observe(hook(event)).facts == (RootSeen(CONV, source=event),)


def test_session_end_sees_a_root_then_ends_its_session(cursor: CursorAdapter) -> None:
    assert cursor.observe(hook("sessionEnd", reason="user_close")).facts == (
        RootSeen(CONV, source="sessionEnd"),
        SessionEnded(CONV),
    )


@pytest.mark.parametrize("event", ["preToolUse", "postToolUse", "afterFileEdit", "beforeReadFile"])
def test_any_other_event_is_only_an_act(cursor: CursorAdapter, event: str) -> None:
    assert cursor.observe(hook(event, tool_name="Write")).facts == (Acted(CONV),)


def test_a_task_call_requests_a_spawn_keyed_by_its_tool_use_id(cursor: CursorAdapter) -> None:
    assert cursor.observe(task()).facts == (
        Acted(CONV),
        SpawnRequested(CONV, SPAWN_KEY, agent_type="explore", description="look"),
    )


def test_a_task_call_naming_a_conversation_to_resume_names_it_as_a_child_and_resumes_it(
    cursor: CursorAdapter,
) -> None:
    payload = task(resume="4e622770", interrupt=True)
    del payload["tool_use_id"]
    assert cursor.observe(payload).facts == (
        Acted(CONV),
        ChildIdentified(CONV, "4e622770", "native"),
        Resumed("4e622770"),
    )


def test_a_resume_names_its_child_as_the_one_its_tool_use_id_starts(
    cursor: CursorAdapter,
) -> None:
    """The ``subagentStart`` and ``subagentStop`` that follow carry the call's id."""
    observation = cursor.observe(task(resume="4e622770", interrupt=True))
    assert observation.facts == (
        Acted(CONV),
        SpawnRequested(CONV, SPAWN_KEY, agent_type="explore", description="look"),
        ChildIdentified(
            CONV,
            "4e622770",
            "native",
            spawn_key=SPAWN_KEY,
            agent_type="explore",
            description="look",
        ),
        Resumed("4e622770"),
    )


def test_a_task_call_without_tool_use_id_is_only_an_act(cursor: CursorAdapter) -> None:
    payload = task()
    del payload["tool_use_id"]
    assert cursor.observe(payload).facts == (Acted(CONV),)


def test_subagent_start_starts_a_pending_child_under_its_parent(cursor: CursorAdapter) -> None:
    assert cursor.observe(start()).facts == (
        ChildStarted(
            spawn_key=SPAWN_KEY,
            parent=CONV,
            agent_type="general-purpose",
            subagent_id=SPAWN_KEY,
        ),
    )


def test_a_nested_subagent_start_names_the_child_as_parent(cursor: CursorAdapter) -> None:
    payload = start(parent_conversation_id="child-1", conversation_id="child-1")
    (fact,) = cursor.observe(payload).facts
    assert isinstance(fact, ChildStarted) and fact.parent == "child-1"


def test_subagent_start_without_parent_names_its_own_conversation(cursor: CursorAdapter) -> None:
    payload = start()
    del payload["parent_conversation_id"]
    (fact,) = cursor.observe(payload).facts
    assert isinstance(fact, ChildStarted) and fact.parent == CONV


def test_a_subagent_id_keeps_its_newline(cursor: CursorAdapter) -> None:
    (fact,) = cursor.observe(start()).facts
    assert isinstance(fact, ChildStarted) and fact.spawn_key == SPAWN_KEY


def test_subagent_start_falls_back_to_the_tool_call_id(cursor: CursorAdapter) -> None:
    payload = start()
    del payload["subagent_id"]
    (fact,) = cursor.observe(payload).facts
    assert isinstance(fact, ChildStarted) and fact.spawn_key == SPAWN_KEY


def test_subagent_stop_stops_the_child_by_its_spawn_key(cursor: CursorAdapter) -> None:
    payload = hook("subagentStop", subagent_id=SPAWN_KEY, status="completed")
    assert cursor.observe(payload).facts == (Stopped(spawn_key=SPAWN_KEY),)


def test_cursor_states_no_lineage_in_mcp_meta(cursor: CursorAdapter) -> None:
    assert cursor.claim({"threadId": CONV}) is None


# -- bad input ---------------------------------------------------------------------------------


def test_a_non_object_payload_is_refused(cursor: CursorAdapter) -> None:
    with pytest.raises(PayloadError, match="JSON object"):
        cursor.observe(["sessionStart"])  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["conversation_id", "hook_event_name"])
def test_a_payload_without_a_required_field_is_refused(cursor: CursorAdapter, field: str) -> None:
    payload = hook("stop")
    del payload[field]
    with pytest.raises(PayloadError, match=field):
        cursor.observe(payload)


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (hook("stop", conversation_id=7), "conversation_id"),
        (hook("stop", workspace_roots="/w"), "workspace_roots"),
        (hook("stop", workspace_roots=["/w", 3]), "workspace_roots"),
        (task() | {"tool_input": "explore"}, "tool_input"),
        (task(resume=["x"]), "resume"),
        (start(subagent_type=3), "subagent_type"),
    ],
    ids=["conversation", "roots-text", "roots-mixed", "tool-input", "resume", "type"],
)
def test_a_mistyped_field_is_refused(
    cursor: CursorAdapter, payload: dict[str, Any], field: str
) -> None:
    with pytest.raises(PayloadError, match=field):
        cursor.observe(payload)


def test_a_subagent_event_without_its_id_is_refused(cursor: CursorAdapter) -> None:
    with pytest.raises(PayloadError, match="subagent_id"):
        cursor.observe(hook("subagentStop", status="completed"))


def test_a_too_deep_payload_is_refused(cursor: CursorAdapter) -> None:
    deep: Any = 0
    for _ in range(100):
        deep = [deep]
    with pytest.raises(PayloadError, match="deeper"):
        cursor.observe(hook("stop", extra=deep))


# -- fixtures ----------------------------------------------------------------------------------


def test_unwrap_fixture_returns_the_wrapped_payload() -> None:
    assert unwrap_fixture({"provenance": {}, "stdin": {"a": 1}}) == {"a": 1}


@pytest.mark.parametrize("fixture", [{"stdin": "x"}, {"provenance": {}}, ["stdin"]])
def test_unwrap_fixture_refuses_a_file_without_a_payload(fixture: Any) -> None:
    with pytest.raises(PayloadError, match="fixture"):
        unwrap_fixture(fixture)


# -- through the engine ------------------------------------------------------------------------


def test_the_first_event_of_an_unseen_conversation_binds_it_to_the_pending_start() -> None:
    child = hook("preToolUse", conversation_id="child-1", tool_name="Read", tool_use_id="t9")
    with open_engine("memory://") as engine:
        engine.observe("cursor", hook("sessionStart"))
        engine.observe("cursor", task())
        engine.observe("cursor", start())
        lineage = engine.observe("cursor", child)
    assert lineage is not None
    assert (lineage.conversation, lineage.parent, lineage.depth, lineage.resolution) == (
        "child-1",
        CONV,
        1,
        "inferred",
    )


# -- the corpus --------------------------------------------------------------------------------


def test_every_derived_payload_is_recognised_and_observed(
    corpus: Path, cursor: CursorAdapter
) -> None:
    seen = 0
    for where, payload in derived_payloads(corpus):
        assert cursor.recognises(payload), where
        assert detect(payload) == "cursor", where
        assert cursor.observe(payload).requester == payload["conversation_id"], where
        seen += 1
    assert seen == 23 + 22 + 55


def test_every_fusengine_payload_is_recognised_and_observed(
    corpus: Path, cursor: CursorAdapter
) -> None:
    found: dict[str, Observation] = {}
    for name, payload in fixture_payloads(corpus):
        assert cursor.recognises(payload), name
        found[name] = cursor.observe(payload)
    assert len(found) == 4
    assert found["sessionStart__01-empty-window-claude-user-config.json"].requester is None


def test_rosetta_run4_starts_a_child_under_its_subagent_id(
    corpus: Path, cursor: CursorAdapter
) -> None:
    lines = (corpus / RUN4).read_bytes().splitlines()
    starts = [
        fact
        for line in lines
        for fact in cursor.observe(orjson.loads(line)).facts
        if isinstance(fact, ChildStarted)
    ]
    key = "tool_57cce371-aa43-4005-99d9-f32e6a90135"
    assert starts == [
        ChildStarted(
            spawn_key=key,
            parent="78d9aebd-5573-4e6b-b018-832b56991975",
            agent_type="general-purpose",
            subagent_id=key,
        )
    ]


def test_rosetta_run4_child_is_pending_then_stopped_in_the_engine(corpus: Path) -> None:
    root = "78d9aebd-5573-4e6b-b018-832b56991975"
    key = "tool_57cce371-aa43-4005-99d9-f32e6a90135"
    with open_engine("memory://") as engine:
        children: list[tuple[str, ...]] = []
        for line in (corpus / RUN4).read_bytes().splitlines():
            payload = orjson.loads(line)
            engine.observe("cursor", payload)
            if payload["hook_event_name"] in ("subagentStart", "subagentStop"):
                tree = engine.tree_for(root, "cursor")
                assert tree is not None
                children.append(tuple(peer.conversation for peer in tree.children))
    assert children == [(key,), ()]


def test_fusengine_resume_names_the_subagent_conversation(
    corpus: Path, cursor: CursorAdapter
) -> None:
    payload = unwrap_fixture(
        orjson.loads((corpus / RESUME / "preToolUse__06-task-resume-interrupt.json").read_bytes())
    )
    assert Resumed("4e622770-b0a0-5ef2-99de-dbbfa2d0a243") in cursor.observe(payload).facts
