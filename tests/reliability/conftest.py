"""Figures the long reliability runs report: printed at the end of the pytest run, whatever
the capture mode, so CI logs show trials, events, lost=0 and duplicated=0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: (test id, figures) in the order the tests reported them.
FIGURES: list[tuple[str, dict[str, object]]] = []

Report = Callable[..., None]


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Report:
    """Report a test's figures: kept for the terminal summary and as JUnit properties."""

    def report(**values: object) -> None:
        FIGURES.append((request.node.nodeid, values))
        for name, value in values.items():
            request.node.user_properties.append((name, value))
        print(_line(request.node.nodeid, values))

    return report


def _line(nodeid: str, values: dict[str, object]) -> str:
    return f"{nodeid}: " + ", ".join(f"{name}={value}" for name, value in values.items())


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for nodeid, values in FIGURES:
        terminalreporter.write_line(_line(nodeid, values))


class Workers:
    """Worker processes (``python -m tests.reliability.worker``) a test starts; any still
    running when the test ends is killed, by its own process id."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, *args: str, stdin: bool = False) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.worker", *args],
            cwd=REPO,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.started.append(process)
        return process

    @staticmethod
    def ready(process: subprocess.Popen[bytes]) -> None:
        """Wait for the worker's ``ready`` line; fail with its stderr when it died instead."""
        assert process.stdout is not None and process.stderr is not None
        if process.stdout.readline().strip() != b"ready":
            process.wait()
            pytest.fail(f"a worker could not start: {process.stderr.read().decode()}")

    def kill_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def workers() -> Iterator[Workers]:
    started = Workers()
    try:
        yield started
    finally:
        started.kill_all()
