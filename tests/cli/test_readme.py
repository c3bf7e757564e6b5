"""The README's promises: its example runs, and its first lines are the two set-up commands."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def readme(repo: Path) -> str:
    return (repo / "README.md").read_text(encoding="utf-8")


def test_the_readme_example_runs_and_prints_what_it_says(readme: str) -> None:
    example = re.search(r"```python\n(.*?)```", readme, re.S)
    assert example is not None
    result = subprocess.run(
        [sys.executable, "-c", example.group(1)], capture_output=True, text=True, check=True
    )
    lines = result.stdout.splitlines()
    assert lines[0].endswith(" 1 inferred")
    assert lines[2:4] == ["confirmed", "child"]


def test_the_readme_starts_with_the_main_job_and_the_test_command(readme: str) -> None:
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert block[0].startswith("# Run the main job")
    assert block[2].startswith("# Pass the tests")
    assert block[3].endswith(".venv/bin/pytest")
