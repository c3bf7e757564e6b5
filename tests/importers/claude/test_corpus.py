"""``lineage import claude`` on the corpus: real folders in the host's layout."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import ImportReport, import_claude
from tests.support.claude_projects import members


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
