"""`lineage install-mcp` / `uninstall-mcp`: the config files, run against a temporary HOME."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit

from lineage_es.mcp_config import (
    SERVER_NAME,
    McpConfigError,
    config_path,
    install,
    server_command,
    uninstall,
)
from tests.support.mcp_configs import (
    HOSTS,
    ORIGINALS,
    USER_SERVERS,
    isolate_home,
    read_config,
    servers,
    this_python,
    write_original,
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_home(tmp_path, monkeypatch)


def test_user_scope_paths_are_the_hosts_own(home: Path) -> None:
    assert [config_path(h) for h in HOSTS] == [
        home / ".claude.json",
        home / ".codex" / "config.toml",
        home / ".cursor" / "mcp.json",
    ]


def test_project_scope_paths_are_in_the_working_folder() -> None:
    assert [config_path(h, "project") for h in HOSTS] == [
        Path.cwd() / ".mcp.json",
        Path.cwd() / ".codex" / "config.toml",
        Path.cwd() / ".cursor" / "mcp.json",
    ]


def test_claude_config_dir_and_codex_home_move_their_configs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    assert config_path("claude") == tmp_path / "claude" / ".claude.json"
    assert config_path("codex") == tmp_path / "codex" / "config.toml"


def test_each_host_gets_a_stdio_server_in_its_own_shape() -> None:
    command = server_command(python="/opt/venv/bin/python", store="sqlite:////data/j.sqlite")
    args = ["-m", "lineage_es", "mcp", "--store", "sqlite:////data/j.sqlite"]
    found = {host: servers(host, install(host, command=command).path) for host in HOSTS}
    assert found["claude"][SERVER_NAME] == {
        "type": "stdio",
        "command": "/opt/venv/bin/python",
        "args": args,
    }
    assert found["codex"][SERVER_NAME] == {"command": "/opt/venv/bin/python", "args": args}
    assert found["cursor"][SERVER_NAME] == {"command": "/opt/venv/bin/python", "args": args}


def test_the_command_is_this_python_by_absolute_path_running_lineage_mcp() -> None:
    assert server_command() == [this_python(), "-m", "lineage_es", "mcp"]


def test_a_relative_sqlite_store_is_pinned_as_an_absolute_path() -> None:
    command = server_command(store="sqlite:///journal.sqlite")
    assert command[-2:] == ["--store", f"sqlite:///{Path.cwd() / 'journal.sqlite'}"]


def test_a_memory_store_is_refused_the_server_could_read_nothing_from_it() -> None:
    with pytest.raises(McpConfigError, match="holds nothing the server could read"):
        server_command(store="memory://")


def test_codex_passes_the_store_variables_on_when_no_store_is_pinned() -> None:
    entry = servers("codex", install("codex").path)[SERVER_NAME]
    assert entry["env_vars"] == ["LINEAGE_STORE", "XDG_DATA_HOME"]
    pinned = install("codex", command=server_command(store="sqlite:////j.sqlite"))
    assert "env_vars" not in servers("codex", pinned.path)[SERVER_NAME]


@pytest.mark.parametrize("host", HOSTS)
def test_install_keeps_the_users_own_servers_and_settings(host: str) -> None:
    path = config_path(host)
    write_original(path, host)
    before = read_config(host, path)
    install(host)
    after = read_config(host, path)
    table = "mcp_servers" if host == "codex" else "mcpServers"
    del after[table][SERVER_NAME]
    assert after == before and list(after) == list(before)
    assert USER_SERVERS[host] in after[table]


def test_json_keeps_the_indent_it_was_written_with() -> None:
    path = config_path("cursor")
    write_original(path, "cursor")
    install("cursor")
    assert path.read_text().startswith('{\n    "mcpServers": {\n        "browser": {')


def test_codex_toml_keeps_every_comment_and_line_of_the_users() -> None:
    path = config_path("codex")
    write_original(path, "codex")
    diff = install("codex").diff().splitlines()[2:]  # past the ---/+++ header
    assert [line for line in diff if line.startswith("-")] == []
    assert next(line for line in diff if line.startswith("+")) == "+[mcp_servers.lineage]"


def test_codex_servers_kept_as_dotted_keys_keep_their_meaning() -> None:
    """A table added among dotted keys would capture the keys after it: it goes at the end."""
    path = config_path("codex")
    path.parent.mkdir(parents=True)
    path.write_text('mcp_servers.docs.command = "npx"\nmodel = "o3"\n')
    install("codex")
    document = read_config("codex", path)
    assert document["model"] == "o3"
    assert set(document["mcp_servers"]) == {"docs", SERVER_NAME}


@pytest.mark.parametrize("host", HOSTS)
def test_install_twice_changes_nothing_the_second_time(host: str) -> None:
    path = install(host).path
    before = path.read_bytes()
    again = install(host)
    assert not again.changed and path.read_bytes() == before


def test_install_with_another_store_replaces_our_entry() -> None:
    install("claude")
    change = install("claude", command=server_command(store="sqlite:////other.sqlite"))
    assert change.action == "replaced"
    assert servers("claude", change.path)[SERVER_NAME]["args"][-1] == "sqlite:////other.sqlite"


@pytest.mark.parametrize("host", HOSTS)
def test_install_keeps_the_file_as_it_was_before_the_first_change(host: str) -> None:
    path = config_path(host)
    original = write_original(path, host)
    install(host)
    change = install(host, command=server_command(store="sqlite:////other.sqlite"))
    assert change.backup is not None and change.backup.read_text() == original


@pytest.mark.parametrize("host", HOSTS)
def test_uninstall_gives_the_users_file_back_byte_for_byte(host: str) -> None:
    path = config_path(host)
    original = write_original(path, host)
    install(host)
    install(host, command=server_command(store="sqlite:////other.sqlite"))
    change = uninstall(host)
    assert change.restored and path.read_bytes() == original.encode()


def test_an_entry_of_ours_found_without_its_record_is_never_restored_as_the_earlier_file(
    home: Path,
) -> None:
    """The record of what install-mcp created is gone (a dotfiles copy): uninstall still
    takes the entry out rather than putting back a file that holds it."""
    path = config_path("cursor")
    write_original(path, "cursor")
    install("cursor")
    for record in home.glob(".cursor/*.lineage-es-mcp.json"):
        record.unlink()
    install("cursor", command=server_command(store="sqlite:////other.sqlite"))
    uninstall("cursor")
    assert SERVER_NAME not in servers("cursor", path)


@pytest.mark.parametrize("host", HOSTS)
def test_uninstall_removes_a_file_install_created(host: str) -> None:
    path = install(host, "project").path
    uninstall(host, "project")
    assert not path.exists()


def test_uninstall_keeps_what_the_host_changed_since_the_install() -> None:
    """Claude Code rewrites ~/.claude.json as it runs: only our entry may go."""
    path = config_path("claude")
    write_original(path, "claude")
    install("claude")
    document = json.loads(path.read_text())
    document["numStartups"] = 42
    path.write_text(json.dumps(document, indent=2) + "\n")
    change = uninstall("claude")
    expected = json.loads(ORIGINALS["claude"])
    expected["numStartups"] = 42
    assert not change.restored and json.loads(path.read_text()) == expected


def test_uninstall_keeps_the_codex_comments_added_since_the_install() -> None:
    path = config_path("codex")
    write_original(path, "codex")
    install("codex")
    path.write_text("# added later\n" + path.read_text())
    uninstall("codex")
    assert path.read_text() == "# added later\n" + ORIGINALS["codex"]


def test_uninstall_takes_the_server_table_it_created_when_the_file_changed_meanwhile() -> None:
    path = config_path("cursor")
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "dark"}\n')
    install("cursor")
    path.write_text(path.read_text().replace('"dark"', '"light"'))
    uninstall("cursor")
    assert json.loads(path.read_text()) == {"theme": "light"}


def test_uninstall_keeps_an_empty_server_table_the_user_had() -> None:
    path = config_path("cursor")
    path.parent.mkdir(parents=True)
    path.write_text('{"mcpServers": {}, "theme": "dark"}\n')
    install("cursor")
    path.write_text(path.read_text().replace('"dark"', '"light"'))
    uninstall("cursor")
    assert json.loads(path.read_text()) == {"mcpServers": {}, "theme": "light"}


def test_uninstall_with_nothing_installed_changes_nothing() -> None:
    path = config_path("claude")
    write_original(path, "claude")
    assert not uninstall("claude").changed and not uninstall("codex").changed
    assert path.read_text() == ORIGINALS["claude"]


@pytest.mark.parametrize("host", HOSTS)
def test_a_server_named_lineage_that_is_not_ours_is_never_overwritten(host: str) -> None:
    path = config_path(host)
    if host == "codex":
        text = '[mcp_servers.lineage]\ncommand = "lineage-fork"\n'
    else:
        text = json.dumps({"mcpServers": {"lineage": {"command": "lineage-fork"}}}, indent=2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(McpConfigError, match=rf"^{path}:\d+: an MCP server named 'lineage'"):
        install(host)
    assert path.read_text() == text and not uninstall(host).changed


@pytest.mark.parametrize(
    ("host", "text", "where"),
    [
        ("claude", '{\n  "theme": "dark",\n  "mcpServers": {,}\n}\n', ":3:18: not valid JSON"),
        ("cursor", "[1, 2]\n", ":1:1: holds a JSON list, not an object"),
        ("cursor", '{\n  "mcpServers": []\n}\n', ":2:1: 'mcpServers' is not an object"),
        ("codex", 'model = "o3"\n\n[mcp_servers.docs\n', ":3:18: not valid TOML"),
        ("codex", 'mcp_servers = "none"\n', ":1:1: 'mcp_servers' is not a table"),
    ],
)
def test_a_config_that_does_not_parse_is_refused_with_its_line_and_left_alone(
    host: str, text: str, where: str
) -> None:
    path = config_path(host)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    with pytest.raises(McpConfigError) as refused:
        install(host)
    assert str(refused.value).startswith(f"{path}{where}")
    assert "nothing was changed" in str(refused.value) and path.read_text() == text


def test_dry_run_writes_nothing_and_shows_the_change_as_a_diff() -> None:
    path = config_path("codex")
    write_original(path, "codex")
    change = install("codex", dry_run=True)
    assert path.read_text() == ORIGINALS["codex"]
    added = [line for line in change.diff().splitlines() if line.startswith("+")]
    assert added[1] == "+[mcp_servers.lineage]"


def test_install_writes_a_linked_config_where_it_lives(home: Path) -> None:
    target = home / "dotfiles" / "mcp.json"
    write_original(target, "cursor")
    link = config_path("cursor")
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    install("cursor")
    uninstall("cursor")
    assert link.is_symlink() and target.read_text() == ORIGINALS["cursor"]


def test_the_written_file_keeps_the_users_permissions() -> None:
    path = config_path("codex")
    write_original(path, "codex")
    path.chmod(0o640)
    install("codex")
    assert path.stat().st_mode & 0o777 == 0o640


def test_codex_toml_written_is_what_codex_reads() -> None:
    """The table parses back as Codex's ``[mcp_servers.<name>]`` with command and args."""
    path = install("codex", command=server_command(python="/py")).path
    table = tomlkit.parse(path.read_text())["mcp_servers"]
    assert table[SERVER_NAME]["command"] == "/py"
