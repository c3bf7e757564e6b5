"""Fuzz: malformed payloads for every host adapter (wrong types, missing keys, huge strings,
odd unicode, nulls) give a typed PayloadError or a normal answer, never another exception,
and a refused payload leaves the journal as it was."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import PayloadError
from lineage_es.journal import verify_journal
from lineage_es.model import to_json

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
CODEX_ROOT = "019a0000-0000-7000-8000-0000000000a1"
CODEX_CHILD = "019a0000-0000-7000-8000-0000000000b2"

#: Well-formed payloads per host, the starting points the mutations break.
TEMPLATES: dict[str, list[dict[str, Any]]] = {
    "claude": [
        {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"},
        {"session_id": ROOT, "hook_event_name": "UserPromptSubmit", "prompt": "go"},
        {
            "session_id": ROOT,
            "hook_event_name": "PreToolUse",
            "tool_name": "Agent",
            "tool_use_id": "toolu_01A",
            "tool_input": {"prompt": "p", "subagent_type": "Explore", "description": "d"},
        },
        {
            "session_id": ROOT,
            "hook_event_name": "SubagentStart",
            "agent_id": "a1",
            "agent_type": "X",
        },
        {
            "session_id": ROOT,
            "hook_event_name": "PostToolUse",
            "tool_name": "Agent",
            "tool_use_id": "toolu_01A",
            "tool_input": {"prompt": "p"},
            "tool_response": {"status": "completed", "agentId": "a1", "agentType": "X"},
        },
        {
            "session_id": ROOT,
            "hook_event_name": "PreToolUse",
            "agent_id": "a1",
            "tool_name": "Bash",
        },
        {"session_id": ROOT, "hook_event_name": "SubagentStop", "agent_id": "a1"},
        {"session_id": ROOT, "hook_event_name": "SessionEnd", "reason": "other"},
    ],
    "codex": [
        {"session_id": CODEX_ROOT, "hook_event_name": "SessionStart", "source": "startup"},
        {"session_id": CODEX_ROOT, "hook_event_name": "UserPromptSubmit", "turn_id": "t1"},
        {
            "session_id": CODEX_ROOT,
            "turn_id": "t1",
            "hook_event_name": "PreToolUse",
            "tool_name": "collaborationspawn_agent",
            "tool_use_id": "call_1",
            "tool_input": {"agent_type": "default", "task_name": "scan"},
        },
        {
            "session_id": CODEX_ROOT,
            "turn_id": "t1",
            "hook_event_name": "PostToolUse",
            "tool_name": "spawn_agent",
            "tool_use_id": "call_1",
            "tool_response": '{"agent_id": "' + CODEX_CHILD + '"}',
        },
        {
            "session_id": CODEX_ROOT,
            "turn_id": "t2",
            "hook_event_name": "SubagentStart",
            "agent_id": CODEX_CHILD,
            "agent_type": "default",
        },
        {
            "session_id": CODEX_ROOT,
            "hook_event_name": "SubagentStop",
            "agent_id": CODEX_CHILD,
            "agent_transcript_path": "/home/u/.codex/sessions/rollout-x.jsonl",
        },
    ],
    "cursor": [
        {"conversation_id": "c0a1", "hook_event_name": "sessionStart", "workspace_roots": ["/w"]},
        {
            "conversation_id": "c0a1",
            "hook_event_name": "preToolUse",
            "tool_name": "Task",
            "tool_use_id": "call-1\nfc_1_0",
            "tool_input": {"prompt": "p", "subagent_type": "explore"},
            "workspace_roots": ["/w"],
        },
        {
            "conversation_id": "c0a1",
            "hook_event_name": "subagentStart",
            "subagent_id": "call-1\nfc_1_0",
            "parent_conversation_id": "c0a1",
            "subagent_type": "explore",
            "workspace_roots": ["/w"],
        },
        {
            "conversation_id": "d0b2",
            "hook_event_name": "preToolUse",
            "tool_name": "Read",
            "workspace_roots": ["/w"],
            "transcript_path": None,
        },
        {
            "conversation_id": "c0a1",
            "hook_event_name": "subagentStop",
            "subagent_id": "call-1\nfc_1_0",
            "status": "completed",
        },
        {"conversation_id": "c0a1", "hook_event_name": "stop", "status": "completed"},
        {"conversation_id": "c0a1", "hook_event_name": "sessionEnd", "reason": "user_close"},
    ],
}

FIELDS = sorted(
    {key for payloads in TEMPLATES.values() for payload in payloads for key in payload}
    | {"cwd", "transcript_path", "generation_id", "tool_call_id", "is_parallel_worker"}
)
NESTED = ["agentId", "status", "resume", "subagent_type", "description", "agent_type", "content"]

odd_text = st.text(
    st.characters(categories=["Cc", "Cf", "Cs", "Co", "Zs", "So", "Lo", "Mn"]), max_size=24
)
special = st.sampled_from(
    ["", "\x00", "a\x00b", "\u202e", "\ufeff", "\udc80", "../../etc/passwd", "$(touch pwned)"]
)
huge = st.sampled_from(["x" * 1_000_000, "\x00" * 200_000, "é" * 300_000])
scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    odd_text,
    special,
    huge,
)
junk = st.recursive(
    scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(odd_text | special, inner, max_size=3)
    ),
    max_leaves=8,
)


def deep(levels: int) -> Any:
    value: Any = "bottom"
    for _ in range(levels):
        value = [value]
    return value


@st.composite
def malformed(draw: st.DrawFn, host: str) -> Any:
    """A template broken by a few mutations, or now and then not an object at all."""
    if draw(st.integers(0, 19)) == 0:
        return draw(junk)
    payload: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(TEMPLATES[host])))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["drop", "set", "nest", "deep"]))
        key = draw(st.sampled_from(sorted(payload) or FIELDS) | st.sampled_from(FIELDS))
        if kind == "drop":
            payload.pop(key, None)
        elif kind == "set":
            payload[key] = draw(junk)
        elif kind == "nest":
            payload[key] = {draw(st.sampled_from(NESTED)): draw(junk)}
        else:
            payload[key] = deep(draw(st.sampled_from([10, 63, 65, 2_000])))
    return payload


def observe_checked(engine: Engine, host: str, payload: Any) -> str:
    """Observe ``payload``: a PayloadError leaves the journal unchanged; any other exception
    fails the test. Returns what happened."""
    before = engine.position()
    try:
        engine.observe(host, payload)
    except PayloadError:
        assert engine.position() == before, "a refused payload changed the journal"
        return "refused"
    return "observed"


SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@contextmanager
def seeded(url: str, host: str) -> Iterator[Engine]:
    """An engine holding the host's well-formed templates, so that malformed payloads meet
    known roots, spawns and children."""
    with open_engine(url) as engine:
        for payload in TEMPLATES[host][:-1]:
            engine.observe(host, payload)
        yield engine


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_malformed_payloads_are_refused_with_a_typed_error_and_change_nothing(host: str) -> None:
    @SETTINGS
    @given(st.lists(malformed(host), min_size=1, max_size=5))
    def run(payloads: list[Any]) -> None:
        with seeded("memory://", host) as engine:
            for payload in payloads:
                observe_checked(engine, host, payload)
            assert verify_journal(engine).ok

    run()


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_malformed_payloads_leave_a_sqlite_journal_verifiable(host: str) -> None:
    with TemporaryDirectory() as tmp, seeded(f"sqlite:///{Path(tmp) / 'j.sqlite'}", host) as eng:

        @settings(SETTINGS, max_examples=40)
        @given(malformed(host))
        def run(payload: Any) -> None:
            observe_checked(eng, host, payload)

        run()
        report = verify_journal(eng)
        assert report.ok, report.problems


#: Codex's turn metadata naming a thread, its other fields any junk or any integer depth.
turn_metadata = st.fixed_dictionaries(
    {"thread_id": st.just(CODEX_CHILD) | junk},
    optional={
        "parent_thread_id": st.just(CODEX_ROOT) | junk,
        "session_id": st.just(CODEX_ROOT) | junk,
        "depth": st.integers(min_value=-(2**70), max_value=2**70) | junk,
    },
)


@SETTINGS
@given(junk | st.dictionaries(st.sampled_from(["threadId", "x-codex-turn-metadata"]), junk))
def test_malformed_mcp_meta_is_refused_with_a_typed_error(meta: Any) -> None:
    with open_engine("memory://") as engine:
        with contextlib.suppress(PayloadError):
            engine.resolve("codex", meta)
        assert engine.position() == 0


@SETTINGS
@given(turn_metadata)
def test_a_meta_naming_a_thread_is_refused_or_answered_with_a_depth_json_can_carry(
    turn: dict[str, Any],
) -> None:
    """What is not refused is answered with a depth of 0 or more, and the answer encodes as
    the MCP server sends it."""
    with open_engine("memory://") as engine:
        with contextlib.suppress(PayloadError):
            answer = engine.resolve("codex", {"x-codex-turn-metadata": turn})
            assert answer is None or answer.depth >= 0
            orjson.dumps(to_json(answer))
        assert engine.position() == 0


def test_an_unknown_host_name_is_a_typed_error() -> None:
    with open_engine("memory://") as engine, pytest.raises(PayloadError):
        engine.observe("emacs", TEMPLATES["claude"][0])


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_a_nul_character_in_an_id_is_kept_or_refused_on_every_store(
    host: str, store_url: str
) -> None:
    """Ids are opaque (Cursor's hold newlines); one holding NUL must either be journaled and
    answered, or refused, on every store, and never poison the view for later payloads."""
    payload = copy.deepcopy(TEMPLATES[host][0])
    id_field = "conversation_id" if host == "cursor" else "session_id"
    payload[id_field] = "bad\x00id"
    with open_engine(store_url) as engine:
        before = engine.position()
        try:
            engine.observe(host, payload)
        except PayloadError:
            assert engine.position() == before
        healthy = copy.deepcopy(TEMPLATES[host][0])
        assert engine.observe(host, healthy) is not None
        assert verify_journal(engine).ok
