"""``lineage-replay --update`` is refused under CI, and ``CI`` set empty, to ``0`` or to
``false`` is not CI: a person who unsets it that way can update."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_es.replay import cli
from lineage_es.replay.ci import running_in_ci

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    row = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize("value", ["", "0", "false", "FALSE", " false "])
def test_ci_empty_zero_or_false_lets_update_write(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    target = tmp_path / "s.expected.yaml"
    result = CliRunner().invoke(
        cli.main, [str(session), "--host", "claude", "--update", str(target)]
    )
    assert result.exit_code == 0, result.output
    assert target.is_file()


@pytest.mark.parametrize("value", ["true", "1", "yes", "True"])
def test_ci_set_to_anything_else_refuses_update(
    session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    target = tmp_path / "s.expected.yaml"
    result = CliRunner().invoke(
        cli.main, [str(session), "--host", "claude", "--update", str(target)]
    )
    assert result.exit_code == 2 and "CI" in result.stderr
    assert not target.exists()


def test_ci_unset_is_not_ci() -> None:
    assert not running_in_ci({})
