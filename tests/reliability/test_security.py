"""Security: nothing from a payload is executed or opened as a path; oversized and absurdly
deep payloads are refused before they are fully parsed; the store stays private."""

from __future__ import annotations

import os
import stat
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import MappingProxyType
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.errors import PayloadError
from lineage_es.hosts import adapter, base
from lineage_es.hosts.base import MAX_PAYLOAD_BYTES, parse_payload
from lineage_es.hosts.claude_transcript import read_transcript
from lineage_es.hosts.codex_rollout import read_rollout
from lineage_es.journal import export_journal, import_journal
from lineage_es.stores import prepare_sqlite_file

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
CODEX_ROOT = "019a0000-0000-7000-8000-0000000000a1"
MIB = 1024 * 1024

#: Audit events that would mean something from a payload ran or a program was started.
EXECUTING = (
    "subprocess.",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "exec",
    "compile",
    "ctypes.",
    "webbrowser.",
    "os.startfile",
    "pty.",
)

Events = list[tuple[str, tuple[Any, ...]]]


class _Recorder:
    """The one audit hook of the process (audit hooks cannot be removed): it records only
    while a test holds ``events``."""

    installed = False
    events: Events | None = None

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if cls.events is not None:
            cls.events.append((event, args))


@pytest.fixture
def audit() -> Iterator[Events]:
    """Every audit event (PEP 578) raised while the test runs."""
    if not _Recorder.installed:
        sys.addaudithook(_Recorder.hook)
        _Recorder.installed = True
    events: Events = []
    _Recorder.events = events
    try:
        yield events
    finally:
        _Recorder.events = None


def opened(events: Events) -> set[str]:
    paths = set()
    for event, args in events:
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            paths.add(os.path.realpath(os.fsdecode(args[0])))
    return paths


def executed(events: Events) -> list[str]:
    return [event for event, _ in events if event.startswith(EXECUTING)]


def hostile(canary: Path) -> dict[str, list[dict[str, Any]]]:
    """Payloads whose strings look like paths to open and commands to run."""
    shell = [f"$(touch {canary})", f"; touch {canary}", f"`touch {canary}`", f"| touch {canary}"]
    return {
        "claude": [
            {
                "session_id": ROOT,
                "hook_event_name": "SessionStart",
                "source": "startup",
                "transcript_path": "/etc/passwd",
                "cwd": "/etc",
            },
            {
                "session_id": ROOT,
                "hook_event_name": "PreToolUse",
                "tool_name": "Agent",
                "tool_use_id": shell[0],
                "tool_input": {
                    "subagent_type": shell[1],
                    "description": shell[2],
                    "prompt": "__import__('os').system('id')",
                },
            },
            {
                "session_id": ROOT,
                "hook_event_name": "SubagentStart",
                "agent_id": "../../etc/shadow",
                "agent_type": shell[3],
            },
            {
                "session_id": ROOT,
                "hook_event_name": "SubagentStop",
                "agent_id": "../../etc/shadow",
                "agent_transcript_path": "/etc/shadow",
            },
        ],
        "codex": [
            {
                "session_id": CODEX_ROOT,
                "hook_event_name": "SessionStart",
                "turn_id": "t",
                "transcript_path": "/root/.codex/sessions/rollout-x.jsonl",
            },
            {
                "session_id": CODEX_ROOT,
                "hook_event_name": "PostToolUse",
                "turn_id": "t",
                "tool_name": "spawn_agent",
                "tool_use_id": "call_1",
                "tool_response": '{"agent_id": "/etc/passwd"}',
            },
        ],
        "cursor": [
            {
                "conversation_id": "c1",
                "hook_event_name": "sessionStart",
                "workspace_roots": ["/etc", shell[0]],
                "transcript_path": "/etc/passwd",
            },
            {
                "conversation_id": "c1",
                "hook_event_name": "subagentStart",
                "subagent_id": shell[1],
                "workspace_roots": ["/etc", shell[0]],
            },
        ],
    }


def test_observing_hostile_payloads_opens_and_runs_nothing(tmp_path: Path, audit: Events) -> None:
    canary = tmp_path / "pwned"
    payloads = hostile(canary)
    with open_engine("memory://") as engine:
        for host in payloads:  # import each adapter first: importing compiles and execs
            adapter(host)
        engine.observe("claude", {"session_id": "warm", "hook_event_name": "SessionStart"})
        audit.clear()
        for host, items in payloads.items():
            for payload in items:
                engine.observe(host, payload)
        engine.forest(include_stopped=True)
    assert executed(audit) == []
    assert opened(audit) == set()
    assert not canary.exists()


def test_ingesting_a_recording_opens_only_the_recording_and_the_store(
    tmp_path: Path, audit: Events
) -> None:
    canary = tmp_path / "pwned"
    recording = tmp_path / "in" / "hooks.jsonl"
    recording.parent.mkdir()
    lines = [
        orjson.dumps({"host": host, "at": "2026-09-03T08:00:00Z", "payload": payload})
        for host, items in hostile(canary).items()
        for payload in items
    ]
    recording.write_bytes(b"\n".join(lines) + b"\n")
    store = f"sqlite:///{tmp_path / 'store' / 'journal.sqlite'}"
    runner = CliRunner()
    assert (
        runner.invoke(main, ["ingest", "--quiet", "--store", store, str(recording)]).exit_code == 0
    )
    audit.clear()
    result = runner.invoke(main, ["ingest", "--quiet", "--store", store, str(recording)])
    assert result.exit_code == 0, result.output
    assert executed(audit) == []
    allowed = {str(recording.resolve()), str((tmp_path / "store" / "journal.sqlite").resolve())}
    assert opened(audit) <= allowed
    assert not canary.exists()


def test_a_transcripts_path_like_ids_are_never_opened(tmp_path: Path, audit: Events) -> None:
    """Only the transcript the user names and its own subagents folder are read; an agent id
    or tool result that looks like a path is data."""
    session = tmp_path / "project" / f"{ROOT}.jsonl"
    session.parent.mkdir()
    rows = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": ROOT,
            "timestamp": "2026-09-03T08:00:01Z",
            "message": {"role": "user", "content": "hi"},
        },
        {
            "type": "assistant",
            "uuid": "u2",
            "parentUuid": "u1",
            "sessionId": ROOT,
            "timestamp": "2026-09-03T08:00:02Z",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Agent",
                        "input": {"subagent_type": "/etc/passwd"},
                    }
                ]
            },
        },
        {
            "type": "user",
            "uuid": "u3",
            "parentUuid": "u2",
            "sessionId": ROOT,
            "timestamp": "2026-09-03T08:00:03Z",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
            "toolUseResult": {"status": "completed", "agentId": "../../../../etc/passwd"},
        },
    ]
    session.write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    agents = session.with_suffix("") / "subagents"
    agents.mkdir(parents=True)
    (agents / "agent-a1.jsonl").write_bytes(
        orjson.dumps(
            {
                "type": "user",
                "uuid": "s1",
                "parentUuid": None,
                "isSidechain": True,
                "agentId": "/etc/shadow",
                "sessionId": ROOT,
                "timestamp": "2026-09-03T08:00:02Z",
                "message": {"content": "p"},
            }
        )
        + b"\n"
    )
    rollout = tmp_path / "rollout-2026-09-03T08-00-00-x.jsonl"
    rollout.write_bytes(
        orjson.dumps(
            {
                "timestamp": "2026-09-03T08:00:00Z",
                "type": "session_meta",
                "payload": {
                    "id": CODEX_ROOT,
                    "cwd": "/etc",
                    "source": "cli",
                    "parent_thread_id": "/etc/passwd",
                },
            }
        )
        + b"\n"
    )
    list(read_transcript(session))
    list(read_rollout(rollout))
    folder = str(session.with_suffix("").resolve())
    outside = opened(audit) - {str(session.resolve()), str(rollout.resolve())}
    assert all(path.startswith(folder + os.sep) for path in outside), outside
    assert executed(audit) == []


def test_a_raw_payload_over_the_bound_is_refused_before_it_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class NoParsing:
        JSONDecodeError = orjson.JSONDecodeError

        @staticmethod
        def loads(raw: bytes) -> Any:
            raise AssertionError("an oversized payload reached the JSON parser")

    raw = b'{"session_id": "' + b"x" * (40 * MIB) + b'"}'
    monkeypatch.setattr(base, "orjson", NoParsing)
    with pytest.raises(PayloadError, match="larger than"):
        parse_payload(raw)


def test_a_raw_payload_nested_ten_thousand_deep_is_refused_without_recursion() -> None:
    raw = b'{"session_id": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    with pytest.raises(PayloadError):
        parse_payload(raw)


def test_a_raw_payload_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(PayloadError, match="object"):
        parse_payload(b'["session_id"]')


def test_a_raw_payload_within_the_bounds_parses() -> None:
    assert parse_payload(b'{"session_id": "s", "hook_event_name": "Stop"}')["session_id"] == "s"


def test_a_payload_parsed_unchecked_is_still_refused_by_its_adapter() -> None:
    """The hook parses with ``check=False``: the adapter's own check must catch what the
    parser let through."""
    raw = b'{"session_id": "s", "hook_event_name": "Stop", "x": ' + b"[" * 100 + b"]" * 100 + b"}"
    payload = parse_payload(raw, check=False)
    with pytest.raises(PayloadError, match="deeper"):
        parse_payload(raw)
    with pytest.raises(PayloadError, match="deeper"):
        adapter("claude").observe(payload)


@pytest.mark.parametrize(
    ("host", "payload"),
    [
        ("claude", {"session_id": ROOT, "hook_event_name": "SubagentStart", "agent_id": "a1"}),
        ("codex", {"session_id": CODEX_ROOT, "hook_event_name": "SessionStart", "turn_id": "t"}),
        ("cursor", {"conversation_id": "c1", "hook_event_name": "sessionStart"}),
    ],
)
@pytest.mark.parametrize("shape", ["huge", "deep"])
def test_an_oversized_or_absurdly_deep_payload_is_refused_at_the_adapter(
    host: str, payload: dict[str, Any], shape: str
) -> None:
    bad = dict(payload)
    if shape == "huge":
        bad["agent_type"] = "x" * (40 * MIB)
    else:
        nested: Any = "bottom"
        for _ in range(10_000):
            nested = {"x": nested}
        bad["tool_input"] = nested
    with open_engine("memory://") as engine:
        with pytest.raises(PayloadError, match="larger than" if shape == "huge" else "deeper"):
            engine.observe(host, bad)
        assert engine.position() == 0


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_an_oversized_mapping_that_is_not_a_dict_is_refused_at_the_adapter(host: str) -> None:
    """The key is made from the mapping's items: those are what is checked."""
    fields = {"session_id": CODEX_ROOT, "conversation_id": "c1", "hook_event_name": "Stop"}
    huge = MappingProxyType({**fields, "turn_id": "t", "x": "x" * (MAX_PAYLOAD_BYTES + 1)})
    with pytest.raises(PayloadError, match="larger than"):
        adapter(host).observe(huge)


def test_json_past_the_bound_is_refused_even_when_its_strings_are_short() -> None:
    """The bound is on the JSON, numbers and punctuation included, not on the strings alone."""
    payload = {
        "session_id": ROOT,
        "hook_event_name": "Stop",
        "x": [10**17] * (MAX_PAYLOAD_BYTES // 19),
    }
    with pytest.raises(PayloadError, match="larger than"):
        adapter("claude").observe(payload)


def test_escaped_characters_count_towards_the_bound() -> None:
    """NUL is one character but six bytes of JSON (\\u0000): the bound is on the JSON."""
    payload = {"session_id": "s", "hook_event_name": "Stop", "x": "\x00" * (MAX_PAYLOAD_BYTES // 5)}
    with pytest.raises(PayloadError, match="larger than"):
        base.check_depth(payload)


def test_the_largest_accepted_payload_still_exports_and_imports(tmp_path: Path) -> None:
    """Every event an accepted payload makes fits the journal's 32 MiB line bound, even when
    it repeats the payload's longest string (a child's id is its subagent id too)."""
    child = "a" * (MAX_PAYLOAD_BYTES - 200)
    payload = {"session_id": ROOT, "hook_event_name": "SubagentStart", "agent_id": child}
    path = tmp_path / "journal.jsonl"
    with open_engine("memory://") as engine:
        engine.observe("claude", payload)
        with path.open("wb") as out:
            export_journal(engine, out)
    with open_engine("memory://") as imported:
        import_journal(imported, path)
        assert imported.lineage(child).parent == ROOT


def test_an_existing_data_dir_open_to_others_warns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    directory = tmp_path / "lineage-es"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    with pytest.warns(UserWarning, match="chmod 700"):
        prepare_sqlite_file(directory / "journal.sqlite")


def test_the_store_files_sqlite_adds_beside_the_journal_are_private(tmp_path: Path) -> None:
    """The write-ahead log and shared-memory files hold the same facts as the journal."""
    path = tmp_path / "store" / "journal.sqlite"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with open_engine(f"sqlite:///{path}") as engine:
            engine.observe("claude", {"session_id": ROOT, "hook_event_name": "SessionStart"})
            sidecars = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
            assert all(p.exists() for p in sidecars)
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in [path, *sidecars]}
    assert set(modes.values()) == {0o600}, modes
