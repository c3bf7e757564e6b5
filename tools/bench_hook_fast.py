"""Benchmark the installed hook command against the interpreter's own start-up.

Times, as a host does it (a new process, the payload on stdin, until it exits), the command
``lineage install-hooks`` installs (:func:`lineage_es.hook_command.command_line`: the fast hook,
``python -S .../hook_fast.py HOST --store URL``) against the floor ``python -S -c pass`` of the
same interpreter, in pairs (floor, hook, floor, hook, ...), and reports the median of the
per-pair ratios hook / floor. Goal: at most 1.5x, ceiling 2.0x, for any payload, on SQLite and
PostgreSQL alike.

Payloads: a prompt (100 bytes), a tool call carrying 10 KiB of tool input, a tool result of
100 KiB, and one of 1 MiB (what costs past the floor there is writing and fsyncing the
payload itself).
Stores: a SQLite journal in a temporary folder, and PostgreSQL at ``--postgres`` (skipped
when not given). The folder the hook starts runs meanwhile, as it does for a host: what it costs
is another process's time, not the hook's.

Usage: python tools/bench_hook_fast.py [--runs 41] [--postgres postgresql://127.0.0.1/test]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.hook_command import command_line

Payload = Callable[[int], bytes]

PAYLOADS: dict[str, Payload] = {
    "prompt (100 B)": lambda i: orjson.dumps(
        {"session_id": "bench", "hook_event_name": "UserPromptSubmit", "prompt": f"p {i}"}
    ),
    "tool call (10 KiB input)": lambda i: orjson.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "PreToolUse",
            "tool_name": "Write",
            "tool_use_id": f"toolu_{i}",
            "tool_input": {"file_path": "/src/a.py", "content": "x = 1\n" * 1700},
        }
    ),
    "tool result (100 KiB)": lambda i: orjson.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_use_id": f"toolu_mid_{i}",
            "tool_response": {"content": "z" * (100 << 10)},
        }
    ),
    "tool call (1 MiB input)": lambda i: orjson.dumps(
        {
            "session_id": "bench",
            "hook_event_name": "PostToolUse",
            "tool_name": "Read",
            "tool_use_id": f"toolu_big_{i}",
            "tool_response": {"content": "y" * (1 << 20)},
        }
    ),
}


def timed(argv: list[str], env: dict[str, str], stdin: bytes = b"") -> float:
    """Wall time of one process, stdin written, until it exits."""
    start = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(
    argv: list[str], payload: Payload, env: dict[str, str], runs: int
) -> tuple[float, float, float]:
    """Median floor, median hook (seconds) and the median per-pair ratio."""
    floor_argv = [sys.executable, "-S", "-c", "pass"]
    floors: list[float] = []
    hooks: list[float] = []
    for i in range(3):  # warm the page cache and the inbox folder
        timed(argv, env, payload(-i))
    for i in range(runs):
        floors.append(timed(floor_argv, env))
        hooks.append(timed(argv, env, payload(i)))
    ratios = [h / f for h, f in zip(hooks, floors, strict=True)]
    return statistics.median(floors), statistics.median(hooks), statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--postgres", default=None, help="a PostgreSQL store URL to include")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = dict(os.environ)
        env.update(XDG_STATE_HOME=str(folder / "state"), XDG_DATA_HOME=str(folder / "data"))
        env.pop("LINEAGE_STORE", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # an install has its bytecode compiled
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        stores = {"SQLite": f"sqlite:///{folder / 'journal.sqlite'}"}
        if args.postgres:
            stores["PostgreSQL"] = args.postgres
        print(f"{sys.executable} -S, {args.runs} pairs each; ratio = hook / `python -S -c pass`")
        worst = 0.0
        for store_name, url in stores.items():
            argv = command_line("claude", url, sys.executable)
            for name, payload in PAYLOADS.items():
                floor, hook, ratio = measure(argv, payload, env, args.runs)
                worst = max(worst, ratio)
                print(
                    f"{store_name:10} {name:26} floor {floor * 1000:6.1f} ms  "
                    f"hook {hook * 1000:6.1f} ms  median ratio {ratio:.2f}x"
                )
        log = folder / "state" / "lineage" / "hook.log"
        if log.exists():
            print("hook.log:\n" + log.read_text())
        print(f"worst median ratio {worst:.2f}x (goal 1.5x, ceiling 2.0x)")
        time.sleep(6)  # let the folders finish before the folder goes


if __name__ == "__main__":
    main()
