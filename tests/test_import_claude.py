"""``lineage import claude``: a Claude Code projects folder becomes the journal."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import InputError
from lineage_es.importers import ImportReport, import_claude
from lineage_es.importers import lines as lines_module
from lineage_es.importers.walk import NOT_REGULAR, UNREADABLE_FOLDER
from lineage_es.model import Member
from lineage_es.read.answers import TreeReader

SESSION = "5f1c2e4a-0000-4000-8000-000000000001"
OTHER = "7e2d3f5b-0000-4000-8000-000000000002"
AGENT = "a1000000000000001"
CHILD = "a2000000000000002"
T0 = datetime(2026, 9, 3, 8, 0, tzinfo=UTC)


def at(second: int) -> datetime:
    return T0 + timedelta(seconds=second)


def iso(second: int) -> str:
    return at(second).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Session:
    """Writes one Claude Code session in the host's own layout, a row at a time."""

    def __init__(self, folder: Path, session: str = SESSION, project: str = "-w-app") -> None:
        self.project = folder / project
        self.session = session
        self.uuid = 0

    @property
    def main(self) -> Path:
        return self.project / f"{self.session}.jsonl"

    def agent_path(self, agent: str) -> Path:
        return self.project / self.session / "subagents" / f"agent-{agent}.jsonl"

    def write(self, path: Path, row: dict[str, Any] | bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        line = row if isinstance(row, bytes) else orjson.dumps(row) + b"\n"
        with path.open("ab") as stream:
            stream.write(line)

    def row(self, second: int | None, kind: str, agent: str | None = None, **fields: Any) -> None:
        self.uuid += 1
        row: dict[str, Any] = {"parentUuid": None, "isSidechain": agent is not None}
        if agent is not None:
            row["agentId"] = agent
        row |= {"sessionId": self.session, "version": "2.1.143", "type": kind}
        row |= {"uuid": f"{self.session[:8]}-{self.uuid}"}
        if second is not None:
            row["timestamp"] = iso(second)
        row |= fields
        self.write(self.agent_path(agent) if agent else self.main, row)

    def prompt(self, second: int, text: str = "hi", agent: str | None = None) -> None:
        self.row(second, "user", agent, message={"role": "user", "content": text})

    def spawn(self, second: int, key: str, agent: str | None = None, **tool: Any) -> None:
        block: dict[str, Any] = {"type": "tool_use", "id": key, "name": "Agent"}
        block["input"] = {"prompt": "do it", "subagent_type": "Explore"} | tool
        self.row(second, "assistant", agent, message={"role": "assistant", "content": [block]})

    def result(
        self, second: int, key: str, child: str, status: str = "completed", agent: str | None = None
    ) -> None:
        block = {"type": "tool_result", "tool_use_id": key, "content": "done"}
        outcome = {"status": status, "agentId": child, "agentType": "Explore"}
        self.row(
            second,
            "user",
            agent,
            message={"role": "user", "content": [block]},
            toolUseResult=outcome,
        )

    def notice(self, second: int, child: str, status: str = "completed") -> None:
        text = f"<task-notification>\n<task-id>{child}</task-id>\n<status>{status}</status>\n"
        self.uuid += 1
        self.write(
            self.main,
            {
                "type": "queue-operation",
                "operation": "enqueue",
                "timestamp": iso(second),
                "sessionId": self.session,
                "content": text + "</task-notification>",
            },
        )

    def answer(self, second: int, agent: str | None = None) -> None:
        content = [{"type": "text", "text": "ok"}]
        self.row(second, "assistant", agent, message={"role": "assistant", "content": content})

    def tail(self) -> None:
        """The untimed rows Claude Code appends after a turn."""
        self.write(self.main, {"type": "ai-title", "aiTitle": "t", "sessionId": self.session})
        self.write(self.main, {"type": "permission-mode", "permissionMode": "default"})

    def meta(self, agent: str, **fields: Any) -> None:
        path = self.agent_path(agent).with_name(f"agent-{agent}.meta.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(orjson.dumps(fields))


def one_child(folder: Path, *, background: bool = False) -> Session:
    """A session whose root spawns AGENT, which runs from second 3 to 6."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A", run_in_background=background)
    if background:
        s.result(2, "toolu_A", AGENT, status="async_launched")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    if background:
        s.notice(8, AGENT)
    else:
        s.result(7, "toolu_A", AGENT)
    s.answer(9)
    s.tail()
    return s


def spawned_agent(folder: Path) -> Session:
    """A session whose root has spawned AGENT (call toolu_A), which has begun to work; the
    call's result is not written yet."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    return s


def clear(s: Session, second: int) -> None:
    """``/clear`` at ``second`` starts OTHER, whose rows a recorder appended to SESSION's file
    (as in the irrlicht 1-5 recording): its command row, then a turn."""
    command = {"role": "user", "content": "<command-name>/clear</command-name>"}
    s.row(second, "user", message=command, sessionId=OTHER)
    s.row(second + 1, "user", message={"role": "user", "content": "hi"}, sessionId=OTHER)
    text = {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}
    s.row(second + 3, "assistant", message=text, sessionId=OTHER)


def members(engine: Engine | TreeReader, root: str = SESSION) -> dict[str, Member]:
    return {m.conversation: m for m in engine.family(root)}


def run(engine: Engine, folder: Path, **options: Any) -> ImportReport:
    return import_claude(engine, folder, **options)


@pytest.fixture
def journal(tmp_path: Path, memory: Engine) -> Engine:
    """The journal of ``one_child``'s session, imported from ``tmp_path``."""
    one_child(tmp_path)
    run(memory, tmp_path)
    return memory


# -- placing -----------------------------------------------------------------------------------


def test_agent_file_places_the_child_under_its_root_from_the_transcript(journal: Engine) -> None:
    child = members(journal)[AGENT]
    assert (child.parent, child.depth, child.resolution) == (SESSION, 1, "transcript")


def test_child_starts_and_stops_at_its_own_first_and_last_rows(journal: Engine) -> None:
    child = members(journal)[AGENT]
    assert child.started_at.startswith("2026-09-03T08:00:03")
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:06")


def test_root_stops_at_its_last_timed_row(journal: Engine) -> None:
    root = members(journal)[SESSION]
    assert root.started_at.startswith("2026-09-03T08:00:01")
    assert root.stopped_at is not None and root.stopped_at.startswith("2026-09-03T08:00:09")


def test_time_travel_sees_the_child_live_only_between_its_rows(journal: Engine) -> None:
    live = [
        {m.conversation for m in journal.as_of(time=at(s)).family(SESSION) if m.status == "live"}
        for s in (2, 4, 10)
    ]
    assert live == [{SESSION}, {SESSION, AGENT}, set()]


def test_background_child_stops_at_its_completion_notice(tmp_path: Path, memory: Engine) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A", run_in_background=True)
    s.result(2, "toolu_A", AGENT, status="async_launched")
    s.notice(8, AGENT, status="killed")
    s.answer(9)
    run(memory, tmp_path)
    child = members(memory)[AGENT]
    assert child.stopped_at is not None and child.stopped_at.startswith("2026-09-03T08:00:08")


def test_depth_two_agent_is_placed_under_its_parent_agent_by_its_sidecar(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT)
    s.meta(CHILD, toolUseId="toolu_B", parentAgentId=AGENT, spawnDepth=2, agentType="Plan")
    s.prompt(5, "deeper", agent=CHILD)
    s.answer(5, agent=CHILD)
    s.result(5, "toolu_B", CHILD, agent=AGENT)
    run(memory, tmp_path)
    child = members(memory)[CHILD]
    assert (child.parent, child.depth, child.resolution) == (AGENT, 2, "transcript")


def test_child_known_only_from_its_result_starts_at_its_spawn_call(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")  # no agent file: the result alone names the child
    s.result(7, "toolu_A", AGENT)
    s.answer(9)
    run(memory, tmp_path)
    child = members(memory)[AGENT]
    assert (child.started_at[11:19], str(child.stopped_at)[11:19]) == ("08:00:02", "08:00:07")
    assert members(memory.as_of(time=at(5)))[AGENT].status == "live"


def test_child_with_a_file_of_its_own_still_starts_at_its_first_row(journal: Engine) -> None:
    assert members(journal)[AGENT].started_at.startswith("2026-09-03T08:00:03")


def resolution_at(engine: Engine, second: int, child: str = AGENT) -> tuple[str | None, str]:
    member = members(engine.as_of(time=at(second)))[child]
    return member.parent, member.resolution


def test_agent_named_by_its_result_is_placed_from_the_transcript_from_its_start(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.spawn(2, "toolu_B")  # the same prompt: only the results tell the agents apart
    s.row(3, "user", AGENT, message={"content": "do it"}, version="2.1.220")
    s.row(3, "user", CHILD, message={"content": "do it"}, version="2.1.220")
    s.answer(5, agent=AGENT)
    s.answer(5, agent=CHILD)
    s.result(6, "toolu_A", AGENT)
    s.result(7, "toolu_B", CHILD)
    run(memory, tmp_path)
    assert [resolution_at(memory, 4, c) for c in (AGENT, CHILD)] == [(SESSION, "transcript")] * 2
    spawns = {e.state["conversation"]: e.state["spawn_key"] for e in placements(memory)}
    assert spawns == {AGENT: "toolu_A", CHILD: "toolu_B"}


def placements(engine: Engine) -> list[Any]:
    return [e for e in engine.journal() if e.topic.endswith("ChildPlaced")]


def test_running_agent_is_placed_under_the_call_its_first_prompt_repeats(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT, prompt="look deeper")
    s.row(5, "user", CHILD, message={"content": "look deeper"}, version="2.1.220")
    run(memory, tmp_path)  # no result and no sidecar yet
    assert resolution_at(memory, 5, CHILD) == (AGENT, "transcript")


def test_running_agent_of_a_version_without_nesting_is_placed_under_its_session(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.prompt(4, "something the call did not say", agent=CHILD)  # 2.1.143: no nesting yet
    run(memory, tmp_path)
    assert resolution_at(memory, 4, CHILD) == (SESSION, "transcript")


def test_running_agent_no_row_places_is_inferred_until_its_result(
    tmp_path: Path, memory: Engine
) -> None:
    """The one guess left: a version whose agents may spawn agents, no sidecar, no result
    yet, and a first prompt no open call repeats."""
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT, prompt="look deeper")
    s.row(5, "user", CHILD, message={"content": "go"}, version="2.1.220")
    s.answer(6, agent=AGENT)
    run(memory, tmp_path)
    assert resolution_at(memory, 5, CHILD) == (AGENT, "inferred")
    s.result(6, "toolu_B", CHILD, agent=AGENT)
    run(memory, tmp_path)
    assert members(memory)[CHILD].resolution == "transcript"


def test_sidecar_naming_only_its_call_places_the_agent_under_that_calls_parent(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    s.spawn(4, "toolu_B", agent=AGENT)
    s.meta(CHILD, toolUseId="toolu_B", agentType="Plan")
    s.row(5, "user", CHILD, message={"content": "?"}, version="2.1.220")
    run(memory, tmp_path)
    assert resolution_at(memory, 5, CHILD) == (AGENT, "transcript")


@pytest.mark.parametrize(
    "agent", ["acompact-e1f845", "aprompt_suggestion-1a2b", "aside_question-9"]
)
def test_the_hosts_own_agents_are_never_children(
    tmp_path: Path, memory: Engine, agent: str
) -> None:
    s = one_child(tmp_path)
    s.prompt(4, "summarise", agent=agent)
    s.answer(5, agent=agent)
    report = run(memory, tmp_path)
    assert agent not in members(memory)
    assert report.internal == 1


def test_flat_layout_agent_file_joins_the_session_its_rows_name(
    tmp_path: Path, memory: Engine
) -> None:
    s = spawned_agent(tmp_path)
    shutil.move(s.agent_path(AGENT), s.project / f"agent-{AGENT}.jsonl")
    s.result(7, "toolu_A", AGENT)
    run(memory, tmp_path)
    assert members(memory)[AGENT].parent == SESSION


def test_agent_writing_after_its_parent_stopped_it_is_live_again_until_its_last_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)  # the result at second 7 stops it
    s.prompt(12, "one more thing", agent=AGENT)  # SendMessage resumes it
    s.answer(14, agent=AGENT)
    run(memory, tmp_path)
    states = [memory.as_of(time=at(t)).family(SESSION) for t in (8, 13, 15)]
    assert [{m.conversation: m.status for m in f}.get(AGENT) for f in states] == [
        "stopped",
        "live",
        "stopped",
    ]


def test_fork_is_a_new_root_whose_copied_rows_place_no_children(
    tmp_path: Path, memory: Engine
) -> None:
    one_child(tmp_path)
    fork = Session(tmp_path, OTHER)
    copied = {"sessionId": SESSION, "messageUuid": "x"}
    block = {"type": "tool_use", "id": "toolu_A", "name": "Agent", "input": {"prompt": "p"}}
    message = {"role": "assistant", "content": [block]}
    fork.row(20, "assistant", message=message, forkedFrom=copied)
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_A"}]}
    outcome = {"status": "completed", "agentId": AGENT}
    fork.row(20, "user", message=answer, toolUseResult=outcome, forkedFrom=copied)
    fork.prompt(21)
    run(memory, tmp_path)
    assert set(members(memory, OTHER)) == {OTHER}
    assert memory.relation(OTHER, SESSION) == "unrelated"


def test_a_session_cleared_inside_its_file_starts_at_its_own_first_row(
    tmp_path: Path, memory: Engine
) -> None:
    s = Session(tmp_path)
    s.prompt(1)
    s.answer(3)
    clear(s, 5)  # OTHER's rows, up to second 8, in SESSION's file
    run(memory, tmp_path)
    second = members(memory, OTHER)[OTHER]
    assert (second.started_at[11:19], str(second.stopped_at)[11:19]) == ("08:00:05", "08:00:08")


def test_a_session_cleared_inside_its_file_goes_on_until_the_clear_ends_it(
    tmp_path: Path, memory: Engine
) -> None:
    """The end of a turn stops nothing (LINEAGE.md): the first session ends at the /clear,
    which is the next session's first row."""
    s = Session(tmp_path)
    s.prompt(1)
    s.answer(3)
    clear(s, 5)
    run(memory, tmp_path)
    assert members(memory.as_of(time=at(4)))[SESSION].status == "live"
    assert str(members(memory)[SESSION].stopped_at)[11:19] == "08:00:05"


def test_missing_folder_is_refused(tmp_path: Path, memory: Engine) -> None:
    with pytest.raises(InputError, match="not a folder"):
        run(memory, tmp_path / "absent")


# -- bad input is counted, never fatal --------------------------------------------------------


def test_broken_and_unknown_rows_are_counted_and_the_rest_imported(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    call = {"type": "tool_use", "id": "toolu_Z", "name": "Agent", "input": {}}
    torn = orjson.dumps({"type": "assistant", "message": {"content": [call]}})[:-9]
    s.write(s.main, torn + b"\n")  # an interrupted write, then the next row
    s.write(s.main, {"type": "hologram", "sessionId": SESSION, "message": {"content": [call]}})
    s.answer(30)
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.TORN: 1, lines_module.UNKNOWN_TYPE: 1}
    assert members(memory)[AGENT].parent == SESSION


def test_lines_that_cannot_be_rows_are_counted_though_no_marker_points_to_them(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    s.write(s.main, b"not json at all\n")
    s.write(s.main, b"[1, 2, 3]\n")
    s.write(s.main, b"\xff\xfe\n")
    s.write(s.main, orjson.dumps({"type": "user", "sessionId": SESSION})[:-9] + b"\n")
    s.write(s.main, b"\n")  # a blank line is no row, and no fault
    s.answer(30)
    report = run(memory, tmp_path)
    assert report.skipped == {
        lines_module.NOT_JSON: 2,
        lines_module.NOT_OBJECT: 1,
        lines_module.TORN: 1,
    }


def test_row_of_an_unknown_type_read_for_the_files_end_is_counted_once(
    tmp_path: Path, memory: Engine
) -> None:
    s = one_child(tmp_path)
    s.write(s.main, {"type": "hologram", "sessionId": SESSION, "timestamp": iso(30)})
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.UNKNOWN_TYPE: 1}
    assert str(members(memory)[SESSION].stopped_at).startswith("2026-09-03T08:00:09")


_ROWS = st.dictionaries(st.sampled_from(["type", "uuid", "x"]), st.integers(-9, 9), max_size=3)
_LINES = st.one_of(
    _ROWS.map(orjson.dumps),
    _ROWS.map(lambda row: orjson.dumps(row)[:-1]),
    st.binary(max_size=20).map(lambda b: b.replace(b"\n", b"")),
)


@given(lines=st.lists(_LINES, max_size=12))
@settings(max_examples=200, deadline=None)
def test_every_line_that_is_not_a_json_object_is_counted_by_the_region_or_its_parser(
    lines: list[bytes],
) -> None:
    """count_bad_lines parses only lines without an object's shape; the lines with one that
    are no object are left to whoever parses them: between the two, each is counted."""
    data = b"".join(line + b"\n" for line in lines)
    skips: Counter[str] = Counter()
    lines_module.count_bad_lines(data, skips)
    shaped = [line for line in lines if lines_module.looks_like_object(line)]
    left = sum(lines_module.why_bad(line) is not None for line in shaped)
    assert sum(skips.values()) + left == sum(
        lines_module.why_bad(line) is not None for line in lines
    )
    assert all(
        lines_module.why_bad(line) in (None, lines_module.NOT_JSON, lines_module.TORN)
        for line in shaped
    )


def test_overlong_line_is_skipped_and_counted(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(lines_module, "REGION_BYTES", 1000)
    s = one_child(tmp_path)
    s.prompt(20, "x" * 10_000)
    s.answer(21)
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.OVERLONG] == 1
    assert members(memory)[SESSION].stopped_at is not None


def test_file_over_the_size_limit_is_skipped_and_counted(tmp_path: Path, memory: Engine) -> None:
    one_child(tmp_path)
    big = Session(tmp_path, OTHER)
    for second in range(40):
        big.prompt(second, "y" * 200)
    report = run(memory, tmp_path, max_file_bytes=4000)
    assert report.skipped[lines_module.TOO_LARGE] == 1
    assert OTHER not in {n.conversation for n in memory.forest(include_stopped=True)}


def test_unreadable_file_is_counted_and_the_others_imported(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_child(tmp_path)
    other = Session(tmp_path, OTHER)
    other.prompt(1)
    real_open = open

    def refusing(path: Any, *args: Any, **kwargs: Any) -> Any:
        if str(path) == str(other.main):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing)
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.UNREADABLE] == 1
    assert AGENT in members(memory)


# -- the corpus: real folders in the host's layout --------------------------------------------


def imported(corpus: Path, name: str) -> tuple[Engine, ImportReport]:
    engine = open_engine("memory://")
    return engine, import_claude(engine, corpus / "claude" / name)


def test_every_corpus_case_imports_with_nothing_skipped(corpus: Path) -> None:
    for case in sorted((corpus / "claude").iterdir()):
        _, report = imported(corpus, case.name)
        assert not report.skipped, case.name
        assert report.read == report.files > 0, case.name


def test_corpus_parallel_spawns_place_three_children_from_the_transcript(corpus: Path) -> None:
    engine, _ = imported(corpus, "irrlicht_subagent-spawn-parallel_v2.1.119")
    root = "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8"
    children = [m for m in engine.family(root) if m.conversation != root]
    assert len(children) == 3
    assert {(m.parent, m.resolution, m.status) for m in children} == {
        (root, "transcript", "stopped")
    }


def test_corpus_clear_starts_an_unrelated_root(corpus: Path) -> None:
    engine, report = imported(corpus, "irrlicht_1-5-session-clear_v2.1.142")
    first, second = "4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c", "fd023a54-8d3f-441b-bb58-6319f2fc51f0"
    assert report.roots == {first, second}
    assert engine.relation(first, second) == "unrelated"


def test_corpus_cleared_session_starts_at_its_first_row_where_the_clear_ended_the_first(
    corpus: Path,
) -> None:
    engine, _ = imported(corpus, "irrlicht_1-5-session-clear_v2.1.142")
    first, second = "4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c", "fd023a54-8d3f-441b-bb58-6319f2fc51f0"
    line_11 = "2026-05-15T10:58:42.513000+00:00"  # the <local-command-caveat> row of /clear
    ended, started = members(engine, first)[first], members(engine, second)[second]
    assert (ended.stopped_at, started.started_at) == (line_11, line_11)
    assert started.stopped_at == "2026-05-15T10:58:47.784000+00:00"


def test_corpus_compactor_agent_is_not_a_child(corpus: Path) -> None:
    engine, report = imported(corpus, "spotter_explore-and-acompact_v2.1.39")
    family = {m.conversation for m in engine.family("4d5611e5-241a-462a-8d15-5122611a9569")}
    assert "a2898e3" in family
    assert not any(c.startswith("acompact") for c in family)
    assert report.internal == 1


def test_corpus_progress_rows_identify_the_child(corpus: Path) -> None:
    engine, _ = imported(corpus, "spotter_task-agent-progress_v2.1.38")
    child = members(engine, "491e126e-1e71-469c-ade2-fcc8af567c74")["afb92ff"]
    assert (child.depth, child.resolution) == (1, "transcript")


def test_corpus_inline_sidechain_child_runs_pending_under_its_spawn(corpus: Path) -> None:
    engine, _ = imported(corpus, "agentlogs_inline-sidechain_v2.0.13")
    root = "609efeca-2f51-4118-b077-e91c9fe63f73"
    (child,) = [m for m in engine.family(root) if m.conversation != root]
    assert (child.conversation, child.status) == ("toolu_01BuNFczVnbvyf3hBd7oYaqy", "stopped")


def test_corpus_warmup_sidechains_are_not_children(corpus: Path) -> None:
    engine, report = imported(corpus, "agtrace_warmup-sidechains-flat-layout_v2.0.28")
    assert [m.conversation for m in engine.family("7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9")] == [
        "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9"
    ]
    assert report.internal == 2


def test_corpus_killed_background_agents_stop_at_their_notices(corpus: Path) -> None:
    engine, _ = imported(corpus, "irrlicht_3-2-background-killed_v2.1.156")
    root = "79322395-6d9a-49b4-82af-08898027aa0e"
    children = [m for m in engine.family(root) if m.conversation != root]
    assert len(children) == 3 and {m.status for m in children} == {"stopped"}


def test_corpus_background_shell_task_is_not_a_child(corpus: Path) -> None:
    engine, _ = imported(corpus, "irrlicht_3-3-background-bash-notification_v2.1.150")
    assert len(engine.family("d3e286c9-4b6b-49c3-8c89-33f335cd99c0")) == 1


def test_corpus_foreground_child_with_no_file_is_live_from_its_call(corpus: Path) -> None:
    engine, _ = imported(corpus, "irrlicht_3-1-foreground-subagent_v2.1.143")
    view = engine.as_of(time=datetime(2026, 5, 17, 22, 29, 30, tzinfo=UTC))
    family = {m.conversation: m for m in view.family("2bbb4a67-aabb-4d52-a003-2d5360d2e3ed")}
    child = family["a9357a216a6d5b5ea"]
    assert (child.status, child.started_at) == ("live", "2026-05-17T22:29:24.868000+00:00")


def test_corpus_parallel_spawns_are_placed_from_the_transcript_while_they_run(
    corpus: Path,
) -> None:
    engine, _ = imported(corpus, "irrlicht_subagent-spawn-parallel_v2.1.119")
    view = engine.as_of(time=datetime(2026, 4, 26, 9, 21, 30, tzinfo=UTC))
    root = "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8"
    children = [m for m in view.family(root) if m.conversation != root]
    assert {(m.parent, m.resolution) for m in children} == {(root, "transcript")}


def test_fifo_named_like_a_session_is_counted_and_never_opened(
    tmp_path: Path, memory: Engine
) -> None:
    session = one_child(tmp_path)
    os.mkfifo(session.project / "0f0f0f0f-0000-4000-8000-000000000002.jsonl")  # would block
    report = run(memory, tmp_path)
    assert report.skipped == {NOT_REGULAR: 1}
    assert SESSION in members(memory)


def test_session_in_a_folder_that_cannot_be_listed_is_not_taken_for_gone(
    tmp_path: Path, memory: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = one_child(tmp_path)
    run(memory, tmp_path)
    real = os.scandir

    def scandir(path: Any) -> Iterator[os.DirEntry[str]]:
        if Path(path) == session.project:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr("lineage_es.importers.walk.os.scandir", scandir)
    report = run(memory, tmp_path, reconcile_gone=True)
    assert (report.skipped, report.gone, report.deleted) == ({UNREADABLE_FOLDER: 1}, 0, [])
    assert members(memory)[SESSION].status != "deleted"
