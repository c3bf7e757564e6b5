"""Users' own MCP configs, in each host's format, that ``lineage install-mcp`` /
``uninstall-mcp`` must keep; and a home folder of one's own for each test."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from click.testing import CliRunner, Result

from lineage_es.cli.main import main

HOSTS = ("claude", "codex", "cursor")

#: ``~/.claude.json`` as Claude Code writes it (two-space JSON) with a server of the user's.
CLAUDE_JSON = """\
{
  "numStartups": 41,
  "theme": "dark",
  "mcpServers": {
    "docs": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "docs-mcp"],
      "env": {}
    }
  },
  "projects": {
    "/home/me/app": {
      "allowedTools": []
    }
  }
}
"""

#: ``~/.codex/config.toml`` with comments, a server of the user's and a table after it.
CODEX_TOML = """\
# Codex: my settings
model = "gpt-5-codex"  # the one I like

[mcp_servers.docs]
# documentation lookups
command = "npx"
args = ["-y", "docs-mcp"]

[profiles.fast]
model = "gpt-5-mini"
"""

#: ``~/.cursor/mcp.json`` indented with four spaces.
CURSOR_JSON = """\
{
    "mcpServers": {
        "browser": {
            "command": "npx",
            "args": ["-y", "@playwright/mcp"]
        }
    }
}
"""

ORIGINALS = {"claude": CLAUDE_JSON, "codex": CODEX_TOML, "cursor": CURSOR_JSON}

#: Where each host keeps the user's servers, and the one the user configured there.
TABLES = {"claude": "mcpServers", "codex": "mcp_servers", "cursor": "mcpServers"}
USER_SERVERS = {"claude": "docs", "codex": "docs", "cursor": "browser"}


def isolate_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own and a project folder as the working folder; the variables
    that move the hosts' configs or pin a store unset."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "LINEAGE_STORE"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return home


def write_original(path: Path, host: str) -> str:
    """Put the user's own config for ``host`` at ``path``; its text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ORIGINALS[host], encoding="utf-8")
    return ORIGINALS[host]


def read_config(host: str, path: Path) -> dict[str, Any]:
    """The config at ``path`` as plain data."""
    text = path.read_text(encoding="utf-8")
    data: dict[str, Any] = tomlkit.parse(text).unwrap() if host == "codex" else json.loads(text)
    return data


def servers(host: str, path: Path) -> dict[str, Any]:
    """The servers configured at ``path``."""
    table: dict[str, Any] = read_config(host, path).get(TABLES[host], {})
    return table


def this_python() -> str:
    return str(Path(sys.executable).absolute())


def lineage(*args: str) -> Result:
    """Run ``lineage ARGS`` in this process; stdout and stderr kept apart."""
    return CliRunner().invoke(main, list(args))
