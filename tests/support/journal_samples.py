"""Exports to import in tests: a small journal holding many event types, a large one made
through the real domain, and edits of one line of an export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified
from lineage_es.journal import export_journal
from tests.support.feed import Feed


def export_to(engine: Engine, path: Path) -> Path:
    with path.open("wb") as out:
        export_journal(engine, out)
    return path


def feed_varied(engine: Engine) -> None:
    """Roots, spawns, children placed, bound, confirmed, corrected, rejected (a depth
    contradiction, a cycle), stopped, resumed, renamed and deleted, in two roots."""
    feed = Feed(engine)
    feed.root("R")
    feed.child("R", "R", "A")
    feed.spawn("R", "R", "K-x")
    feed.start("R", "X")  # inferred under R
    feed.child("R", "X", "Y")
    feed.confirm("R", "A", "X", "K-elsewhere")  # corrected under A, Y moves with it
    feed.send("R", ChildIdentified("R", "C", "native", depth=3), root="R")  # ambiguous
    feed.send("Y", ChildIdentified("Y", "A", "confirmed"), root="R")  # a cycle: rejected
    feed.stop("R", "Y")
    feed.act("R", "Y")  # resumes it
    feed.root("S")
    feed.child("S", "S", "B")
    feed.end("S")
    engine.rename("A", "the explorer")
    engine.delete("B", "user")


def varied_export(path: Path) -> Path:
    with open_engine("memory://") as engine:
        feed_varied(engine)
        return export_to(engine, path)


def lines_of(path: Path) -> list[dict[str, Any]]:
    """The export's lines, parsed: the header first."""
    return [orjson.loads(raw) for raw in path.read_bytes().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))


def edit_line(path: Path, number: int, edit: Callable[[dict[str, Any]], None]) -> None:
    """Change line ``number`` (1 is the header) of an export in place."""
    lines = lines_of(path)
    edit(lines[number - 1])
    write_lines(path, lines)


def first_line_of(path: Path, topic: str) -> int:
    """The number of the first line holding an event of ``topic``."""
    for number, line in enumerate(lines_of(path), 1):
        if line.get("topic") == topic:
            return number
    raise LookupError(topic)


def large_export(path: Path, *, roots: int, description_bytes: int = 0) -> Path:
    """An export of ``roots`` roots of 50 events each, made through the real domain; each
    spawn request carries a description of ``description_bytes`` (larger events)."""
    from tools.generate import build_journal

    with open_engine("memory://") as engine:
        build_journal(engine, roots=roots, subagents=4, turns=4)
        export_to(engine, path)
    if description_bytes:
        lines = lines_of(path)
        for line in lines[1:]:
            if line["topic"] == "lineage:RootLineage.SpawnRequested":
                line["state"]["description"] = "d" * description_bytes
        write_lines(path, lines)
    return path
