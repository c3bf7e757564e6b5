"""The installed hook (`python -S .../hook_fast.py HOST`): accept a payload into the store's
inbox, durably and privately, at the cost of little more than the interpreter's start-up;
readers journal what waits before they answer."""

from __future__ import annotations

import fcntl
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es import private_files, user_files
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.hook import log_path
from lineage_es.hook_command import HOOK_SCRIPT, command_line
from lineage_es.replay.inputs import PayloadRow, read_rows
from lineage_es.stores import data_dir, parse_store_url
from tests.support.inbox import Homes, folder_held, inbox, inbox_rows, run_hook

ROOT = "5f1c2e4a-0000-4000-8000-000000000001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}
PROMPT = {"session_id": ROOT, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}

#: What the hook's process must not load: the package, its libraries, or slow stdlib parts.
NOT_FOR_THE_FAST_HOOK = (
    "lineage_es",
    "eventsourcing",
    "click",
    "orjson",
    "json",
    "re",
    "pathlib",
    "typing",
    "urllib.parse",
)


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Homes:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("LINEAGE_STORE", raising=False)
    return Homes(tmp_path)


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.sqlite'}"


def test_the_command_line_runs_the_fast_hook_script_without_site() -> None:
    argv = command_line("codex", "sqlite:////tmp/j.sqlite", "/usr/bin/python3")
    assert argv == [
        "/usr/bin/python3",
        "-S",
        HOOK_SCRIPT,
        "codex",
        "--store",
        "sqlite:////tmp/j.sqlite",
    ]
    assert Path(HOOK_SCRIPT).is_file() and command_line("claude", None)[-1] == "claude"


def test_the_hook_appends_one_recording_row_that_lineage_ingest_reads(
    homes: Homes, store: str
) -> None:
    with folder_held(store):
        run_hook(homes, "claude", START, store)
        [row] = inbox_rows(store)
        assert (row["host"], row["payload"]) == ("claude", START)
        [segment] = user_files.segments(str(inbox(store)))
        [read] = list(read_rows(inbox(store) / segment))
    assert isinstance(read, PayloadRow) and read.payload == START


def test_a_pretty_printed_payload_stays_one_row(homes: Homes, store: str) -> None:
    with folder_held(store):
        run_hook(homes, "claude", orjson.dumps(START, option=orjson.OPT_INDENT_2), store)
        run_hook(homes, "claude", b'{"session_id":\r\n"x"}\n', store)
        rows = inbox_rows(store)
    assert [r["payload"] for r in rows] == [START, {"session_id": "x"}]


def test_the_hook_process_loads_nothing_of_the_package_nor_its_libraries(
    homes: Homes, store: str
) -> None:
    with folder_held(store):
        done = subprocess.run(
            [
                *command_line("claude", store)[:1],
                "-X",
                "importtime",
                *command_line("claude", store)[1:],
            ],
            input=orjson.dumps(START),
            capture_output=True,
            env=homes.env,
            check=True,
        )
    loaded = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()}
    assert "inbox_append" in loaded and "user_files" in loaded
    assert sorted(loaded & set(NOT_FOR_THE_FAST_HOOK)) == []
    assert not any(name.startswith("lineage_es.") for name in loaded)


def test_a_reader_journals_what_waits_in_the_inbox_before_it_answers(
    homes: Homes, store: str
) -> None:
    with folder_held(store):
        run_hook(homes, "claude", START, store)
        run_hook(homes, "claude", PROMPT, store)
        with open_engine(store) as engine:
            assert engine.lineage(ROOT).depth == 0
        assert user_files.segments(str(inbox(store))) == []


def test_a_reader_creates_a_journal_that_only_the_inbox_holds_yet(homes: Homes, store: str) -> None:
    with folder_held(store):
        run_hook(homes, "claude", START, store)
        with open_engine(store, create=False) as engine:
            assert engine.lineage(ROOT).conversation == ROOT


def test_the_hook_starts_a_folder_that_journals_the_rows_and_leaves(
    homes: Homes, store: str
) -> None:
    run_hook(homes, "claude", START, store)
    deadline = time.monotonic() + 60  # a bound for a stuck folder, not a speed assertion
    while user_files.segments(str(inbox(store))) and time.monotonic() < deadline:
        time.sleep(0.05)
    with open_engine(store, fold=False) as engine:
        assert engine.lineage(ROOT).conversation == ROOT
    assert homes.log_text() == ""


def test_the_folder_leaves_once_the_inbox_has_been_idle(homes: Homes, store: str) -> None:
    run_hook(homes, "claude", START, store)
    lock = os.open(inbox(store) / user_files.RUNNING_LOCK, os.O_WRONLY)
    try:
        deadline = time.monotonic() + 60  # a bound for a folder that never leaves
        while time.monotonic() < deadline:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                time.sleep(0.1)
        else:
            pytest.fail("the folder still runs a minute after its last row")
    finally:
        os.close(lock)
    assert user_files.segments(str(inbox(store))) == []


def test_a_payload_that_is_not_json_is_logged_at_its_segment_and_line_when_folded(
    homes: Homes, store: str
) -> None:
    with folder_held(store):
        run_hook(homes, "claude", START, store)
        run_hook(homes, "claude", b'{"session_id": "x"} trailing', store)
        [segment] = user_files.segments(str(inbox(store)))
        with open_engine(store) as engine:
            assert engine.lineage(ROOT).depth == 0
    assert "payload is not JSON" in homes.log_text()
    assert f"{inbox(store) / segment}:2: payload is not JSON" in homes.log_text()


def test_a_payload_cannot_forge_the_rows_host_or_time(homes: Homes, store: str) -> None:
    with folder_held(store):
        forged = b'{"session_id": "%s"}, "host": "codex", "at": "2020-01-01T00:00:00Z"'
        run_hook(homes, "claude", forged % ROOT.encode(), store)
        with open_engine(store) as engine:
            assert engine.forest(include_stopped=True) == ()
    assert "payload is not JSON" in homes.log_text()


def test_memory_store_is_refused_and_logged(homes: Homes) -> None:
    run_hook(homes, "claude", START, "memory://")
    assert "keeps nothing for hooks" in homes.log_text()


def test_an_empty_payload_is_refused_and_logged(homes: Homes, store: str) -> None:
    run_hook(homes, "claude", b"  \n", store)
    assert "no payload on stdin" in homes.log_text() and not inbox(store).exists()


def test_a_full_inbox_refuses_the_row_and_keeps_every_row_it_holds(
    homes: Homes, store: str
) -> None:
    folder = inbox(store)
    with folder_held(store):
        for number in range(1, user_files.MAX_SEGMENTS + 1):
            segment = folder / user_files.segment_name(number)
            segment.write_bytes(b"")
            os.truncate(segment, user_files.SEGMENT_BYTES)  # sparse: full in name only
        run_hook(homes, "claude", START, store)
        assert len(user_files.segments(str(folder))) == user_files.MAX_SEGMENTS
        assert all(
            (folder / n).stat().st_size == user_files.SEGMENT_BYTES
            for n in user_files.segments(str(folder))
        )
    assert "is full" in homes.log_text()


def test_a_full_segment_is_followed_by_a_new_one_in_order(homes: Homes, store: str) -> None:
    folder = inbox(store)
    with folder_held(store):
        run_hook(homes, "claude", START, store)
        [first] = user_files.segments(str(folder))
        with (folder / first).open("ab") as segment:
            segment.truncate(user_files.SEGMENT_BYTES)
        run_hook(homes, "claude", PROMPT, store)
        names = user_files.segments(str(folder))
    assert names[0] == first and len(names) == 2 and names[1] > first


def test_the_inbox_and_its_files_are_private_whatever_the_umask(homes: Homes, store: str) -> None:
    old = os.umask(0)
    try:
        run_hook(homes, "claude", START, store)
    finally:
        os.umask(old)
    folder = inbox(store)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()} <= {0o600}


def test_the_fast_hook_keeps_the_modes_of_private_files() -> None:
    assert (user_files.PRIVATE_FILE, user_files.PRIVATE_FOLDER) == (
        private_files.PRIVATE_FILE,
        private_files.PRIVATE_FOLDER,
    )


@pytest.mark.parametrize(
    "url",
    [
        "sqlite:///rel/j.sqlite",
        "sqlite:///./a//b/j.sqlite",
        "sqlite:///~/j.sqlite",
        "sqlite:////tmp/a%20b/j.sqlite",
    ],
)
def test_the_hook_and_the_engine_agree_where_a_sqlite_stores_inbox_is(url: str) -> None:
    path = parse_store_url(url).path
    assert user_files.inbox_dir(url) == f"{path}.inbox"


def test_a_postgresql_stores_inbox_is_in_the_data_dir_without_its_password(
    homes: Homes,
) -> None:
    spelled = user_files.inbox_dir("postgres://me:secret@db.example:5432/lineage")
    same = user_files.inbox_dir("postgresql://me@db.example/lineage")
    assert spelled == same and spelled is not None and "secret" not in spelled
    assert Path(spelled).parent == data_dir() / "inbox"


def test_hook_log_goes_to_the_xdg_state_dir(homes: Homes) -> None:
    assert log_path() == homes.root / "state" / "lineage" / "hook.log"
    assert user_files.log_path() == str(log_path())


def test_lineage_fold_journals_what_waits_and_says_how_many(homes: Homes, store: str) -> None:
    with folder_held(store):
        run_hook(homes, "claude", START, store)
        run_hook(homes, "claude", PROMPT, store)
        result = CliRunner().invoke(main, ["fold", "--store", store])
    assert (result.exit_code, result.output) == (0, "journaled 2 rows, refused 0\n")


def test_lineage_fold_exits_1_when_a_row_was_refused(homes: Homes, store: str) -> None:
    with folder_held(store):
        run_hook(homes, "claude", b"[1, 2]", store)
        result = CliRunner().invoke(main, ["fold", "--store", store])
    assert result.exit_code == 1 and "refused 1" in result.output


def test_the_hook_script_runs_under_the_interpreter_it_names() -> None:
    done = subprocess.run(
        [sys.executable, "-S", HOOK_SCRIPT],
        input=b"",
        capture_output=True,
        env={**os.environ, "XDG_STATE_HOME": "/nonexistent/\x01"},
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
