"""The inbox under SIGKILL: hooks, folders and readers killed at random moments lose no row a
hook acknowledged and journal none twice, in the order the hooks were accepted; with
PostgreSQL locked or down the hook still returns, and its rows reach the database later."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from lineage_es.engine.engine import open_engine
from lineage_es.hook_command import command_line
from lineage_es.hosts import adapter
from lineage_es.read.decoding import JournalEvent
from lineage_es.user_files import segments
from tests.support.inbox import Homes, accept, folder_held, inbox, inbox_rows, run_hook
from tests.support.paths import REPO
from tests.support.postgres import PG_URL, postgres_reachable
from tests.support.reliability import Report, compare
from tests.support.reliability_streams import crash_stream

pytestmark = pytest.mark.slow

LENGTH = 40_000
TRIALS = 20
HOOKS = 40

#: Only the lineage's own events are compared: the inbox's ledgers are bookkeeping.
LEDGER_TOPIC = "lineage:ImportLedger"


def lineage_events(store: str) -> list[JournalEvent]:
    with open_engine(store, fold=False) as engine:
        return [e for e in engine.journal() if not e.topic.startswith(LEDGER_TOPIC)]


def reference_events(rows: list[dict[str, object]]) -> list[JournalEvent]:
    """The journal the same rows write when journaled in one go, never killed."""
    from lineage_es.hosts.base import parse_time

    with open_engine("memory://") as engine:
        engine.observe_many(
            [adapter(str(r["host"])).observe(r["payload"], at=parse_time(r["at"])) for r in rows]  # type: ignore[arg-type]
        )
        return list(engine.journal())


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Homes:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return Homes(tmp_path)


def start(homes: Homes, code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=REPO, env=homes.env, stderr=subprocess.DEVNULL
    )


def test_folders_and_readers_killed_at_random_moments_journal_every_row_exactly_once(
    tmp_path: Path, homes: Homes, figures: Report
) -> None:
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    items = crash_stream(LENGTH)
    with folder_held(store):  # the rows are accepted first; the trials below fold them
        for first in range(0, len(items), 200):
            accept(store, "claude", [(i.payload, i.at) for i in items[first : first + 200]])
    rows = inbox_rows(store)
    rnd = random.Random(20261207)
    folder = f"from lineage_es.cli.fold import run_background; run_background({store!r})"
    reader = f"from lineage_es.engine.engine import open_engine; open_engine({store!r}).close()"
    kills = 0
    for trial in range(TRIALS):
        if not segments(str(inbox(store))):
            break
        process = start(homes, folder if trial % 2 else reader)
        time.sleep(rnd.uniform(0.2, 0.9))
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            kills += 1
        process.wait()
    left = len(inbox_rows(store)) if segments(str(inbox(store))) else 0
    with open_engine(store):  # a last reader folds whatever the trials left
        pass
    ours, theirs = lineage_events(store), reference_events(rows)
    difference = compare(ours, theirs)
    figures(
        rows=len(rows),
        kills=kills,
        rows_left_to_the_last_reader=left,
        lost=difference.lost,
        invented=difference.invented,
    )
    assert kills > 0
    assert (difference.lost, difference.invented) == (0, 0)
    assert per_root(ours) == per_root(theirs)
    assert segments(str(inbox(store))) == [] and homes.log_text() == ""


def per_root(events: list[JournalEvent]) -> dict[object, list[tuple[str, bytes]]]:
    """Each aggregate's events in journal order: the order of its session's facts (batches
    of other roots may interleave differently from one run to the next)."""
    found: dict[object, list[tuple[str, bytes]]] = {}
    for event in events:
        found.setdefault(event.originator_id, []).append((event.topic, orjson.dumps(event.state)))
    return found


def test_hooks_killed_at_random_moments_leave_whole_rows_and_keep_every_one_acknowledged(
    tmp_path: Path, homes: Homes, figures: Report
) -> None:
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    root = "5f1c2e4a-0000-4000-8000-0000000000aa"
    rnd = random.Random(7)
    acknowledged: list[str] = []
    kills = 0
    with folder_held(store):
        run_hook(homes, "claude", {"session_id": root, "hook_event_name": "SessionStart"}, store)
        for n in range(HOOKS):
            prompt = f"prompt {n}"
            payload = {"session_id": root, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
            process = subprocess.Popen(
                command_line("claude", store),
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                env=homes.env,
            )
            assert process.stdin is not None
            process.stdin.write(orjson.dumps(payload))
            process.stdin.close()
            time.sleep(rnd.uniform(0.0, 0.03))
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
                kills += 1
            if process.wait() == 0:
                acknowledged.append(prompt)
        rows = inbox_rows(store)  # every line decodes: no half row
    prompts = [r["payload"].get("prompt") for r in rows[1:]]
    figures(hooks=HOOKS, kills=kills, acknowledged=len(acknowledged), rows=len(rows))
    assert kills > 0 and acknowledged
    assert [p for p in prompts if p in acknowledged] == acknowledged
    assert len(prompts) == len(set(prompts))
    ours = lineage_events_after_reading(store)
    difference = compare(ours, reference_events(rows))
    assert (difference.lost, difference.invented) == (0, 0)
    assert per_root(ours) == per_root(reference_events(rows))


def lineage_events_after_reading(store: str) -> list[JournalEvent]:
    with open_engine(store):  # a reader folds first
        pass
    return lineage_events(store)


def test_postgresql_down_keeps_the_rows_until_a_reader_reaches_it(
    homes: Homes, tmp_path: Path
) -> None:
    down = "postgresql://postgres@127.0.0.1:9/nowhere"  # nothing listens on the discard port
    start_payload = {"session_id": "pg-down-root", "hook_event_name": "SessionStart"}
    with folder_held(down):
        run_hook(homes, "claude", start_payload, down)
        result = subprocess.run(
            [sys.executable, "-m", "lineage_es", "fold", "--store", down],
            env=homes.env,
            capture_output=True,
            check=False,
        )
    assert result.returncode != 0 and b"cannot open store" in result.stderr
    assert [r["payload"] for r in inbox_rows(down)] == [start_payload]


def test_postgresql_locked_the_hook_returns_and_its_row_reaches_the_database_later(
    homes: Homes,
) -> None:
    if not postgres_reachable():
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL is not reachable at " + PG_URL)
        pytest.skip("PostgreSQL is not reachable")
    import psycopg

    schema = f"inbox_{os.getpid()}"
    url = f"{PG_URL}?schema={schema}"
    root = f"pg-locked-{os.getpid()}"
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        with open_engine(url, fold=False):
            pass  # the tables exist
        with folder_held(url), psycopg.connect(PG_URL) as holder:
            holder.execute(f"LOCK TABLE {schema}.lineage_events IN ACCESS EXCLUSIVE MODE")
            run_hook(homes, "claude", {"session_id": root, "hook_event_name": "SessionStart"}, url)
            assert len(inbox_rows(url)) == 1
            holder.rollback()  # the lock goes
        with open_engine(url) as engine:
            assert engine.lineage(root).conversation == root
        assert inbox_rows(url) == []
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


LIVE = 300


def without_times(events: list[JournalEvent]) -> dict[object, list[tuple[str, bytes]]]:
    """Each aggregate's events in order, their times left out: live hooks date their rows
    when they accept them (and a ``Seen`` event only says when a quiet node was seen)."""
    found: dict[object, list[tuple[str, bytes]]] = {}
    for event in events:
        if event.topic.endswith(".Seen"):
            continue
        state = {k: v for k, v in event.state.items() if k not in ("timestamp", "at", "until")}
        found.setdefault(event.originator_id, []).append((event.topic, orjson.dumps(state)))
    return found


def test_hooks_the_folder_and_readers_at_once_journal_each_session_in_acceptance_order(
    tmp_path: Path, homes: Homes, figures: Report
) -> None:
    store = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    items = crash_stream(LIVE, seed=3)
    reader = f"from lineage_es.engine.engine import open_engine; open_engine({store!r}).close()"
    readers = []
    for item in items:  # one host, one hook after another, as a host runs them
        run_hook(homes, "claude", item.payload, store)
        if item.index % 25 == 0:
            readers.append(start(homes, reader))
    for process in readers:
        assert process.wait() == 0
    ours = lineage_events_after_reading(store)
    with open_engine("memory://") as engine:
        engine.observe_many([adapter("claude").observe(i.payload, at=i.at) for i in items])
        theirs = list(engine.journal())
    figures(hooks=LIVE, readers=len(readers), events=len(ours))
    assert without_times(ours) == without_times(theirs)
    assert homes.log_text() == ""
