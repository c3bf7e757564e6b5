"""Which of the hooks ``lineage mcp`` needs to tell its callers a host's config lacks
(:func:`lineage_es.hook_config.missing_mcp_hooks`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineage_es.hook_config import MARKER, HookConfigError, install, missing_mcp_hooks


def _claude_config(path: Path, matcher: str, command: str = f"lineage hook {MARKER}") -> Path:
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))
    return path


@pytest.mark.parametrize("host", ["claude", "cursor"])
def test_install_hooks_leaves_nothing_missing(host: str, tmp_path: Path) -> None:
    change = install(host, "project", cwd=tmp_path, command=f"lineage hook {MARKER}")
    assert missing_mcp_hooks(host, change.path) == ()


def test_a_config_without_our_hooks_misses_every_one(tmp_path: Path) -> None:
    assert missing_mcp_hooks("cursor", tmp_path / "absent.json") == (
        "beforeMCPExecution",
        "afterMCPExecution",
    )


@pytest.mark.parametrize("matcher", ["", "*", "mcp__.*", "Agent|mcp__lineage__list_agents"])
def test_a_claude_matcher_covering_the_servers_tools_is_enough(
    matcher: str, tmp_path: Path
) -> None:
    assert missing_mcp_hooks("claude", _claude_config(tmp_path / "s.json", matcher)) == ()


def test_a_claude_matcher_for_other_tools_misses_pre_tool_use(tmp_path: Path) -> None:
    path = _claude_config(tmp_path / "s.json", "Agent|Task")
    assert missing_mcp_hooks("claude", path) == ("PreToolUse",)


def test_a_hook_that_is_not_ours_does_not_count(tmp_path: Path) -> None:
    path = _claude_config(tmp_path / "s.json", "*", command="guard.sh")
    assert missing_mcp_hooks("claude", path) == ("PreToolUse",)


def test_codex_needs_no_hook_for_mcp(tmp_path: Path) -> None:
    assert missing_mcp_hooks("codex", tmp_path / "hooks.json") == ()


def test_an_unknown_host_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HookConfigError, match="unknown host"):
        missing_mcp_hooks("vim", tmp_path / "x.json")
