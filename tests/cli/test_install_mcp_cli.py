"""`lineage install-mcp` / `uninstall-mcp` as a person runs them, and the entry as a host
starts it."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from lineage_es.mcp_config import SERVER_NAME, config_path
from tests.support.mcp_configs import (
    ORIGINALS,
    isolate_home,
    lineage,
    servers,
    write_original,
)


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_home(tmp_path, monkeypatch)


def test_install_mcp_reports_each_host_it_changed() -> None:
    result = lineage("install-mcp", "claude", "codex", "cursor")
    assert result.exit_code == 0
    for host in ("claude", "codex", "cursor"):
        assert f"{host}: added MCP server lineage in {config_path(host)}" in result.stderr
        assert SERVER_NAME in servers(host, config_path(host))


def test_install_mcp_again_says_nothing_needs_changing() -> None:
    lineage("install-mcp", "cursor")
    result = lineage("install-mcp", "cursor")
    assert result.exit_code == 0 and "needs no change" in result.stderr


def test_install_mcp_dry_run_prints_a_diff_and_writes_nothing() -> None:
    path = config_path("claude")
    write_original(path, "claude")
    result = lineage("install-mcp", "claude", "--dry-run")
    assert result.exit_code == 0 and path.read_text() == ORIGINALS["claude"]
    assert result.stdout.startswith(f"--- {path}\n+++ {path}\n@@")
    assert '+    "lineage": {' in result.stdout


def test_a_config_that_does_not_parse_stops_every_host_before_anything_is_written() -> None:
    broken = config_path("codex")
    broken.parent.mkdir(parents=True)
    broken.write_text("[mcp_servers\n")
    result = lineage("install-mcp", "claude", "codex")
    assert result.exit_code == 2
    assert f"{broken}:1:13: not valid TOML" in result.stderr
    assert not config_path("claude").exists() and broken.read_text() == "[mcp_servers\n"


def test_install_mcp_refuses_a_memory_store_before_writing_anything() -> None:
    result = lineage("install-mcp", "claude", "--store", "memory://")
    assert result.exit_code == 2 and "holds nothing the server could read" in result.stderr
    assert not config_path("claude").exists()


def test_project_scope_says_what_the_host_asks_before_it_starts_the_server() -> None:
    result = lineage("install-mcp", "claude", "codex", "--scope", "project")
    assert result.exit_code == 0
    assert (Path.cwd() / ".mcp.json").exists() and (Path.cwd() / ".codex/config.toml").exists()
    assert "approve lineage" in result.stderr and "project you trust" in result.stderr


def test_uninstall_mcp_gives_the_file_back_as_it_was() -> None:
    path = config_path("codex")
    write_original(path, "codex")
    lineage("install-mcp", "codex")
    result = lineage("uninstall-mcp", "codex")
    assert result.exit_code == 0 and "it is back as it was" in result.stderr
    assert path.read_text() == ORIGINALS["codex"]


def test_uninstall_mcp_dry_run_prints_the_removal_and_keeps_the_file() -> None:
    lineage("install-mcp", "cursor")
    path = config_path("cursor")
    before = path.read_text()
    result = lineage("uninstall-mcp", "cursor", "--dry-run")
    assert result.exit_code == 0 and path.read_text() == before
    assert result.stdout.startswith(f"--- {path}\n+++ /dev/null\n")


def test_the_installed_entry_starts_a_server_a_host_can_talk_to(tmp_path: Path, home: Path) -> None:
    """What a host does with the entry: start its command from anywhere and speak MCP."""
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    assert lineage("install-mcp", "cursor", "--store", store).exit_code == 0
    entry = servers("cursor", config_path("cursor"))[SERVER_NAME]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    params = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        cwd=elsewhere,
        env={"HOME": str(home), "PATH": os.defpath, "XDG_DATA_HOME": str(tmp_path / "data")},
    )

    async def tool_names() -> list[str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [tool.name for tool in (await session.list_tools()).tools]

    assert len(anyio.run(tool_names)) > 0
