"""Benchmark lineage-replay on a generated 100k-row capture, asserting at every spawn and stop.

Generates the capture with tools/gen_capture.py (1,000 roots, 10,000 subagents, all three hosts,
recording form) unless ``--dir`` already holds one, then measures, in the same run, in
``--rounds`` interleaved rounds (each round takes every figure below once, in turn; each figure
printed is its best over the rounds, so a split of one replay into parts compares figures
taken minutes apart at most, never a quiet minute against a busy one):

- the floor: a plain orjson parse of every line of the same file (best of 3, this process);
- the replay: ``run_replay(capture, expected=...)`` into a fresh memory engine, in a child process
  (so its peak memory is its own), timed with and without loading the expected file;
- peak memory: ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` of that child process, beside the
  same figure for a child that only imports the replay and opens an engine (Linux carries the
  parent's high-water mark into a child at exec, so the parent stays small: the capture is
  generated in a child too, and the parent's own figure is printed as the bound);
- whether every assertion held;
- a bound: reading the rows and running the host adapters alone, journaling nothing;
- where the rest goes: the same rows journaled into a memory engine answering nothing (no
  expected file, no answer built; the cycle collector tuned as the replay tunes it), so the
  replay splits into adapters, the engine's own journaling and view, and answers with
  assertions;
- the fair library floor: as many events as the replay journaled, over as many aggregates,
  made with the library's ``trigger_event`` and stored one by one with ``EventStore.put`` into
  a memory recorder without a notification log, through the engine's own transcoder (no
  ``Application.save``, no ``@event`` decorator: the engine uses neither on its hot path);
- the tool-call-heavy capture (500 roots, 10 subagents each, 20 tool calls per subagent; most
  rows are ordinary tool calls inside subagents) replayed without an expected file, beside its
  own orjson parse.

Goals (issue 19): the replay with every assertion >= 0.05x the orjson parse and within 4x the
fair library floor; the tool-call-heavy replay without an expected file >= 0.10x its parse;
peak memory < 300 MB. ``--profile`` adds a cProfile of the replay (top functions by own time
and by cumulative time).

Usage: python tools/bench_replay.py [--dir DIR] [--rows 100000] [--roots 1000]
                                    [--subagents 10000] [--heavy-roots 500]
                                    [--heavy-subagents 5000] [--calls-per-subagent 20]
                                    [--rounds 2] [--profile] [--profile-rows 20000]
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
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple, TypedDict
from uuid import UUID

import orjson
from eventsourcing.domain import Aggregate
from eventsourcing.persistence import EventStore, Mapper
from eventsourcing.popo import POPOAggregateRecorder

from lineage_es.transcoder import OrjsonTranscoder

RSS_GOAL_MB = 300.0
RATIO_GOAL = 0.05
LIBRARY_GOAL = 4.0
HEAVY_GOAL = 0.10


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
    #: Events the replay journaled, and the aggregates they belong to.
    events: int
    aggregates: int


def child_replay(transcript: Path, expected: Path | None) -> ReplayFigures:
    """Run in the child process: load the expected file (if any), replay, report times,
    memory and what the replay journaled; with the collector as ``lineage-replay`` runs it
    (:func:`~lineage_es.collector.fewer_collections`)."""
    import lineage_es
    from lineage_es.collector import fewer_collections
    from lineage_es.replay import load_expected, run_replay

    opened: list[Any] = []
    real_open = lineage_es.open_engine

    def keeping_engine(*args: Any, **kwargs: Any) -> Any:
        engine = real_open(*args, **kwargs)
        opened.append(engine)
        return engine

    lineage_es.open_engine = keeping_engine
    with fewer_collections():
        start = time.perf_counter()
        spec = load_expected(expected) if expected is not None else None
        loaded = time.perf_counter()
        result = run_replay(transcript, expected=spec)
        done = time.perf_counter()
    maxrss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # The memory recorder outlives the closed engine: count what the replay journaled.
    recorder = opened[0].app.recorder
    events = aggregates = 0
    seen: set[UUID] = set()
    position = 0
    while page := recorder.select_notifications(position, 10_000, inclusive_of_start=False):
        events += len(page)
        seen.update(n.originator_id for n in page)
        position = page[-1].id
    aggregates = len(seen)
    return {
        "load_seconds": loaded - start,
        "replay_seconds": done - loaded,
        "rows": result.rows,
        "steps": len(result.steps),
        "failed": [step.label for step in result.failed][:10],
        "failed_count": len(result.failed),
        "maxrss_kb": maxrss_kb,
        "events": events,
        "aggregates": aggregates,
    }


def adapters_only(path: Path) -> float:
    """Seconds to read every row and turn it into an observation, journaling nothing: the
    most any replay through the host adapters could reach."""
    from lineage_es import hosts
    from lineage_es.replay.inputs import PayloadRow, read_rows

    start = time.perf_counter()
    for item in read_rows(path):
        if isinstance(item, PayloadRow):
            hosts.adapter(item.host).observe(item.payload, at=item.at)
    return time.perf_counter() - start


def journal_only(path: Path) -> float:
    """Seconds to replay every row into a fresh memory engine answering nothing, with no
    expected file: reading, the host adapters, routing, the domain's rules, journaling and the
    view, all a replay does before it answers a row or checks an assertion."""
    from lineage_es import open_engine
    from lineage_es.replay.inputs import ObservationRow, PayloadRow, read_rows

    engine = open_engine("memory://")
    start = time.perf_counter()
    for item in read_rows(path):
        if isinstance(item, PayloadRow):
            engine.observe(item.host, item.payload, at=item.at, answer=False)
        elif isinstance(item, ObservationRow) and item.observation is not None:
            engine.observe(item.observation.host, item.observation, answer=False)
    elapsed = time.perf_counter() - start
    engine.close()
    return elapsed


class _Bare(Aggregate):
    """The least an event-sourced replay can record: an aggregate with one empty event."""

    class Touched(Aggregate.Event):
        pass


def library_floor(events: int, aggregates: int) -> float:
    """Seconds for the eventsourcing library's public API to make ``events`` bare events over
    ``aggregates`` aggregates (``trigger_event``) and store each as it is made
    (``EventStore.put``) into a memory recorder without a notification log (best of 2): the
    fair floor under a replay that journals as many events."""
    best = float("inf")
    aggregates = max(1, min(aggregates, events))
    for _ in range(2):
        store: EventStore[UUID] = EventStore(
            Mapper(transcoder=OrjsonTranscoder()), POPOAggregateRecorder()
        )
        start = time.perf_counter()
        nodes = [_Bare() for _ in range(aggregates)]
        for node in nodes:
            store.put(node.collect_events())
        for _ in range(events - aggregates):
            node = nodes[_ % aggregates]
            node.trigger_event(_Bare.Touched)
            store.put(node.collect_events())
        best = min(best, time.perf_counter() - start)
    return best


def child_floor() -> dict[str, int]:
    """Run in the child process: what importing the replay and opening an engine costs."""
    from lineage_es import open_engine
    from lineage_es.replay import run_replay  # noqa: F401 (its imports are the floor)

    open_engine("memory://").close()
    return {"maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def fastest(runs: Iterable[ReplayFigures]) -> ReplayFigures:
    """The run whose replay took least."""
    return min(runs, key=lambda figures: figures["replay_seconds"])


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


def ensure_capture(folder: Path, *sizes: str) -> tuple[Path, Path]:
    """The capture in ``folder``, generated (in a child process, with gen_capture.py's
    ``sizes`` flags) when it is not there yet."""
    transcript = folder / "capture.jsonl"
    expected = folder / "capture.expected.yaml"
    if not (transcript.is_file() and expected.is_file()):
        generator = Path(__file__).with_name("gen_capture.py")
        subprocess.run([sys.executable, str(generator), str(folder), *sizes], check=True)
    return transcript, expected


def own_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def count_lines(path: Path) -> int:
    with path.open("rb") as stream:
        return sum(1 for _ in stream)


def verdict(met: bool) -> str:
    return "met" if met else "MISSED"


class Round(NamedTuple):
    """One interleaved round of every measure (seconds, or the replays' own figures)."""

    replay: ReplayFigures
    heavy_replay: ReplayFigures
    floor: float
    heavy_floor: float
    bound: float
    journal: float
    heavy_bound: float
    library: float


def measure_round(transcript: Path, expected: Path, heavy: Path) -> Round:
    """Every measure once, in turn: the two replays in child processes, then the floors and
    bounds here, the journaling with the collector tuned as the replays have it."""
    from lineage_es.collector import fewer_collections

    replay: ReplayFigures = in_child(str(transcript), str(expected))
    heavy_replay: ReplayFigures = in_child(str(heavy))
    with fewer_collections():
        journal = journal_only(transcript)
    return Round(
        replay=replay,
        heavy_replay=heavy_replay,
        floor=orjson_floor(transcript),
        heavy_floor=orjson_floor(heavy),
        bound=adapters_only(transcript),
        journal=journal,
        heavy_bound=adapters_only(heavy),
        library=library_floor(replay["events"], replay["aggregates"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where the captures are (or go)")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--roots", type=int, default=1_000)
    parser.add_argument("--subagents", type=int, default=10_000)
    parser.add_argument("--heavy-roots", type=int, default=500, help="tool-call-heavy capture")
    parser.add_argument("--heavy-subagents", type=int, default=5_000)
    parser.add_argument("--calls-per-subagent", type=int, default=20)
    parser.add_argument(
        "--rounds", type=int, default=2, help="interleaved rounds; each figure is its best"
    )
    parser.add_argument("--profile", action="store_true", help="also print a cProfile")
    parser.add_argument(
        "--profile-rows", type=int, default=20_000, help="size of the capture profiled"
    )
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        if not args.child:
            print(json.dumps(child_floor()))
        else:
            expected = Path(args.child[1]) if len(args.child) > 1 else None
            print(json.dumps(child_replay(Path(args.child[0]), expected)))
        return

    folder = args.dir or Path(tempfile.mkdtemp(prefix="lineage-bench-replay-"))
    transcript, expected = ensure_capture(
        folder / "asserted",
        *("--rows", str(args.rows), "--roots", str(args.roots)),
        *("--subagents", str(args.subagents)),
    )
    heavy, _ = ensure_capture(
        folder / "tool-calls",
        *("--roots", str(args.heavy_roots), "--subagents", str(args.heavy_subagents)),
        *("--calls-per-subagent", str(args.calls_per_subagent)),
    )
    parent_mb = own_maxrss_mb()
    floor_memory: dict[str, int] = in_child()
    lines = count_lines(transcript)
    heavy_lines = count_lines(heavy)
    size_mb = transcript.stat().st_size / 1e6
    rounds = [measure_round(transcript, expected, heavy) for _ in range(args.rounds)]
    # Each figure is its best over the rounds, every round having taken all of them in turn:
    # a split (the replay against the journaling, the journaling against the adapters) is a
    # difference of figures taken minutes apart, and single runs here swing by a third.
    replay = fastest(r.replay for r in rounds)
    heavy_replay = fastest(r.heavy_replay for r in rounds)
    floor_seconds = min(r.floor for r in rounds)
    heavy_floor_seconds = min(r.heavy_floor for r in rounds)
    bound_seconds = min(r.bound for r in rounds)
    journal_seconds = min(r.journal for r in rounds)
    heavy_bound_seconds = min(r.heavy_bound for r in rounds)
    library_seconds = min(r.library for r in rounds)

    replay_seconds = replay["replay_seconds"]
    load_seconds = replay["load_seconds"]
    total = replay_seconds + load_seconds
    floor_rate = lines / floor_seconds
    rate = lines / total
    ratio = rate / floor_rate
    library_ratio = total / library_seconds
    heavy_seconds = heavy_replay["replay_seconds"]
    heavy_ratio = heavy_floor_seconds / heavy_seconds
    rss_mb = replay["maxrss_kb"] / 1024
    floor_rss_mb = floor_memory["maxrss_kb"] / 1024
    held = replay["steps"] - replay["failed_count"]

    table = [
        ("capture", f"{lines:,} rows, {size_mb:.1f} MB", ""),
        ("orjson parse (floor)", f"{floor_seconds:.2f} s", f"{floor_rate:,.0f} rows/s"),
        (
            "replay + assertions",
            f"{total:.2f} s",
            f"{rate:,.0f} rows/s = {ratio:.4f}x the parse (goal >= {RATIO_GOAL}x: "
            f"{verdict(ratio >= RATIO_GOAL)})",
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
            f"{lines / replay_seconds / floor_rate:.4f}x the parse",
        ),
        (
            "  bound: reading rows + host adapters only",
            f"{bound_seconds:.2f} s",
            f"{lines / bound_seconds:,.0f} rows/s = {lines / bound_seconds / floor_rate:.4f}x "
            "the parse, journaling nothing",
        ),
        (
            "  journal and view, answering nothing",
            f"{journal_seconds:.2f} s",
            f"{lines / journal_seconds / floor_rate:.4f}x the parse; beyond the adapters: "
            f"{journal_seconds - bound_seconds:.2f} s = "
            f"{(journal_seconds - bound_seconds) / library_seconds:.1f}x the fair floor; "
            f"answers and assertions: {replay_seconds - journal_seconds:.2f} s",
        ),
        (
            "fair library floor (trigger_event + put)",
            f"{library_seconds:.2f} s",
            f"{replay['events']:,} events over {replay['aggregates']:,} aggregates, as the "
            f"replay journaled; {library_seconds / floor_seconds:.1f}x the parse's time",
        ),
        (
            "  replay + assertions against it",
            f"{library_ratio:.2f}x",
            f"the fair floor's time (goal within {LIBRARY_GOAL:.0f}x: "
            f"{verdict(library_ratio <= LIBRARY_GOAL)})",
        ),
        (
            "tool-call-heavy capture",
            f"{heavy_lines:,} rows",
            f"{args.heavy_roots} roots, {args.heavy_subagents} subagents, "
            f"{args.calls_per_subagent} tool calls per subagent",
        ),
        ("  orjson parse (floor)", f"{heavy_floor_seconds:.2f} s", ""),
        (
            "  replay, no expected file",
            f"{heavy_seconds:.2f} s",
            f"{heavy_lines / heavy_seconds:,.0f} rows/s = {heavy_ratio:.4f}x the parse "
            f"(goal >= {HEAVY_GOAL}x: {verdict(heavy_ratio >= HEAVY_GOAL)}); "
            f"{heavy_replay['events']:,} events journaled",
        ),
        (
            "  bound: reading rows + host adapters only",
            f"{heavy_bound_seconds:.2f} s",
            f"{heavy_floor_seconds / heavy_bound_seconds:.4f}x its parse; the replay takes "
            f"{heavy_seconds / heavy_bound_seconds:.1f}x this bound",
        ),
        (
            "peak memory (ru_maxrss, child process)",
            f"{rss_mb:.0f} MB",
            f"goal < {RSS_GOAL_MB:.0f} MB: {verdict(rss_mb < RSS_GOAL_MB)}; "
            f"a child that only imports and opens an engine: {floor_rss_mb:.0f} MB; "
            f"the parent when it started them: {parent_mb:.0f} MB; the tool-call-heavy "
            f"replay's child: {heavy_replay['maxrss_kb'] / 1024:.0f} MB",
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
            *("--rows", str(args.profile_rows)),
            *("--roots", str(max(1, round(args.roots * scale)))),
            *("--subagents", str(max(1, round(args.subagents * scale)))),
        )
        print(f"\ncProfile of a {args.profile_rows:,}-row capture of the same shape:")
        print(profile(small_transcript, small_expected))


if __name__ == "__main__":
    main()
