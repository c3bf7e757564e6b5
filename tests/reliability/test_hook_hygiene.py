"""What the hook writes for a person to read is plain text whatever a payload holds, and a
store that keeps nothing past the process is refused, not silently used."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from lineage_es import hook

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}

#: Erase the screen and the scrollback, move the cursor home: what a crafted id would do to
#: the terminal of whoever runs ``cat hook.log``.
CLEAR_SCREEN = "\x1b[2J\x1b[3J\x1b[H"


@pytest.fixture
def data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    return tmp_path / "state" / "lineage"


def log_text(data_home: Path) -> str:
    return (data_home / "hook.log").read_text(encoding="utf-8")


def test_a_control_sequence_in_a_payloads_id_is_escaped_in_the_log(
    tmp_path: Path, data_home: Path
) -> None:
    # Raw control bytes make the payload bad JSON: its id reaches the log line's context.
    raw = b'{"session_id": "' + CLEAR_SCREEN.encode() + b'", "hook_event_name": "SessionStart"}'
    outcome = hook.run_hook("claude", raw, store=f"sqlite:///{tmp_path / 'j.sqlite'}")
    text = log_text(data_home)
    assert outcome.error is not None and "\x1b" not in text
    assert "session_id=\\x1b[2J\\x1b[3J\\x1b[H" in text


def test_a_reason_cannot_forge_a_log_line_of_its_own(data_home: Path) -> None:
    hook.log_error("claude", "bad id\n2026-01-01T00:00:00+00:00 claude: all is well\r")
    lines = log_text(data_home).splitlines()
    assert len(lines) == 1 and lines[0].endswith(
        "bad id\\n2026-01-01T00:00:00+00:00 claude: all is well\\r"
    )


def test_a_traceback_keeps_its_lines_with_their_control_characters_escaped(
    data_home: Path,
) -> None:
    hook.log_error("claude", "failed", "Traceback:\n  raise X('\x07\x1b]0;owned\x07')")
    lines = log_text(data_home).splitlines()
    assert lines[1:] == ["    Traceback:", "      raise X('\\x07\\x1b]0;owned\\x07')"]


def test_printable_text_reaches_the_log_unchanged(data_home: Path) -> None:
    hook.log_error("claude", "session_id=café-日本 failed")
    assert log_text(data_home).endswith(" claude: session_id=café-日本 failed\n")


def test_the_error_the_hook_prints_for_print_lineage_is_escaped(data_home: Path) -> None:
    stderr = io.BytesIO()
    outcome = hook.HookOutcome("claude", b"", error=f"PayloadError: {CLEAR_SCREEN}")
    hook.emit(outcome, True, io.BytesIO(), stderr)
    assert b"\x1b" not in stderr.getvalue() and b"\\x1b[2J" in stderr.getvalue()


@pytest.mark.parametrize("store", ["memory://", "memory:", "memory"])
def test_a_hook_given_a_memory_store_refuses_it_and_logs_why(store: str, data_home: Path) -> None:
    outcome = hook.run_hook("claude", orjson.dumps(START), store=store)
    assert outcome.lineage is None and outcome.error is not None
    assert "keeps nothing for hooks" in outcome.error
    assert "keeps nothing for hooks" in log_text(data_home)


def test_a_hook_refuses_a_memory_store_from_the_environment(
    data_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LINEAGE_STORE", "memory://")
    args = hook.parse_args(["claude"])
    outcome = hook.run_hook("claude", orjson.dumps(START), store=args.store)
    assert outcome.error is not None and "'memory://' keeps nothing for hooks" in log_text(
        data_home
    )


def test_a_refused_memory_store_still_keeps_the_recording(tmp_path: Path, data_home: Path) -> None:
    recording = tmp_path / "capture.jsonl"
    outcome = hook.run_hook("claude", orjson.dumps(START), store="memory://", record=recording)
    assert outcome.error is not None
    assert orjson.loads(recording.read_bytes())["payload"] == START
