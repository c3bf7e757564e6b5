"""What ``lineage install-hooks`` created in a host's hook config, kept beside it, so that
``lineage uninstall-hooks`` removes exactly that (the file, the hooks table, Cursor's
``version``, an event's list) and leaves what the user had, empty containers included."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from lineage_es.install_manifest import InstallManifest, flag_field, names_field

#: Beside a config: what ``install-hooks`` created in it (``uninstall-hooks`` removes it).
MANIFEST_SUFFIX: Final = ".lineage-es.json"


@dataclass
class HookManifest(InstallManifest):
    """What ``install-hooks`` created in a config, from the first install on: the file, the
    hooks table, Cursor's ``version`` key, and the events whose lists it added.

    On disk: ``{"file": bool, "hooks": bool, "version": bool, "events": [names, sorted]}``.
    """

    SUFFIX = MANIFEST_SUFFIX

    file: bool = flag_field()
    hooks: bool = flag_field()
    version: bool = flag_field()
    events: set[str] = names_field()  # noqa: RUF009 (a dataclasses.field)

    @classmethod
    def where(cls, path: Path) -> Path:
        """Beside the file a link points to, but named after ``path`` itself (a link's own
        name, where the config's name differs from its target's): where ``install-hooks``
        has always kept it, so the manifests on disk are found."""
        return Path(os.path.realpath(path)).with_name(path.name + cls.SUFFIX)
