"""``lineage import codex`` on the corpus: real sessions folders."""

from __future__ import annotations

from pathlib import Path

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.importers import ImportReport, import_codex


def imported(corpus: Path, name: str = "") -> tuple[Engine, ImportReport]:
    engine = open_engine("memory://")
    return engine, import_codex(engine, corpus / "codex" / name)


def test_corpus_fork_file_holds_two_unrelated_roots(corpus: Path) -> None:
    engine, report = imported(corpus, "irrlicht_fork-conversation_v0.130.0")
    first, fork = "019e5615-1ef8-7270-b988-4f52f86449a4", "019e5615-9632-7740-b2cf-3061e4ff06e2"
    assert report.roots == {first, fork}
    assert engine.relation(fork, first) == "unrelated"


def test_corpus_headers_place_three_children_at_depth_one(corpus: Path) -> None:
    engine, _ = imported(corpus, "irrlicht_subagent-parent-link-headers_v0.144.4")
    root = "019f6249-055d-76d3-b381-cd9d3eb99189"
    children = [m for m in engine.family(root) if m.conversation != root]
    assert [(m.depth, m.parent) for m in children] == [(1, root)] * 3


def test_corpus_review_subagent_is_not_a_child(corpus: Path) -> None:
    _, report = imported(corpus, "agtrace_review-subagent-excerpt_v0.77.0")
    assert report.roots == {"019b88e0-0b0f-7bb0-a9ba-5cc2d8dffde9"}
    assert not report.subagents


def test_whole_corpus_imports_every_thread_and_stops_every_timed_root(corpus: Path) -> None:
    engine, report = imported(corpus)
    assert report.read == report.files
    roots = [n for n in engine.forest(include_stopped=True) if n.status == "live"]
    # Only the publisher-built header files carry no time to stop them at.
    assert [n.conversation for n in roots] == ["019f6249-055d-76d3-b381-cd9d3eb99189"]
