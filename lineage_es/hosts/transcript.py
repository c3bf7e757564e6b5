"""What every on-disk transcript reader yields: one observation tied to a row of the main file."""

from __future__ import annotations

from dataclasses import dataclass

from lineage_es.facts import Observation


@dataclass(frozen=True, slots=True)
class TranscriptRow:
    """``observation`` is checked after 1-based line ``row`` of the main file is ingested.

    ``None`` means the row says nothing about lineage. Observations merged in from other files
    (Claude subagent files), or made for the row but not by its own sender (the end of the
    session a ``/clear`` left), repeat the row's number with ``own`` false: the row's answer
    is its own sender's.
    """

    row: int
    observation: Observation | None
    own: bool = True
