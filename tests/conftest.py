"""Shared fixtures: where the recorded corpus lives, and engines on each store."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("LINEAGE_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.fixture
def corpus() -> Path:
    """The host recordings in ../shared/corpus; the test is skipped when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus folder {CORPUS} is absent (set LINEAGE_CORPUS to point at it)")
    return CORPUS
