"""`lineage install-mcp` and the hooks its server needs to tell which conversation calls it:
Claude Code's PreToolUse hook for mcp__ tools, Cursor's beforeMCPExecution hook, none for Codex."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineage_es import hook_config
from lineage_es.mcp_caller_hooks import missing_caller_hooks
from tests.support.mcp_configs import isolate_home, lineage


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_home(tmp_path, monkeypatch)


def warnings(stderr: str) -> str:
    """The warning lines of ``stderr``."""
    return "\n".join(line for line in stderr.splitlines() if line.startswith("warning:"))


def claude_pre_tool_use(matcher: str) -> None:
    """A user-scope Claude config whose only hook of ours is PreToolUse with ``matcher``."""
    path = hook_config.config_path("claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = {"type": "command", "command": hook_config.hook_command("claude")}
    group = {"matcher": matcher, "hooks": [handler]}
    path.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))


def test_without_hooks_install_mcp_names_the_missing_ones_and_the_command() -> None:
    result = lineage("install-mcp", "claude", "cursor")
    assert result.exit_code == 0
    assert (
        "warning: the Claude Code PreToolUse hook for mcp__ tools is not installed" in result.stderr
    )
    assert "run `lineage install-hooks claude`" in result.stderr
    assert (
        "warning: the Cursor beforeMCPExecution and afterMCPExecution hooks are not installed"
        in result.stderr
    )
    assert "run `lineage install-hooks cursor`" in result.stderr


def test_codex_needs_no_hook_to_tell_its_caller() -> None:
    result = lineage("install-mcp", "codex")
    assert result.exit_code == 0 and "hook" not in warnings(result.stderr)


@pytest.mark.parametrize("host", ["claude", "cursor"])
def test_installed_hooks_satisfy_the_check(host: str) -> None:
    lineage("install-hooks", host)
    assert missing_caller_hooks(host) is None
    assert "hook" not in warnings(lineage("install-mcp", host).stderr)


def test_with_hooks_installs_the_hooks_too() -> None:
    result = lineage("install-mcp", "claude", "cursor", "--with-hooks")
    assert result.exit_code == 0 and "hook" not in warnings(result.stderr)
    assert "claude: added hooks for" in result.stderr
    assert missing_caller_hooks("claude") is None and missing_caller_hooks("cursor") is None


def test_with_hooks_dry_run_writes_neither_config() -> None:
    result = lineage("install-mcp", "cursor", "--with-hooks", "--dry-run")
    assert result.exit_code == 0 and "beforeMCPExecution" in result.stdout
    assert not hook_config.config_path("cursor").exists()


def test_with_hooks_dry_run_shows_the_hook_configs_change_as_a_diff_of_the_file() -> None:
    path = hook_config.config_path("cursor")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "hooks": {"stop": [{"command": "x"}]}}, indent=2))
    stdout = lineage("install-mcp", "cursor", "--with-hooks", "--dry-run").stdout
    hooks_diff = stdout[stdout.index(f"--- {path}\n+++ {path}\n") :]
    assert '\n         "command": "x"\n' in hooks_diff  # the user's, unchanged: context
    assert '\n+    "beforeMCPExecution": [\n' in hooks_diff


@pytest.mark.parametrize(("matcher", "counts"), [("mcp__.*", True), ("Bash|Edit", False)])
def test_a_claude_pre_tool_use_hook_counts_only_when_its_matcher_takes_mcp_tools(
    matcher: str, counts: bool
) -> None:
    claude_pre_tool_use(matcher)
    assert (missing_caller_hooks("claude") is None) is counts


def test_a_hook_of_the_users_own_does_not_count() -> None:
    path = hook_config.config_path("cursor")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "hooks": {"beforeMCPExecution": [{"command": "x"}]}}))
    missing = missing_caller_hooks("cursor")
    assert missing is not None and missing.events == ("beforeMCPExecution", "afterMCPExecution")


def test_user_hooks_serve_a_project_server_but_project_hooks_not_a_user_one() -> None:
    lineage("install-hooks", "cursor")
    assert missing_caller_hooks("cursor", "project") is None
    lineage("uninstall-hooks", "cursor")
    lineage("install-hooks", "cursor", "--scope", "project")
    assert missing_caller_hooks("cursor", "project") is None
    missing = missing_caller_hooks("cursor", "user")
    assert missing is not None and missing.scope == "user"


def test_project_scope_advice_names_the_project_scope() -> None:
    result = lineage("install-mcp", "cursor", "--scope", "project")
    assert "run `lineage install-hooks cursor --scope project`" in result.stderr


def test_a_project_server_is_served_by_hooks_split_between_user_and_project() -> None:
    ours = {"command": hook_config.hook_command("cursor")}
    placed: tuple[tuple[hook_config.Scope, str], ...] = (
        ("user", "beforeMCPExecution"),
        ("project", "afterMCPExecution"),
    )
    for scope, event in placed:
        path = hook_config.config_path("cursor", scope)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"version": 1, "hooks": {event: [ours]}}))
    assert missing_caller_hooks("cursor", "project") is None
    missing = missing_caller_hooks("cursor", "user")
    assert missing is not None and missing.events == ("afterMCPExecution",)
