"""`lineage ingest` of several captures of bare hook payloads, which carry no time: each
capture's rows are numbered on after the latest logical time already in the store, so captures
of one session ingested in order (in one call or in several) read as one recording, and a
capture the store already holds keeps its numbers, so that it is a duplicate again."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from lineage_es.cli import main
from lineage_es.engine import Engine, open_engine
from lineage_es.facts import LOGICAL_EPOCH
from lineage_es.ingest import ingest
from lineage_es.model import ForestNode

SESSION = "11111111-2222-4333-8444-555555555555"
FIRST = "a0000000000000001"
SECOND = "a0000000000000002"


def hook(event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": f"/home/dev/.claude/projects/-x/{SESSION}.jsonl",
        "cwd": "/x",
        "hook_event_name": event,
        **fields,
    }


def subagent(tool_use_id: str, agent: str) -> list[dict[str, Any]]:
    """A foreground subagent's spawn, one act, stop and result."""
    tool_input = {"description": agent, "prompt": agent, "subagent_type": "general-purpose"}
    spawn = {"tool_name": "Agent", "tool_input": tool_input, "tool_use_id": tool_use_id}
    result = {"status": "completed", "agentId": agent, "content": []}
    return [
        hook("PreToolUse", **spawn),
        hook("SubagentStart", agent_id=agent, agent_type="general-purpose"),
        hook(
            "PreToolUse",
            agent_id=agent,
            agent_type="general-purpose",
            tool_name="Bash",
            tool_input={"command": "ls"},
            tool_use_id=f"{tool_use_id}-ls",
        ),
        hook("SubagentStop", agent_id=agent, agent_type="general-purpose"),
        hook("PostToolUse", tool_response=result, **spawn),
    ]


#: The session started, ran a subagent and ended.
STARTED = [
    hook("SessionStart", source="startup"),
    hook("UserPromptSubmit", prompt="one"),
    *subagent("toolu_A", FIRST),
    hook("Stop", stop_hook_active=False),
    hook("SessionEnd", reason="prompt_input_exit"),
]
#: The same session resumed, ran a new subagent and ended its turn (still live).
RESUMED = [
    hook("SessionStart", source="resume"),
    hook("UserPromptSubmit", prompt="two"),
    *subagent("toolu_B", SECOND),
    hook("Stop", stop_hook_active=False),
]


def capture(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return path


def forest(engine: Engine) -> tuple[ForestNode, ...]:
    return engine.forest(include_stopped=True)


def shape(nodes: tuple[ForestNode, ...]) -> list[tuple[str, str, list[Any]]]:
    """The forest without its times."""
    return [(node.conversation, node.status, shape(node.children)) for node in nodes]


def one_file(tmp_path: Path, *captures: list[dict[str, Any]]) -> Engine:
    """A fresh engine holding the captures ingested as one file, concatenated."""
    engine = open_engine("memory://")
    rows = [row for rows in captures for row in rows]
    ingest(engine, [capture(tmp_path / "concatenated.jsonl", rows)])
    return engine


def test_a_session_resumed_in_a_second_capture_of_one_call_reads_as_one_file(
    tmp_path: Path,
) -> None:
    first, second = capture(tmp_path / "1.jsonl", STARTED), capture(tmp_path / "2.jsonl", RESUMED)
    engine = open_engine("memory://")
    ingest(engine, [first, second])
    assert forest(engine) == forest(one_file(tmp_path, STARTED, RESUMED))
    assert shape(forest(engine)) == [
        (SESSION, "live", [(FIRST, "stopped", []), (SECOND, "stopped", [])])
    ]


def test_captures_ingested_in_separate_calls_read_as_one_file(tmp_path: Path) -> None:
    first, second = capture(tmp_path / "1.jsonl", STARTED), capture(tmp_path / "2.jsonl", RESUMED)
    engine = open_engine("memory://")
    ingest(engine, [first])
    ingest(engine, [second])
    assert forest(engine) == forest(one_file(tmp_path, STARTED, RESUMED))


def test_time_travel_over_captures_answers_as_over_one_file(tmp_path: Path) -> None:
    first, second = capture(tmp_path / "1.jsonl", STARTED), capture(tmp_path / "2.jsonl", RESUMED)
    separate, together = open_engine("memory://"), open_engine("memory://")
    ingest(separate, [first])
    end_of_first = separate.position()
    ingest(separate, [second])
    ingest(together, [first, second])
    whole = one_file(tmp_path, STARTED, RESUMED)
    for position in range(1, separate.position() + 1):
        assert separate.as_of(position=position).forest(include_stopped=True) == together.as_of(
            position=position
        ).forest(include_stopped=True)
    for row in range(len(STARTED) + len(RESUMED) + 1):
        moment = LOGICAL_EPOCH + timedelta(seconds=row)
        assert separate.as_of(time=moment).forest(include_stopped=True) == whole.as_of(
            time=moment
        ).forest(include_stopped=True), f"row {row}"
    at_end = LOGICAL_EPOCH + timedelta(seconds=len(STARTED))
    assert separate.as_of(position=end_of_first).forest(include_stopped=True) == whole.as_of(
        time=at_end
    ).forest(include_stopped=True)


def test_captures_ingested_again_journal_nothing_and_leave_the_session_resumed(
    tmp_path: Path,
) -> None:
    first, second = capture(tmp_path / "1.jsonl", STARTED), capture(tmp_path / "2.jsonl", RESUMED)
    engine = open_engine("memory://")
    ingest(engine, [first])
    ingest(engine, [second])
    position = engine.position()
    ingest(engine, [first])
    ingest(engine, [second])
    ingest(engine, [first, second])
    assert engine.position() == position
    assert forest(engine) == forest(one_file(tmp_path, STARTED, RESUMED))


def test_a_capture_ingested_again_after_a_later_one_went_in_on_its_own_journals_nothing(
    tmp_path: Path,
) -> None:
    """The first capture's last row journaled nothing, so the second, ingested on its own,
    was numbered from the row before: its first row shares a number with the first's last."""
    cut = STARTED[:-1]  # the session did not end: its last row, a Stop, journals nothing
    late = [  # the first subagent, stopped in the first capture, acts again
        hook(
            "PreToolUse",
            agent_id=FIRST,
            agent_type="general-purpose",
            tool_name="Bash",
            tool_input={"command": "git status"},
            tool_use_id="toolu_late",
        )
    ]
    first, second = capture(tmp_path / "1.jsonl", cut), capture(tmp_path / "2.jsonl", late)
    engine = open_engine("memory://")
    ingest(engine, [first])
    ingest(engine, [second])
    position = engine.position()
    ingest(engine, [first])
    assert engine.position() == position
    assert shape(forest(engine)) == [(SESSION, "live", [(FIRST, "live", [])])]


def test_a_new_capture_opening_as_an_earlier_one_did_is_not_taken_for_it(tmp_path: Path) -> None:
    """The third capture's only journaled fact, its resume, is byte for byte the second's."""
    ended = [*RESUMED[:-1], hook("SessionEnd", reason="prompt_input_exit")]
    quiet = [RESUMED[0], hook("UserPromptSubmit", prompt="three"), RESUMED[-1]]
    paths = [
        capture(tmp_path / f"{number}.jsonl", rows)
        for number, rows in enumerate((STARTED, ended, quiet), 1)
    ]
    engine = open_engine("memory://")
    for path in paths:
        ingest(engine, [path])
    assert forest(engine) == forest(one_file(tmp_path, STARTED, ended, quiet))
    assert shape(forest(engine))[0][1] == "live"


def test_the_ingest_command_reads_a_session_resumed_in_a_later_capture(tmp_path: Path) -> None:
    first, second = capture(tmp_path / "1.jsonl", STARTED), capture(tmp_path / "2.jsonl", RESUMED)
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    result = CliRunner().invoke(
        main, ["ingest", "--quiet", str(first), str(second), "--store", store]
    )
    assert result.exit_code == 0, result.output
    drawn = CliRunner().invoke(main, ["tree", "--all", "--format", "json", "--store", store])
    roots = orjson.loads(drawn.stdout)["roots"]
    assert [(root["conversation"], root["status"]) for root in roots] == [(SESSION, "live")]
    started = {child["conversation"]: child["started_at"] for child in roots[0]["children"]}
    second_child_row = len(STARTED) + 4  # its SubagentStart, the second capture's row 4
    assert started[SECOND] == (LOGICAL_EPOCH + timedelta(seconds=second_child_row)).isoformat(
        timespec="microseconds"
    )


def test_a_capture_ingested_again_keeps_the_numbers_under_which_most_of_its_facts_went_in(
    tmp_path: Path,
) -> None:
    """The third capture's resume journaled nothing (the session was live), but the fourth's,
    byte for byte the same, resumed it: read again, the third is still where its subagent
    is, not at the fourth's resume."""
    third = [
        RESUMED[0],
        hook("UserPromptSubmit", prompt="three"),
        *subagent("toolu_C", "a0000000000000003")[:2],
        hook("SessionEnd", reason="prompt_input_exit"),
    ]
    fourth = [RESUMED[0], hook("UserPromptSubmit", prompt="four"), RESUMED[-1]]
    captures = (STARTED, RESUMED, third, fourth)
    paths = [capture(tmp_path / f"{n}.jsonl", rows) for n, rows in enumerate(captures, 1)]
    engine = open_engine("memory://")
    for path in paths:
        ingest(engine, [path])
    position = engine.position()
    ingest(engine, [paths[2]])
    assert engine.position() == position
    assert shape(forest(engine)) == shape(forest(one_file(tmp_path, *captures)))
