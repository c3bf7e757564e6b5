"""Benchmark loading a large expected file, against a plain YAML parse of the same file.

Generates the 100k-row capture with tools/gen_capture.py (its expected file has tens of
thousands of steps) unless ``--dir`` already holds one, then measures, in the same run and each
as the best of ``--repeat``:

- the floor: ``yaml.load`` of the file with libyaml's ``CSafeLoader``, no lines, no checks;
- a lower floor: libyaml's parser events alone, nothing built (no reader of YAML does less);
- ``load_expected``: read, parse with lines, validate, index the steps;
- of which parsing (``parse_yaml``) and validating (``validate``) the parsed document;
- for comparison, jsonschema's ``Draft202012Validator.is_valid`` on the same document, the
  validator expected files used before the compiled one.

Every figure is printed as seconds and as a ratio to the floor, so runs on different machines
compare.

Usage: python tools/bench_expected.py [--dir DIR] [--rows 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from lineage_es.replay.expected import load_expected, parse_yaml, schema, validate


def best_of(repeat: int, work: Callable[[], Any]) -> float:
    """The shortest of ``repeat`` timings of ``work()``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def ensure_expected(folder: Path, rows: int) -> Path:
    """The generated expected file in ``folder``, generated (in a child process) when absent."""
    expected = folder / "capture.expected.yaml"
    if not expected.is_file():
        generator = Path(__file__).with_name("gen_capture.py")
        roots, subagents = max(1, rows // 100), max(1, rows // 10)
        sizes = ["--rows", str(rows), "--roots", str(roots), "--subagents", str(subagents)]
        subprocess.run([sys.executable, str(generator), str(folder), *sizes], check=True)
    return expected


def plain_parse(path: Path) -> Any:
    """The floor: the file's YAML as data, nothing else."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)


def events_only(path: Path) -> int:
    """A lower floor: libyaml's parser events for the file, nothing built from them."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(path.read_text(encoding="utf-8"))
    count = 0
    try:
        while loader.get_event() is not None:
            count += 1
    finally:
        loader.dispose()
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="where the capture is (or goes)")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    folder = args.dir or Path(tempfile.mkdtemp(prefix="lineage-bench-expected-"))
    path = ensure_expected(folder, args.rows)
    text = path.read_text(encoding="utf-8")
    steps = len(load_expected(path).steps)  # compiles the validator outside the timings

    # The whole load first, with no parsed document alive: as `lineage-replay` loads it (the
    # collector's passes cost more with a large document already in memory).
    floor = best_of(args.repeat, lambda: plain_parse(path))
    figures = [
        ("libyaml events only (lower floor)", best_of(args.repeat, lambda: events_only(path))),
        ("load_expected", best_of(args.repeat, lambda: load_expected(path))),
        (
            "  of which parse_yaml (lines kept)",
            best_of(args.repeat, lambda: parse_yaml(text, path)),
        ),
    ]
    data, lines = parse_yaml(text, path)
    checker = jsonschema.Draft202012Validator(schema())
    figures += [
        ("  of which validate", best_of(args.repeat, lambda: validate(data, lines, path))),
        ("jsonschema is_valid (comparison)", best_of(args.repeat, lambda: checker.is_valid(data))),
    ]
    size_mb = len(text.encode("utf-8")) / 1e6
    print(f"expected file: {path} ({size_mb:.1f} MB, {steps:,} steps)")
    table = [("CSafeLoader parse (floor)", floor), *figures]
    width = max(len(name) for name, _ in table)
    for name, seconds in table:
        print(f"{name:<{width}}  {seconds:8.3f} s  {seconds / floor:7.3f}x the floor")


if __name__ == "__main__":
    main()
