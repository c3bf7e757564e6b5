"""What a hook process loads and does to start: only what journaling one payload needs.

The import ledger's event classes (``lineage import`` bookkeeping) live apart from the domain,
so a hook never builds them; the journal tooling and the projection still know their topics.
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from lineage_es import hook
from lineage_es.domain.topics import EVENT_CLASSES, LEDGER_TOPICS
from lineage_es.engine.engine import open_engine
from lineage_es.errors import StoreError
from lineage_es.journal import export_journal, import_journal, verify_journal
from lineage_es.stores import SQLITE_HEADER, prepare_sqlite_file

ROOT = "5f1c2e4a-0000-4000-8000-00000000a001"
START = {"session_id": ROOT, "hook_event_name": "SessionStart", "source": "startup"}

#: Modules a hook process has no use for.
NOT_FOR_A_HOOK = (
    "click",
    "jsonschema",
    "yaml",
    "psycopg",
    "zstandard",
    "lineage_es.cli.main",
    "lineage_es.domain.ledger",
    "lineage_es.importers",
    "lineage_es.journal",
    "lineage_es.replay",
)


def python(code: str, env: dict[str, str] | None = None, stdin: bytes = b"") -> str:
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        check=True,
    )
    return done.stdout.decode()


def write_ledger(url: str) -> None:
    """A journal holding import ledger events next to a root, as ``lineage import`` leaves."""
    from lineage_es.domain.ledger import ImportLedger

    with open_engine(url) as engine:
        engine.observe("claude", START)
        ledger = ImportLedger.open("claude", "/home/someone/.claude/projects")
        ledger.record({"a.jsonl": {"size": 1, "mtime": 2, "offset": 1}}, {})
        ledger.forget(["a.jsonl"])
        engine.app.save(ledger)


def test_a_hook_process_imports_only_what_journaling_needs(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    loaded = python(
        "import sys\n"
        "import lineage_es.hook as h\n"
        f"h.main(['claude', '--store', {url!r}], own_process=True)\n"
        "print(' '.join(sorted(sys.modules)))\n",
        env={"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")},
        stdin=orjson.dumps(START),
    ).split()
    assert "lineage_es.engine.engine" in loaded
    assert [name for name in NOT_FOR_A_HOOK if name in loaded] == []
    with open_engine(url) as engine:
        assert engine.lineage(ROOT).depth == 0


def test_lineage_hook_runs_the_hook_without_loading_click() -> None:
    out = python(
        "import sys\n"
        "import lineage_es.hook as h\n"
        "h.run_process = lambda argv: (print('click' in sys.modules, *argv), sys.exit(0))\n"
        "sys.argv = ['lineage', 'hook', 'claude', '--print-lineage']\n"
        "from lineage_es.launch import main\n"
        "main()\n"
    )
    assert out.split() == ["False", "claude", "--print-lineage"]


def test_lineage_hook_help_is_clicks() -> None:
    out = python(
        "import sys\n"
        "sys.argv = ['lineage', 'hook', 'claude', '--help']\n"
        "from lineage_es.launch import main\n"
        "main()\n"
    )
    assert "Journal one hook payload read from stdin" in out


def test_ledger_topics_are_known_without_building_the_ledger() -> None:
    out = python(
        "import sys\n"
        "from lineage_es.domain.topics import EVENT_CLASSES\n"
        "assert 'lineage:ImportLedger.FilesRead' in EVENT_CLASSES\n"
        "assert 'lineage:Nothing.Such' not in EVENT_CLASSES\n"
        "print('lineage_es.domain.ledger' in sys.modules)\n"
        "cls = EVENT_CLASSES['lineage:ImportLedger.FilesRead']\n"
        "from lineage_es.domain.ledger import ImportLedger\n"
        "print(cls is ImportLedger.FilesRead, 'lineage_es.domain.ledger' in sys.modules)\n"
    )
    assert out.split() == ["False", "True", "True"]


def test_the_ledger_keeps_its_topics() -> None:
    from lineage_es.domain.ledger import LEDGER_EVENT_CLASSES, ImportLedger

    assert ImportLedger.TOPIC == "lineage:ImportLedger"
    assert set(LEDGER_EVENT_CLASSES) == LEDGER_TOPICS
    assert all(EVENT_CLASSES[topic] is cls for topic, cls in LEDGER_EVENT_CLASSES.items())
    assert EVENT_CLASSES.get("lineage:ImportLedger.Opened") is ImportLedger.Created
    assert EVENT_CLASSES.get("lineage:Nothing.Such") is None
    with pytest.raises(KeyError):
        EVENT_CLASSES["lineage:Nothing.Such"]


def test_a_hook_catches_up_past_ledger_events_without_building_them(tmp_path: Path) -> None:
    """The projection skips ledger events by topic: no warning, no ledger classes."""
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    write_ledger(url)  # saved past the view: the hook's catch-up meets the ledger events
    child = {"session_id": ROOT, "hook_event_name": "PreToolUse", "tool_name": "Read"}
    loaded = python(
        "import sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import lineage_es.hook as h\n"
        f"outcome = h.run_hook('claude', sys.stdin.buffer.read(), store={url!r})\n"
        "assert outcome.error is None, outcome.error\n"
        "print(' '.join(sorted(sys.modules)))\n",
        env={"XDG_DATA_HOME": str(tmp_path / "data"), "XDG_STATE_HOME": str(tmp_path / "state")},
        stdin=orjson.dumps({**child, "tool_use_id": "toolu_1", "tool_input": {}}),
    ).split()
    assert "lineage_es.domain.ledger" not in loaded
    assert not (tmp_path / "state" / "lineage" / "hook.log").exists()


def test_journal_tooling_carries_ledger_events(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    write_ledger(url)
    exported = tmp_path / "journal.jsonl"
    with open_engine(url) as engine, exported.open("wb") as out:
        assert export_journal(engine, out) == engine.position()
        assert verify_journal(engine).ok
    topics = [orjson.loads(line)["topic"] for line in exported.read_bytes().splitlines()[1:]]
    assert set(topics) >= LEDGER_TOPICS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with open_engine(f"sqlite:///{tmp_path / 'copy.sqlite'}") as copy:
            report = import_journal(copy, exported)
            assert report.imported == len(topics) and not report.skipped_unknown
            assert verify_journal(copy).ok
            assert copy.lineage(ROOT).depth == 0


def test_run_hook_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    frozen = gc.get_freeze_count()
    outcome = hook.run_hook(
        "claude",
        orjson.dumps(START),
        store=f"sqlite:///{tmp_path / 'journal.sqlite'}",
        at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert outcome.error is None
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_the_store_file_check_reads_the_sqlite_header(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.touch(mode=0o600)
    prepare_sqlite_file(empty)  # a new, empty file is a journal to be
    real = tmp_path / "real.sqlite"
    with open_engine(f"sqlite:///{real}"):
        pass
    assert real.read_bytes().startswith(SQLITE_HEADER)
    prepare_sqlite_file(real)
    short = tmp_path / "short.sqlite"
    short.write_bytes(b"SQLite")
    short.chmod(0o600)
    with pytest.raises(StoreError, match="not a SQLite journal"):
        prepare_sqlite_file(short)
