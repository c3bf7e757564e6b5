"""Ingest recorded streams into a store: the same rows ``lineage-replay`` reads, kept
(MCP rows journal nothing, so ingest passes over them).

A recording that turns bad part way is ingested up to its last good row and reported with the
file, line and reason; the other recordings still go in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lineage_es.engine import Engine
from lineage_es.errors import InputError, PayloadError
from lineage_es.facts import Observation
from lineage_es.hosts import adapter
from lineage_es.replay.inputs import ObservationRow, PayloadRow, read_rows


@dataclass
class IngestReport:
    """What an ingest did: files and rows taken, and each file that stopped early, why."""

    files: int = 0
    rows: int = 0
    failures: list[str] = field(default_factory=list)


def recordings(paths: Iterable[Path]) -> Iterator[Path]:
    """The ``.jsonl`` recordings under ``paths``, in name order; a Claude session's
    ``subagents`` folder is read with its session, never on its own."""
    for path in paths:
        if path.is_dir():
            for found in sorted(path.rglob("*.jsonl")):
                if "subagents" not in found.relative_to(path).parts:
                    yield found
        else:
            yield path


def ingest(
    engine: Engine,
    paths: Iterable[Path],
    *,
    host: str | None = None,
    on_row: Callable[[], None] | None = None,
) -> IngestReport:
    """Observe every row of every recording under ``paths`` into ``engine``, a batch of
    rows per transaction (:meth:`Engine.observe_many`)."""
    report = IngestReport()
    for path in recordings(paths):
        report.files += 1
        engine.observe_many(_observations(path, host, report, on_row))
    return report


def _observations(
    path: Path, host: str | None, report: IngestReport, on_row: Callable[[], None] | None
) -> Iterator[Observation]:
    """The recording's observations; at the first unusable row the reason is reported and
    the recording ends there, so every good row before it is still journaled."""
    row = 0
    try:
        for item in read_rows(path, host=host):
            row = item.row
            if isinstance(item, PayloadRow):
                yield adapter(item.host).observe(item.payload, at=item.at)
            elif isinstance(item, ObservationRow) and item.observation is not None:
                yield item.observation
            report.rows += 1
            if on_row is not None:
                on_row()
    except InputError as exc:
        report.failures.append(str(exc))
    except PayloadError as exc:
        report.failures.append(f"{path}:{row}: {exc}")
