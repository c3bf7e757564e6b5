"""Importers of the hosts' own history folders (``lineage import``): months of past agent
runs become journal events, read incrementally, with the hosts' own timestamps."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineage_es.importers.claude_projects import import_claude
    from lineage_es.importers.codex_sessions import import_codex
    from lineage_es.importers.driver import Importer
    from lineage_es.importers.report import ImportReport, Progress

__all__ = ["IMPORTERS", "ImportReport", "Progress", "import_claude", "import_codex", "importer"]

#: Where each public name lives: an import of one host's history loads only that host's code.
_HOMES = {
    "ImportReport": "report",
    "Progress": "report",
    "import_claude": "claude_projects",
    "import_codex": "codex_sessions",
}


#: The importer of each host that keeps a history folder, by host: the name it has here.
IMPORTERS = {"claude": "import_claude", "codex": "import_codex"}


def importer(host: str) -> Importer:
    """The importer of ``host``'s history (see :data:`IMPORTERS`), its module loaded now:
    only that host's code; :class:`KeyError` for a host with no importer."""
    found: Importer = __getattr__(IMPORTERS[host])
    return found


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
