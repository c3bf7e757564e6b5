"""Benchmark the core engine (issue: warm tree query, cold start, rebuild speed).

Builds two SQLite journals in a temporary folder: a large one (1,000 roots, ~50 subagents
each nested to depth 3, one 1,000-node root; about a million events) and a small one
(the same 1,000-node root and ~10k events), then measures, each against a floor taken in
the same run:

- warm tree query for a node of the 1,000-node root, against a plain in-memory baseline
  (filtering the same 1,000 rows held in a Python list), on both journals;
- a new process opening the large store and answering its first query, against the floor
  of a process that only imports lineage_es.engine.engine;
- a full rebuild of the view, against reading the raw stored events through the recorder.

Usage: python tools/bench_core.py [--roots 1000] [--subagents 50] [--turns 8] [--keep DIR]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.read.decoding import PAGE_SIZE
from tools.generate import build_journal, ensure_journal


def best_of(func, repeat: int = 200) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def warm_query(engine: Engine, conversation: str) -> tuple[float, float]:
    engine.tree_for(conversation)  # warm the cache
    query = best_of(lambda: engine.tree_for(conversation))
    rows = engine.view.root_rows(engine.queries.find(conversation).root_id)  # type: ignore[union-attr]
    baseline = best_of(
        lambda: [r for r in rows if r.status == "live" and r.conversation != conversation]
    )
    return query, baseline


def subprocess_seconds(code: str, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def read_raw(engine: Engine) -> tuple[float, int]:
    start = time.perf_counter()
    position, count = 0, 0
    recorder = engine.app.recorder
    while True:
        page = recorder.select_notifications(
            start=position, limit=PAGE_SIZE, inclusive_of_start=False
        )
        if not page:
            break
        count += len(page)
        position = page[-1].id
    return time.perf_counter() - start, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roots", type=int, default=1000)
    parser.add_argument("--subagents", type=int, default=50)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--big", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None, help="keep the journals here")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="lineage-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    large_url = f"sqlite:///{folder / 'large.sqlite'}"
    small_url = f"sqlite:///{folder / 'small.sqlite'}"

    rows: list[tuple[str, str, str, str]] = []
    with open_engine(small_url) as small:
        if small.position() == 0:
            build_journal(small, roots=20, subagents=50, turns=0, big_root=args.big)
        small.catch_up()
        small_events = small.position()
        q_small, base_small = warm_query(small, "big-a999")

    with open_engine(large_url) as large:
        ensure_journal(
            large, roots=args.roots, subagents=args.subagents, turns=args.turns, big_root=args.big
        )
        large_events = large.position()
        q_large, _ = warm_query(large, "big-a999")
        raw_seconds, raw_count = read_raw(large)
        start = time.perf_counter()
        rebuilt = large.rebuild()
        rebuild_seconds = time.perf_counter() - start
        assert rebuilt == raw_count

    floor = subprocess_seconds("import lineage_es.engine.engine")
    cold = subprocess_seconds(
        "from lineage_es.engine.engine import open_engine;"
        f"e = open_engine({large_url!r}); t = e.tree_for('big-a999'); assert t is not None"
    )

    rows = [
        (
            "warm tree query, 1,000-node root, 10k-event journal",
            f"{q_small * 1e3:.3f} ms",
            f"{q_small / base_small:.1f}x in-memory list filter",
            f"{small_events} events",
        ),
        (
            "warm tree query, 1,000-node root, large journal",
            f"{q_large * 1e3:.3f} ms",
            f"{q_large / q_small:.2f}x the 10k-event journal",
            f"{large_events} events",
        ),
        (
            "new process: open SQLite + first query",
            f"{cold:.3f} s",
            f"{cold / floor:.2f}x `import lineage_es.engine.engine` ({floor:.3f} s)",
            "",
        ),
        (
            "rebuild the view",
            f"{rebuild_seconds:.2f} s",
            f"{raw_seconds / rebuild_seconds:.2f}x the speed of reading raw events "
            f"({raw_seconds:.2f} s)",
            f"{raw_count / rebuild_seconds:,.0f} events/s",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'time':>12}  ratio")
    for name, value, ratio, note in rows:
        print(f"{name:<{width}}  {value:>12}  {ratio}  {note}")


if __name__ == "__main__":
    main()
