"""Benchmark a hook invocation's whole process time against ``python -c "import lineage_es"``.

Builds (or, with --keep, reuses) a SQLite journal of about a million events with
``tools/generate.py`` (1,000 roots of ~50 subagents nested to depth 3, and one 1,000-node root
named ``big``), then times, as a host does it (a new process, the payload on stdin):

- the floor: ``python -c "import lineage_es"``, measured in the same run, interleaved;
- ``python -m lineage_es.hook claude`` (what ``lineage install-hooks`` installs) with a prompt to
  the 1,000-node root, a tool call inside one of its subagents, and the start of a new root;
- ``lineage hook claude`` (the console script, which hands ``hook`` to the module without click)
  with a tool call in ``big``;
- for reference: a process that imports lineage_es and eventsourcing only, one that imports the
  engine and observes nothing, and one that only appends the payload to a file (what a hook
  that queued payloads for a later writer would cost).

Goal: a hook at most 2x the floor. Every process gets the same bytecode cache
(``PYTHONPYCACHEPREFIX`` in the folder; this environment may set PYTHONDONTWRITEBYTECODE, which
would otherwise recompile lineage_es in every process, floor and hook alike).

Usage: python tools/bench_hook.py [--runs 15] [--keep DIR] [--roots 1000] [--subagents 50]
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.engine.engine import open_engine
from tools.generate import ensure_journal

Payload = Callable[[int], dict[str, object]]

PAYLOADS: dict[str, Payload] = {
    "prompt to the 1,000-node root": lambda i: {
        "session_id": "big",
        "hook_event_name": "UserPromptSubmit",
        "prompt": f"bench prompt {i}",
    },
    "tool call in a subagent of that root": lambda i: {
        "session_id": "big",
        "agent_id": f"big-a{i % 1000}",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_use_id": f"toolu_bench_{i}",
        "tool_input": {"file_path": f"/src/{i}.py"},
    },
    "start of a new root": lambda i: {
        "session_id": f"bench-root-{os.getpid()}-{i}",
        "hook_event_name": "SessionStart",
        "source": "startup",
    },
}


tool_call_payload = PAYLOADS["tool call in a subagent of that root"]

#: What a hook that only queued the payload for later would cost (not what the hook does).
SPOOL_ONLY = (
    "import sys; from datetime import UTC, datetime; from pathlib import Path; "
    "import lineage_es.hook as h; from lineage_es.hosts.base import parse_payload; "
    "h.append_private(Path({path!r}), h.recording_line('claude', datetime.now(UTC), "
    "parse_payload(h.read_payload(sys.stdin.buffer))))"
)


def timed(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[float, float]:
    """The wall time of one process, and its CPU time (user + system: far less sensitive to
    other work on the machine, but blind to time spent waiting for the disk)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or done.stdout:
        raise SystemExit(f"{argv} failed: {done.returncode} {done.stdout!r} {done.stderr!r}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="invocations per measure")
    parser.add_argument("--keep", type=Path, default=None, help="keep (or reuse) the journal here")
    parser.add_argument("--roots", type=int, default=1000)
    parser.add_argument("--subagents", type=int, default=50)
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--big", type=int, default=1000)
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="lineage-bench-hook-"))
    folder.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{folder / 'large.sqlite'}"

    with open_engine(url) as engine:
        ensure_journal(
            engine, roots=args.roots, subagents=args.subagents, turns=args.turns, big_root=args.big
        )
        events = engine.position()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=str(folder / "pycache"),
        LINEAGE_STORE=url,
        XDG_DATA_HOME=str(folder / "data"),
    )
    python = sys.executable
    floor_argv = [python, "-c", "import lineage_es"]
    module_argv = [python, "-m", "lineage_es.hook", "claude"]
    script_argv = [str(Path(python).with_name("lineage")), "hook", "claude"]
    log = folder / "data" / "lineage-es" / "hook.log"
    log.unlink(missing_ok=True)

    library = "import lineage_es, eventsourcing.application, eventsourcing.sqlite"
    library_argv = [python, "-c", library]
    engine_argv = [python, "-c", "import lineage_es.engine.engine, lineage_es.hosts.claude"]
    spool = folder / "spool.jsonl"
    spool_argv = [python, "-c", SPOOL_ONLY.format(path=str(spool))]

    counter = itertools.count()
    measures: list[tuple[str, list[str], Payload | None]] = [
        ("floor: python -c 'import lineage_es'", floor_argv, None),
        ("reference: import eventsourcing (application, sqlite)", library_argv, None),
        ("reference: import the engine, observe nothing", engine_argv, None),
        ("reference: append the payload to a file, no journal", spool_argv, tool_call_payload),
    ]
    measures += [(f"hook module: {name}", module_argv, make) for name, make in PAYLOADS.items()]
    measures.append(
        ("lineage hook (console script): tool call in a subagent", script_argv, tool_call_payload)
    )

    def run(argv: list[str], make: Payload | None) -> tuple[float, float]:
        stdin = orjson.dumps(make(next(counter))) if make is not None else b""
        return timed(argv, env, stdin)

    for _, argv, make in measures:  # warm the bytecode cache and the OS file cache
        run(argv, make)
    samples: dict[str, list[float]] = {name: [] for name, _, _ in measures}
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in measures}
    for _ in range(args.runs):  # interleaved, so load on the machine hits every measure alike
        for name, argv, make in measures:
            wall, used = run(argv, make)
            samples[name].append(wall)
            cpu[name].append(used)
    if log.exists() and log.stat().st_size:
        raise SystemExit(f"the hook logged errors; see {log}")

    first = measures[0][0]
    floor, floor_cpu = statistics.median(samples[first]), statistics.median(cpu[first])
    width = max(len(name) for name in samples)
    print(f"journal: {events:,} events in {folder / 'large.sqlite'}; {args.runs} runs each")
    print("wall: whole process time, median; cpu: user+system time, median; ratios to the floor")
    print(f"{'measure':<{width}}  {'wall':>7}  {'ratio':>6}  {'cpu':>7}  {'ratio':>6}")
    for name, times in samples.items():
        wall, used = statistics.median(times), statistics.median(cpu[name])
        print(
            f"{name:<{width}}  {wall * 1e3:>5.0f}ms  {wall / floor:>5.2f}x  "
            f"{used * 1e3:>5.0f}ms  {used / floor_cpu:>5.2f}x"
        )
    print("goal: a hook at most 2.00x the floor")


if __name__ == "__main__":
    main()
