"""`install-hooks` over an install an older version wrote: our old entries (any command form,
any matcher, any event) give way to the new ones, and `uninstall-hooks` stays exact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lineage_es.hook_config import (
    MARKER,
    config_path,
    hook_command,
    install,
    is_ours,
    uninstall,
)
from lineage_es.hook_manifest import MANIFEST_SUFFIX

#: The command forms install-hooks wrote before the fast hook (0.1: the hook module).
OLD_COMMANDS = (
    f"/old/venv/bin/python -m lineage_es.hook claude {MARKER}",
    f"/old/venv/bin/python -m lineage_es.hook claude --store sqlite:////j.sqlite {MARKER}",
)

#: What 0.1's install-hooks wrote for Claude Code: every event, matcher ``*`` on tool events.
OLD_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "SubagentStart",
    "SubagentStop",
    "Stop",
    "SessionEnd",
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def old_install(command: str, *, user: dict[str, object] | None = None) -> Path:
    """A Claude config as 0.1's install-hooks left it, beside the user's own ``user`` hooks."""
    hooks: dict[str, list[object]] = {}
    for event in OLD_EVENTS:
        group: dict[str, object] = {"matcher": "*"} if "ToolUse" in event else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": 10}]
        hooks[event] = [group]
    for event, entries in (user or {}).items():
        assert isinstance(entries, list)
        hooks.setdefault(event, [])[:0] = entries
    path = config_path("claude")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))
    created = sorted(set(OLD_EVENTS) - set(user or {}))  # what it noted it had created
    manifest = {"file": not user, "hooks": not user, "version": False, "events": created}
    path.with_name(path.name + MANIFEST_SUFFIX).write_text(json.dumps(manifest))
    return path


def our_entries(path: Path) -> dict[str, list[dict[str, object]]]:
    hooks = json.loads(path.read_text())["hooks"]
    return {
        event: [group for group in groups if any(is_ours(h["command"]) for h in group["hooks"])]
        for event, groups in hooks.items()
    }


@pytest.mark.parametrize("command", [*OLD_COMMANDS, hook_command("claude")])
def test_every_command_form_install_hooks_wrote_is_ours(command: str) -> None:
    assert is_ours(command)


def test_a_command_without_the_marker_is_not_ours() -> None:
    assert not is_ours("/usr/bin/python3 -m lineage_es.hook claude")


@pytest.mark.parametrize("command", OLD_COMMANDS)
def test_reinstalling_over_an_old_install_leaves_only_the_new_entries(command: str) -> None:
    path = old_install(command)
    install("claude")
    ours = our_entries(path)
    assert all(len(groups) == 1 for groups in ours.values())
    assert {g["hooks"][0]["command"] for gs in ours.values() for g in gs} == {  # type: ignore[index]
        hook_command("claude")
    }


def test_reinstalling_narrows_an_old_match_every_tool_post_tool_use() -> None:
    """The same command with 0.1's matcher ``*`` is rewritten with the adapter's matcher."""
    path = old_install(hook_command("claude"))
    change = install("claude")
    assert "PostToolUse" in change.added
    assert our_entries(path)["PostToolUse"][0]["matcher"] == "Agent|Task"


def test_reinstalling_twice_over_an_old_install_changes_nothing_the_second_time() -> None:
    path = old_install(OLD_COMMANDS[0])
    install("claude")
    before = path.read_bytes()
    assert not install("claude").changed and path.read_bytes() == before


def test_our_entry_in_an_event_the_adapter_no_longer_reads_is_removed() -> None:
    path = config_path("claude")
    path.parent.mkdir(parents=True)
    theirs = {"hooks": [{"type": "command", "command": "compact-note.sh"}]}
    ours = {"hooks": [{"type": "command", "command": OLD_COMMANDS[0]}]}
    path.write_text(json.dumps({"hooks": {"PreCompact": [theirs, ours]}}))
    change = install("claude")
    assert "PreCompact" in change.removed
    assert json.loads(path.read_text())["hooks"]["PreCompact"] == [theirs]


def test_uninstalling_an_old_install_restores_the_users_config_exactly() -> None:
    mine = [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}]
    path = old_install(OLD_COMMANDS[1], user={"PreToolUse": mine})
    uninstall("claude")
    assert json.loads(path.read_text()) == {"hooks": {"PreToolUse": mine}}


def test_uninstalling_after_an_upgrade_removes_the_file_the_old_install_created() -> None:
    path = old_install(OLD_COMMANDS[0])
    install("claude")
    uninstall("claude")
    assert not path.exists()
