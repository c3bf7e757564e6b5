"""How the commands use Python's cycle collector, which they own as the process's main program
(the library itself never changes it: a runtime that embeds the engine keeps its own policy).

- :func:`skip_collections_at_exit`: the collections Python runs as it shuts down walk every
  object the command made, which the system frees anyway when the process ends.
- :func:`fewer_collections`: a long batch job (an import, a replay) allocates objects by the
  million, most of them kept; the young generation's default threshold (700 allocations)
  collects it a hundred times per import of a few thousand observations, each time walking
  what survived. A higher threshold collects a few times, and what it leaves uncollected
  meanwhile is bounded by the threshold.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Allocations (less deallocations) of container objects between collections of the young
#: generation during :func:`fewer_collections` (Python's default is 700).
BATCH_YOUNG_THRESHOLD = 100_000


def skip_collections_at_exit() -> None:
    """Freeze every object out of the collections at exit. The freeze keeps objects out of
    collections and does nothing else: every ``atexit`` handler still runs, before or after
    it (stores are closed by the commands themselves)."""
    atexit.register(gc.freeze)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect the young generation every :data:`BATCH_YOUNG_THRESHOLD` allocations while the
    block runs (the objects already made, the loaded modules among them, are left out of the
    collections), then as before."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(BATCH_YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
