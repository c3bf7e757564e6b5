"""Generate large journals for benchmarks, through the real domain and application.

The events are exactly those ``observe`` would journal for the same facts; they are saved
a root at a time (one transaction per root) so a million events take seconds, not the
hour that one hook process per payload would.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from lineage_es.domain.index import ConversationIndex
from lineage_es.domain.root import RootLineage
from lineage_es.engine.engine import Engine
from lineage_es.facts import ChildIdentified

EPOCH = datetime(2026, 6, 1, tzinfo=UTC)


def build_root(
    engine: Engine,
    name: str,
    *,
    subagents: int,
    max_depth: int,
    turns: int,
    start: datetime,
    rnd: random.Random,
) -> int:
    """Journal one root with ``subagents`` nested up to ``max_depth``, each taking ``turns``
    stop/resume cycles; returns the number of events written."""
    clock = [start]

    def tick() -> datetime:
        clock[0] += timedelta(milliseconds=10)
        return clock[0]

    root = RootLineage.start("claude", name, at=tick(), source="startup", fact=f"{name}:s")
    entries = [ConversationIndex.create("claude", name, name, clock[0])]
    by_depth: dict[int, list[str]] = {0: [name]}
    for i in range(subagents):
        wanted = 1 + (i % max_depth)
        parent_depth = max(d for d in by_depth if d < wanted)
        parent = rnd.choice(by_depth[parent_depth])
        child = f"{name}-a{i}"
        key = f"{name}-toolu{i}"
        fact = f"{name}:{i}"
        root.request_spawn(
            parent, key, agent_type="Explore", description=None, at=tick(), fact=fact + "p"
        )
        root.place_unknown_child(
            child, agent_type=None, subagent_id=None, description=None, at=tick(), fact=fact + "s"
        )
        root.apply_identified(
            ChildIdentified(parent, child, "confirmed", spawn_key=key), at=tick(), fact=fact + "c"
        )
        entries.append(ConversationIndex.create("claude", child, name, clock[0]))
        by_depth.setdefault(parent_depth + 1, []).append(child)
        for turn in range(turns):
            root.stop(child, None, at=tick(), fact=f"{fact}t{turn}")
            root.resume(child, at=tick(), fact=f"{fact}r{turn}")
    count = len(root.pending_events) + len(entries)
    engine.app.save(root, *entries)
    return count


def build_journal(
    engine: Engine,
    *,
    roots: int,
    subagents: int,
    max_depth: int = 3,
    turns: int = 8,
    big_root: int = 0,
    big_turns: int = 1,
    seed: int = 7,
    progress: Callable[[int], None] | None = None,
) -> int:
    """``roots`` roots of ``subagents`` each, plus one root of ``big_root`` subagents
    named ``big``; returns the number of events written."""
    rnd = random.Random(seed)
    total = 0
    if big_root:
        total += build_root(
            engine,
            "big",
            subagents=big_root,
            max_depth=max_depth,
            turns=big_turns,
            start=EPOCH,
            rnd=rnd,
        )
    for r in range(roots):
        written = build_root(
            engine,
            f"root{r}",
            subagents=subagents,
            max_depth=max_depth,
            turns=turns,
            start=EPOCH + timedelta(minutes=r + 1),
            rnd=rnd,
        )
        total += written
        if progress is not None:
            progress(written)
    return total


def ensure_journal(
    engine: Engine, *, roots: int, subagents: int, turns: int, big_root: int
) -> None:
    """Build the benchmark journal into an empty store (a kept one is reused as it is),
    and bring its view up to date."""
    if engine.position() == 0:
        start = time.perf_counter()
        written = build_journal(
            engine, roots=roots, subagents=subagents, turns=turns, big_root=big_root
        )
        print(f"generated {written} events in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    engine.catch_up()
