"""One mapping of importers by host, read by ``lineage import``; each loads only its host's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from lineage_es import importers
from lineage_es.importers import IMPORTERS, importer


def test_each_host_with_a_history_has_its_importer() -> None:
    assert IMPORTERS == {"claude": "import_claude", "codex": "import_codex"}
    assert importer("claude") is importers.import_claude
    assert importer("codex") is importers.import_codex
    with pytest.raises(KeyError):
        importer("cursor")


def test_asking_for_one_importer_loads_only_its_host() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from lineage_es.importers import importer\n"
            "importer('codex')\n"
            "print(' '.join(sorted(sys.modules)))\n",
        ],
        capture_output=True,
        check=True,
    ).stdout.split()
    assert b"lineage_es.importers.codex_sessions" in loaded
    assert b"lineage_es.importers.claude_projects" not in loaded
