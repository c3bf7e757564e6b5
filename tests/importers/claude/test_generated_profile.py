"""``lineage import claude`` on a generated heavy-profile folder (``tools/gen_claude_profile``):
what it journals does not move when the importer is made faster, and reading the sessions in
forked workers journals exactly what reading them here does."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import LineageError
from lineage_es.facts import Observation
from lineage_es.importers import ImportReport, claude_projects, import_claude
from lineage_es.importers.forked import in_order, shares
from lineage_es.model import ForestNode
from tools.gen_claude_profile import Truth, generate

#: A small profile with every shape of the large one: parallel and background spawns,
#: depth-2 agents with sidecars, the host's own compaction helpers, untimed tails.
PROFILE = {"roots": 14, "depth1": 40, "depth2": 9, "megabytes": 2.0, "seed": 11}

#: Digests of what the importer gives the engine (OBSERVATIONS) and of the answers (ANSWERS).
#: Reading in forked workers, copying tail lines and looking up missing sidecars leave both as
#: a plain read makes them. OBSERVATIONS also pins that a notice repeating a stop already read
#: (the queued notice, then the same one delivered) is journaled once; that an agent file
#: without a sidecar starts its agent placed by what the transcripts state
#: (``ChildIdentified``, ``transcript``); and that the stop at a file's last row is observed
#: apart from the row, under a key of its own, marked provisional (``Stopped.provisional``: the
#: file may go on). A change to the importer must leave both alone; a deliberate change to
#: what a row means updates them (``python -m tests.importers.claude.test_generated_profile``
#: prints the new ones).
OBSERVATIONS = "f7aa9524b44e2b2e0bc46f4cade42334"
ANSWERS = "89135a344d83c81b5e7031108c452886"


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Truth]:
    folder = tmp_path_factory.mktemp("profile") / "projects"
    return folder, generate(folder, **PROFILE)


def _digest(lines: Iterable[str]) -> str:
    return hashlib.blake2b("\n".join(lines).encode(), digest_size=16).hexdigest()


def _observation(observation: Observation) -> str:
    at = observation.at.isoformat() if observation.at else None
    facts = ";".join(repr(fact) for fact in observation.facts)
    return f"{observation.requester}|{observation.root}|{observation.key}|{at}|{facts}"


def _node(node: ForestNode, out: list[str]) -> None:
    out.append(
        f"{'  ' * node.depth}{node.conversation} {node.status} {node.resolution} "
        f"{node.started_at} {node.ambiguous}"
    )
    for child in node.children:
        _node(child, out)


def answers(engine: Engine) -> list[str]:
    """The whole forest, and every root's family, as text."""
    out: list[str] = []
    for root in engine.forest(include_stopped=True):
        _node(root, out)
        for m in engine.family(root.conversation):
            out.append(
                f"{m.conversation} {m.root} {m.parent} {m.depth} {m.status} {m.resolution} "
                f"{m.started_at} {m.stopped_at} {m.name}"
            )
    return out


def imported(folder: Path, url: str = "memory://") -> tuple[list[str], list[str], ImportReport]:
    """What the importer gave the engine, in order, the answers after, and the report."""
    given: list[str] = []
    with open_engine(url) as engine:
        many = engine.observe_many

        def recording(observations: Iterable[Observation], **options: Any) -> int:
            batch = list(observations)
            given.extend(_observation(o) for o in batch)
            return many(batch, **options)

        engine.observe_many = recording  # type: ignore[method-assign]
        report = import_claude(engine, folder)
        return given, answers(engine), report


def test_profile_imports_every_member_with_nothing_skipped(
    profile: tuple[Path, Truth],
) -> None:
    folder, truth = profile
    _, found, report = imported(folder)
    assert not report.skipped
    assert report.read == report.files == truth.files
    assert report.roots == set(truth.roots)
    assert report.subagents == set(truth.children)
    assert len(found) == 2 * truth.members()  # each member once as a node, once in its family


def test_profile_journals_what_it_did_before_the_importer_was_made_faster(
    profile: tuple[Path, Truth],
) -> None:
    folder, _ = profile
    given, found, _ = imported(folder)
    assert (_digest(given), _digest(found)) == (OBSERVATIONS, ANSWERS)


def test_forked_workers_journal_exactly_what_one_process_does(
    profile: tuple[Path, Truth], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = profile
    here = imported(folder, f"sqlite:///{tmp_path / 'here.sqlite'}")
    monkeypatch.setattr(claude_projects, "_workers", lambda sessions, total: 2)
    monkeypatch.setattr(claude_projects, "BATCH_BYTES", 512 * 1024)  # several batches
    forked = imported(folder, f"sqlite:///{tmp_path / 'forked.sqlite'}")
    monkeypatch.setattr(claude_projects, "_workers", lambda sessions, total: 1)
    batched = imported(folder)
    assert forked[:2] == batched[:2]
    assert (forked[2].read, forked[2].bytes, forked[2].observations) == (
        here[2].read,
        here[2].bytes,
        here[2].observations,
    )
    assert sorted(forked[0]) == sorted(here[0])
    assert forked[1] == here[1]


def test_forked_reimport_reads_nothing(
    profile: tuple[Path, Truth], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = profile
    monkeypatch.setattr(claude_projects, "_workers", lambda sessions, total: 2)
    with open_engine("memory://") as engine:
        first = import_claude(engine, folder)
        position = engine.position()
        again = import_claude(engine, folder)
        assert (first.read, again.read, again.unchanged) == (first.files, 0, first.files)
        assert engine.position() == position


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp) / "projects", **PROFILE)
        given, found, _ = imported(Path(tmp) / "projects")
        print(f'OBSERVATIONS = "{_digest(given)}"\nANSWERS = "{_digest(found)}"')


# -- the forked readers ---------------------------------------------------------------------


def test_forked_results_come_back_in_task_order() -> None:
    sizes = [9, 1, 1, 5, 2, 8, 1, 1, 3, 7]
    results = list(in_order(lambda task: (task, os.getpid()), sizes, 3))
    assert [task for task, _ in results] == list(range(10))
    assert len({pid for _, pid in results} - {os.getpid()}) == 3
    assert shares(sizes, 2) == [0, 1, 1, 1, 1, 0, 1, 1, 1, 1]


def test_an_error_in_a_worker_is_raised_here_at_its_task() -> None:
    def work(task: int) -> int:
        if task == 3:
            raise ValueError("row 3 is cursed")
        return task

    got: list[int] = []
    with pytest.raises(ValueError, match="row 3 is cursed") as raised:
        got.extend(in_order(work, [1] * 6, 2))
    assert got == [0, 1, 2]
    assert "in a forked reading process" in "".join(raised.value.__notes__)


def test_a_worker_that_dies_is_reported_not_waited_for() -> None:
    def work(task: int) -> int:
        if task == 2:
            os._exit(3)
        return task

    with pytest.raises(LineageError, match="ended before it was done"):
        list(in_order(work, [1] * 5, 2))


def test_where_no_process_can_start_this_one_does_the_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    assert list(in_order(lambda task: (task, os.getpid()), [1] * 4, 2)) == [
        (task, os.getpid()) for task in range(4)
    ]
