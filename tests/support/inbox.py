"""Running the fast hook as a host does, and looking into a store's inbox, for the inbox's
tests (tests/cli/test_hook_fast.py, tests/reliability/test_inbox_crash.py)."""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from lineage_es.hook_command import command_line
from lineage_es.inbox_append import append_row, row
from lineage_es.user_files import RUNNING_LOCK, inbox_dir, segments
from tests.support.paths import REPO


@dataclass(frozen=True)
class Homes:
    """A data dir and a state dir of a test's own, as the environment a hook runs in."""

    root: Path

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != "LINEAGE_STORE"}
        env.update(
            XDG_DATA_HOME=str(self.root / "data"),
            XDG_STATE_HOME=str(self.root / "state"),
            PYTHONPATH=str(REPO),
        )
        return env

    @property
    def log(self) -> Path:
        return self.root / "state" / "lineage" / "hook.log"

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


def run_hook(homes: Homes, host: str, payload: Any, store: str | None) -> None:
    """Run the installed hook command once, the payload on stdin, as a host does: it must
    exit 0 with nothing on stdout."""
    raw = payload if isinstance(payload, bytes) else orjson.dumps(payload)
    done = subprocess.run(
        command_line(host, store), input=raw, capture_output=True, env=homes.env, check=False
    )
    assert (done.returncode, done.stdout) == (0, b""), done.stderr


def inbox(store: str) -> Path:
    folder = inbox_dir(store)
    assert folder is not None
    return Path(folder)


def inbox_rows(store: str) -> list[dict[str, Any]]:
    """Every row waiting in the store's inbox, decoded, oldest first."""
    folder = inbox(store)
    rows: list[dict[str, Any]] = []
    for name in segments(str(folder)):
        rows += [orjson.loads(line) for line in (folder / name).read_bytes().splitlines()]
    return rows


@contextmanager
def folder_held(store: str) -> Iterator[None]:
    """Hold the inbox's running lock, as a running folder does: hooks start none meanwhile,
    and the rows wait until a reader folds them."""
    folder = inbox(store)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / RUNNING_LOCK, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def accept(store: str, host: str, rows: list[tuple[dict[str, Any], datetime]]) -> None:
    """Append rows as the hook does, in this process, many per append (the crash trials'
    thousands of rows: one ``fsync`` each would take the trial's time)."""
    data = b"".join(
        row(host, int(at.timestamp()) * 1_000_000_000 + at.microsecond * 1000, orjson.dumps(p))
        for p, at in rows
    )
    append_row(str(inbox(store)), data)
