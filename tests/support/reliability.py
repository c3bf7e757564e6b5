"""What the reliability tests check a journal and its view for, and the worker processes they
start, shared between them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from lineage_es.engine.engine import Engine
from lineage_es.read.decoding import JournalEvent
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView
from tests.support.paths import REPO

#: What the ``figures`` fixture hands a test: report its figures as keyword arguments.
Report = Callable[..., None]


def shape(event: JournalEvent) -> tuple[Any, ...]:
    """An event without its journal position (positions may skip after a rollback): what a
    journal and its sequential replay must agree on."""
    return (event.originator_id, event.version, event.topic, orjson.dumps(event.state))


@dataclass(frozen=True)
class Difference:
    """How a journal differs from the one a sequential replay of its facts writes."""

    lost: int
    invented: int
    same_order: bool


def compare(store: Sequence[JournalEvent], reference: Sequence[JournalEvent]) -> Difference:
    """``lost``: reference events the store lacks; ``invented``: store events the reference
    lacks; ``same_order``: both hold the same events in the same order."""
    ours = [shape(e) for e in store]
    theirs = [shape(e) for e in reference]
    return Difference(
        lost=sum((Counter(theirs) - Counter(ours)).values()),
        invented=sum((Counter(ours) - Counter(theirs)).values()),
        same_order=ours == theirs,
    )


def runs_per_key(events: Iterable[JournalEvent]) -> Counter[str]:
    """For each observation key, how many separate runs of journal entries carry it. One
    observation is saved in one transaction, so a key found in two runs was written twice."""
    runs: Counter[str] = Counter()
    current = None
    for event in events:
        fact = event.state.get("fact")
        if not fact:
            continue  # index entries carry no key; they are saved with their root's events
        if fact != current:
            runs[fact] += 1
            current = fact
    return runs


def view_is_a_prefix(engine: Engine) -> bool:
    """Whether the persisted view, as it is (not caught up), equals the journal replayed up to
    the view's own position: a page of the view is written whole or not at all."""
    position = engine.view.position()
    persisted = engine.view.all_rows()
    prefix = MemoryView()
    if position:
        Projector(engine.app.recorder, prefix).catch_up(stop=position)
    return prefix.position() == position and prefix.all_rows() == persisted


class Workers:
    """Worker processes (``python -m tests.support.reliability_worker``) a test starts; any
    still running when the test ends is killed, by its own process id."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, *args: str, stdin: bool = False) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.reliability_worker", *args],
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
