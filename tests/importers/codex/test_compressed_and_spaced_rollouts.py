"""``lineage import codex`` reads compressed rollouts (``.zst``: whole, of several frames, cut
off or followed by junk) and rollouts in spaced JSON as it reads compact ones."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from lineage_es.engine.engine import Engine
from lineage_es.importers import lines as lines_module
from tests.support.codex_sessions import (
    CHILD,
    PARENT,
    event,
    family,
    line,
    message,
    meta,
    one_shot,
    parent_spawning,
    rollout,
    run,
    spawned,
)


def test_compressed_rollout_is_read(tmp_path: Path, memory: Engine) -> None:
    zstandard = pytest.importorskip("zstandard")
    path = parent_spawning(tmp_path)
    packed = path.with_name(path.name + ".zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(path.read_bytes()))
    path.unlink()
    run(memory, tmp_path)
    assert set(family(memory)) == {PARENT, CHILD}


def test_corrupt_compressed_rollout_is_counted_and_the_rest_imported(
    tmp_path: Path, memory: Engine
) -> None:
    pytest.importorskip("zstandard")
    parent_spawning(tmp_path)
    rollout(
        tmp_path, CHILD, b"\x28\xb5\x2f\xfd not really zstd", name=f"rollout-x-{CHILD}.jsonl.zst"
    )
    report = run(memory, tmp_path)
    assert report.skipped[lines_module.CORRUPT] == 1
    assert PARENT in family(memory)


# -- compressed and loose files ----------------------------------------------------------------


def compressed(path: Path, cut: float = 1.0, junk: bytes = b"") -> Path:
    """``path`` compressed in its place (``.zst``), cut to ``cut`` of its size, ``junk`` after."""
    zstandard = pytest.importorskip("zstandard")
    packed = path.with_name(path.name + ".zst")
    data = zstandard.ZstdCompressor(level=1).compress(path.read_bytes())
    packed.write_bytes(data[: int(len(data) * cut)] + junk)
    path.unlink()
    return packed


def padded_child(folder: Path) -> Path:
    """CHILD's rollout with its turn end after 1 MB of rows the compressor cannot shrink."""
    noise = [
        message(4, orjson.dumps(list(range(n * 997, n * 997 + 4000))).decode()) for n in range(60)
    ]
    return rollout(folder, CHILD, spawned(3, CHILD, PARENT), *noise, event(8, "task_complete"))


def test_compressed_rollout_cut_off_is_counted_corrupt_and_its_rows_before_the_cut_read(
    tmp_path: Path, memory: Engine
) -> None:
    parent_spawning(tmp_path)
    compressed(padded_child(tmp_path), cut=0.5)
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.CORRUPT: 1} and not report.partial
    stopped = family(memory)[CHILD].stopped_at  # at its last row before the cut
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:04")


def test_compressed_rollout_with_bytes_after_its_frame_is_counted_corrupt_and_read(
    tmp_path: Path, memory: Engine
) -> None:
    compressed(parent_spawning(tmp_path), junk=b"not a frame")
    report = run(memory, tmp_path)
    assert report.skipped == {lines_module.CORRUPT: 1}
    assert report.roots == {PARENT} and set(family(memory)) == {PARENT, CHILD}


def test_compressed_rollout_of_two_frames_is_read_whole(tmp_path: Path, memory: Engine) -> None:
    zstandard = pytest.importorskip("zstandard")
    rows = parent_spawning(tmp_path).read_bytes().splitlines(keepends=True)
    frames = [zstandard.ZstdCompressor().compress(b"".join(part)) for part in (rows[:2], rows[2:])]
    compressed(rollout(tmp_path, CHILD, spawned(3, CHILD, PARENT)))
    path = tmp_path / "2026" / "09" / "03" / f"rollout-2026-09-03T10-00-00-{PARENT}.jsonl"
    path.unlink()
    path.with_name(path.name + ".zst").write_bytes(b"".join(frames))
    report = run(memory, tmp_path)
    assert not report.skipped
    stopped = family(memory)[PARENT].stopped_at  # at the last row, in the second frame
    assert stopped is not None and stopped.startswith("2026-09-03T08:00:10")


def v1_parent(folder: Path) -> Path:
    """A root thread that spawns CHILD (v1: the spawn call's output names it)."""
    call = {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "c1"}
    output = {"type": "function_call_output", "call_id": "c1"}
    output["output"] = orjson.dumps({"agent_id": CHILD}).decode()
    return rollout(
        folder,
        PARENT,
        meta(0, PARENT),
        line(2, "response_item", call),
        line(3, "response_item", output),
        event(10, "task_complete"),
    )


def spaced(path: Path) -> list[bytes]:
    """The rows of ``path`` as JSON with spaces after its colons and commas."""
    return [
        json.dumps(orjson.loads(raw)).encode() + b"\n" for raw in path.read_bytes().splitlines()
    ]


def test_rollout_in_spaced_json_is_read_like_a_compact_one(tmp_path: Path) -> None:
    rollout(tmp_path / "b", PARENT, *spaced(v1_parent(tmp_path / "a")))
    compact, loose = one_shot(tmp_path / "a"), one_shot(tmp_path / "b")
    assert set(family(loose)) == {PARENT, CHILD}
    assert family(loose) == family(compact)


def test_spaced_json_rollout_that_goes_on_is_still_read_whole(
    tmp_path: Path, memory: Engine
) -> None:
    rows = spaced(v1_parent(tmp_path / "x"))
    path = rollout(tmp_path / "a", PARENT, *rows[:2])
    run(memory, tmp_path / "a")
    path.write_bytes(b"".join(rows))
    run(memory, tmp_path / "a")
    assert set(family(memory)) == {PARENT, CHILD}
