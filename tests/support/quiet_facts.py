"""Facts at chosen times, for the tests of ``last_seen`` and quiet roots.

A Claude root ``R`` (from :data:`START`) with one subagent ``A``; :func:`act` sends a fact
that changes nothing in the tree (a tool call of a known, live node) at a chosen time.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from lineage_es.facts import Acted, ChildIdentified, Fact, Observation, RootSeen, SessionEnded

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
ROOT = "R"
CHILD = "A"
_keys = itertools.count(1)


def at(seconds: float) -> datetime:
    """``seconds`` after :data:`START`."""
    return START + timedelta(seconds=seconds)


def stamp(seconds: float) -> str:
    """``at(seconds)`` as the view writes times."""
    return at(seconds).isoformat(timespec="microseconds")


def send(
    engine: Engine,
    requester: str,
    *facts: Fact,
    seconds: float,
    root: str = ROOT,
    key: str | None = None,
) -> None:
    """One observation of ``requester`` in root ``root``, ``seconds`` after :data:`START`."""
    engine.observe(
        "claude",
        Observation(
            host="claude",
            requester=requester,
            key=key if key is not None else f"quiet-{next(_keys)}",
            facts=facts,
            root=root,
            at=at(seconds),
        ),
        answer=False,
    )


def start_family(engine: Engine, root: str = ROOT, child: str = CHILD, seconds: float = 0) -> None:
    """``root`` starts at ``seconds``, and spawns ``child`` a second later."""
    send(engine, root, RootSeen(root), seconds=seconds, root=root)
    send(
        engine,
        child,
        ChildIdentified(root, child, "native"),
        seconds=seconds + 1,
        root=root,
    )


def act(engine: Engine, who: str, seconds: float, root: str = ROOT, key: str | None = None) -> None:
    """``who`` (a known, live node of ``root``) acts at ``seconds``: a fact that changes
    nothing in the tree."""
    send(engine, who, Acted(who), seconds=seconds, root=root, key=key)


def end(engine: Engine, root: str, seconds: float) -> None:
    """``root``'s session ends at ``seconds``."""
    send(engine, root, SessionEnded(root), seconds=seconds, root=root)


def topics(engine: Engine) -> list[str]:
    """The short topic of every root event journaled, in order."""
    return [
        event.topic.rsplit(".", 1)[-1]
        for event in engine.journal()
        if event.topic.startswith("lineage:RootLineage.")
    ]


def ago(span: timedelta, now: datetime | None = None) -> float:
    """The ``seconds`` argument that dates a fact ``span`` before ``now`` (default: now)."""
    moment = now if now is not None else datetime.now(UTC)
    return (moment - span - START).total_seconds()
