"""Importers of the hosts' own history folders (``lineage import``): months of past agent
runs become journal events, read incrementally, with the hosts' own timestamps."""

from __future__ import annotations

from lineage_es.importers.claude_projects import import_claude
from lineage_es.importers.codex_sessions import import_codex
from lineage_es.importers.ledger import ImportReport, Progress

__all__ = ["ImportReport", "Progress", "import_claude", "import_codex"]
