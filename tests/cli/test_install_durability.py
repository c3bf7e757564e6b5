"""`install-hooks` and `install-mcp` warn when the interpreter or package their entries name
will not last: a temporary folder, a project-local venv, a source tree (fake layouts; nothing
is installed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from lineage_es import durable_install
from lineage_es.cli.main import main
from lineage_es.durable_install import pinned_path_warnings


def venv(folder: Path) -> tuple[Path, Path]:
    """A venv laid out at ``folder``: its python, and lineage_es in its site-packages."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    python = folder / "bin" / "python"
    python.symlink_to("/usr/bin/python3")
    package = folder / "lib" / "python3.11" / "site-packages" / "lineage_es"
    package.mkdir(parents=True)
    return python, package


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A home, a working folder in it, and a temporary folder of the system's."""
    found = {name: tmp_path / name for name in ("home", "tmp")}
    found["cwd"] = found["home"] / "work"
    for folder in found.values():
        folder.mkdir(parents=True)
    return found


def warnings_for(python: Path, package: Path, places: dict[str, Path]) -> list[str]:
    return pinned_path_warnings(
        python, package, cwd=places["cwd"], home=places["home"], temporary=[places["tmp"]]
    )


@pytest.mark.parametrize(
    "where",
    [".local/share/pipx/venvs/lineage-es", ".local/share/uv/tools/lineage-es", "venvs/lineage"],
)
def test_a_tool_install_or_a_venv_of_its_own_gets_no_warning(
    where: str, places: dict[str, Path]
) -> None:
    assert warnings_for(*venv(places["home"] / where), places) == []


def test_a_home_under_git_for_dotfiles_does_not_make_its_venvs_project_local(
    places: dict[str, Path],
) -> None:
    (places["home"] / ".git").mkdir()
    assert warnings_for(*venv(places["home"] / ".local/pipx/venvs/lineage-es"), places) == []


def test_a_venv_in_a_temporary_folder_is_warned_about(places: dict[str, Path]) -> None:
    python, package = venv(places["tmp"] / "try" / ".venv")
    (warning,) = warnings_for(python, package, places)
    assert f"the hooks run {python}, inside the temporary folder" in warning
    assert "pipx install lineage-es" in warning and "uv tool install lineage-es" in warning


def test_a_venv_inside_a_git_work_tree_is_project_local(places: dict[str, Path]) -> None:
    clone = places["home"] / "src" / "lineage-es"
    (clone / ".git").mkdir(parents=True)
    python, package = venv(clone / "env")
    (warning,) = warnings_for(python, package, places)
    assert f"of the project-local venv {clone / 'env'}" in warning
    assert "break when that folder goes" in warning and "pipx install ." in warning


@pytest.mark.parametrize("name", [".venv", "venv"])
def test_a_dot_venv_or_venv_in_the_current_folder_is_project_local(
    name: str, places: dict[str, Path]
) -> None:
    (warning,) = warnings_for(*venv(places["cwd"] / name), places)
    assert "project-local venv" in warning


def test_a_venv_named_venv_elsewhere_and_outside_git_is_not(places: dict[str, Path]) -> None:
    assert warnings_for(*venv(places["home"] / "tools" / "venv"), places) == []


def test_a_package_imported_from_a_source_tree_is_warned_about(places: dict[str, Path]) -> None:
    python, _ = venv(places["home"] / "venvs" / "lineage")
    clone = places["home"] / "src" / "lineage-es"
    (clone / "lineage_es").mkdir(parents=True)
    (warning,) = warnings_for(python, clone / "lineage_es", places)
    assert f"imported from the source tree {clone} (an editable install)" in warning


def test_an_editable_install_in_a_project_venv_gets_both_warnings(places: dict[str, Path]) -> None:
    clone = places["cwd"]
    (clone / ".git").mkdir()
    (clone / "lineage_es").mkdir()
    python, _ = venv(clone / ".venv")
    found = warnings_for(python, clone / "lineage_es", places)
    assert [("project-local" in w, "source tree" in w) for w in found] == [
        (True, False),
        (False, True),
    ]


def test_install_hooks_prints_each_warning_on_one_line_of_stderr(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    python, package = venv(places["tmp"] / "x" / ".venv")
    monkeypatch.setenv("HOME", str(places["home"]))
    monkeypatch.chdir(places["cwd"])
    monkeypatch.setattr(durable_install, "running_install", lambda: (python, package))
    monkeypatch.setattr(durable_install, "temporary_folders", lambda: (places["tmp"],))
    result = CliRunner().invoke(main, ["install-hooks", "cursor", "--dry-run"])
    assert result.exit_code == 0
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "temporary folder" in warned[0]


def test_install_hooks_says_nothing_for_a_durable_install(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = venv(places["home"] / ".local/share/pipx/venvs/lineage-es")
    monkeypatch.setenv("HOME", str(places["home"]))
    monkeypatch.chdir(places["cwd"])
    monkeypatch.setattr(durable_install, "running_install", lambda: layout)
    monkeypatch.setattr(durable_install, "temporary_folders", lambda: (places["tmp"],))
    result = CliRunner().invoke(main, ["install-hooks", "cursor", "--dry-run"])
    assert result.exit_code == 0 and "warning:" not in result.stderr


def test_install_mcp_warns_as_install_hooks_does(
    places: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    python, package = venv(places["tmp"] / "x" / ".venv")
    monkeypatch.setenv("HOME", str(places["home"]))
    monkeypatch.chdir(places["cwd"])
    monkeypatch.setattr(durable_install, "running_install", lambda: (python, package))
    monkeypatch.setattr(durable_install, "temporary_folders", lambda: (places["tmp"],))
    result = CliRunner().invoke(main, ["install-mcp", "codex", "--dry-run"])  # needs no hook
    assert result.exit_code == 0
    warned = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1
    assert "the MCP server entries run" in warned[0] and "temporary folder" in warned[0]
    assert "`lineage install-mcp` again" in warned[0]
