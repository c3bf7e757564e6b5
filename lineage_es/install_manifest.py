"""What an install created in a host's config, kept in a small JSON file beside it, so that
the uninstall removes exactly that and leaves everything the user had.

Each install command keeps a kind of its own: a dataclass subclassing
:class:`InstallManifest` that names its file (:attr:`~InstallManifest.SUFFIX` after the
config's name) and declares what it records, one field each, with :func:`flag_field`,
:func:`text_field` or :func:`names_field`. ``install-hooks``'s is
:class:`lineage_es.hook_manifest.HookManifest`, ``install-mcp``'s lives in
:mod:`lineage_es.mcp_config`. The file holds one JSON object: the kind's
:attr:`~InstallManifest.HEADER`, then each field under its own name.

Reading never fails: a manifest that is missing, unreadable or not a JSON object reads as an
empty one (nothing counts as created by an install, so an uninstall takes out only our
entries and leaves every container), and a field that is absent or of another type reads as
its default.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Self

from lineage_es.private_files import open_private

#: A field's metadata keys: how its value is read from JSON, and (when not as it is) written.
_READ = "read"
_WRITE = "write"


@dataclass
class InstallManifest:
    """One config's manifest: ``<config name><SUFFIX>`` beside the file a link points to (a
    linked config is written where it lives). ``cls()`` is the empty manifest."""

    #: Follows the config's name to make the manifest's (``.lineage-es.json``, ...).
    SUFFIX: ClassVar[str]
    #: Written first and never read back (a format version, say).
    HEADER: ClassVar[Mapping[str, Any]] = {}

    @classmethod
    def where(cls, path: Path) -> Path:
        """The manifest of the config at ``path``, named after the file a link points to."""
        real = Path(os.path.realpath(path))
        return real.with_name(real.name + cls.SUFFIX)

    @classmethod
    def read(cls, path: Path) -> Self:
        """The manifest of the config at ``path``; empty when there is none or it is
        unreadable."""
        try:
            data = json.loads(cls.where(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        return cls(**{f.name: f.metadata[_READ](data.get(f.name)) for f in fields(cls)})

    def to_json(self) -> dict[str, Any]:
        """The JSON object kept on disk: the header, then every field, in their order."""
        data = dict(self.HEADER)
        for f in fields(self):
            value = getattr(self, f.name)
            data[f.name] = f.metadata[_WRITE](value) if _WRITE in f.metadata else value
        return data

    def write(self, path: Path) -> None:
        """Keep it beside the config at ``path``, readable by its owner only (one line of
        JSON); :class:`OSError` when it cannot, for the caller to name in its own error."""
        fd = open_private(self.where(path), os.O_WRONLY | os.O_TRUNC)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(self.to_json()) + "\n")

    @classmethod
    def forget(cls, path: Path) -> None:
        """Remove the manifest once the uninstall took out everything it lists."""
        cls.where(path).unlink(missing_ok=True)


def flag_field() -> bool:
    """A yes/no field, no by default: only JSON ``true`` reads as yes."""
    return field(default=False, metadata={_READ: _is_true})


def text_field() -> str | None:
    """A text field (a digest, say), none by default: only a JSON string reads as one."""
    return field(default=None, metadata={_READ: _text_or_none})


def names_field() -> set[str]:
    """A set of names, empty by default: kept as a sorted JSON list; the strings of a list
    read as the set (anything else: empty)."""
    return field(default_factory=set, metadata={_READ: _names, _WRITE: sorted})


def _is_true(value: object) -> bool:
    return value is True


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _names(value: object) -> set[str]:
    return {name for name in value if isinstance(name, str)} if isinstance(value, list) else set()
