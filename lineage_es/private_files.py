"""Files and folders only their owner can read, whatever the umask: every folder the engine
creates is 0700 and every file 0600 (the journal, ``hook.log``, recordings, exports, the
hooks' configs). Agent history names every project a person works on, and recordings hold
prompts and tool input.

Each is created with its mode and then set to exactly that mode (a umask only takes bits
away, but an odd one, ``0277``, would take the owner's own), and so is every missing folder
above it, which ``mkdir(parents=True)`` would make 0777 under a umask of 000. What already
exists is left as it is: its owner chose its mode.

Cheap to import (no eventsourcing, no click): the hook writes its log and recordings with it.
"""

from __future__ import annotations

import os
from pathlib import Path

from lineage_es import user_files
from lineage_es.user_files import PRIVATE_FILE, PRIVATE_FOLDER

__all__ = [
    "PRIVATE_FILE",
    "PRIVATE_FOLDER",
    "append_private",
    "make_private_folder",
    "open_private",
    "replace_text",
]


def make_private_folder(path: Path) -> None:
    """Create ``path`` and each missing folder above it, every one 0700; a folder that exists
    already is left as it is. ``FileExistsError`` when ``path`` is a file. (The rules live in
    :mod:`lineage_es.user_files`, which the fast hook loads without the package.)"""
    user_files.make_private_folder(os.fspath(path))


def open_private(path: Path, flags: int) -> int:
    """``os.open(path, flags)`` for writing, creating the file 0600 when it does not exist
    (its folder must exist); an existing file is opened as it is, its mode kept, as a shell's
    ``>`` keeps it. ``flags`` are the access and ``O_APPEND``/``O_TRUNC`` flags, without
    ``O_CREAT``."""
    return user_files.open_private(os.fspath(path), flags)


def append_private(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` (created 0600 if need be, and its missing folders 0700),
    all of it: a short write is written on from where it stopped."""
    make_private_folder(path.parent)
    fd = open_private(path, os.O_WRONLY | os.O_APPEND)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(f"cannot append to {path}: nothing written")
            view = view[written:]
    finally:
        os.close(fd)


def replace_text(path: Path, text: str | None) -> None:
    """Make ``path`` hold ``text``, all or nothing: written to a scratch file beside it,
    synced, then renamed over it (``None``: remove it). A linked file (dotfiles) is written
    where it lives; an existing file keeps its mode, a new one is 0600 in a folder made 0700.
    ``OSError`` when it cannot: the caller names the file in its own error."""
    real = Path(os.path.realpath(path))
    if text is None:
        real.unlink(missing_ok=True)
        return
    make_private_folder(real.parent)
    mode = real.stat().st_mode & 0o777 if real.exists() else PRIVATE_FILE
    scratch = real.with_name(f".{real.name}.lineage-es.tmp")
    fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(scratch, mode)
    os.replace(scratch, real)
