"""The least a ``lineage import`` process on the mandated libraries must do, done bare.

Run as its own process by ``tools/bench_import.py``, which times it from start to exit: start
Python; import click, orjson and eventsourcing with its SQLite module (every import process
loads them); find the folder's ``.jsonl`` files; read every byte of them in 1 MiB chunks,
counting one marker (``"type":"tool_use"``, which every spawn call holds) and nothing else,
split over as many forked processes as the import reads with; journal ``EVENTS`` bare events
(each a name and a timestamp, no payload) over ``ROOTS`` aggregates into a new SQLite file in
one save, the library's cheapest path, in the first process while the forked ones read (as
the import journals while its workers read). With ``EVENTS`` 0 nothing is journaled (the floor
of reading alone, under any design, however few events it journals).

No rule is applied, no row parsed, no view projected, no ledger kept: whatever an import
does beyond this costs more. A peer's process that finishes faster than this floor is out of
reach of any import built on these libraries on this machine.

Usage: python tools/floor_import.py FOLDER EVENTS ROOTS DB_FILE READERS
"""

from __future__ import annotations

import os
import sys
from uuid import UUID

import click  # noqa: F401 (loaded by every import process)
import orjson  # noqa: F401 (loaded by every import process)
from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

MARKER = b'"type":"tool_use"'


class Bare(Aggregate):
    """An aggregate whose events carry nothing but what the library adds."""

    @event("Touched")
    def touch(self) -> None:
        pass


def jsonl_files(folder: str) -> list[str]:
    found: list[str] = []
    for directory, _, names in os.walk(folder):
        found += [os.path.join(directory, n) for n in names if n.endswith(".jsonl")]
    return sorted(found)


def scan(paths: list[str]) -> int:
    """How many times the marker occurs in ``paths`` (read whole, 1 MiB at a time; a marker
    split across two chunks is missed, which only makes the floor cheaper)."""
    count = 0
    for path in paths:
        with open(path, "rb") as stream:
            while data := stream.read(1024 * 1024):
                count += data.count(MARKER)
    return count


def journal(events: int, roots: int, db_file: str) -> None:
    os.environ.update(PERSISTENCE_MODULE="eventsourcing.sqlite", SQLITE_DBNAME=db_file)
    app: Application[UUID] = Application()
    nodes = [Bare() for _ in range(roots)]
    for index in range(max(events - roots, 0)):
        nodes[index % roots].touch()
    app.save(*nodes)


def main(argv: list[str]) -> None:
    folder, events, roots, db_file, readers = argv
    paths = jsonl_files(folder)
    shares = [paths[i :: int(readers)] for i in range(int(readers))]
    children = []
    for share in shares:
        pid = os.fork()
        if pid == 0:
            scan(share)
            os._exit(0)
        children.append(pid)
    if int(events):
        journal(int(events), int(roots), db_file)
    for pid in children:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main(sys.argv[1:])
