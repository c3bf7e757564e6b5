"""The expected file of shared/spec/REPLAY.md (every kind of expectation once) and the two
conversations it names: a Claude root and its child."""

from __future__ import annotations

ROOT = "76bb405f-65e0-4f6f-9da4-a23a33014bb8"
CHILD = "aa618caf4dda3c6e7"

#: The expected file of shared/spec/REPLAY.md: every kind of expectation once.
SPEC_EXAMPLE = f"""
    version: 1
    host: claude
    steps:
      - row: 5
        lineage:
          conversation: {CHILD}
          root: {ROOT}
          parent: {ROOT}
          depth: 1
          resolution: inferred
        tree:
          siblings: [{ROOT}]
          children: []
          roots: []
        views:
          {ROOT}:
            children: [{CHILD}]
    final:
      views:
        {ROOT}: {{siblings: [], children: [], roots: []}}
    """
