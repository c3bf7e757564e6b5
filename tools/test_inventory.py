"""Count what the test suite pins, so a reorganisation can show it dropped nothing.

For every test function under ``tests/`` (found by AST, wherever its module lives) it counts
its ``assert`` statements, ``pytest.raises`` blocks and parametrized cases; ``--json`` writes
the counts keyed by function name, and ``--compare OLD.json`` lists every function whose
counts fell or that is gone. Usage::

    python tools/test_inventory.py --json before.json          # on the old tree
    python tools/test_inventory.py --compare before.json       # on the new one
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"


def _parametrized(node: ast.FunctionDef) -> int:
    cases = 1
    for decorator in node.decorator_list:
        if (
            isinstance(decorator, ast.Call)
            and ast.unparse(decorator.func).endswith("parametrize")
            and len(decorator.args) >= 2
            and isinstance(decorator.args[1], (ast.List, ast.Tuple))
        ):
            cases *= max(len(decorator.args[1].elts), 1)
    return cases


def _checks(node: ast.AST) -> Counter[str]:
    counts: Counter[str] = Counter()
    for inner in ast.walk(node):
        if isinstance(inner, ast.Assert):
            counts["asserts"] += 1
        elif isinstance(inner, ast.withitem) and "raises" in ast.unparse(inner.context_expr):
            counts["raises"] += 1
    return counts


def inventory(root: Path) -> dict[str, list[dict[str, int]]]:
    """Each test function's counts, by name (a name two modules share lists both)."""
    found: dict[str, list[dict[str, int]]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                counts = _checks(node)
                found.setdefault(node.name, []).append(
                    {
                        "asserts": counts["asserts"],
                        "raises": counts["raises"],
                        "cases": _parametrized(node),
                    }
                )
    for entries in found.values():
        entries.sort(key=lambda c: (c["asserts"], c["raises"], c["cases"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the inventory here")
    parser.add_argument("--compare", type=Path, help="an earlier inventory to compare with")
    parser.add_argument("--tests", type=Path, default=TESTS, help="the tests folder to count")
    args = parser.parse_args()
    now = inventory(args.tests)
    totals = Counter[str]()
    for entries in now.values():
        for counts in entries:
            totals.update(counts)
    functions = sum(len(entries) for entries in now.values())
    print(
        f"{functions} test functions, " + ", ".join(f"{v} {k}" for k, v in sorted(totals.items()))
    )
    if args.json:
        args.json.write_text(json.dumps(now, indent=1, sort_keys=True))
    if args.compare:
        before: dict[str, list[dict[str, int]]] = json.loads(args.compare.read_text())
        fell = 0
        for name, entries in sorted(before.items()):
            current = now.get(name, [])
            if len(current) < len(entries):
                print(f"gone: {name} ({len(entries) - len(current)} of {len(entries)})")
                fell += 1
            for was, is_ in zip(entries, current, strict=False):
                for key, value in was.items():
                    if is_[key] < value:
                        print(f"fewer {key}: {name} {value} -> {is_[key]}")
                        fell += 1
        sys.exit(1 if fell else 0)


if __name__ == "__main__":
    main()
