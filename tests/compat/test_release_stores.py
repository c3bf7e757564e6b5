"""A store and a journal export written by an earlier release open, verify and answer the
same forests as that release did, now and as of past moments.

Each release's fixture (tests/fixtures/compat/<release>/, built once by
tools/build_compat_fixture.py and never rebuilt) holds the SQLite store it wrote, its journal
export and the forests it answered.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from lineage_es import open_engine
from lineage_es.model import to_json

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "compat"
RELEASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def lineage(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "lineage"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.fixture(params=RELEASES)
def release(request: pytest.FixtureRequest) -> Path:
    folder: Path = FIXTURES / request.param
    return folder


@pytest.fixture
def expected(release: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((release / "expected.json").read_text())
    return loaded


@pytest.fixture
def old_store(release: Path, tmp_path: Path) -> str:
    """A copy of the release's SQLite store (opening it may write to it)."""
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(release / "store.sqlite", copy)
    copy.chmod(0o600)
    return f"sqlite:///{copy}"


@pytest.fixture
def imported_store(release: Path, tmp_path: Path) -> str:
    """A new SQLite store holding the release's journal export, imported by today's code."""
    url = f"sqlite:///{tmp_path / 'imported.sqlite'}"
    done = lineage("journal", "import", str(release / "journal.jsonl"), "--store", url)
    assert done.returncode == 0, done.stderr
    return url


def without_last_seen(value: Any) -> Any:
    """``value`` with every ``last_seen`` key left out: a key added after the release, which
    its pinned answers lack (``test_an_old_sqlite_store_gains_last_seen`` checks it)."""
    if isinstance(value, dict):
        return {k: without_last_seen(v) for k, v in value.items() if k != "last_seen"}
    if isinstance(value, list):
        return [without_last_seen(v) for v in value]
    return value


def answers(url: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The forests the store answers at the moments the fixture pins (without the
    ``last_seen`` the release did not write)."""
    pinned_keys: dict[str, Any] = without_last_seen(answers_now(url, expected))
    return pinned_keys


def answers_now(url: str, expected: dict[str, Any]) -> dict[str, Any]:
    """The forests the store answers at the moments the fixture pins, as today's code
    writes them."""
    with open_engine(url, create=False) as engine:
        past_time = datetime.fromisoformat(expected["as_of_time"]["time"])
        return {
            "position": engine.position(),
            "forest": to_json(engine.forest(include_stopped=True)),
            "as_of_position": {
                p: to_json(engine.as_of(position=int(p)).forest(include_stopped=True))
                for p in expected["as_of_position"]
            },
            "as_of_time": {
                "time": expected["as_of_time"]["time"],
                "forest": to_json(engine.as_of(time=past_time).forest(include_stopped=True)),
            },
        }


def pinned(expected: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in expected.items() if key != "release"}


def test_an_old_sqlite_store_verifies_clean(old_store: str) -> None:
    done = lineage("journal", "verify", "--store", old_store)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_old_sqlite_store_answers_the_forests_it_answered(
    old_store: str, expected: dict[str, Any]
) -> None:
    assert answers(old_store, expected) == pinned(expected)


def test_an_old_sqlite_store_gains_last_seen(old_store: str, expected: dict[str, Any]) -> None:
    """The release's view had no ``last_seen``: opening the store projects the view again,
    and every node then carries the time of its latest fact."""
    stack = list(answers_now(old_store, expected)["forest"])
    assert stack
    while stack:
        node = stack.pop()
        assert node["last_seen"] >= node["started_at"], node
        stack.extend(node["children"])


def test_an_old_sqlite_store_rebuilt_answers_the_same_forests(
    old_store: str, expected: dict[str, Any]
) -> None:
    done = lineage("journal", "rebuild", "--store", old_store)
    assert done.returncode == 0, done.stderr
    assert answers(old_store, expected) == pinned(expected)


def test_an_old_export_imports_verifies_and_answers_the_same_forests(
    imported_store: str, expected: dict[str, Any]
) -> None:
    done = lineage("journal", "verify", "--store", imported_store)
    assert done.returncode == 0, done.stdout + done.stderr
    assert answers(imported_store, expected) == pinned(expected)


def test_an_old_store_takes_new_facts_after_its_snapshot(old_store: str) -> None:
    """The fixture's large root was snapshotted by the old release; a new fact loads it from
    that snapshot and places a child under it as a replay from its events would."""
    root = "c0117a7e-0000-4000-8000-00000000f1a7"
    with open_engine(old_store, create=False) as engine:
        engine.observe(
            "claude",
            {
                "session_id": root,
                "hook_event_name": "PreToolUse",
                "tool_name": "Agent",
                "tool_use_id": "toolu_compat_new",
                "tool_input": {"subagent_type": "Plan"},
            },
        )
        child = engine.observe(
            "claude",
            {
                "session_id": root,
                "hook_event_name": "SubagentStart",
                "agent_id": "afffffffffffffff0",
                "agent_type": "Plan",
            },
        )
    assert child is not None
    assert (child.parent, child.depth, child.resolution) == (root, 1, "inferred")
    assert lineage("journal", "verify", "--store", old_store).returncode == 0
