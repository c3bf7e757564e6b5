"""The command line's shared store: root R has child A; R and A each have a spawn open when X
starts, so X is placed under R with no parent edge (ambiguous). Feed's clock: R starts at
2026-01-01T00:00:01Z, each later observation one second on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lineage_es.serve import LineageServer
from tests.support.ambiguous_store import ambiguous_store as fill_ambiguous_store
from tests.support.ambiguous_store import serving


@pytest.fixture
def ambiguous_store(tmp_path: Path) -> str:
    """A SQLite store holding R, A and X, X placed ambiguous under R."""
    return fill_ambiguous_store(f"sqlite:///{tmp_path / 'journal.sqlite'}")


@pytest.fixture
def ambiguous_server(ambiguous_store: str) -> Iterator[LineageServer]:
    """``lineage serve`` over :func:`ambiguous_store`."""
    with serving(ambiguous_store) as running:
        yield running
