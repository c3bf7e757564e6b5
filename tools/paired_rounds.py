"""Paired, interleaved rounds of processes, and the ratios between them round by round.

On a shared machine a neighbour's load or the hypervisor's steal moves a process's wall time,
and its CPU time too, from one run to the next. Running every contender once per round, in
turn, and dividing within each round cancels what a round shares; what is left is the measure's
own spread. :func:`paired` shows that spread too: name a contender twice (the same work run
again in each round) and the ratio between the two copies, which would be 1.00x on a quiet
machine, says how far apart two runs of identical work land here. A goal's ratio closer to its
bound than that spread is not decided by one run.

Used by ``tools/bench_import.py`` (our ``lineage import`` process against its floor process).
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple


class Sample(NamedTuple):
    """One run of one contender: wall seconds, and CPU seconds (user and system, the
    process and its children)."""

    wall: float
    cpu: float


class Ratio(NamedTuple):
    """A ratio to print round by round: ``numerator``'s run over ``denominator``'s run in
    the same round."""

    label: str
    numerator: str
    denominator: str
    goal: float | None = None


def run_rounds(contenders: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[Sample]]:
    """Each contender run once per round, in turn, ``rounds`` times; its samples in order.
    The contenders run as child processes: their CPU time is read from ``RUSAGE_CHILDREN``."""
    samples: dict[str, list[Sample]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            run()
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            samples[name].append(Sample(wall, cpu))
    return samples


def round_ratios(samples: dict[str, list[Sample]], ratio: Ratio) -> tuple[list[float], list[float]]:
    """``ratio`` in every round, sorted: wall, then CPU."""
    pairs = list(zip(samples[ratio.numerator], samples[ratio.denominator], strict=True))
    walls = sorted(top.wall / bottom.wall for top, bottom in pairs)
    cpus = sorted(top.cpu / bottom.cpu for top, bottom in pairs)
    return walls, cpus


def spread(values: Sequence[float]) -> str:
    """Sorted ``values`` as ``min / median / max``, each a ratio."""
    return f"{values[0]:.2f}x / {statistics.median(values):.2f}x / {values[-1]:.2f}x"


def paired(
    contenders: dict[str, Callable[[], object]], rounds: int, ratios: Sequence[Ratio]
) -> dict[str, list[Sample]]:
    """Run ``contenders`` in ``rounds`` interleaved rounds; print each one's wall and CPU
    seconds (min / median), then each of ``ratios`` round by round (min / median / max,
    with its goal when it has one). Returns the samples."""
    samples = run_rounds(contenders, rounds)
    print(f"\npaired, interleaved runs ({rounds} rounds): wall and CPU seconds, min / median")
    width = max(len(name) for name in contenders)
    for name, runs in samples.items():
        walls = sorted(run.wall for run in runs)
        cpus = sorted(run.cpu for run in runs)
        print(
            f"{name:<{width}}  wall {walls[0]:.2f} / {statistics.median(walls):.2f} s"
            f"  CPU {cpus[0]:.2f} / {statistics.median(cpus):.2f} s"
        )
    for ratio in ratios:
        walls, cpus = round_ratios(samples, ratio)
        goal = f"; goal: within {ratio.goal:g}x" if ratio.goal is not None else ""
        print(
            f"{ratio.label}, round by round: wall {spread(walls)}, CPU {spread(cpus)} "
            f"(min / median / max{goal})"
        )
    return samples
