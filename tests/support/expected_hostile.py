"""Expected files built to exhaust a reader: anchors of anchors, deep nesting, huge numbers.

Each is small as text; the bounds of :mod:`lineage_es.replay.yaml_bounds` must refuse it naming
a line, long before it costs time or memory.
"""

from __future__ import annotations


def laughs(levels: int, *, header: str = "version: 1\n") -> str:
    """A "billion laughs" after ``header`` (one line): anchor 0 is a list of nine scalars on
    line 2, and each anchor ``k`` after it, on line ``2 + k``, a list of nine aliases of the one
    before (``9 ** (k + 1)`` scalars once expanded). With the default allowance of 100,000
    nodes, six levels pass it on line 7 and five stay within it."""
    lines = [f"{header}x0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
    for k in range(1, levels):
        lines.append(f"x{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 9) + "]")
    return "\n".join(lines) + "\nsteps: []\n"


def nested(depth: int, *, header: str = "version: 1\n") -> str:
    """A document whose ``steps`` is ``depth`` lists deep, written on the line after
    ``header``."""
    return f"{header}steps: " + "[" * depth + "]" * depth + "\n"


def with_depth(number: str) -> str:
    """An expected file whose one lineage ``depth`` (on line 4) is written as ``number``."""
    return f"version: 1\nsteps:\n  - row: 3\n    lineage: {{depth: {number}}}\n"
