"""The records `install-hooks` and `install-mcp` keep beside a config of what they created:
the forms 0.1.0 and 0.2.0 wrote are where they were, are read as they were, and are written
the same way, so an uninstall after an upgrade stays exact."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from lineage_es import hook_config, mcp_config
from lineage_es.hook_manifest import HookManifest
from lineage_es.hosts import adapter
from tests.support.mcp_configs import isolate_home, write_original

#: What ``install-hooks`` 0.1.0 and 0.2.0 wrote beside a config it created for Claude Code.
HOOK_MANIFEST_CREATED_ALL = {
    "file": True,
    "hooks": True,
    "version": False,
    "events": sorted(adapter("claude").hook_events),
}

#: The keys ``install-mcp`` 0.2.0 wrote, in their order.
MCP_MANIFEST_KEYS = ["version", "created_file", "created_table", "pristine", "written"]


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolate_home(tmp_path, monkeypatch)


@pytest.fixture
def dotfiles(tmp_path: Path) -> Path:
    """A folder the configs really live in, linked from where the hosts read them."""
    folder = tmp_path / "dotfiles"
    folder.mkdir()
    return folder


@pytest.fixture
def empty_hook_config() -> Path:
    """Claude's hook config as a user had it before install-hooks: an empty object."""
    path = hook_config.config_path("claude")
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    return path


@pytest.fixture
def user_cursor_mcp_config() -> Path:
    """Cursor's MCP config holding a server of the user's, before install-mcp."""
    path = mcp_config.config_path("cursor")
    write_original(path, "cursor")
    return path


def write_beside(path: Path, suffix: str, record: dict[str, object]) -> None:
    """Put ``record`` beside the config at ``path`` as an earlier version wrote it."""
    path.with_name(path.name + suffix).write_text(json.dumps(record) + "\n")


def test_uninstall_hooks_reads_a_hook_manifest_in_the_form_earlier_versions_wrote(
    empty_hook_config: Path,
) -> None:
    """The record says install created the file, so uninstall removes it (read as nothing
    created, the user's empty object would stay)."""
    hook_config.install("claude")
    write_beside(empty_hook_config, ".lineage-es.json", HOOK_MANIFEST_CREATED_ALL)
    hook_config.uninstall("claude")
    assert not empty_hook_config.exists()


def test_uninstall_mcp_reads_an_mcp_manifest_in_the_form_earlier_versions_wrote(
    user_cursor_mcp_config: Path,
) -> None:
    """The record says install created the file and the file is as it last wrote it, so
    uninstall removes it (read as nothing created, the user's file would come back)."""
    mcp_config.install("cursor")
    written = hashlib.sha256(user_cursor_mcp_config.read_bytes()).hexdigest()
    record = dict.fromkeys(MCP_MANIFEST_KEYS) | {"version": 1, "created_file": True}
    write_beside(user_cursor_mcp_config, ".lineage-es-mcp.json", record | {"written": written})
    mcp_config.uninstall("cursor")
    assert not user_cursor_mcp_config.exists()


def test_install_hooks_writes_its_manifest_in_the_form_earlier_versions_read() -> None:
    path = hook_config.install("claude").path
    record = json.loads(path.with_name(path.name + ".lineage-es.json").read_text())
    assert record == HOOK_MANIFEST_CREATED_ALL


def test_install_mcp_writes_its_manifest_with_the_keys_earlier_versions_read() -> None:
    path = mcp_config.install("cursor").path
    record = json.loads(path.with_name(path.name + ".lineage-es-mcp.json").read_text())
    assert list(record) == MCP_MANIFEST_KEYS


def test_a_linked_hook_configs_manifest_is_beside_its_target_under_the_links_name(
    dotfiles: Path,
) -> None:
    link = hook_config.config_path("claude")
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles / "claude-settings.json")
    hook_config.install("claude")
    assert [p.name for p in dotfiles.glob("*.lineage-es.json")] == ["settings.json.lineage-es.json"]


def test_a_linked_mcp_configs_manifest_is_beside_its_target_under_the_targets_name(
    dotfiles: Path,
) -> None:
    link = mcp_config.config_path("cursor")
    link.parent.mkdir(parents=True)
    link.symlink_to(dotfiles / "cursor-mcp.json")
    mcp_config.install("cursor")
    found = [p.name for p in dotfiles.glob("*.lineage-es-mcp.json")]
    assert found == ["cursor-mcp.json.lineage-es-mcp.json"]


def test_a_manifest_that_is_not_json_counts_nothing_as_created() -> None:
    """Uninstall then keeps the file install created: it cannot tell it was not the user's."""
    path = hook_config.install("claude").path
    path.with_name(path.name + ".lineage-es.json").write_text("{oops")
    hook_config.uninstall("claude")
    assert path.exists()


def test_a_manifest_field_of_another_type_reads_as_not_created(
    empty_hook_config: Path,
) -> None:
    write_beside(empty_hook_config, ".lineage-es.json", {"file": "yes", "events": "Stop"})
    assert HookManifest.read(empty_hook_config) == HookManifest()
