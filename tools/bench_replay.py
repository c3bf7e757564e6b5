"""Benchmark lineage-replay on a generated 100k-row capture, asserting at every spawn and stop.

Generates the capture with tools/gen_capture.py (1,000 roots, 10,000 subagents, all three hosts,
recording form) unless ``--dir`` already holds one, then measures, in the same run:

- the floor: a plain orjson parse of every line of the same file (best of 3, this process);
- the replay: ``run_replay(capture, expected=...)`` into a fresh memory engine, in a child process
  (so its peak memory is its own), timed with and without loading the expected file;
- peak memory: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that child process, beside the
  same figure for a child that only imports the replay and opens an engine (Linux carries the
  parent's high-water mark into a child at exec, so the parent stays small: the capture is
  generated in a child too, and the parent's own figure is printed as the bound);
- whether every assertion held;
- a bound: reading the rows and running the host adapters alone, journaling nothing;
- a floor under any replay on the ``eventsourcing`` library: the library alone recording one
  bare event per asserted step (every spawn and stop journals at least one), saved one by one
  into memory and, most generously, all in one save; beside the orjson parse, it says how far
  the throughput goal is from what the library allows at all.

Goals (issue 3): replay throughput >= 0.5x the orjson floor, peak memory < 300 MB.
``--profile`` adds a cProfile of the replay (top functions by own time and by cumulative time).

Usage: python tools/bench_replay.py [--dir DIR] [--rows 100000] [--roots 1000]
                                    [--subagents 10000] [--profile] [--profile-rows 20000]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict
from uuid import UUID

import orjson
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event
from eventsourcing.persistence import Transcoder

from lineage_es.transcoder import OrjsonTranscoder

RSS_GOAL_MB = 300.0
RATIO_GOAL = 0.5


def orjson_floor(path: Path, repeat: int = 3) -> float:
    """Seconds to read and parse every line of ``path`` with orjson (best of ``repeat``)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        with path.open("rb") as stream:
            for line in stream:
                orjson.loads(line)
        best = min(best, time.perf_counter() - start)
    return best


class ReplayFigures(TypedDict):
    """What the child process measured of one replay."""

    load_seconds: float
    replay_seconds: float
    rows: int
    steps: int
    failed: list[str]
    failed_count: int
    maxrss_kb: int


def child_replay(transcript: Path, expected: Path) -> ReplayFigures:
    """Run in the child process: load the expected file, replay, report times and memory."""
    from lineage_es.replay import load_expected, run_replay

    start = time.perf_counter()
    spec = load_expected(expected)
    loaded = time.perf_counter()
    result = run_replay(transcript, expected=spec)
    done = time.perf_counter()
    return {
        "load_seconds": loaded - start,
        "replay_seconds": done - loaded,
        "rows": result.rows,
        "steps": len(result.steps),
        "failed": [step.label for step in result.failed][:10],
        "failed_count": len(result.failed),
        "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }


def adapters_only(path: Path) -> float:
    """Seconds to read every row and turn it into an observation, journaling nothing: the
    most any replay through the host adapters could reach (best of 2)."""
    from lineage_es import hosts
    from lineage_es.replay.inputs import PayloadRow, read_rows

    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        for item in read_rows(path):
            if isinstance(item, PayloadRow):
                hosts.adapter(item.host).observe(item.payload, at=item.at)
        best = min(best, time.perf_counter() - start)
    return best


class _Bare(Aggregate):
    """The least an event-sourced replay can record: an aggregate with one empty event."""

    @event("Touched")
    def touch(self) -> None:
        pass


class _BareApp(Application[UUID]):
    """The library's application with the engine's own (fastest) transcoder."""

    def construct_transcoder(self) -> Transcoder:
        return OrjsonTranscoder()


def library_floor(events: int, aggregates: int) -> tuple[float, float]:
    """Seconds for the eventsourcing library alone to record ``events`` bare events over
    ``aggregates`` aggregates into memory: saved one at a time, and all in one save (best of 2)."""
    one_by_one = all_at_once = float("inf")
    for _ in range(2):
        app = _BareApp()
        nodes = [_Bare() for _ in range(aggregates)]
        app.save(*nodes)
        start = time.perf_counter()
        for index in range(events):
            node = nodes[index % aggregates]
            node.touch()
            app.save(node)
        one_by_one = min(one_by_one, time.perf_counter() - start)
        start = time.perf_counter()
        for index in range(events):
            nodes[index % aggregates].touch()
        app.save(*nodes)
        all_at_once = min(all_at_once, time.perf_counter() - start)
    return one_by_one, all_at_once


def child_floor() -> dict[str, int]:
    """Run in the child process: what importing the replay and opening an engine costs."""
    from lineage_es import open_engine
    from lineage_es.replay import run_replay  # noqa: F401 (its imports are the floor)

    open_engine("memory://").close()
    return {"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def in_child(*args: str) -> Any:
    """Run this file as a child process in one of its ``--child`` modes; its JSON answer."""
    completed = subprocess.run(
        [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True
    )
    return json.loads(completed.stdout)


def profile(transcript: Path, expected: Path, top: int = 25) -> str:
    """cProfile of one replay: the functions that take the time."""
    from lineage_es.replay import load_expected, run_replay

    profiler = cProfile.Profile()
    profiler.enable()
    run_replay(transcript, expected=load_expected(expected))
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def ensure_capture(folder: Path, rows: int, roots: int, subagents: int) -> tuple[Path, Path]:
    """The capture in ``folder``, generated (in a child process) when it is not there yet."""
    transcript = folder / "capture.jsonl"
    expected = folder / "capture.expected.yaml"
    if not (transcript.is_file() and expected.is_file()):
        generator = Path(__file__).with_name("gen_capture.py")
        sizes = ["--rows", str(rows), "--roots", str(roots), "--subagents", str(subagents)]
        subprocess.run([sys.executable, str(generator), str(folder), *sizes], check=True)
    return transcript, expected


def own_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where the capture is (or goes)")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--roots", type=int, default=1_000)
    parser.add_argument("--subagents", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true", help="also print a cProfile")
    parser.add_argument(
        "--profile-rows", type=int, default=20_000, help="size of the capture profiled"
    )
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        data = child_replay(Path(args.child[0]), Path(args.child[1])) if args.child else None
        print(json.dumps(data if data is not None else child_floor()))
        return

    folder = args.dir or Path(tempfile.mkdtemp(prefix="lineage-bench-replay-"))
    transcript, expected = ensure_capture(folder, args.rows, args.roots, args.subagents)
    parent_mb = own_maxrss_mb()
    floor_memory: dict[str, int] = in_child()
    replay: ReplayFigures = in_child(str(transcript), str(expected))
    with transcript.open("rb") as stream:
        lines = sum(1 for _ in stream)
    size_mb = transcript.stat().st_size / 1e6
    floor_seconds = orjson_floor(transcript)
    bound_seconds = adapters_only(transcript)
    library_one, library_all = library_floor(replay["steps"], args.roots)

    replay_seconds = replay["replay_seconds"]
    load_seconds = replay["load_seconds"]
    total = replay_seconds + load_seconds
    floor_rate = lines / floor_seconds
    rate = lines / total
    ratio = rate / floor_rate
    rss_mb = replay["maxrss_kb"] / 1024
    floor_rss_mb = floor_memory["maxrss_kb"] / 1024
    held = replay["steps"] - replay["failed_count"]

    table = [
        ("capture", f"{lines:,} rows, {size_mb:.1f} MB", ""),
        ("orjson parse (floor)", f"{floor_seconds:.2f} s", f"{floor_rate:,.0f} rows/s"),
        (
            "replay + assertions",
            f"{total:.2f} s",
            f"{rate:,.0f} rows/s = {ratio:.4f}x the floor (goal >= {RATIO_GOAL}x: "
            f"{'met' if ratio >= RATIO_GOAL else 'MISSED'})",
        ),
        (
            "  of which loading the expected file",
            f"{load_seconds:.2f} s",
            f"{replay['steps']} steps",
        ),
        (
            "  of which replaying",
            f"{replay_seconds:.2f} s",
            f"{lines / replay_seconds:,.0f} rows/s = "
            f"{lines / replay_seconds / floor_rate:.4f}x the floor",
        ),
        (
            "  bound: reading rows + host adapters only",
            f"{bound_seconds:.2f} s",
            f"{lines / bound_seconds:,.0f} rows/s = {lines / bound_seconds / floor_rate:.4f}x "
            "the floor, journaling nothing",
        ),
        (
            "  floor: eventsourcing alone, one save per event",
            f"{library_one:.2f} s",
            f"{replay['steps']:,} bare events (one per asserted step); parse + these take "
            f"{(floor_seconds + library_one) / floor_seconds:.1f}x the floor's time",
        ),
        (
            "  floor: eventsourcing alone, one save for all",
            f"{library_all:.2f} s",
            f"parse + these take {(floor_seconds + library_all) / floor_seconds:.1f}x the floor's "
            f"time; the goal allows {1 / RATIO_GOAL:.1f}x for the whole replay",
        ),
        (
            "peak memory (ru_maxrss, child process)",
            f"{rss_mb:.0f} MB",
            f"goal < {RSS_GOAL_MB:.0f} MB: {'met' if rss_mb < RSS_GOAL_MB else 'MISSED'}; "
            f"a child that only imports and opens an engine: {floor_rss_mb:.0f} MB; "
            f"the parent when it started them: {parent_mb:.0f} MB",
        ),
        (
            "assertions held",
            f"{held} of {replay['steps']}",
            "all held" if not replay["failed_count"] else f"failed: {replay['failed']}",
        ),
    ]
    width = max(len(name) for name, _, _ in table)
    for name, value, note in table:
        print(f"{name:<{width}}  {value:>22}  {note}")

    if args.profile:
        small = Path(tempfile.mkdtemp(prefix="lineage-bench-profile-"))
        scale = args.profile_rows / args.rows
        small_transcript, small_expected = ensure_capture(
            small,
            args.profile_rows,
            max(1, round(args.roots * scale)),
            max(1, round(args.subagents * scale)),
        )
        print(f"\ncProfile of a {args.profile_rows:,}-row capture of the same shape:")
        print(profile(small_transcript, small_expected))


if __name__ == "__main__":
    main()
