"""``lineage-replay`` and the host of each row: a host given against a payload's own fields, MCP
rows that can state nothing, and a Claude transcript copied under another name."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lineage_es.engine.engine import open_engine
from lineage_es.model import Member
from lineage_es.replay import cli
from tests.support.paths import REPO

REPLAYS = REPO / "replays"
TASK_SUBAGENT = REPLAYS / "cursor" / "task-subagent" / "task-subagent.jsonl"
PARALLEL = REPLAYS / "claude" / "parallel"
PARALLEL_SESSION = "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8"
CODEX_ROOT = "019f9b20-1d3c-7e52-a7b8-c9d0e1f2a3b4"


def replay(*args: str | Path) -> Result:
    return CliRunner().invoke(cli.main, [str(a) for a in args])


def write_jsonl(path: Path, *rows: Any) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


@pytest.mark.parametrize("given", ["claude", "codex"])
def test_a_host_given_against_a_cursor_capture_exits_2_naming_the_row(given: str) -> None:
    result = replay(TASK_SUBAGENT, "--host", given)
    assert result.exit_code == 2
    assert f"task-subagent.jsonl:1: the payload is from cursor, not {given}" in result.output


def test_an_expected_files_host_against_a_cursor_capture_exits_2(tmp_path: Path) -> None:
    expected = tmp_path / "e.yaml"
    expected.write_text("version: 1\nhost: codex\nsteps: []\n")
    result = replay(TASK_SUBAGENT, "--assert", expected)
    assert result.exit_code == 2
    assert "the payload is from cursor, not codex" in result.output


def test_the_cursor_capture_still_replays_as_cursor() -> None:
    assert replay(TASK_SUBAGENT, "--host", "cursor").exit_code == 0


@pytest.mark.parametrize(
    ("host", "meta", "reason"),
    [
        ("codex", {}, "names no thread"),
        ("claude", {"threadId": CODEX_ROOT}, "names no tool call"),
    ],
    ids=["codex-naming-no-thread", "claude-naming-no-tool-call"],
)
def test_an_mcp_row_that_can_state_nothing_exits_2_naming_the_row(
    tmp_path: Path, host: str, meta: dict[str, Any], reason: str
) -> None:
    start = {"session_id": CODEX_ROOT, "turn_id": "t1", "hook_event_name": "UserPromptSubmit"}
    recording = write_jsonl(
        tmp_path / "r.jsonl",
        {"host": "codex", "at": "2026-09-03T09:30:00Z", "payload": start},
        {"host": host, "at": "2026-09-03T09:30:01Z", "mcp": {"tool": "x", "_meta": meta}},
    )
    result = replay(recording)
    assert result.exit_code == 2
    assert "r.jsonl:2: " in result.output
    assert reason in result.output


def test_a_renamed_claude_transcript_holds_its_shipped_expectations(tmp_path: Path) -> None:
    shutil.copytree(PARALLEL / PARALLEL_SESSION, tmp_path / PARALLEL_SESSION)
    renamed = tmp_path / "transcript.jsonl"
    shutil.copyfile(PARALLEL / f"{PARALLEL_SESSION}.jsonl", renamed)
    result = replay(renamed, "--assert", PARALLEL / f"{PARALLEL_SESSION}.expected.yaml")
    assert (result.exit_code, result.output.splitlines()[-1][:3]) == (0, "ok:")


# -- Claude transcripts: children placed and timed as ``lineage import`` has them ---------------

BACKGROUND_KILLED = (
    REPLAYS / "claude" / "background-killed" / "79322395-6d9a-49b4-82af-08898027aa0e"
)


def replay_into_store(path: Path, tmp_path: Path) -> dict[str, Member]:
    """Replay ``path`` into a SQLite store and list its root's family."""
    store = f"sqlite:///{tmp_path / 'replayed.sqlite'}"
    result = replay(path, "--store", store)
    assert result.exit_code == 0, result.output
    with open_engine(store) as engine:
        (root,) = [r.conversation for r in engine.forest(include_stopped=True)]
        return {m.conversation: m for m in engine.family(root)}


def test_a_claude_replay_starts_children_without_files_at_their_calls(tmp_path: Path) -> None:
    calls: dict[str, str] = {}
    launched: dict[str, str] = {}
    for line in BACKGROUND_KILLED.with_suffix(".jsonl").read_text().splitlines():
        row = json.loads(line)
        content = row.get("message", {}).get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_use" and block.get("name") == "Agent":
                calls[block["id"]] = row["timestamp"]
            if block.get("type") == "tool_result" and block["tool_use_id"] in calls:
                launched[row["toolUseResult"]["agentId"]] = calls[block["tool_use_id"]]
    assert len(launched) == 3
    family = replay_into_store(BACKGROUND_KILLED.with_suffix(".jsonl"), tmp_path)
    started = {c: datetime.fromisoformat(m.started_at) for c, m in family.items() if m.depth}
    assert started == {c: datetime.fromisoformat(t) for c, t in launched.items()}


def test_a_claude_replay_keeps_parallel_agents_types(tmp_path: Path) -> None:
    session = "11111111-1111-4111-8111-111111111111"

    def row(kind: str, second: int, uuid: str, parent: str | None, content: Any, **kw: Any) -> Any:
        return {"parentUuid": parent, "isSidechain": False, "sessionId": session,
                "version": "2.1.143", "type": kind, "uuid": uuid,
                "message": {"role": kind, "content": content},
                "timestamp": f"2026-06-10T18:25:{second:02d}.000Z"} | kw  # fmt: skip

    def call(key: str, prompt: str, kind: str) -> list[Any]:
        agent_input = {"prompt": prompt, "subagent_type": kind}
        return [{"type": "tool_use", "id": key, "name": "Agent", "input": agent_input}]

    def answer(key: str, agent: str, kind: str) -> dict[str, Any]:
        outcome = {"status": "completed", "agentId": agent, "agentType": kind}
        return {"toolUseResult": outcome}

    main = write_jsonl(
        tmp_path / f"{session}.jsonl",
        row("user", 30, "u1", None, "go"),
        row("assistant", 37, "u2", "u1", call("toolu_A", "prompt A", "code-reviewer")),
        row("assistant", 38, "u3", "u2", call("toolu_B", "prompt B", "Explore")),
        row("user", 55, "u4", "u3", [{"type": "tool_result", "tool_use_id": "toolu_A"}],
            **answer("toolu_A", "a0000000000000aaa", "code-reviewer")),
        row("user", 58, "u5", "u4", [{"type": "tool_result", "tool_use_id": "toolu_B"}],
            **answer("toolu_B", "a0000000000000bbb", "Explore")),
    )  # fmt: skip
    folder = tmp_path / session / "subagents"
    folder.mkdir(parents=True)
    for agent, prompt, first, last in [
        ("a0000000000000aaa", "prompt A", 40, 50),
        ("a0000000000000bbb", "prompt B", 41, 56),
    ]:
        extra = {"isSidechain": True, "agentId": agent}
        write_jsonl(
            folder / f"agent-{agent}.jsonl",
            row("user", first, agent + "1", None, prompt) | extra,
            row("assistant", last, agent + "2", agent + "1", [{"type": "text", "text": "r"}])
            | extra,
        )
    family = replay_into_store(main, tmp_path)
    types = {c: m.subagent.type for c, m in family.items() if m.subagent is not None}
    assert types == {"a0000000000000aaa": "code-reviewer", "a0000000000000bbb": "Explore"}
    assert {m.resolution for m in family.values() if m.depth} == {"transcript"}
