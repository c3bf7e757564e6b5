"""The replay's inputs: each of the four recorded forms is recognised and read row by row, and
every unusable line is refused with its file and line."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from lineage_es.errors import InputError
from lineage_es.facts import LOGICAL_EPOCH, Observation
from lineage_es.hosts import claude_transcript
from lineage_es.replay import inputs
from lineage_es.replay.inputs import (
    BadRow,
    McpRow,
    ObservationRow,
    PayloadRow,
    detect_form,
    read_rows,
)
from tests.support import claude_transcripts as claude
from tests.support import codex_rollouts as codex

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}
PROMPT = {"session_id": ROOT, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}


def write_lines(path: Path, *rows: Any) -> Path:
    """A JSONL file; a ``str`` row is written as it is (to write broken lines)."""
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_of_hook_payloads_is_the_hooks_form(tmp_path: Path) -> None:
    assert detect_form(write_lines(tmp_path / "h.jsonl", START, PROMPT)) == "hooks"


def test_a_file_of_host_at_payload_records_is_the_recording_form(tmp_path: Path) -> None:
    record = {"host": "claude", "at": "2026-01-01T00:00:00Z", "payload": START}
    assert detect_form(write_lines(tmp_path / "r.jsonl", record)) == "recording"


def test_a_file_starting_with_an_mcp_record_is_the_recording_form(tmp_path: Path) -> None:
    record = {"host": "codex", "at": "2026-01-01T00:00:00Z", "mcp": {"tool": "t", "_meta": {}}}
    assert detect_form(write_lines(tmp_path / "r.jsonl", record)) == "recording"


@pytest.mark.parametrize(
    "first",
    [
        {"type": "permission-mode", "permissionMode": "auto", "sessionId": ROOT},
        {"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}},
        {"type": "summary", "summary": "s", "leafUuid": "u1"},
        {"type": "queue-operation", "operation": "enqueue", "sessionId": ROOT},
        {"type": "user", "uuid": "u1", "sessionId": ROOT, "message": {"content": "p"}},
    ],
)
def test_a_claude_session_transcript_is_recognised_by_its_first_row(
    tmp_path: Path, first: dict[str, Any]
) -> None:
    assert detect_form(write_lines(tmp_path / "s.jsonl", first)) == "claude-transcript"


@pytest.mark.parametrize(
    "first",
    [
        {"timestamp": "2026-01-04T11:59:02.952Z", "type": "session_meta", "payload": {"id": "t1"}},
        {"type": "session_meta", "payload": {"id": "t1", "source": "cli"}},
        {"timestamp": "2026-01-04T11:59:03Z", "type": "response_item", "payload": {}},
    ],
)
def test_a_codex_rollout_is_recognised_by_its_first_row(
    tmp_path: Path, first: dict[str, Any]
) -> None:
    assert detect_form(write_lines(tmp_path / "rollout.jsonl", first)) == "codex-rollout"


def test_detection_skips_leading_blank_lines(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "h.jsonl", "", "  ", START)
    assert detect_form(path) == "hooks"


def test_an_empty_recording_is_unusable(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "empty.jsonl", "")
    with pytest.raises(InputError, match="empty"):
        detect_form(path)


def test_bare_payloads_get_the_logical_clock_in_row_order(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "h.jsonl", START, PROMPT, "", PROMPT)
    rows = list(read_rows(path, host="claude"))
    assert [r.row for r in rows] == [1, 2, 4]
    assert all(isinstance(r, PayloadRow) for r in rows)
    assert [r.at for r in rows if isinstance(r, PayloadRow)] == [
        LOGICAL_EPOCH + timedelta(seconds=n) for n in (1, 2, 4)
    ]


def test_bare_payloads_take_the_host_given(tmp_path: Path) -> None:
    rows = list(read_rows(write_lines(tmp_path / "h.jsonl", START), host="claude"))
    assert isinstance(rows[0], PayloadRow)
    assert rows[0].host == "claude"
    assert rows[0].payload == START


def test_recorded_rows_keep_their_receipt_time(tmp_path: Path) -> None:
    record = {"host": "claude", "at": "2026-03-01T10:00:05Z", "payload": START}
    (row,) = read_rows(write_lines(tmp_path / "r.jsonl", record))
    assert isinstance(row, PayloadRow)
    assert row.at.isoformat() == "2026-03-01T10:00:05+00:00"


def test_a_recorded_mcp_call_is_an_mcp_row(tmp_path: Path) -> None:
    meta = {"threadId": "t2"}
    record = {"host": "codex", "at": "2026-03-01T10:00:05Z", "mcp": {"tool": "send", "_meta": meta}}
    (row,) = read_rows(write_lines(tmp_path / "r.jsonl", record))
    assert isinstance(row, McpRow)
    assert (row.host, row.tool, row.meta) == ("codex", "send", meta)


def test_a_claude_transcript_is_read_by_the_transcript_reader(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / f"{ROOT}.jsonl",
        {"type": "permission-mode", "permissionMode": "auto", "sessionId": ROOT},
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": ROOT,
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": "hello"},
        },
    )
    rows = list(read_rows(path))
    assert rows
    assert all(isinstance(r, ObservationRow) for r in rows)
    observed = [r.observation for r in rows if isinstance(r, ObservationRow) and r.observation]
    assert observed[0].requester == ROOT
    assert observed[0].host == "claude"


def test_a_codex_rollout_is_read_by_the_rollout_reader(tmp_path: Path) -> None:
    child, parent = "019f624b-cc95-7c50-b9fa-1db381270b74", "019f6249-055d-76d3-b381-cd9d3eb99189"
    meta = {
        "id": child,
        "session_id": parent,
        "thread_source": "subagent",
        "source": {"subagent": {"thread_spawn": {"parent_thread_id": parent, "depth": 1}}},
    }
    path = write_lines(
        tmp_path / f"rollout-2026-07-14T20-21-42-{child}.jsonl",
        {"timestamp": "2026-07-14T18:21:42.000Z", "type": "session_meta", "payload": meta},
    )
    (row,) = read_rows(path)
    assert isinstance(row, ObservationRow)
    assert row.row == 1
    assert row.observation is not None
    assert (row.observation.host, row.observation.requester) == ("codex", child)


def test_a_transcript_replayed_as_another_host_is_refused(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "s.jsonl", {"type": "summary", "summary": "s"})
    with pytest.raises(InputError, match="not host codex"):
        read_rows(path, host="codex")


def _error(path: Path, host: str | None = None) -> InputError:
    with pytest.raises(InputError) as caught:
        list(read_rows(path, host=host))
    return caught.value


def test_a_line_that_is_not_json_names_its_file_and_line(tmp_path: Path) -> None:
    error = _error(write_lines(tmp_path / "h.jsonl", START, '{"session_id": '), host="claude")
    assert (error.path, error.line) == (str(tmp_path / "h.jsonl"), 2)
    assert "not JSON" in str(error)


def test_a_line_holding_a_list_is_refused(tmp_path: Path) -> None:
    error = _error(write_lines(tmp_path / "h.jsonl", START, "[1, 2]"), host="claude")
    assert error.line == 2
    assert "not an object" in error.reason


def test_an_overlong_line_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 200)
    path = write_lines(tmp_path / "h.jsonl", START, "x" * 300)
    error = _error(path, host="claude")
    assert error.line == 2
    assert "longer than" in error.reason


def test_a_32_mib_line_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as out:
        out.write(json.dumps(START).encode() + b"\n")
        out.write(b'{"pad": "' + b"x" * (32 * 1024 * 1024) + b'"}\n')
    error = _error(path, host="claude")
    assert (error.line, "32 MiB" in error.reason) == (2, True)


def test_an_overlong_transcript_line_is_refused_before_the_reader_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 200)
    path = write_lines(tmp_path / "s.jsonl", {"type": "summary"}, {"type": "user", "x": "y" * 300})
    assert _error(path).line == 2


def test_a_recorded_row_without_a_time_is_refused(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "r.jsonl", {"host": "claude", "payload": START})
    error = _error(path)
    assert error.line == 1
    assert "'at'" in error.reason


def test_a_recorded_row_from_an_unknown_host_is_refused(tmp_path: Path) -> None:
    record = {"host": "vim", "at": "2026-03-01T10:00:05Z", "payload": START}
    error = _error(write_lines(tmp_path / "r.jsonl", record))
    assert error.line == 1
    assert "'host'" in error.reason


def test_a_recorded_row_with_payload_and_mcp_is_refused(tmp_path: Path) -> None:
    record = {"host": "codex", "at": "2026-03-01T10:00:05Z", "payload": {}, "mcp": {}}
    assert "exactly one" in _error(write_lines(tmp_path / "r.jsonl", record)).reason


def test_a_recorded_mcp_call_without_meta_is_refused(tmp_path: Path) -> None:
    record = {"host": "codex", "at": "2026-03-01T10:00:05Z", "mcp": {"tool": "t"}}
    assert "_meta" in _error(write_lines(tmp_path / "r.jsonl", record)).reason


def test_a_recorded_row_from_another_host_than_given_is_refused(tmp_path: Path) -> None:
    record = {"host": "claude", "at": "2026-03-01T10:00:05Z", "payload": START}
    error = _error(write_lines(tmp_path / "r.jsonl", record), host="cursor")
    assert (error.line, "host given is cursor" in error.reason) == (1, True)


def test_a_payload_no_host_recognises_names_its_line(tmp_path: Path) -> None:
    error = _error(write_lines(tmp_path / "h.jsonl", START, {"hello": "world"}))
    assert error.line == 2
    assert "no known host" in error.reason


def test_an_unknown_host_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown host 'vim'"):
        read_rows(write_lines(tmp_path / "h.jsonl", START), host="vim")


# -- the host given, and the host a payload's own fields name -----------------------------------

CURSOR_START = {
    "conversation_id": "78d9aebd-5573-4e6b-b018-832b56991975",
    "hook_event_name": "sessionStart",
    "cursor_version": "3.9.16",
    "workspace_roots": ["/w"],
}
CLAUDE_TRANSCRIPT = f"/home/u/.claude/projects/-w/{ROOT}.jsonl"
CODEX_ROOT = "019f9b20-1d3c-7e52-a7b8-c9d0e1f2a3b4"


def record(host: str, **body: Any) -> dict[str, Any]:
    return {"host": host, "at": "2026-09-03T09:30:00Z", **body}


@pytest.mark.parametrize("given", ["claude", "codex"])
def test_a_bare_payload_from_another_host_than_given_is_refused_with_its_line(
    tmp_path: Path, given: str
) -> None:
    error = _error(write_lines(tmp_path / "h.jsonl", CURSOR_START), host=given)
    assert error.line == 1
    assert f"the payload is from cursor, not {given}" in error.reason
    assert "cursor_version" in error.reason


def test_a_claude_payload_replayed_as_codex_is_refused(tmp_path: Path) -> None:
    payload = START | {"transcript_path": CLAUDE_TRANSCRIPT}
    error = _error(write_lines(tmp_path / "h.jsonl", payload), host="codex")
    assert "the payload is from claude, not codex" in error.reason


def test_a_payload_whose_host_cannot_be_told_apart_takes_the_host_given(tmp_path: Path) -> None:
    (row,) = read_rows(write_lines(tmp_path / "h.jsonl", START), host="codex")
    assert isinstance(row, PayloadRow) and row.host == "codex"


def test_a_payload_with_the_given_hosts_own_fields_too_takes_the_host_given(
    tmp_path: Path,
) -> None:
    payload = CURSOR_START | {"tool_use_id": "call_abc"}  # an OpenAI-style id, as Codex's
    (row,) = read_rows(write_lines(tmp_path / "h.jsonl", payload), host="cursor")
    assert isinstance(row, PayloadRow) and row.host == "cursor"


def test_a_recorded_payload_from_another_host_than_its_row_names_is_refused(
    tmp_path: Path,
) -> None:
    codex_prompt = {"session_id": CODEX_ROOT, "turn_id": "t1", "hook_event_name": "Stop"}
    path = write_lines(tmp_path / "r.jsonl", record("cursor", payload=codex_prompt))
    error = _error(path)
    assert error.line == 1
    assert "the payload is from codex, not cursor (the row's host)" in error.reason


def test_a_recorded_mcp_call_whose_meta_names_no_thread_is_refused(tmp_path: Path) -> None:
    rows = [record("codex", payload=START), record("codex", mcp={"tool": "x", "_meta": {}})]
    error = _error(write_lines(tmp_path / "r.jsonl", *rows))
    assert error.line == 2
    assert "names no thread" in error.reason
    assert error.reason.endswith(
        "'mcp._meta' names no thread: missing required field 'threadId' (or "
        "x-codex-turn-metadata's 'thread_id' or 'session_id')"
    )


def test_a_recorded_claude_mcp_call_without_its_tool_use_id_is_refused(tmp_path: Path) -> None:
    mcp = {"tool": "x", "_meta": {"threadId": CODEX_ROOT}}
    error = _error(write_lines(tmp_path / "r.jsonl", record("claude", mcp=mcp)))
    assert error.line == 1
    assert "missing required field 'claudecode/toolUseId'" in error.reason


def test_a_recorded_cursor_mcp_call_is_read_with_its_arguments(tmp_path: Path) -> None:
    mcp = {"tool": "provenance", "arguments": {"to": "c1"}, "_meta": {"progressToken": 1}}
    [row] = read_rows(write_lines(tmp_path / "r.jsonl", record("cursor", mcp=mcp)))
    assert isinstance(row, McpRow)
    assert (row.tool, row.arguments) == ("provenance", {"to": "c1"})


def test_recorded_mcp_arguments_that_are_not_an_object_are_refused(tmp_path: Path) -> None:
    mcp = {"tool": "x", "arguments": [1], "_meta": {}}
    error = _error(write_lines(tmp_path / "r.jsonl", record("cursor", mcp=mcp)))
    assert "'mcp.arguments' must be an object" in error.reason


def test_a_recorded_mcp_call_with_mistyped_meta_is_refused_with_its_line(tmp_path: Path) -> None:
    mcp = {"tool": "x", "_meta": {"threadId": 5}}
    error = _error(write_lines(tmp_path / "r.jsonl", record("codex", mcp=mcp)))
    assert (error.line, "field 'threadId' must be a string" in error.reason) == (1, True)


# -- what an out-of-place or incomplete line is told ---------------------------------------------


def test_a_bare_payload_in_a_recording_is_said_to_be_out_of_its_form(tmp_path: Path) -> None:
    error = _error(write_lines(tmp_path / "r.jsonl", record("claude", payload=START), PROMPT))
    assert error.line == 2
    assert "not in the recording form ({host, at, payload} or {host, at, mcp})" in error.reason
    assert "bare hook payload" in error.reason


def test_a_recorded_row_among_bare_payloads_is_said_to_be_out_of_its_form(
    tmp_path: Path,
) -> None:
    error = _error(write_lines(tmp_path / "h.jsonl", START, record("claude", payload=PROMPT)))
    assert error.line == 2
    assert "in the recording form" in error.reason
    assert "capture of bare hook payloads" in error.reason


def test_a_claude_payload_without_session_id_names_the_missing_field(tmp_path: Path) -> None:
    lacking = {"transcript_path": CLAUDE_TRANSCRIPT, "hook_event_name": "Stop"}
    error = _error(write_lines(tmp_path / "h.jsonl", START, PROMPT, lacking))
    assert error.line == 3
    assert error.reason == "claude: missing required field 'session_id'"


def test_a_payload_without_session_id_among_codex_payloads_is_taken_for_codex(
    tmp_path: Path,
) -> None:
    codex_start = {"session_id": CODEX_ROOT, "hook_event_name": "SessionStart"}
    error = _error(write_lines(tmp_path / "h.jsonl", codex_start, {"hook_event_name": "Stop"}))
    assert error.reason == "codex: missing required field 'session_id'"


def test_a_cursor_payload_without_conversation_id_names_the_missing_field(
    tmp_path: Path,
) -> None:
    lacking = {"hook_event_name": "stop", "workspace_roots": ["/w"]}
    error = _error(write_lines(tmp_path / "h.jsonl", lacking))
    assert error.reason == "cursor: missing required field 'conversation_id'"


# -- read leniently (``lineage ingest``): a bad line is a BadRow, the lines after it are read ----


def lenient_read(path: Path) -> tuple[list[Observation], list[str]]:
    """A lenient read's observations (what ingest journals) and its bad lines (``file:line``)."""
    observed: list[Observation] = []
    bad: list[str] = []
    for row in read_rows(path, lenient=True):
        if isinstance(row, BadRow):
            bad.append(f"{row.error.path}:{row.row}")
        elif isinstance(row, ObservationRow) and row.observation is not None:
            observed.append(row.observation)
    return observed, bad


def inserted(path: Path, at: int, line: bytes) -> Path:
    """``path`` with ``line`` put in before its line ``at``."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[: at - 1], line + b"\n", *lines[at - 1 :]]))
    return path


def rollout(folder: Path, *rows: Any) -> Path:
    folder.mkdir()
    return codex.write(folder, *rows)


def claude_session(folder: Path) -> Path:
    """A Claude session that spawns a child, whose agent file runs beside it."""
    rows = claude.agent_rows(claude.CHILD, 3, 4, 7)
    claude.write(claude.subagents(folder) / f"agent-{claude.CHILD}.jsonl", rows)
    return claude.spawn_session(folder)


def agent_file_of(session: Path) -> Path:
    return claude.subagents(session.parent) / f"agent-{claude.CHILD}.jsonl"


@pytest.mark.parametrize("form", ["hooks", "recording"])
def test_read_leniently_an_overlong_line_is_a_bad_row_and_the_lines_after_it_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 200)
    rows = [START, PROMPT] if form == "hooks" else [record("claude", payload=START)] * 2
    path = write_lines(tmp_path / "h.jsonl", rows[0], "x" * 300, rows[1])
    read = list(read_rows(path, host="claude", lenient=True))
    assert [(type(r).__name__, r.row) for r in read] == [
        ("PayloadRow", 1),
        ("BadRow", 2),
        ("PayloadRow", 3),
    ]
    assert isinstance(read[1], BadRow)
    assert read[1].error.reason == "line is longer than 200 bytes; refused unread"


def test_read_leniently_a_capture_whose_first_line_is_overlong_is_read_from_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "MAX_LINE_BYTES", 200)
    path = write_lines(tmp_path / "h.jsonl", "x" * 300, START)
    assert [(type(r).__name__, r.row) for r in read_rows(path, lenient=True)] == [
        ("BadRow", 1),
        ("PayloadRow", 2),
    ]


def test_read_leniently_a_transcripts_bad_line_is_a_bad_row_in_its_place(tmp_path: Path) -> None:
    path = inserted(claude.spawn_session(tmp_path), 3, b"{not json")
    read = list(read_rows(path, lenient=True))
    assert list(dict.fromkeys((type(r).__name__, r.row) for r in read)) == [
        ("ObservationRow", 1),
        ("ObservationRow", 2),
        ("BadRow", 3),
        ("ObservationRow", 4),
        ("ObservationRow", 5),
    ]
    (bad,) = [r for r in read if isinstance(r, BadRow)]
    assert "line is not JSON" in bad.error.reason


ROW_START = f'{{"type": "user", "sessionId": "{claude.SESSION}"'
BAD_LINES = {
    "not JSON": f'{ROW_START}, "mess'.encode(),
    "not an object": b"[1, 2]",
    "nested too deep": f'{ROW_START}, "x": {"[" * 300}{"]" * 300}}}'.encode(),
}


@pytest.mark.parametrize("line", BAD_LINES.values(), ids=BAD_LINES.keys())
@pytest.mark.parametrize("at", [1, 3], ids=["first", "between-spawn-and-result"])
def test_read_leniently_a_transcript_reads_past_a_bad_line_as_if_it_were_absent(
    tmp_path: Path, line: bytes, at: int
) -> None:
    clean = claude_session(tmp_path / "clean")
    path = inserted(claude_session(tmp_path / "bad"), at, line)
    assert lenient_read(path) == (lenient_read(clean)[0], [f"{path}:{at}"])


def test_read_leniently_a_subagent_files_bad_line_names_that_file_and_its_rows_after_it_are_read(
    tmp_path: Path,
) -> None:
    clean = claude_session(tmp_path / "clean")
    path = claude_session(tmp_path / "bad")
    inserted(agent_file_of(path), 2, b"oops")
    assert lenient_read(path) == (lenient_read(clean)[0], [f"{agent_file_of(path)}:2"])


BAD_SIDECARS = {  # what the sidecar holds, and the start of why it is refused
    "not JSON": (b'{"agentType": "Explore", ', "sidecar is not JSON ("),
    "not an object": (b"[1, 2]", "sidecar is not a JSON object"),
}


@pytest.mark.parametrize("sidecar", BAD_SIDECARS.values(), ids=BAD_SIDECARS.keys())
@pytest.mark.parametrize("read_from", ["session", "lone agent file"])
def test_read_leniently_a_bad_sidecar_is_a_bad_row_naming_it_and_its_agent_is_read_without_it(
    tmp_path: Path, sidecar: tuple[bytes, str], read_from: str
) -> None:
    """Its agent is placed as if it had no sidecar; read strictly, it is still refused."""
    clean = claude_session(tmp_path / "clean")
    path = claude_session(tmp_path / "bad")
    meta = agent_file_of(path).with_name(f"agent-{claude.CHILD}.meta.json")
    meta.write_bytes(sidecar[0])
    if read_from != "session":
        clean, path = agent_file_of(clean), agent_file_of(path)
    read = list(read_rows(path, lenient=True))
    (bad,) = [r.error for r in read if isinstance(r, BadRow)]
    assert (bad.path, bad.line) == (str(meta), None) and bad.reason.startswith(sidecar[1])
    assert lenient_read(path)[0] == lenient_read(clean)[0]
    assert claude.CHILD in {o.requester for o in lenient_read(path)[0]}
    with pytest.raises(InputError, match=r"\.meta\.json: sidecar is not"):
        list(read_rows(path))


def test_read_leniently_a_lone_agent_file_reads_past_a_bad_line_as_if_it_were_absent(
    tmp_path: Path,
) -> None:
    rows = claude.agent_rows(claude.CHILD, 3, 4, 7)
    name = f"agent-{claude.CHILD}.jsonl"
    clean = claude.write(tmp_path / "clean" / name, rows)
    path = inserted(claude.write(tmp_path / "bad" / name, rows), 2, b"oops")
    assert lenient_read(path) == (lenient_read(clean)[0], [f"{path}:2"])


@pytest.mark.parametrize("bad_file", ["session", "agent"])
def test_read_leniently_a_first_line_that_is_bad_hides_no_agent_file_beside_the_session(
    tmp_path: Path, bad_file: str
) -> None:
    """Agent files beside the session file (2.0.24 to 2.1.1) are found by the session id the
    first rows name, in the session's file and in theirs."""
    folders = {"clean": tmp_path / "clean", "bad": tmp_path / "bad"}
    for folder in folders.values():
        claude.write(folder / f"agent-{claude.CHILD}.jsonl", claude.agent_rows(claude.CHILD, 3))
    clean, path = (claude.spawn_session(folder) for folder in folders.values())
    damaged = path if bad_file == "session" else path.parent / f"agent-{claude.CHILD}.jsonl"
    inserted(damaged, 1, b"{not json")
    observed, bad = lenient_read(path)
    assert (observed, bad) == (lenient_read(clean)[0], [f"{damaged}:1"])
    assert claude.CHILD in {o.requester for o in observed}


def test_read_leniently_an_overlong_transcript_line_is_passed_over_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(claude_transcript, "MAX_LINE_BYTES", 400)
    clean = claude_session(tmp_path / "clean")
    path = inserted(claude_session(tmp_path / "bad"), 2, b'{"pad": "' + b"x" * 500 + b'"}')
    observed, bad = lenient_read(path)
    assert (observed, bad) == (lenient_read(clean)[0], [f"{path}:2"])


def test_read_leniently_a_rollout_row_the_reader_refuses_is_a_bad_row(tmp_path: Path) -> None:
    mistyped = codex.call("spawn_agent", agent_type=5)
    path = codex.write(tmp_path, codex.meta(codex.P), mistyped, codex.event("task_started"))
    read = list(read_rows(path, lenient=True))
    assert [(type(r).__name__, r.row) for r in read] == [
        ("ObservationRow", 1),
        ("BadRow", 2),
        ("ObservationRow", 3),
    ]
    assert isinstance(read[1], BadRow)
    assert read[1].error.reason == "field 'arguments.agent_type' must be a string"


def test_read_leniently_a_rollout_reads_past_a_refused_row_as_if_it_were_absent(
    tmp_path: Path,
) -> None:
    """The refused call's id is no spawn call of the thread: its result names no child."""
    result = codex.item("function_call_output", call_id="call_1", output={"agent_id": codex.C})
    rows = [codex.meta(codex.P), result, codex.event("task_started")]
    clean = rollout(tmp_path / "clean", *rows)
    mistyped = codex.call("spawn_agent", agent_type=5)
    path = rollout(tmp_path / "bad", rows[0], mistyped, *rows[1:])
    assert lenient_read(path) == (lenient_read(clean)[0], [f"{path}:2"])


def test_read_leniently_a_rollout_header_the_reader_refuses_opens_no_thread(
    tmp_path: Path,
) -> None:
    spawn = {"parent_thread_id": codex.P, "depth": 1, "agent_role": 5}
    mistyped = codex.meta(codex.C, source={"subagent": {"thread_spawn": spawn}})
    rows = [codex.meta(codex.P), codex.event("task_started")]
    clean = rollout(tmp_path / "clean", *rows)
    path = rollout(tmp_path / "bad", rows[0], mistyped, rows[1])
    assert lenient_read(path) == (lenient_read(clean)[0], [f"{path}:2"])
