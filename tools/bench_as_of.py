"""Benchmark time travel (issue 19): ``as_of(position=P)`` and ``as_of(time=T)`` at
P = 1k, 10k, 100k and 1M on tools/generate.py's journal in SQLite, from checkpoints, against
a full replay up to P (what ``as_of`` did before checkpoints) measured in the same run.

For each P it measures: a full replay (the floor it replaces); a warm call (the engine has
the checkpoint read); a worst-case warm call (P just before the next checkpoint: a whole
stretch to replay); a cold first answer (a new engine's ``as_of`` and its first questions,
``tree_for`` and ``family`` of the newest root by P: the checkpoint is read from the store
and the roots asked about decoded first), at P and at the worst case. It reports the ratio of
P = 1M (or the journal's end) to P = 10k, the one-off cost of making the checkpoints (the
first time travel), their bytes on disk and the memory of one checkpoint read (as the first
answer leaves it, and with every row decoded).

Usage: python tools/bench_as_of.py [--roots 1000] [--subagents 50] [--turns 8] [--big 1000]
       [--keep DIR]
(the defaults make about a million events; --roots 100 about 100k)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.read import checkpoints
from lineage_es.read.answers import TreeReader
from lineage_es.read.checkpoints import base_view, checkpoint_store
from lineage_es.read.projection import Projector
from lineage_es.read.view import MemoryView
from tools.generate import ensure_journal

POSITIONS = (1_000, 10_000, 100_000, 1_000_000)


def median_seconds(func: Callable[[], object], repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def full_replay(engine: Engine, position: int) -> None:
    """What ``as_of(position=...)`` did before checkpoints."""
    Projector(engine.app.recorder, MemoryView()).catch_up(stop=position)


def time_at(engine: Engine, position: int) -> datetime:
    event = next(iter(engine.journal(start=position - 1, stop=position)))
    return datetime.fromisoformat(event.timestamp)


def newest_root(engine: Engine, position: int) -> str:
    """The conversation of the newest root started by ``position`` (its answers are read)."""
    roots = [r for r in engine.view.roots(None, live_only=False) if r.nid <= position]
    return max(roots, key=lambda r: r.nid).key


def first_answer(reader: TreeReader, root: str) -> None:
    reader.tree_for(root)
    reader.family(root)


def cold_seconds(url: str, position: int, root: str, repeat: int = 5) -> float:
    """A new engine's first time travel to ``position`` and its first answers there (the
    median of ``repeat`` new engines; the modules are imported already)."""
    samples = []
    for _ in range(repeat):
        with open_engine(url) as engine:
            start = time.perf_counter()
            first_answer(engine.as_of(position=position), root)
            samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def measure(engine: Engine, position: int, worst: int, moment: datetime) -> dict[str, float]:
    return {
        "replay": median_seconds(lambda: full_replay(engine, position), repeat=1),
        "warm": median_seconds(lambda: engine.as_of(position=position)),
        "worst": median_seconds(lambda: engine.as_of(position=worst)),
        "time": median_seconds(lambda: engine.as_of(time=moment)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roots", type=int, default=1000)
    parser.add_argument("--subagents", type=int, default=50)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--big", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None, help="keep the journal here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="lineage-bench-as-of-"))
    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{folder / 'as_of.sqlite'}"
    stretch = checkpoints.STRETCH

    with open_engine(url) as engine:
        ensure_journal(
            engine, roots=args.roots, subagents=args.subagents, turns=args.turns, big_root=args.big
        )
        end = engine.position()
        start = time.perf_counter()
        engine.as_of(position=end)  # makes every checkpoint (once)
        making = time.perf_counter() - start
        store = checkpoint_store(engine.app.recorder, engine.view)
        index = store.index()
        disk = store.size()
        last_root = newest_root(engine, index[-1].position)
        tracemalloc.start()
        base = base_view(store, index, len(index) - 1)
        base.find(last_root)
        base.roots(None, live_only=True)
        lazy_memory = tracemalloc.get_traced_memory()[0]
        base.all_rows()
        memory = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        del base
        rows_at_end = len(engine.view.all_rows())
        roots = {p: newest_root(engine, p) for p in POSITIONS}

    positions = sorted({min(p, end) for p in POSITIONS})
    with open_engine(url) as engine:  # imports what time travel imports, before any timing
        first_answer(engine.as_of(position=positions[0]), roots[POSITIONS[0]])
    results: dict[int, dict[str, float]] = {}
    for position in positions:
        worst = min(end, (position // stretch) * stretch + stretch - 1)
        root = roots[position if position in roots else POSITIONS[-1]]
        cold = cold_seconds(url, position, root)
        cold_worst = cold_seconds(url, worst, root)
        with open_engine(url) as engine:
            moment = time_at(engine, position)
            engine.as_of(position=position)
            engine.as_of(position=worst)
            results[position] = measure(engine, position, worst, moment) | {
                "cold": cold,
                "cold_worst": cold_worst,
            }

    print(f"journal: {end:,} events, {rows_at_end:,} view rows; a checkpoint every {stretch:,}")
    print(
        f"checkpoints: {len(index)}, {disk / 1e6:.1f} MB on disk "
        f"({disk / max(1, len(index)) / 1e3:.0f} kB each on average); made in {making:.1f} s "
        f"by the first time travel; one read in memory: {lazy_memory / 1e6:.1f} MB after a "
        f"first answer, {memory / 1e6:.1f} MB with every row decoded"
    )
    header = (
        "P",
        "full replay",
        "as_of warm",
        "worst (P+stretch-1)",
        "as_of(time)",
        "cold first answer",
        "cold worst",
    )
    print(" | ".join(header))
    for position, r in results.items():
        print(
            f"{position:,} | {r['replay'] * 1e3:.1f} ms | {r['warm'] * 1e3:.2f} ms "
            f"({r['warm'] / r['replay']:.3f}x replay) | {r['worst'] * 1e3:.2f} ms | "
            f"{r['time'] * 1e3:.2f} ms | {r['cold'] * 1e3:.1f} ms "
            f"({r['cold'] / r['replay']:.3f}x replay, {r['cold'] / r['warm']:.1f}x warm) | "
            f"{r['cold_worst'] * 1e3:.1f} ms ({r['cold_worst'] / r['worst']:.2f}x warm worst)"
        )
    low = results[min(positions, key=lambda p: abs(p - 10_000))]
    high = results[positions[-1]]
    print(
        f"P={positions[-1]:,} against P=10k: warm {high['warm'] / low['warm']:.2f}x, "
        f"worst {high['worst'] / low['worst']:.2f}x, time {high['time'] / low['time']:.2f}x, "
        f"cold {high['cold'] / low['cold']:.2f}x, cold worst "
        f"{high['cold_worst'] / low['cold_worst']:.2f}x; full replay "
        f"{high['replay'] / low['replay']:.1f}x"
    )


if __name__ == "__main__":
    main()
