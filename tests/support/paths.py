"""Where the repository and the recorded corpus live (for collection-time use; tests take the
``repo`` and ``corpus`` fixtures)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("LINEAGE_CORPUS", REPO.parent / "shared" / "corpus"))
