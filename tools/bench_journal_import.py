"""Benchmark ``journal import`` of a 35,000-event export into PostgreSQL against the same into
SQLite, in one run, and print the ratio.

The export is generated through the real domain (tools/generate.py: roots of 50 events, each
spawn request carrying a 400-byte description, so that the events are as large as the ones
that stalled the single-statement insert). Measured in the same run, each the best of
``--repeat``:

- the floor under any import: reading and checking the export (``read_export`` and the domain
  checks), writing nothing;
- the import into a fresh SQLite file;
- the import into a fresh PostgreSQL schema (skipped, and said, when the server is away).

Each import is timed as a whole (reading, checks, batched writes, the view brought up to
date); its store is then verified, untimed. Ratios: PostgreSQL / SQLite, and each against the floor.

Usage: python tools/bench_journal_import.py [--events 35000] [--repeat 3] [--quick]
                                            [--postgres URL]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.engine.engine import open_engine
from lineage_es.journal import events_to_write, import_journal, read_export
from lineage_es.journal import verify_journal as verify
from lineage_es.journal_checks import check_entries
from tools.generate import build_journal

#: Events in one generated root (tools/generate.py with 4 subagents of 4 turns).
EVENTS_PER_ROOT = 50
DESCRIPTION_BYTES = 400
POSTGRES = os.environ.get("LINEAGE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def make_export(path: Path, events: int) -> int:
    import orjson

    from lineage_es.journal import export_journal

    with open_engine("memory://") as engine:
        build_journal(engine, roots=max(1, events // EVENTS_PER_ROOT), subagents=4, turns=4)
        with path.open("wb") as out:
            written = export_journal(engine, out)
    lines = path.read_bytes().splitlines()
    with path.open("wb") as out:
        out.write(lines[0] + b"\n")
        for raw in lines[1:]:
            line = orjson.loads(raw)
            if line["topic"] == "lineage:RootLineage.SpawnRequested":
                line["state"]["description"] = "d" * DESCRIPTION_BYTES
            out.write(orjson.dumps(line) + b"\n")
    return written


def best_of(repeat: int, run: Callable[[], Callable[[], None]]) -> float:
    """The best time of ``run`` over ``repeat`` runs; each returns a check, run untimed."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        check = run()
        best = min(best, time.perf_counter() - start)
        check()
    return best


def floor(path: Path) -> Callable[[], None]:
    entries, _ = read_export(path)
    with open_engine("memory://") as engine:
        check_entries(engine.app.mapper, events_to_write(entries))
    return lambda: None


def import_into(url: str, path: Path) -> Callable[[], None]:
    """Import (timed); the check returned verifies the store (untimed)."""
    with open_engine(url) as engine:
        import_journal(engine, path)

    def verified() -> None:
        with open_engine(url) as engine:
            if not verify(engine).ok:
                raise SystemExit(f"the import into {url} does not verify")

    return verified


def postgres_schema(base: str) -> tuple[str, Callable[[], None]] | None:
    """A fresh schema's store URL and how to drop it; ``None`` when the server is away."""
    import psycopg

    schema = f"bench_import_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(base, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.Error:
        return None

    def drop() -> None:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")

    return f"{base}?schema={schema}", drop


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--events", type=int, default=35_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="3,500 events, once each")
    parser.add_argument("--postgres", default=POSTGRES, help="the server (a schema is made)")
    args = parser.parse_args()
    events, repeat = (3_500, 1) if args.quick else (args.events, args.repeat)

    with tempfile.TemporaryDirectory(prefix="lineage-bench-journal-") as folder:
        export = Path(folder) / "journal.jsonl"
        written = make_export(export, events)
        print(f"export: {written} events, {export.stat().st_size / 1e6:.1f} MB")
        floor_s = best_of(repeat, lambda: floor(export))
        counter = iter(range(repeat * 2))

        def sqlite_once() -> Callable[[], None]:
            return import_into(f"sqlite:///{Path(folder) / f'j{next(counter)}.sqlite'}", export)

        sqlite_s = best_of(repeat, sqlite_once)
        print(f"floor (read and check, no write): {floor_s:.2f}s")
        print(
            f"SQLite import:                    {sqlite_s:.2f}s ({sqlite_s / floor_s:.2f}x floor)"
        )
        postgres_s = None
        schemas: list[Callable[[], None]] = []

        def postgres_once() -> Callable[[], None]:
            made = postgres_schema(args.postgres)
            assert made is not None
            url, drop = made
            schemas.append(drop)
            return import_into(url, export)

        if postgres_schema_reachable(args.postgres):
            try:
                postgres_s = best_of(repeat, postgres_once)
            finally:
                for drop in schemas:
                    drop()
            print(
                f"PostgreSQL import:                {postgres_s:.2f}s "
                f"({postgres_s / floor_s:.2f}x floor)"
            )
            print(f"PostgreSQL / SQLite: {postgres_s / sqlite_s:.2f}")
        else:
            print(f"PostgreSQL at {args.postgres} is unreachable: not measured")


def postgres_schema_reachable(base: str) -> bool:
    made = postgres_schema(base)
    if made is None:
        return False
    made[1]()
    return True


if __name__ == "__main__":
    main()
