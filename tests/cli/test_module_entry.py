"""``python -m lineage_es`` is the ``lineage`` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson


def test_python_dash_m_runs_the_lineage_command(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    command = [sys.executable, "-m", "lineage_es"]
    recording = Path(__file__).parents[2] / "replays/codex/root-only/root-only.jsonl"
    ingested = subprocess.run(
        [*command, "ingest", "--store", store, str(recording)], capture_output=True, check=False
    )
    assert ingested.returncode == 0, ingested.stderr
    done = subprocess.run(
        [*command, "tree", "--store", store, "--format", "json"], capture_output=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert [root["host"] for root in orjson.loads(done.stdout)["roots"]] == ["codex"]


def test_python_dash_m_help_names_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lineage_es", "--help"], capture_output=True, check=False
    )
    assert done.returncode == 0
    assert b"Usage: python -m lineage_es" in done.stdout
