"""Comparing imports of files still being written with one import of the finished files, and
feeding a Claude session's facts at given seconds (to pit an import's provisional stops
against a host's own).

Two comparisons: ``assert_as_one_import`` checks the answers and each second's history
(status, parent, resolution); ``assert_as_one_import_at_every_instant`` checks members'
types, starts and stops too, at every instant the journal of one import changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import UnknownConversation
from lineage_es.facts import Acted, Observation, RootSeen, SessionEnded
from lineage_es.hosts.base import parse_time
from lineage_es.importers import import_claude
from lineage_es.read.answers import TreeReader
from tests.support.claude_projects import AGENT, CHILD, SESSION, Session, at

SECONDS = range(0, 12)

Roots = tuple[str, ...]


def one_import(folder: Path) -> Engine:
    """The files as they are now (the finished files), imported once."""
    engine = open_engine("memory://")
    import_claude(engine, folder)
    return engine


def history(
    engine: Engine, seconds: Iterable[int] = SECONDS, roots: Roots = (SESSION,)
) -> list[dict[str, tuple[Any, ...]]]:
    """Each member's status, parent and resolution, second by second (time travel)."""
    return moments(engine, [at(s) for s in seconds], roots)


def moments(
    engine: Engine, times: Iterable[datetime], roots: Roots
) -> list[dict[str, tuple[Any, ...]]]:
    return [_moment(engine.as_of(time=time), roots) for time in times]


def _moment(view: TreeReader, roots: Roots) -> dict[str, tuple[Any, ...]]:
    found: dict[str, tuple[Any, ...]] = {}
    for root in roots:
        try:
            family = view.family(root)
        except UnknownConversation:
            continue  # before the root started
        found |= {m.conversation: (m.status, m.parent, m.resolution) for m in family}
    return found


def answers(engine: Engine, roots: Roots = (SESSION,)) -> dict[str, tuple[Any, ...]]:
    return {
        m.conversation: (m.status, m.parent, m.resolution, m.started_at, m.stopped_at)
        for root in roots
        for m in engine.family(root)
    }


def assert_as_one_import(engine: Engine, folder: Path, roots: Roots = (SESSION,)) -> None:
    once = one_import(folder)
    assert answers(engine, roots) == answers(once, roots)
    assert history(engine, roots=roots) == history(once, roots=roots)


def background_child_then_waiting(folder: Path) -> Session:
    """The root launches AGENT in the background (no file of its own) and waits: its file
    ends with the untimed rows written after every turn."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A", run_in_background=True)
    s.result(2, "toolu_A", AGENT, status="async_launched")
    s.answer(3)
    s.tail()
    return s


# -- at every instant, subagent types included --------------------------------------------


def instants(engine: Engine) -> list[datetime]:
    """Every time an event of ``engine``'s journal carries, and the instant before it."""
    found: set[datetime] = set()
    for event in engine.journal():
        when = parse_time(event.timestamp)
        if when is not None and "Ledger" not in event.topic:
            found |= {when, when - timedelta(microseconds=1)}
    return sorted(found)


def snapshot(engine: Engine, roots: Iterable[str], time: datetime | None) -> dict[str, Any]:
    """Each member's status, place, type, start and stop, now or back at ``time``."""
    view = engine if time is None else engine.as_of(time=time)
    found: dict[str, Any] = {}
    for root in roots:
        try:
            family = view.family(root)
        except UnknownConversation:
            continue
        for m in family:
            kind = m.subagent.type if m.subagent else None
            stop = m.stopped_at
            found[m.conversation] = (m.status, m.parent, m.resolution, kind, m.started_at, stop)
    return found


def assert_as_one_import_at_every_instant(
    engine: Engine, folder: Path, roots: Iterable[str] = (SESSION,)
) -> None:
    """``engine`` answers as one import of ``folder`` does: now, and at every instant."""
    once = one_import(folder)
    roots = tuple(roots)
    assert snapshot(engine, roots, None) == snapshot(once, roots, None)
    for time in instants(once):
        assert snapshot(engine, roots, time) == snapshot(once, roots, time), time


def two_agents(folder: Path) -> Session:
    """A session whose root spawns AGENT (running 3 to 6) and CHILD (4 to 8); the results
    come at 7 and 9, the root's last row at 10."""
    s = Session(folder)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.spawn(3, "toolu_B", prompt="look")
    s.prompt(4, "look", agent=CHILD)
    s.answer(6, agent=AGENT)
    s.result(7, "toolu_A", AGENT)
    s.answer(8, agent=CHILD)
    s.result(9, "toolu_B", CHILD)
    s.answer(10)
    return s


def stashed(path: Path) -> Path:
    """``path`` moved out of the history folder (to be put back later)."""
    aside = path.parent.parent.parent / f"{path.name}.aside"
    path.rename(aside)
    return aside


# -- a Claude session's facts, fed at given seconds ---------------------------------------


def feed(engine: Engine, second: float, *facts: Any, requester: str = SESSION) -> None:
    engine.observe(
        "claude",
        Observation(
            host="claude",
            requester=requester,
            key=f"k{second}-{requester}-{len(facts)}-{facts[0]!r}",
            facts=facts,
            root=SESSION,
            at=at(0) + timedelta(seconds=second),
        ),
    )


def live(engine: Engine, second: float, root: str = SESSION) -> set[str]:
    view = engine.as_of(time=at(0) + timedelta(seconds=second))
    return {m.conversation for m in view.family(root) if m.status == "live"}


def stamp(second: float) -> str:
    return (at(0) + timedelta(seconds=second)).isoformat(timespec="microseconds")


def session_ended_and_resumed(engine: Engine) -> None:
    """The session started at 1 s, ended for good at 5 s and was resumed for real at 10 s (the
    root acted again)."""
    feed(engine, 1, RootSeen(SESSION, "startup"))
    feed(engine, 5, SessionEnded(SESSION))
    feed(engine, 10, Acted(SESSION))
