"""What an import tells its caller: how far it has read (:class:`Progress`) and, at the end,
what it did (:class:`ImportReport`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol


class Progress(Protocol):
    """Told how many bytes an import will read, then each step of the way."""

    def begin(self, total: int) -> None: ...

    def advance(self, done: int) -> None: ...


class _Silent:
    """A :class:`Progress` that shows nothing."""

    def begin(self, total: int) -> None:
        pass

    def advance(self, done: int) -> None:
        pass


SILENT: Progress = _Silent()


@dataclass
class ImportReport:
    """What one import did: files found, read and left alone, what was placed, and every
    skipped row or file counted by reason."""

    host: str
    folder: str
    files: int = 0
    read: int = 0
    unchanged: int = 0
    bytes: int = 0
    #: Observations the files read gave the engine (each a row's lineage facts), new or not.
    observations: int = 0
    #: Lineage events the engine wrote for them: observations it knew already write none.
    journaled: int = 0
    partial: int = 0
    internal: int = 0
    gone: int = 0
    roots: set[str] = field(default_factory=set)
    subagents: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)
    #: Whether ``--reconcile`` looked at the files gone from disk.
    reconciled: bool = False
    #: Conversations deleted as ``gc``: every file holding them is gone.
    deleted: list[str] = field(default_factory=list)
    #: Nodes the deletes took with them, below those (``parent-teardown``).
    cascaded: list[str] = field(default_factory=list)
    #: Conversations of gone files kept, as a file still on disk holds them.
    kept: list[str] = field(default_factory=list)
    #: Folders (relative to ``folder``) that could not be listed: their files are not gone.
    unlisted: set[str] = field(default_factory=set)

    def add_reading(self, part: ImportReport) -> None:
        """Count in this report what reading a part of the folder found (``part``: a
        Claude session's share, read apart, perhaps in another process)."""
        self.read += part.read
        self.bytes += part.bytes
        self.partial += part.partial
        self.internal += part.internal
        self.roots |= part.roots
        self.subagents |= part.subagents
        self.skipped.update(part.skipped)

    def summary(self) -> list[str]:
        """The report as a few lines for a person."""
        lines = [
            f"{self.host} history in {self.folder}: {self.files} files, {self.read} read "
            f"({self.bytes:,} bytes), {self.unchanged} unchanged",
            f"{len(self.roots)} roots and {len(self.subagents)} subagents seen in the files "
            f"read; {self.observations} observations made of them, "
            f"{self.journaled} new lineage events journaled",
        ]
        if self.internal:
            lines.append(f"{self.internal} agent files of the host's own helpers (not children)")
        if self.partial:
            lines.append(f"{self.partial} partial last lines left for the next import")
        if self.gone and not self.reconciled:
            lines.append(
                f"{self.gone} files gone from disk; their conversations kept "
                "(use --reconcile to delete them)"
            )
        elif self.gone:
            line = (
                f"{self.gone} files gone from disk: deleted {len(self.deleted)} conversations "
                f"whose files are gone, and {len(self.cascaded)} below them"
            )
            if self.kept:
                line += f"; kept {len(self.kept)} still held by files on disk"
            lines.append(line)
        for reason, count in sorted(self.skipped.items()):
            lines.append(f"skipped {count}: {reason}")
        return lines
