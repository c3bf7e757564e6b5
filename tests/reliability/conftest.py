"""Figures the long reliability runs report: printed at the end of the pytest run, whatever
the capture mode, so CI logs show trials, events, lost=0 and duplicated=0; and the worker
processes a test starts, killed when it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.reliability import Report, Workers

#: (test id, figures) in the order the tests reported them.
FIGURES: list[tuple[str, dict[str, object]]] = []


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


@pytest.fixture
def workers() -> Iterator[Workers]:
    started = Workers()
    try:
        yield started
    finally:
        started.kill_all()
