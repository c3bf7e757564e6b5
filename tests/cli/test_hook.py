"""`lineage hook`: journal one payload from stdin, print only what the host accepts, never fail."""

from __future__ import annotations

import io
import os
import sqlite3
import stat
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from lineage_es import hook
from lineage_es.cli.main import main
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.hook_config import TIMEOUT_SECONDS
from lineage_es.hosts import base
from lineage_es.hosts.base import MAX_PAYLOAD_BYTES
from lineage_es.ingest import ingest
from lineage_es.replay.inputs import PayloadRow, read_rows

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}
CURSOR_START = {
    "conversation_id": "c0a1",
    "hook_event_name": "sessionStart",
    "cursor_version": "3.9.16",
    "workspace_roots": ["/w"],
}


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private state dir for the hook's error log (and a data dir of the test's own)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "state" / "lineage"


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.sqlite'}"


def run(host: str, payload: object, store: str, **kwargs: object) -> hook.HookOutcome:
    raw = payload if isinstance(payload, bytes) else orjson.dumps(payload)
    return hook.run_hook(host, raw, store=store, **kwargs)  # type: ignore[arg-type]


def log_text(data_home: Path) -> str:
    path = data_home / "hook.log"
    return path.read_text() if path.exists() else ""


def nested_raw(levels: int) -> bytes:
    """A Claude payload whose tool input nests ``levels`` objects deep, as raw JSON: past 255
    levels orjson cannot encode it, so it is written out by hand."""
    head = orjson.dumps({**START, "hook_event_name": "PreToolUse"})[:-1]
    return head + b',"tool_input":' + b'{"x":' * levels + b"1" + b"}" * levels + b"}"


def too_large_as_json() -> bytes:
    """A payload within the hook's read bound that its adapter refuses as too large: each
    ``1e2`` (3 bytes) is encoded as ``100.0`` (5 bytes)."""
    numbers = b",".join([b"1e2"] * (MAX_PAYLOAD_BYTES // 5))
    head = orjson.dumps({**START, "hook_event_name": "PreToolUse"})[:-1]
    return head + b',"tool_input":{"n":[' + numbers + b"]}}"


#: Payloads the Claude adapter refuses, and what the refusal says.
REFUSED = {
    "missing-field": (orjson.dumps({"hook_event_name": "SessionStart"}), "session_id"),
    "nested-past-64": (nested_raw(65), "nests deeper than 64 levels"),
    "nested-past-255": (nested_raw(300), "nests deeper than 64 levels"),
    "too-large-as-json": (too_large_as_json(), "payload is larger than"),
    "too-large-to-read": (b'{"session_id": "' + b"x" * MAX_PAYLOAD_BYTES + b'"}', "larger than"),
}


def test_a_payload_is_journaled_and_its_lineage_returned(store: str, data_home: Path) -> None:
    outcome = run("claude", START, store)
    assert outcome.error is None and outcome.lineage is not None
    with open_engine(store) as engine:
        assert engine.lineage(ROOT).depth == 0


@pytest.mark.parametrize("host", ["claude", "codex", "cursor"])
def test_nothing_is_printed_for_any_host(host: str, store: str, data_home: Path) -> None:
    payload = CURSOR_START if host == "cursor" else {**START, "turn_id": "t1"}
    assert run(host, payload, store).stdout == b""


def test_a_payload_that_is_not_json_is_logged_not_raised(store: str, data_home: Path) -> None:
    outcome = run("claude", b"{not json", store)
    assert outcome.stdout == b"" and outcome.error is not None
    text = log_text(data_home)
    assert "payload is not JSON" in text and "line 1 column 2" in text
    assert "Traceback" not in text


def test_an_empty_stdin_is_logged_as_no_payload(store: str, data_home: Path) -> None:
    outcome = run("claude", b" \n", store)
    assert outcome.error is not None and "no payload on stdin" in log_text(data_home)


def test_a_payload_the_adapter_refuses_is_logged_without_a_traceback(
    store: str, data_home: Path
) -> None:
    run("claude", {"hook_event_name": "SessionStart"}, store)
    text = log_text(data_home)
    assert "session_id" in text and "Traceback" not in text


def test_an_unknown_host_is_logged(store: str, data_home: Path) -> None:
    outcome = run("windsurf", START, store)
    assert outcome.error is not None and "windsurf" in log_text(data_home)


def test_a_store_that_cannot_open_is_logged(tmp_path: Path, data_home: Path) -> None:
    (tmp_path / "file").write_text("")
    outcome = run("claude", START, f"sqlite:///{tmp_path / 'file' / 'journal.sqlite'}")
    assert outcome.error is not None and "cannot create the store" in log_text(data_home)


def test_the_hook_waits_for_a_locked_store_less_than_a_host_waits_for_the_hook() -> None:
    assert hook.LOCK_TIMEOUT < TIMEOUT_SECONDS


def test_a_store_held_locked_by_another_process_is_logged_not_waited_for(
    store: str, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_engine(store):
        pass  # the store exists, with its tables
    monkeypatch.setattr(hook, "LOCK_TIMEOUT", 0.2)
    holder = sqlite3.connect(store.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        outcome = run("claude", START, store)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert outcome.error is not None and "locked" in log_text(data_home)
    assert outcome.stdout == hook.QUIET_OUTPUT


def test_a_payload_past_the_adapters_bound_is_refused_with_the_bound_in_the_log(
    store: str, data_home: Path
) -> None:
    outcome = run("claude", b'{"session_id": "' + b"x" * MAX_PAYLOAD_BYTES + b'"}', store)
    assert outcome.error is not None and "larger than" in outcome.error
    assert "payload is larger than 8388608 bytes (8 MiB)" in log_text(data_home)


def test_a_refused_payload_is_logged_with_the_event_it_was(store: str, data_home: Path) -> None:
    big = b"x" * MAX_PAYLOAD_BYTES
    raw = (
        b'{"session_id": "s-1", "hook_event_name": "PostToolUse", "tool_name": "Agent", '
        b'"tool_use_id": "toolu_9", "tool_response": "' + big + b'"}'
    )
    run("claude", raw, store)
    line = log_text(data_home).splitlines()[0]
    assert line.endswith(
        "[hook_event_name=PostToolUse session_id=s-1 tool_name=Agent tool_use_id=toolu_9]"
    )


def test_a_refused_payload_is_logged_with_the_fields_its_host_names(
    store: str, data_home: Path
) -> None:
    big = b"x" * MAX_PAYLOAD_BYTES
    raw = (
        b'{"conversation_id": "c-1", "hook_event_name": "subagentStop", "subagent_id": "a-2", '
        b'"agent_id": "not-cursors", "session_id": "c-1", "text": "' + big + b'"}'
    )
    run("cursor", raw, store)
    run("nonesuch", raw, store)
    cursor, unknown = log_text(data_home).splitlines()[:2]
    assert cursor.endswith(
        "[hook_event_name=subagentStop session_id=c-1 conversation_id=c-1 subagent_id=a-2]"
    )
    assert unknown.endswith(
        "[hook_event_name=subagentStop session_id=c-1 conversation_id=c-1 subagent_id=a-2 "
        "agent_id=not-cursors]"
    )


def test_a_refusal_names_its_host_once(store: str, data_home: Path) -> None:
    run("claude", {"hook_event_name": "SessionStart"}, store)
    assert "claude: PayloadError: missing required field 'session_id'" in log_text(data_home)


def test_a_payload_nested_too_deep_is_refused_by_the_hook(store: str, data_home: Path) -> None:
    """The hook leaves the depth check to the adapter: it must still happen."""
    nested: Any = "bottom"
    for _ in range(100):
        nested = {"x": nested}
    outcome = run("claude", {**START, "hook_event_name": "PreToolUse", "tool_input": nested}, store)
    assert outcome.error is not None and "nests deeper than 64 levels" in log_text(data_home)


def test_the_hook_checks_and_encodes_a_payload_once(
    store: str, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks: list[object] = []
    check = base._encode_within_bounds

    def counted(value: Any, limit: int, max_bytes: int) -> bytes | None:
        checks.append(value)
        return check(value, limit, max_bytes)

    def encoded_again(*args: object) -> str:
        raise AssertionError("the key was encoded apart from the check")

    monkeypatch.setattr(base, "_encode_within_bounds", counted)
    monkeypatch.setattr(base, "payload_key", encoded_again)
    assert run("claude", START, store).error is None
    assert checks == [START]


def test_read_payload_stops_one_byte_past_the_limit() -> None:
    assert len(hook.read_payload(io.BytesIO(b"x" * 100), limit=10)) == 11


def test_read_payload_drains_the_rest_of_a_payload_too_long() -> None:
    stream = io.BytesIO(b"x" * (5 << 20))
    hook.read_payload(stream, limit=10)
    assert stream.read() == b""


def test_read_payload_reads_no_further_than_the_adapters_bound() -> None:
    """A longer payload is refused unparsed: holding more of it would be wasted."""
    stream = io.BytesIO(b"x" * (MAX_PAYLOAD_BYTES + 100))
    assert len(hook.read_payload(stream)) == MAX_PAYLOAD_BYTES + 1


def test_a_cursor_payload_sent_to_the_claude_hook_is_taken_as_cursor(
    store: str, data_home: Path
) -> None:
    """Cursor runs Claude Code's hook settings as third-party hooks, with its own payloads."""
    outcome = run("claude", CURSOR_START, store)
    assert outcome.host == "cursor" and outcome.lineage is not None


def test_record_appends_the_recording_form_replay_reads(
    tmp_path: Path, store: str, data_home: Path
) -> None:
    recording = tmp_path / "capture.jsonl"
    at = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)
    run("claude", START, store, record=recording, at=at)
    run("claude", {**START, "hook_event_name": "Stop"}, store, record=recording, at=at)
    rows = list(read_rows(recording))
    assert len(rows) == 2 and isinstance(rows[0], PayloadRow)
    assert (rows[0].host, rows[0].at, rows[0].payload) == ("claude", at, START)


@pytest.mark.parametrize("refused", REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_payload_is_not_recorded(
    refused: tuple[bytes, str], tmp_path: Path, store: str, data_home: Path
) -> None:
    raw, reason = refused
    recording = tmp_path / "capture.jsonl"
    outcome = run("claude", raw, store, record=recording)
    assert outcome.error is not None and reason in outcome.error
    assert not recording.exists()


def test_a_payload_nested_past_255_levels_is_refused_without_a_traceback(
    tmp_path: Path, store: str, data_home: Path
) -> None:
    """Past 255 levels orjson cannot encode a payload: the adapter refuses it before the
    recording would try."""
    outcome = run("claude", nested_raw(300), store, record=tmp_path / "capture.jsonl")
    assert outcome.error == "PayloadError: payload nests deeper than 64 levels"
    text = log_text(data_home)
    assert "nests deeper than 64 levels" in text and "Traceback" not in text


def test_the_module_entry_point_refuses_a_payload_nested_past_255_levels_cleanly(
    tmp_path: Path, store: str
) -> None:
    """What a host runs: exit status 0, nothing on stdout, the reason alone on stderr."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "LINEAGE_STORE": store}
    recording = tmp_path / "capture.jsonl"
    command = ["claude", "--record", str(recording), "--print-lineage"]
    done = subprocess.run(
        [sys.executable, "-m", "lineage_es.hook", *command],
        input=nested_raw(300),
        capture_output=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr == b"lineage hook: PayloadError: payload nests deeper than 64 levels\n"
    assert not recording.exists()


@pytest.mark.parametrize("answer", [True, False], ids=["answered", "unanswered"])
def test_an_accepted_payload_is_recorded_before_it_is_journaled(
    answer: bool, tmp_path: Path, store: str, data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash while journaling still leaves the payload in the recording."""

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("crashed while journaling")

    monkeypatch.setattr(Engine, "observe", crash)
    recording = tmp_path / "capture.jsonl"
    outcome = run("claude", START, store, record=recording, answer=answer)
    assert outcome.error == "RuntimeError: crashed while journaling"
    (row,) = read_rows(recording)
    assert isinstance(row, PayloadRow) and row.payload == START


def test_a_recording_made_by_the_hook_ingests_cleanly(
    tmp_path: Path, store: str, data_home: Path
) -> None:
    """Refused payloads between accepted ones leave the recording whole for ingest."""
    recording = tmp_path / "capture.jsonl"
    run("claude", START, store, record=recording)
    for raw, _ in REFUSED.values():
        run("claude", raw, store, record=recording)
    run("claude", CURSOR_START, store, record=recording)
    run("claude", {**START, "hook_event_name": "Stop"}, store, record=recording)
    with open_engine("memory://") as engine:
        report = ingest(engine, [recording])
        assert (report.failures, report.rows) == ([], 3)
        assert engine.lineage(ROOT).depth == 0
        assert engine.lineage("c0a1", host="cursor").depth == 0


def test_record_is_private_to_its_owner(tmp_path: Path, store: str, data_home: Path) -> None:
    recording = tmp_path / "capture.jsonl"
    run("claude", START, store, record=recording)
    assert stat.S_IMODE(recording.stat().st_mode) == 0o600


def test_a_recording_that_cannot_be_written_does_not_stop_the_journal(
    tmp_path: Path, store: str, data_home: Path
) -> None:
    (tmp_path / "file").write_text("")
    outcome = run("claude", START, store, record=tmp_path / "file" / "capture.jsonl")
    assert outcome.lineage is not None and "cannot record" in log_text(data_home)


def test_the_log_is_rotated_past_its_size(data_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook, "LOG_MAX_BYTES", 10)
    hook.log_error("claude", "first failure, long enough to pass the limit")
    hook.log_error("claude", "second")
    assert "first" in (data_home / "hook.log.1").read_text()
    assert "first" not in log_text(data_home)


def test_parse_args_ignores_the_marker_comment_and_unknown_options() -> None:
    args = hook.parse_args(["cursor", "--future", "--store", "memory://", "#", "added", "by"])
    assert (args.host, args.store) == ("cursor", "memory://")


def test_print_lineage_writes_the_lineage_json_on_stderr(store: str, data_home: Path) -> None:
    stdout, stderr = io.BytesIO(), io.BytesIO()
    hook.emit(run("claude", START, store), True, stdout, stderr)
    assert stdout.getvalue() == b"" and orjson.loads(stderr.getvalue())["conversation"] == ROOT


def test_lineage_hook_command_reads_stdin_and_exits_0(store: str, data_home: Path) -> None:
    result = CliRunner().invoke(
        main, ["hook", "claude", "--store", store], input=orjson.dumps(START)
    )
    assert result.exit_code == 0 and result.stdout == ""
    with open_engine(store) as engine:
        assert engine.lineage(ROOT).conversation == ROOT


def test_lineage_hook_command_exits_0_without_a_host(data_home: Path) -> None:
    result = CliRunner().invoke(main, ["hook"], input=b"{}")
    assert result.exit_code == 0


def test_the_module_entry_point_exits_0_on_garbage(tmp_path: Path, store: str) -> None:
    """What a host runs: a separate process, stdin in, nothing out, status 0."""
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "LINEAGE_STORE": store}
    done = subprocess.run(
        [sys.executable, "-m", "lineage_es.hook", "claude"],
        input=b"\x00garbage",
        capture_output=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert (tmp_path / "state" / "lineage" / "hook.log").exists()


def test_the_module_entry_point_journals_into_lineage_store(tmp_path: Path, store: str) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "LINEAGE_STORE": store}
    done = subprocess.run(
        [sys.executable, "-m", "lineage_es.hook", "claude", "--print-lineage"],
        input=orjson.dumps(START),
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0 and orjson.loads(done.stderr)["root"] == ROOT
