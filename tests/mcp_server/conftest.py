"""Stores driven through the real hook command and ``lineage mcp``: a private one per test,
and each host's family journaled once per module (by the hook command) and copied for each
test that starts from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.mcp_families import claude_family, codex_family, cursor_family
from tests.support.mcp_session import McpStore


@pytest.fixture
def store(tmp_path: Path) -> McpStore:
    return McpStore(tmp_path)


@pytest.fixture(scope="module")
def journaled_families(tmp_path_factory: pytest.TempPathFactory) -> dict[str, McpStore]:
    """Each host's family journaled once, by the hook command, into a store of its own."""
    built: dict[str, McpStore] = {}
    for host, payloads in (
        ("claude", claude_family()),
        ("codex", codex_family()),
        ("cursor", cursor_family()),
    ):
        family = McpStore(tmp_path_factory.mktemp(f"{host}-family"))
        family.hook(host, *payloads)
        built[host] = family
    return built


@pytest.fixture
def claude_store(journaled_families: dict[str, McpStore], tmp_path: Path) -> McpStore:
    """A store holding the Claude family (:func:`claude_family`), this test's own."""
    return journaled_families["claude"].copy_into(tmp_path / "store")


@pytest.fixture
def codex_store(journaled_families: dict[str, McpStore], tmp_path: Path) -> McpStore:
    """A store holding the Codex family (:func:`codex_family`), this test's own."""
    return journaled_families["codex"].copy_into(tmp_path / "store")


@pytest.fixture
def cursor_store(journaled_families: dict[str, McpStore], tmp_path: Path) -> McpStore:
    """A store holding the Cursor family (:func:`cursor_family`), this test's own."""
    return journaled_families["cursor"].copy_into(tmp_path / "store")
