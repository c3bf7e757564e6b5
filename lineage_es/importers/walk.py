"""Finding a history folder's files: which folder, and every file below it with its size
and mtime, passing over (and counting) what cannot be read."""

from __future__ import annotations

import os
import stat as stat_module
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from lineage_es.errors import InputError
from lineage_es.importers.report import ImportReport

#: Why :func:`walk` passed over something below the folder (a file's rows are counted by the
#: readers, under the reasons of :mod:`lineage_es.importers.lines`).
UNREADABLE_FOLDER = "unreadable folder (its files are neither read nor counted as gone)"
DANGLING_LINK = "symbolic link to nothing (dangling, or a loop)"
NOT_REGULAR = "not a regular file (a FIFO, socket or device: never opened)"
UNREADABLE_ENTRY = "unreadable file"


class Found(NamedTuple):
    """A history file on disk: its path relative to the folder (with ``/``), its full
    path, size and mtime."""

    rel: str
    path: str
    size: int
    mtime: int


def history_folder(folder: Path | None, default: Path) -> Path:
    """The folder an import reads: the one given or the host's default, made absolute;
    :class:`InputError` when it is not a folder."""
    root = (folder or default).expanduser().resolve()
    if not root.is_dir():
        raise InputError("not a folder", path=str(root))
    return root


def walk(
    folder: Path,
    keep: Callable[[str], bool],
    note: tuple[Callable[[str], bool], set[str]] | None = None,
    report: ImportReport | None = None,
) -> Iterator[Found]:
    """Every regular file below ``folder`` whose name ``keep`` accepts, with its size and
    mtime. With ``note`` (a test of names, a set), the path of every entry whose name passes
    the test, of whatever kind, is added to the set: what is not there needs no look on disk.

    What cannot be read is passed over and, with ``report``, counted in its ``skipped``: a
    folder that cannot be listed (its path also goes to ``report.unlisted``, so that its files
    are not taken for gone), a symbolic link to nothing, and a FIFO, socket or device with a
    history file's name (stat'ed, never opened: opening a FIFO would block).

    Plain ``os.scandir`` and string paths, not ``pathlib``: a re-import with nothing changed
    is mostly this walk.
    """
    skips: Counter[str] = report.skipped if report is not None else Counter()
    base = str(folder)
    prefix = len(base) + 1
    stack = [base]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except FileNotFoundError:
            continue  # gone since its parent was listed
        except OSError:
            skips[UNREADABLE_FOLDER] += 1
            if report is not None:
                report.unlisted.add(current[prefix:].replace(os.sep, "/"))
            continue
        for entry in entries:
            if note is not None and note[0](entry.name):
                note[1].add(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                    continue
            except OSError:
                continue
            if not keep(entry.name):
                continue
            try:
                stat = entry.stat()  # follows a symbolic link; opens nothing
            except FileNotFoundError:
                if entry.is_symlink():
                    skips[DANGLING_LINK] += 1
                continue  # otherwise deleted since the folder was listed
            except OSError:
                skips[DANGLING_LINK if entry.is_symlink() else UNREADABLE_ENTRY] += 1
                continue
            if stat_module.S_ISREG(stat.st_mode):
                rel = entry.path[prefix:].replace(os.sep, "/")
                yield Found(rel, entry.path, stat.st_size, stat.st_mtime_ns)
            elif not stat_module.S_ISDIR(stat.st_mode):
                skips[NOT_REGULAR] += 1


def in_listed_folder(rel: str, unlisted: set[str]) -> bool:
    """Whether ``rel`` lies outside every folder that could not be listed (``""`` is the
    history folder itself)."""
    return not any(folder == "" or rel.startswith(folder + "/") for folder in unlisted)
