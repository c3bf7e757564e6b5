"""The journal's transcoder: what it stores for an event's state."""

from __future__ import annotations

import tracemalloc
from datetime import UTC, datetime

from lineage_es.transcoder import OrjsonTranscoder

STATE = {
    "timestamp": datetime(2026, 9, 1, 8, 0, tzinfo=UTC),
    "conversation": "01a05c0f-9440-7443-be65-15a30c9b0a6f",
    "host": "codex",
}


def test_a_state_decodes_to_what_was_encoded() -> None:
    transcoder = OrjsonTranscoder()
    assert transcoder.decode(transcoder.encode(STATE)) == STATE


def test_a_small_encoded_state_holds_little_more_memory_than_its_bytes() -> None:
    """A memory store keeps every encoded state: 1,000 of them must not cost 4 KiB each."""
    transcoder = OrjsonTranscoder()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [transcoder.encode(STATE) for _ in range(1000)]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 1000 * (len(kept[0]) + 200)
