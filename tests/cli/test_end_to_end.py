"""End to end, as a host does it: one `lineage hook` process per payload, then `lineage tree`.

Also the live terminal tree: `--watch` redraws only when facts arrive; colour only on a TTY.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.live import watch_loop
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.facts import Resolution
from lineage_es.model import ForestNode, Status
from lineage_es.read.render import forest_json, forest_text
from lineage_es.replay import run_replay
from tests.support.feed import Feed

LINEAGE = Path(sys.executable).with_name("lineage")
CURSOR_RUN4 = "cursor/rosetta_run4-task-subagent_v3.9.16/DERIVED_rosetta_run4_stdin.ndjson"
CURSOR_RUN12 = (
    "cursor/rosetta_run1-2-stop-followup-precompact_v3.9.16/DERIVED_rosetta_run1-2_stdin.ndjson"
)


def host_env(tmp_path: Path) -> dict[str, str]:
    """A host's environment with HOME, the data dir and the store in ``tmp_path``."""
    return {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "LINEAGE_STORE": f"sqlite:///{tmp_path / 'live.sqlite'}",
    }


def hook_every_payload(capture: Path, host: str, env: dict[str, str]) -> None:
    """Run ``lineage hook HOST`` once per payload, the payload on stdin, as the host would."""
    for line in capture.read_bytes().splitlines():
        if not line.strip():
            continue
        done = subprocess.run(
            [str(LINEAGE), "hook", host], input=line, capture_output=True, env=env, check=False
        )
        assert (done.returncode, done.stdout) == (0, b""), done.stderr.decode()


def live_tree(env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [str(LINEAGE), "tree", "--format", "json", "--all"],
        capture_output=True,
        env=env,
        check=True,
    )
    tree: dict[str, Any] = orjson.loads(done.stdout)
    return tree


def replayed_tree(capture: Path, host: str, tmp_path: Path) -> dict[str, Any]:
    """The final forest of ``lineage-replay`` on the same capture, into a SQLite store."""
    url = f"sqlite:///{tmp_path / 'replay.sqlite'}"
    run_replay(capture, host=host, store=url)
    with open_engine(url) as engine:
        tree: dict[str, Any] = orjson.loads(forest_json(engine.forest(include_stopped=True)))
    return tree


def shape(tree: Any) -> Any:
    """The tree without ``started_at`` and ``last_seen``: live hooks stamp wall-clock
    receipt times, a replay of a bare capture stamps its logical clock."""
    if isinstance(tree, dict):
        return {k: shape(v) for k, v in tree.items() if k not in ("started_at", "last_seen")}
    if isinstance(tree, list):
        return [shape(v) for v in tree]
    return tree


@pytest.mark.skipif(not LINEAGE.exists(), reason="the lineage console script is not installed")
@pytest.mark.parametrize(
    ("capture", "host"),
    [
        pytest.param(CURSOR_RUN4, "cursor", id="cursor-task-subagent"),
        pytest.param(CURSOR_RUN12, "cursor", id="cursor-stop-followup", marks=pytest.mark.slow),
    ],
)
def test_live_hooks_build_the_tree_a_replay_of_the_capture_builds(
    capture: str, host: str, corpus: Path, tmp_path: Path
) -> None:
    """Every payload of a corpus capture through its own `lineage hook` process gives the same
    forest (conversations, hosts, depth, status, resolution, nesting) as `lineage-replay` on
    the capture; only `started_at` differs (wall clock live, logical clock in a replay)."""
    env = host_env(tmp_path)
    hook_every_payload(corpus / capture, host, env)
    live = live_tree(env)
    assert live["roots"] and not (tmp_path / "state" / "lineage" / "hook.log").exists()
    assert shape(live) == shape(replayed_tree(corpus / capture, host, tmp_path))


@pytest.mark.skipif(not LINEAGE.exists(), reason="the lineage console script is not installed")
def test_live_claude_hooks_build_the_tree_a_replay_builds(tmp_path: Path, repo: Path) -> None:
    """The same for a hand-written Claude Code capture nesting to depth 3 (same caveat on
    `started_at`)."""
    capture = repo / "replays" / "claude" / "nested-depth3" / "nested-depth3.jsonl"
    env = host_env(tmp_path)
    hook_every_payload(capture, "claude", env)
    live = live_tree(env)
    assert live["roots"][0]["children"]
    assert shape(live) == shape(replayed_tree(capture, "claude", tmp_path))


# -- the terminal tree --------------------------------------------------------------------


class Clock:
    """Stands in for ``time.sleep`` in the watch loop: runs one scripted step per call and
    interrupts the loop when the script is done."""

    def __init__(self, *steps: Callable[[], object]) -> None:
        self.steps = list(steps)

    def __call__(self, seconds: float) -> None:
        if not self.steps:
            raise KeyboardInterrupt
        self.steps.pop(0)()


def test_watch_draws_once_when_nothing_arrives(tmp_path: Path) -> None:
    with open_engine(f"sqlite:///{tmp_path / 'j.sqlite'}") as engine:
        draws = watch_loop(
            engine.position, lambda: None, interval=1, sleep=Clock(lambda: None, lambda: None)
        )
    assert draws == 1


def test_watch_redraws_when_a_fact_arrives(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    seen: list[int] = []
    with open_engine(url) as engine, open_engine(url) as writer:
        feed = Feed(writer)

        def draw() -> None:
            seen.append(len(engine.forest()))

        watch_loop(
            engine.position,
            draw,
            interval=1,
            sleep=Clock(lambda: None, lambda: feed.root("R"), lambda: None),
        )
    assert seen == [0, 1]


def node(status: Status = "live", resolution: Resolution = "confirmed") -> ForestNode:
    return ForestNode("R", "claude", 0, status, resolution, "2026-01-01T00:00:00+00:00")


def test_forest_text_is_coloured_only_when_asked() -> None:
    assert "\x1b[" in forest_text((node(),), color=True)
    assert "\x1b[" not in forest_text((node(),))


def test_forest_text_shows_status_depth_age_and_resolution() -> None:
    line = forest_text((node("stopped", "inferred"),), now=datetime(2026, 1, 1, 0, 5, tzinfo=UTC))
    assert line == "○ claude R  d0 stopped 5m ?"


def test_tree_through_a_pipe_has_no_colour(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    with open_engine(url) as engine:
        Feed(engine).root("R")
    result = CliRunner().invoke(main, ["tree", "--store", url])
    assert result.exit_code == 0 and "R" in result.stdout and "\x1b[" not in result.stdout


def test_tree_watch_cannot_travel_back_in_time(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'j.sqlite'}"
    result = CliRunner().invoke(main, ["tree", "--watch", "--position", "3", "--store", url])
    assert result.exit_code == 2 and "--watch" in result.stderr
