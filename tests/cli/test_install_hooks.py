"""`lineage install-hooks` / `uninstall-hooks`, run against a temporary HOME."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import lineage_es
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.hook_config import (
    MARKER,
    HookConfigError,
    config_path,
    hook_command,
    install,
    uninstall,
)
from lineage_es.hosts import adapter

HOSTS = ("claude", "codex", "cursor")

#: A user's own hooks and settings, in each host's shape, that must survive both commands.
EXISTING: dict[str, dict[str, object]] = {
    "claude": {
        "model": "opus",
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}
            ],
            "Notification": [{"hooks": [{"type": "command", "command": "notify.sh"}]}],
        },
    },
    "codex": {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo '{}'"}]}]},
    },
    "cursor": {
        "version": 1,
        "hooks": {"afterFileEdit": [{"command": "fmt.sh"}], "stop": [{"command": "ding.sh"}]},
    },
}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME and working folder; the hosts' config env vars unset."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


def write(path: Path, document: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2))


def read(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    return data


def commands(host: str, document: dict[str, object]) -> dict[str, list[str]]:
    """Every command configured per event."""
    found: dict[str, list[str]] = {}
    hooks = document.get("hooks", {})
    assert isinstance(hooks, dict)
    for event, entries in hooks.items():
        for entry in entries:
            if host == "cursor":
                found.setdefault(event, []).append(entry["command"])
            else:
                found.setdefault(event, []).extend(h["command"] for h in entry["hooks"])
    return found


@pytest.mark.parametrize("host", HOSTS)
def test_install_adds_one_hook_for_every_event_the_adapter_reads(host: str) -> None:
    change = install(host)
    found = commands(host, read(change.path))
    assert sorted(found) == sorted(adapter(host).hook_events)
    assert all(cmds == [hook_command(host)] for cmds in found.values())


def test_user_scope_paths_are_the_hosts_own(home: Path) -> None:
    assert [config_path(h) for h in HOSTS] == [
        home / ".claude" / "settings.json",
        home / ".codex" / "hooks.json",
        home / ".cursor" / "hooks.json",
    ]


def test_project_scope_writes_in_the_working_folder() -> None:
    change = install("cursor", "project")
    assert change.path == Path.cwd() / ".cursor" / "hooks.json"
    assert read(change.path)["version"] == 1


def test_codex_home_moves_the_codex_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert install("codex").path == tmp_path / "codex" / "hooks.json"


def test_the_command_is_this_python_running_the_fast_hook_script_without_site() -> None:
    command = hook_command("claude", python="/opt/venv/bin/python")
    script = Path(lineage_es.__file__).parent / "hook_fast.py"
    assert command == f"/opt/venv/bin/python -S {script} claude {MARKER}"


def test_a_recording_hook_runs_the_full_hook_module() -> None:
    """Only the full hook records; it is also what ``full`` asks for."""
    command = hook_command("claude", python="/opt/venv/bin/python", record=Path("/r/c.jsonl"))
    assert command == f"/opt/venv/bin/python -m lineage_es.hook claude --record /r/c.jsonl {MARKER}"
    full = hook_command("codex", python="/opt/venv/bin/python", full=True)
    assert full == f"/opt/venv/bin/python -m lineage_es.hook codex {MARKER}"


def test_tool_events_match_the_tools_the_adapter_reads() -> None:
    document = read(install("claude").path)
    hooks = document["hooks"]
    assert isinstance(hooks, dict)
    assert hooks["PreToolUse"][0]["matcher"] == "*"
    assert hooks["PostToolUse"][0]["matcher"] == "Agent|Task"
    assert "matcher" not in hooks["Stop"][0]


@pytest.mark.parametrize("host", HOSTS)
def test_install_keeps_every_existing_entry(host: str) -> None:
    path = config_path(host)
    write(path, EXISTING[host])
    install(host)
    before = commands(host, EXISTING[host])
    after = commands(host, read(path))
    assert all(set(cmds) <= set(after[event]) for event, cmds in before.items())


def test_install_keeps_other_settings() -> None:
    path = config_path("claude")
    write(path, EXISTING["claude"])
    install("claude")
    assert read(path)["model"] == "opus"


@pytest.mark.parametrize("host", HOSTS)
def test_install_twice_changes_nothing_the_second_time(host: str) -> None:
    path = install(host).path
    before = path.read_bytes()
    again = install(host)
    assert not again.changed and path.read_bytes() == before


def test_install_replaces_an_older_entry_of_ours_instead_of_adding_one() -> None:
    install("claude", command=hook_command("claude", python="/old/python"))
    change = install("claude")
    found = commands("claude", read(change.path))
    assert all(cmds == [hook_command("claude")] for cmds in found.values())


def test_install_keeps_a_backup_of_the_file_it_changed() -> None:
    path = config_path("cursor")
    write(path, EXISTING["cursor"])
    change = install("cursor")
    assert change.backup is not None and read(change.backup) == EXISTING["cursor"]


@pytest.mark.parametrize("host", HOSTS)
def test_uninstall_restores_the_config_as_it_was(host: str) -> None:
    path = config_path(host)
    write(path, EXISTING[host])
    install(host)
    uninstall(host)
    assert read(path) == EXISTING[host]


def test_uninstall_leaves_an_unmarked_lineage_entry_alone() -> None:
    """Only what install-hooks added (it carries the marker) is removed."""
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "lineage hook claude"}]}]}}
    path = config_path("claude")
    write(path, mine)
    install("claude")
    uninstall("claude")
    assert read(path) == mine


def test_uninstall_removes_a_config_that_install_created() -> None:
    path = install("codex").path
    uninstall("codex")
    assert not path.exists()


@pytest.mark.parametrize(
    ("host", "before"),
    [
        ("claude", {}),
        ("claude", {"model": "opus", "hooks": {}}),
        ("claude", {"hooks": {"Stop": []}}),
        ("cursor", {"version": 1, "hooks": {}}),
    ],
)
def test_uninstall_keeps_the_empty_containers_the_user_had(
    host: str, before: dict[str, object]
) -> None:
    path = config_path(host)
    write(path, before)
    install(host)
    uninstall(host)
    assert read(path) == before


def test_install_writes_a_linked_config_where_it_lives(home: Path) -> None:
    target = home / "dotfiles" / "settings.json"
    write(target, EXISTING["claude"])
    link = config_path("claude")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    install("claude")
    assert link.is_symlink() and MARKER in target.read_text()


def test_a_relative_sqlite_store_is_written_into_the_command_as_an_absolute_path() -> None:
    command = hook_command("claude", store="sqlite:///journal.sqlite")
    assert f"--store sqlite:///{Path.cwd() / 'journal.sqlite'}" in command


def test_uninstall_without_a_config_changes_nothing() -> None:
    assert not uninstall("claude").changed


def test_dry_run_writes_nothing_and_shows_the_result() -> None:
    change = install("claude", dry_run=True)
    assert not change.path.exists()
    assert change.text is not None and MARKER in change.text


def test_a_config_that_is_not_json_is_refused_and_left_alone() -> None:
    path = config_path("claude")
    path.parent.mkdir(parents=True)
    path.write_text("{oops")
    with pytest.raises(HookConfigError, match="not valid JSON"):
        install("claude")
    assert path.read_text() == "{oops"


def test_a_config_that_is_not_utf8_is_refused_naming_the_file_and_left_alone() -> None:
    path = config_path("claude")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"hooks": "\xe9"}')
    with pytest.raises(HookConfigError, match=r"not UTF-8 text \(byte 11\)") as caught:
        install("claude")
    assert str(path) in str(caught.value)
    assert path.read_bytes() == b'{"hooks": "\xe9"}'


def test_hooks_that_are_not_an_object_are_refused() -> None:
    write(config_path("cursor"), {"version": 1, "hooks": []})
    with pytest.raises(HookConfigError, match="'hooks' is not an object"):
        install("cursor")


def test_the_written_file_keeps_the_previous_permissions() -> None:
    path = config_path("claude")
    write(path, {})
    path.chmod(0o640)
    install("claude")
    assert path.stat().st_mode & 0o777 == 0o640


def test_cli_install_hooks_reports_what_it_added() -> None:
    result = CliRunner().invoke(main, ["install-hooks", "claude", "cursor"])
    assert result.exit_code == 0
    assert config_path("claude").exists() and config_path("cursor").exists()
    assert "added SessionStart" in result.stderr


def test_cli_install_hooks_dry_run_prints_the_config() -> None:
    result = CliRunner().invoke(main, ["install-hooks", "cursor", "--dry-run"])
    assert result.exit_code == 0 and json.loads(result.stdout)["version"] == 1
    assert not config_path("cursor").exists()


def test_cli_install_hooks_on_a_broken_config_exits_2_with_the_reason() -> None:
    path = config_path("codex")
    path.parent.mkdir(parents=True)
    path.write_text("[1,")
    result = CliRunner().invoke(main, ["install-hooks", "codex"])
    assert result.exit_code == 2 and "not valid JSON" in result.stderr


def test_cli_uninstall_hooks_removes_what_install_added() -> None:
    write(config_path("claude"), EXISTING["claude"])
    CliRunner().invoke(main, ["install-hooks", "claude"])
    result = CliRunner().invoke(main, ["uninstall-hooks", "claude"])
    assert result.exit_code == 0 and read(config_path("claude")) == EXISTING["claude"]


def test_the_installed_command_runs_in_a_shell_and_journals(tmp_path: Path, home: Path) -> None:
    """What a host does with the entry: run its command through a shell, payload on stdin."""
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    install("claude", command=hook_command("claude", store=store))
    groups = read(config_path("claude"))["hooks"]["SessionStart"]  # type: ignore[index]
    command = groups[0]["hooks"][0]["command"]
    payload = {"session_id": "s-1", "hook_event_name": "SessionStart", "source": "startup"}
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=orjson.dumps(payload),
        capture_output=True,
        env=env,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, b"")
    with open_engine(store) as engine:
        assert engine.lineage("s-1").depth == 0


def test_cli_install_hooks_tells_what_a_host_needs_before_it_runs_new_hooks() -> None:
    result = CliRunner().invoke(main, ["install-hooks", "codex", "claude"])
    assert result.exit_code == 0
    note = adapter("codex").hook_file.install_note
    assert note is not None and f"codex: {note}" in result.stderr
    assert "open /hooks in Codex" in result.stderr
    assert adapter("claude").hook_file.install_note is None
    again = CliRunner().invoke(main, ["install-hooks", "codex"])
    assert "open /hooks" not in again.stderr  # nothing new: nothing to trust
