"""Every recording in the development corpus that is in a host's own format ingests cleanly.

The corpus (../shared/corpus, described by its README) holds what Claude Code, Codex CLI and
Cursor really wrote: session transcripts, rollouts and hook stdin captures. Each is fed, row by
row, into a fresh memory engine, and the tree it leaves is compared with what the recording
shows when read by hand (the README's "lineage shown" column). The raw ``cursor-*logs.txt`` are a
hook logger's output, not a host format, and are read through their ``DERIVED_*`` captures.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.hosts.cursor import unwrap_fixture
from lineage_es.model import AgentLineage, ForestNode
from lineage_es.replay.inputs import McpRow, ObservationRow, PayloadRow, read_rows
from tests.support.paths import CORPUS


@dataclass(frozen=True)
class Shown:
    """What a recording shows, read by hand: its roots, the subagents under them (by
    conversation, or by spawn key when the host never names the child), the roots that end
    stopped, and whether the engine can place any of its requests at all."""

    roots: tuple[str, ...]
    subagents: tuple[str, ...] = ()
    stopped_roots: tuple[str, ...] = ()
    placed: bool = True


SHOWN: dict[str, Shown] = {
    # -- Claude Code session transcripts (subagent files read with their session) -------------
    "claude/agentlogs_clear-then-compact_v2.0.13/0e26ec2f-937e-482c-b889-bc126f996913.jsonl": Shown(
        roots=("0e26ec2f-937e-482c-b889-bc126f996913",)
    ),
    # 2.0.x: the subagent is inline, never named: it stays listed under its spawn key.
    "claude/agentlogs_inline-sidechain_v2.0.13/609efeca-2f51-4118-b077-e91c9fe63f73.jsonl": Shown(
        roots=("609efeca-2f51-4118-b077-e91c9fe63f73",),
        subagents=("toolu_01BuNFczVnbvyf3hBd7oYaqy",),
    ),
    # The two Warmup sidechains beside the session are Claude Code's own, not children.
    "claude/agtrace_warmup-sidechains-flat-layout_v2.0.28/"
    "7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl": Shown(
        roots=("7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9",)
    ),
    "claude/irrlicht_1-4-session-resume_v2.1.143/628b6a8c-5e56-4c46-bc36-d5deafb591f6.jsonl": Shown(
        roots=("628b6a8c-5e56-4c46-bc36-d5deafb591f6",)
    ),
    # Two session files in one: /clear ended the first and started an unrelated second.
    "claude/irrlicht_1-5-session-clear_v2.1.142/4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c.jsonl": Shown(
        roots=("4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c", "fd023a54-8d3f-441b-bb58-6319f2fc51f0"),
        stopped_roots=("4d09aaba-81a9-4463-9e1e-e0c8c5be8e8c",),
    ),
    "claude/irrlicht_1-6-rewind-no-trace_v2.1.143/"
    "db54f5d0-c338-4a49-a9ff-612173df821b.jsonl": Shown(
        roots=("db54f5d0-c338-4a49-a9ff-612173df821b",)
    ),
    # The compaction worker's file was not recorded; compaction is not delegation anyway.
    "claude/irrlicht_2-12-manual-compaction_v2.1.143/"
    "727af0e3-f50e-40ad-a592-82db36a13c4c.jsonl": Shown(
        roots=("727af0e3-f50e-40ad-a592-82db36a13c4c",)
    ),
    "claude/irrlicht_3-1-foreground-subagent_v2.1.143/"
    "2bbb4a67-aabb-4d52-a003-2d5360d2e3ed.jsonl": Shown(
        roots=("2bbb4a67-aabb-4d52-a003-2d5360d2e3ed",), subagents=("a9357a216a6d5b5ea",)
    ),
    "claude/irrlicht_3-2-background-killed_v2.1.156/79322395-6d9a-49b4-82af-08898027aa0e.jsonl": (
        Shown(
            roots=("79322395-6d9a-49b4-82af-08898027aa0e",),
            subagents=("aab6d64c2689ba54b", "aecb65d9a054e5ed9", "a85861bdb808648ce"),
        )
    ),
    # A background Bash task shares the notification envelope but is no child.
    "claude/irrlicht_3-3-background-bash-notification_v2.1.150/"
    "d3e286c9-4b6b-49c3-8c89-33f335cd99c0.jsonl": Shown(
        roots=("d3e286c9-4b6b-49c3-8c89-33f335cd99c0",)
    ),
    # The spawn never got a result and the child is named nowhere: no node.
    "claude/irrlicht_3-4-orphaned-spawn-sigkill_v2.1.143/"
    "65fbf48c-ea8b-4772-82e7-e61b778f0273.jsonl": Shown(
        roots=("65fbf48c-ea8b-4772-82e7-e61b778f0273",)
    ),
    # The workflow's agents are not named in the parent file.
    "claude/irrlicht_3-5-workflow-fanout_v2.1.165/"
    "be498d73-b37e-4d70-8b26-782a56e04612.jsonl": Shown(
        roots=("be498d73-b37e-4d70-8b26-782a56e04612",)
    ),
    "claude/irrlicht_subagent-spawn-parallel_v2.1.119/"
    "64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8.jsonl": Shown(
        roots=("64f42b5c-9da1-4e5f-9ec1-aae47ca0f4c8",),
        subagents=("a31559a022d9a2cb6", "a5435e8f32c1127d1", "a8662875f7da1388c"),
    ),
    # A lone agent file (no session file published): its meta sidecar says depth 1.
    "claude/phoenix_sidechain-with-meta_v2.1.217/00000000-0000-4000-8000-000000000001/"
    "subagents/agent-a1b2c3d4e5f60718a.jsonl": Shown(
        roots=("00000000-0000-4000-8000-000000000001",), subagents=("a1b2c3d4e5f60718a",)
    ),
    # The acompact worker is Claude Code's own helper, not a child.
    "claude/spotter_explore-and-acompact_v2.1.39/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": Shown(
        roots=("4d5611e5-241a-462a-8d15-5122611a9569",), subagents=("a2898e3",)
    ),
    "claude/spotter_task-agent-progress_v2.1.38/491e126e-1e71-469c-ade2-fcc8af567c74.jsonl": Shown(
        roots=("491e126e-1e71-469c-ade2-fcc8af567c74",), subagents=("afb92ff",)
    ),
    # -- Codex rollouts ---------------------------------------------------------------------------
    "codex/agtrace_review-subagent-excerpt_v0.77.0/rollout-parent-019b88e0.jsonl": Shown(
        roots=("019b88e0-0b0f-7bb0-a9ba-5cc2d8dffde9",)
    ),
    # A /review thread runs for the host itself: not delegation, so nothing is placed.
    "codex/agtrace_review-subagent-excerpt_v0.77.0/rollout-subagent-019b88e5.jsonl": Shown(
        roots=(), placed=False
    ),
    "codex/irrlicht_1-4-session-resume_v0.130.0/"
    "rollout-2026-05-23T20-30-53-019e561a-bb64-7560-9dce-f0d80bd886ac.jsonl": Shown(
        roots=("019e561a-bb64-7560-9dce-f0d80bd886ac",)
    ),
    # Two rollouts in one file; nothing links or ends the first thread.
    "codex/irrlicht_1-5-session-new_v0.130.0/"
    "rollout-2026-05-25T00-26-41-019e5c18-fa37-74a3-b799-e84966fe1c30.jsonl": Shown(
        roots=("019e5c18-fa37-74a3-b799-e84966fe1c30", "019e5c19-5842-77f0-9417-0ad6552cd62b")
    ),
    "codex/irrlicht_2-12-manual-compaction_v0.130.0/"
    "rollout-2026-05-23T23-38-27-019e56c6-7526-7d03-9fd0-d8067191edf9.jsonl": Shown(
        roots=("019e56c6-7526-7d03-9fd0-d8067191edf9",)
    ),
    # A user /fork is a new tree: forked_from_id alone is no parent edge.
    "codex/irrlicht_fork-conversation_v0.130.0/"
    "rollout-2026-05-23T20-24-45-019e5615-1ef8-7270-b988-4f52f86449a4.jsonl": Shown(
        roots=("019e5615-1ef8-7270-b988-4f52f86449a4", "019e5615-9632-7740-b2cf-3061e4ff06e2")
    ),
    "codex/irrlicht_subagent-parent-link-headers_v0.144.4/"
    "rollout-2026-07-14T20-21-30-019f6249-055d-76d3-b381-cd9d3eb99189.jsonl": Shown(
        roots=("019f6249-055d-76d3-b381-cd9d3eb99189",)
    ),
    "codex/irrlicht_subagent-parent-link-headers_v0.144.4/"
    "rollout-2026-07-14T20-21-37-019f624a-cc95-7c50-b9fa-1db381270b73.jsonl": Shown(
        roots=("019f6249-055d-76d3-b381-cd9d3eb99189",),
        subagents=("019f624a-cc95-7c50-b9fa-1db381270b73",),
    ),
    "codex/irrlicht_subagent-parent-link-headers_v0.144.4/"
    "rollout-2026-07-14T20-21-42-019f624b-cc95-7c50-b9fa-1db381270b74.jsonl": Shown(
        roots=("019f6249-055d-76d3-b381-cd9d3eb99189",),
        subagents=("019f624b-cc95-7c50-b9fa-1db381270b74",),
    ),
    "codex/irrlicht_subagent-parent-link-headers_v0.144.4/"
    "rollout-2026-07-14T20-21-48-019f624c-cc95-7c50-b9fa-1db381270b75.jsonl": Shown(
        roots=("019f6249-055d-76d3-b381-cd9d3eb99189",),
        subagents=("019f624c-cc95-7c50-b9fa-1db381270b75",),
    ),
    "codex/kvsankar_exec-root-one-turn_v0.135.0/session-01.jsonl": Shown(
        roots=("019e9625-802f-7e91-840a-cfe88d14117a",)
    ),
    # -- Cursor hook stdin captures ---------------------------------------------------------------
    "cursor/rosetta_run1-2-stop-followup-precompact_v3.9.16/DERIVED_rosetta_run1-2_stdin.ndjson": (
        Shown(roots=("74676b03-c5c8-4868-ace0-0099aafab72e",))
    ),
    "cursor/rosetta_run3-sessionstart-root_v3.9.16/DERIVED_rosetta_run3_stdin.ndjson": Shown(
        roots=("614ce89f-8bd4-4bf0-818a-8858bb3aeda4",)
    ),
    # The child made no tool call: it stays listed under its subagent_id until it stops.
    "cursor/rosetta_run4-task-subagent_v3.9.16/DERIVED_rosetta_run4_stdin.ndjson": Shown(
        roots=("78d9aebd-5573-4e6b-b018-832b56991975",),
        subagents=("tool_57cce371-aa43-4005-99d9-f32e6a90135",),
    ),
    # A placeholder conversation from an empty window: no root, no answer.
    "cursor/fusengine_sessionstart-empty-window_v3.17.8/"
    "sessionStart__01-empty-window-claude-user-config.json": Shown(roots=(), placed=False),
    # Single tool events: an unknown conversation's tool event never starts a root.
    "cursor/fusengine_task-subagent-resume_v3.18.9/preToolUse__01-task-main-conversation.json": (
        Shown(roots=(), placed=False)
    ),
    "cursor/fusengine_task-subagent-resume_v3.18.9/"
    "preToolUse__03-write-subagent-null-transcript.json": Shown(roots=(), placed=False),
    "cursor/fusengine_task-subagent-resume_v3.18.9/preToolUse__06-task-resume-interrupt.json": (
        Shown(roots=(), placed=False)
    ),
}

#: Recordings the engine answers no request of: a non-delegation thread, a placeholder chat.
UNANSWERED = frozenset(
    {
        "codex/agtrace_review-subagent-excerpt_v0.77.0/rollout-subagent-019b88e5.jsonl",
        "cursor/fusengine_sessionstart-empty-window_v3.17.8/"
        "sessionStart__01-empty-window-claude-user-config.json",
    }
)


def host_recordings(corpus: Path) -> Iterator[Path]:
    """The corpus files in a host's own format, as the corpus README lists them.

    Claude: each case's session files (its agent files are read with them); a case with no
    session file is read through its agent files. Codex: every rollout. Cursor: the
    ``DERIVED_*`` stdin captures and the fusengine ``*.json`` fixtures, not the raw logs.
    """
    for case in sorted(p for p in (corpus / "claude").iterdir() if p.is_dir()):
        sessions = sorted(p for p in case.glob("*.jsonl") if not p.name.startswith("agent-"))
        yield from sessions or sorted(case.rglob("agent-*.jsonl"))
    yield from sorted((corpus / "codex").rglob("*.jsonl"))
    yield from sorted((corpus / "cursor").rglob("DERIVED_*_stdin.ndjson"))
    yield from sorted((corpus / "cursor").rglob("*.json"))


def relative_names(corpus: Path) -> list[str]:
    return [path.relative_to(corpus).as_posix() for path in host_recordings(corpus)]


def ingest(engine: Engine, path: Path) -> list[AgentLineage]:
    """Feed every row of ``path`` to ``engine`` as the replay does; the answers it gave."""
    if path.suffix == ".json":
        answer = engine.observe("cursor", unwrap_fixture(orjson.loads(path.read_bytes())))
        return [answer] if answer is not None else []
    answers: list[AgentLineage | None] = []
    for row in read_rows(path):
        if isinstance(row, PayloadRow):
            answers.append(engine.observe(row.host, row.payload, at=row.at))
        elif isinstance(row, McpRow):
            answers.append(engine.resolve(row.host, row.meta))
        elif isinstance(row, ObservationRow) and row.observation is not None:
            answers.append(engine.observe(row.observation.host, row.observation))
    return [answer for answer in answers if answer is not None]


def descendants(nodes: tuple[ForestNode, ...]) -> Iterator[ForestNode]:
    for node in nodes:
        yield from node.children
        yield from descendants(node.children)


RECORDINGS = relative_names(CORPUS) if CORPUS.is_dir() else []


@pytest.mark.parametrize("relative", RECORDINGS or ["(corpus absent)"], ids=str)
def test_each_host_recording_ingests_into_the_tree_it_shows(corpus: Path, relative: str) -> None:
    shown = SHOWN[relative]
    with open_engine("memory://") as engine:
        answers = ingest(engine, corpus / relative)
        forest = engine.forest(include_stopped=True)
    if relative in UNANSWERED:
        assert answers == []
    else:
        assert answers, "no request of the recording was answered"
    assert any(a.tree is not None for a in answers) == shown.placed
    assert sorted(root.conversation for root in forest) == sorted(shown.roots)
    assert sorted(node.conversation for node in descendants(forest)) == sorted(shown.subagents)
    stopped = [root.conversation for root in forest if root.status == "stopped"]
    assert sorted(stopped) == sorted(shown.stopped_roots)


def test_the_walk_covers_exactly_the_recordings_in_a_host_format(corpus: Path) -> None:
    walked = relative_names(corpus)
    assert sorted(walked) == sorted(SHOWN)
