"""`lineage ingest`: every recording a folder holds goes in, bad lines are named and skipped,
and the summary says what was passed over and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from tests.support import codex_rollouts as codex
from tests.support.claude_transcripts import (
    CHILD,
    SESSION,
    agent_rows,
    nodes,
    spawn_session,
    subagents,
    write,
)


def start(session: str) -> dict[str, Any]:
    return {"session_id": session, "hook_event_name": "SessionStart", "source": "startup"}


def capture(path: Path, *lines: dict[str, Any] | str) -> Path:
    """A capture of bare Claude hook payloads; a string is written as the line it is."""
    return write(path, lines)


def ingest(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ingest", "--quiet", *map(str, args)])
    return result.exit_code, result.output


def conversations(store: str) -> set[str]:
    with open_engine(store, create=False) as engine:
        forest = engine.forest(include_stopped=True)
    found: set[str] = set()
    stack = list(forest)
    while stack:
        node = stack.pop()
        found.add(node.conversation)
        stack.extend(node.children)
    return found


def store_in(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'journal.sqlite'}"


def test_a_folder_gives_every_file_in_a_form_ingest_reads_whatever_its_name(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "in"
    capture(folder / "a.ndjson", start("R1"))
    capture(folder / "b.log", start("R2"))
    code, out = ingest(folder, "--store", store_in(tmp_path))
    assert code == 0 and "ingested 2 rows from 2 recordings" in out
    assert conversations(store_in(tmp_path)) == {"R1", "R2"}


def test_the_summary_counts_the_files_a_folder_walk_passed_over_by_why(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    capture(folder / "a.jsonl", start("R1"))
    (folder / "LICENSE.txt").write_text("MIT License\n")
    (folder / "pretty.json").write_text('{\n  "a": 1\n}\n')
    (folder / "other.json").write_text('{"name": "not a payload"}\n')
    (folder / "empty.jsonl").write_text("")
    code, out = ingest(folder, "--store", store_in(tmp_path))
    assert code == 0 and "ingested 1 rows from 1 recordings" in out
    assert "skipped 4 files: empty (1), not a recording (3)" in out


def test_agent_files_whose_session_file_is_absent_are_recordings_of_their_own(
    tmp_path: Path,
) -> None:
    write(subagents(tmp_path / "in") / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 5))
    code, out = ingest(tmp_path / "in", "--store", store_in(tmp_path))
    assert code == 0 and "from 1 recordings" in out and "ingested 0 rows" not in out
    assert CHILD in conversations(store_in(tmp_path))


def test_agent_files_beside_their_session_file_are_read_with_it_only(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    write(subagents(folder) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 5))
    spawn_session(folder)
    code, out = ingest(folder, "--store", store_in(tmp_path))
    assert code == 0 and "from 1 recordings" in out and "skipped" not in out
    assert {SESSION, CHILD} <= conversations(store_in(tmp_path))


def test_a_bad_line_is_named_and_skipped_and_every_row_after_it_goes_in(tmp_path: Path) -> None:
    path = capture(tmp_path / "c.jsonl", start("R1"), "not json", start("R2"), start("R3"))
    _, out = ingest(path, "--store", store_in(tmp_path))
    assert f"{path}:2: line is not JSON" in out
    assert "ingested 3 rows from 1 recordings; skipped 1 bad line" in out
    assert conversations(store_in(tmp_path)) == {"R1", "R2", "R3"}


def test_a_folder_takes_a_capture_whose_first_line_is_torn(tmp_path: Path) -> None:
    folder = tmp_path / "captures"
    folder.mkdir()
    capture(folder / "c.jsonl", '{"session', start("R1"))
    _, out = ingest(folder, "--store", store_in(tmp_path))
    assert "c.jsonl:1: line is not JSON" in out
    assert conversations(store_in(tmp_path)) == {"R1"}


def test_every_bad_line_is_named_with_its_reason(tmp_path: Path) -> None:
    lines = ("[1]", start("R1"), {"neither": "host"}, start("R2"))
    path = capture(tmp_path / "c.jsonl", *lines)
    _, out = ingest(path, "--store", store_in(tmp_path))
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert [e.split(": ", 2)[1] for e in errors] == [f"{path}:1", f"{path}:3"]
    assert conversations(store_in(tmp_path)) == {"R1", "R2"}


def test_a_bad_line_makes_the_exit_status_1(tmp_path: Path) -> None:
    path = capture(tmp_path / "c.jsonl", start("R1"), "not json")
    assert ingest(path, "--store", store_in(tmp_path))[0] == 1


def test_a_file_named_that_is_not_a_recording_makes_the_exit_status_1(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    code, out = ingest(tmp_path / "empty.jsonl", "--store", store_in(tmp_path))
    assert code == 1 and "the recording is empty" in out


def test_a_recorded_row_that_is_bad_is_skipped_too(tmp_path: Path) -> None:
    good = {"host": "claude", "at": "2026-09-03T08:00:00Z", "payload": start("R1")}
    bad = {"host": "claude", "at": "never", "payload": start("R2")}
    later = {"host": "claude", "at": "2026-09-03T08:00:02Z", "payload": start("R3")}
    path = capture(tmp_path / "r.jsonl", good, bad, later)
    code, out = ingest(path, "--store", store_in(tmp_path))
    assert code == 1 and f"{path}:2: 'at' must be an ISO-8601 time" in out
    assert conversations(store_in(tmp_path)) == {"R1", "R3"}


def inserted(path: Path, at: int, line: bytes) -> Path:
    """``path`` with ``line`` put in before its line ``at``."""
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[: at - 1], line + b"\n", *lines[at - 1 :]]))
    return path


def test_a_transcripts_bad_line_is_named_and_skipped_and_every_row_after_it_goes_in(
    tmp_path: Path,
) -> None:
    path = inserted(spawn_session(tmp_path), 3, b"not json")  # the child is named on line 5
    code, out = ingest(path, "--store", store_in(tmp_path))
    assert code == 1 and f"{path}:3: line is not JSON" in out
    assert "skipped 1 bad line" in out and "not read to the end" not in out
    assert conversations(store_in(tmp_path)) == {SESSION, CHILD}


def test_a_rollouts_bad_line_is_named_and_skipped_and_every_row_after_it_goes_in(
    tmp_path: Path,
) -> None:
    result = codex.item("function_call_output", call_id="call_1", output={"agent_id": codex.C})
    path = codex.write(tmp_path, codex.meta(codex.P), b"{torn", codex.call("spawn_agent"), result)
    code, out = ingest(path, "--store", store_in(tmp_path))
    assert code == 1 and f"{path}:2: line is not JSON" in out
    assert "skipped 1 bad line" in out and "not read to the end" not in out
    assert conversations(store_in(tmp_path)) == {codex.P, codex.C}


def test_a_subagent_files_bad_line_is_named_with_that_file_and_its_agent_still_goes_in(
    tmp_path: Path,
) -> None:
    agent = write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 5))
    inserted(agent, 1, b"[1, 2]")
    code, out = ingest(spawn_session(tmp_path), "--store", store_in(tmp_path))
    assert code == 1 and f"{agent}:1: line is not a JSON object" in out
    assert conversations(store_in(tmp_path)) == {SESSION, CHILD}


def test_a_line_over_32_mib_in_a_hook_capture_is_named_and_skipped_unread(tmp_path: Path) -> None:
    path = capture(tmp_path / "c.jsonl", start("R1"))
    with path.open("ab") as stream:
        stream.write(b'{"pad": "' + b"x" * (32 * 1024 * 1024) + b'"}\n')
        stream.write(orjson.dumps(start("R2")) + b"\n")
    code, out = ingest(path, "--store", store_in(tmp_path))
    assert code == 1 and f"{path}:2: line is longer than 32 MiB; refused unread" in out
    assert "ingested 2 rows from 1 recordings; skipped 1 bad line" in out
    assert conversations(store_in(tmp_path)) == {"R1", "R2"}


def test_ingest_of_a_session_with_bad_lines_agrees_with_import(tmp_path: Path) -> None:
    from lineage_es.importers import import_claude
    from lineage_es.ingest import ingest as ingest_paths

    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 7))
    path = inserted(inserted(spawn_session(tmp_path), 3, b'{"type": "user", "sess'), 5, b"[]")
    with open_engine("memory://") as imported, open_engine("memory://") as ingested:
        import_claude(imported, tmp_path)
        report = ingest_paths(ingested, [path])
        assert report.bad_lines == 2
        assert nodes(ingested, [SESSION]) == nodes(imported, [SESSION])


def test_ingest_of_a_session_with_a_bad_sidecar_agrees_with_import(tmp_path: Path) -> None:
    """The sidecar is named and skipped; the session goes in, its agent placed as if it had
    no sidecar, as ``lineage import`` places it."""
    from lineage_es.importers import import_claude
    from lineage_es.importers.lines import BAD_SIDECAR
    from lineage_es.ingest import ingest as ingest_paths

    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 7))
    sidecar = subagents(tmp_path) / f"agent-{CHILD}.meta.json"
    sidecar.write_text('{"agentType": "Explore", ')  # torn
    path = spawn_session(tmp_path)
    with open_engine("memory://") as imported, open_engine("memory://") as ingested:
        assert import_claude(imported, tmp_path).skipped[BAD_SIDECAR] == 1
        report = ingest_paths(ingested, [path])
        (failure,) = report.failures
        assert failure.startswith(f"{sidecar}: sidecar is not JSON (") and report.bad_lines == 1
        assert CHILD in nodes(ingested, [SESSION])
        assert nodes(ingested, [SESSION]) == nodes(imported, [SESSION])


def test_a_bad_sidecar_is_named_and_skipped_and_its_session_goes_in(tmp_path: Path) -> None:
    write(subagents(tmp_path) / f"agent-{CHILD}.jsonl", agent_rows(CHILD, 3, 4, 5))
    sidecar = subagents(tmp_path) / f"agent-{CHILD}.meta.json"
    sidecar.write_text("[1, 2]")
    code, out = ingest(spawn_session(tmp_path), "--store", store_in(tmp_path))
    assert code == 1 and f"error: {sidecar}: sidecar is not a JSON object" in out
    assert "skipped 1 bad line" in out and "not read to the end" not in out
    assert conversations(store_in(tmp_path)) == {SESSION, CHILD}


def test_help_says_bad_lines_are_skipped_and_what_the_exit_status_means() -> None:
    out = CliRunner().invoke(main, ["ingest", "--help"]).output
    assert "skipped" in out and "1 when some lines" in out


def test_ingest_of_a_rollout_with_bad_lines_agrees_with_import(tmp_path: Path) -> None:
    """Stops aside: import stops the root at its file's last row, and its live children
    with it; ingest leaves them live."""
    from lineage_es.importers import import_codex
    from lineage_es.ingest import ingest as ingest_paths

    result = codex.item("function_call_output", call_id="call_1", output={"agent_id": codex.C})
    rows = [codex.meta(codex.P), b"{torn", codex.call("spawn_agent"), b"[1]", result]
    path = codex.write(tmp_path, *rows, codex.event("task_started"))
    with open_engine("memory://") as imported, open_engine("memory://") as ingested:
        import_codex(imported, tmp_path)
        report = ingest_paths(ingested, [path])
        assert report.bad_lines == 2
        started = {c: node[:-1] for c, node in nodes(ingested, [codex.P]).items()}
        assert started == {c: node[:-1] for c, node in nodes(imported, [codex.P]).items()}
        assert codex.C in started


def test_ingest_names_each_bad_line_of_a_file_of_only_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("hello\n\n[1]\n")
    code, out = ingest(path, "--store", f"sqlite:///{tmp_path / 'j.sqlite'}")
    assert code == 1
    assert f"{path}:1: line is not JSON" in out and f"{path}:3: line holds a JSON list" in out


def test_ingest_does_not_call_a_file_of_only_bad_lines_empty(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_text("hello\n")
    _, out = ingest(path, "--store", f"sqlite:///{tmp_path / 'j.sqlite'}")
    assert "empty" not in out and "not read to the end" not in out
    assert "skipped 1 bad line" in out
