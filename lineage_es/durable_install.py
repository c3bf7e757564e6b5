"""Whether the hooks ``lineage install-hooks`` writes will outlast the folders they name.

A hook command names this install's interpreter and the package's hook script by absolute
path (:func:`lineage_es.hook_config.hook_command`). Both must stay where they are for as long
as the hooks are installed, and some places do not last: a temporary folder; a venv inside a
project (a git work tree, or a ``.venv``/``venv`` in the current folder), which goes with its
clone; a source tree the package is imported from (an editable install). A tool install
(``pipx``, ``uv tool``) keeps both in a folder of its own, which lasts.

Only paths are looked at: nothing is run or imported, so a test can lay out any install in a
temporary folder and ask.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

#: How to install so that the hooks last (said after every warning).
HOW_TO_LAST = (
    "to install durably: `pipx install lineage-es` or `uv tool install lineage-es` (from a "
    "clone: `pipx install .`), then run that install's `lineage {command}` again"
)

#: Folders whose names say an interpreter's packages live in an install, not a source tree.
_INSTALLED_PACKAGES = frozenset({"site-packages", "dist-packages"})

#: The names a project's own venv usually has.
_PROJECT_VENV_NAMES = frozenset({".venv", "venv"})


def running_install() -> tuple[Path, Path]:
    """The interpreter running now (as the hooks would pin it, not resolved: a venv's
    ``python`` is a link whose folder is the venv) and the folder of the package it imports."""
    import lineage_es

    return Path(sys.executable).absolute(), Path(lineage_es.__file__).absolute().parent


def temporary_folders() -> tuple[Path, ...]:
    """The folders the system clears: Python's temporary folder, ``/tmp`` and ``/var/tmp``."""
    return (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp"))


def install_warnings(entries: str = "the hooks", command: str = "install-hooks") -> list[str]:
    """The warnings for the install running now (see :func:`pinned_path_warnings`):
    ``entries`` names what the install writes, ``command`` the command that writes it."""
    python, package = running_install()
    return pinned_path_warnings(
        python,
        package,
        cwd=Path.cwd(),
        home=Path.home(),
        temporary=temporary_folders(),
        entries=entries,
        command=command,
    )


def pinned_path_warnings(
    python: Path,
    package: Path,
    *,
    cwd: Path,
    home: Path,
    temporary: Iterable[Path],
    entries: str = "the hooks",
    command: str = "install-hooks",
) -> list[str]:
    """One plain line for each pinned path that will not last: ``python`` (the interpreter a
    hook command names) in a temporary folder or a project-local venv; ``package`` (the
    folder of ``lineage_es``) in a temporary folder or a source tree (an editable install).
    Empty for a tool install, or any venv of its own outside a project."""
    warnings: list[str] = []
    how_to_last = HOW_TO_LAST.format(command=command)
    python_at = _real_folder(python.parent) / python.name
    package_at = _real_folder(package)
    temporaries = [_real_folder(folder) for folder in temporary]
    venv = python_at.parent.parent
    tmp = _first_containing(python_at, temporaries)
    if tmp is not None:
        warnings.append(
            f"warning: {entries} run {python}, inside the temporary folder {tmp}: they break "
            f"when it is cleared; {how_to_last}"
        )
    elif (venv / "pyvenv.cfg").is_file() and _project_local(venv, cwd=cwd, home=home):
        warnings.append(
            f"warning: {entries} run {python}, of the project-local venv {venv}: they break "
            f"when that folder goes; {how_to_last}"
        )
    tmp = _first_containing(package_at, temporaries)
    if tmp is not None and not _inside(python_at, tmp):
        warnings.append(
            f"warning: lineage_es is imported from {package}, inside the temporary folder "
            f"{tmp}: {entries} break when it is cleared; {how_to_last}"
        )
    elif tmp is None and not _INSTALLED_PACKAGES & set(package_at.parts):
        warnings.append(
            f"warning: lineage_es is imported from the source tree {package.parent} (an "
            f"editable install): {entries} load it from that clone and break when "
            f"it goes; {how_to_last}"
        )
    return warnings


def _project_local(venv: Path, *, cwd: Path, home: Path) -> bool:
    """Whether ``venv`` belongs to a project: inside a git work tree (a ``.git`` in it or a
    folder above it, short of the home folder, which some keep under git for their dotfiles),
    or named ``.venv``/``venv`` inside the current folder."""
    if venv.name in _PROJECT_VENV_NAMES and _inside(venv, _real_folder(cwd)):
        return True
    stop = _real_folder(home)
    for folder in (venv, *venv.parents):
        if folder in (stop, folder.parent):
            return False
        if (folder / ".git").exists():
            return True
    return False


def _real_folder(folder: Path) -> Path:
    return Path(os.path.realpath(folder))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _first_containing(path: Path, folders: Iterable[Path]) -> Path | None:
    return next((folder for folder in folders if _inside(path, folder)), None)
