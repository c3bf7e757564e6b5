"""What ``lineage install-hooks`` created in a host's hook config, kept beside it, so that
``lineage uninstall-hooks`` removes exactly that (the file, the hooks table, Cursor's
``version``, an event's list) and leaves what the user had, empty containers included."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from lineage_es.private_files import open_private

#: Beside a config: what ``install-hooks`` created in it (``uninstall-hooks`` removes it).
MANIFEST_SUFFIX = ".lineage-es.json"


@dataclass
class InstallManifest:
    """What ``install`` created in a config, so ``uninstall`` removes exactly that: kept
    beside the config as ``<name>.lineage-es.json`` from the first install on."""

    file: bool = False
    hooks: bool = False
    version: bool = False
    events: set[str] = field(default_factory=set)

    @staticmethod
    def where(path: Path) -> Path:
        """The manifest of the config at ``path``, beside the file a link points to."""
        return Path(os.path.realpath(path)).with_name(path.name + MANIFEST_SUFFIX)

    @classmethod
    def read(cls, path: Path) -> InstallManifest:
        """The manifest of the config at ``path``; empty when there is none or it is
        unreadable (then nothing counts as created by an install)."""
        try:
            data = json.loads(cls.where(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        events = data.get("events")
        return cls(
            file=data.get("file") is True,
            hooks=data.get("hooks") is True,
            version=data.get("version") is True,
            events={e for e in events if isinstance(e, str)} if isinstance(events, list) else set(),
        )

    def write(self, path: Path) -> None:
        """Keep it beside the config at ``path`` (private); :class:`OSError` when it cannot."""
        data = {
            "file": self.file,
            "hooks": self.hooks,
            "version": self.version,
            "events": sorted(self.events),
        }
        fd = open_private(self.where(path), os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(data) + "\n")

    @classmethod
    def forget(cls, path: Path) -> None:
        """Remove the manifest once uninstall took out everything it lists."""
        cls.where(path).unlink(missing_ok=True)
