"""The import ledger: what ``lineage import`` has read of each host history folder.

Its events live in the journal with the lineage's own, under ``lineage:`` topics, but the
classes are defined here, apart from the rest of the domain: a hook process never reads or
writes a ledger, and each event class eventsourcing builds costs it time. The topic registry
(:mod:`lineage_es.domain.topics`) knows the ledger's topics and imports this module on the
first lookup of one; this module imports nothing of the registry.
"""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Aggregate

from lineage_es.domain.ids import ledger_id


class LedgerEvent(Aggregate.Event):
    """An event of an :class:`ImportLedger`."""


class LedgerOpened(LedgerEvent, Aggregate.Created):
    """The ledger of one host's history folder began."""

    TOPIC = "lineage:ImportLedger.Opened"
    host: str
    folder: str


class FilesRead(LedgerEvent):
    """One import run's changes: new or updated entries replace the old ones."""

    TOPIC = "lineage:ImportLedger.FilesRead"
    files: dict[str, Any]
    groups: dict[str, Any]

    def apply(self, aggregate: Any) -> None:
        aggregate.files.update(self.files)
        aggregate.groups.update(self.groups)


class FilesForgotten(LedgerEvent):
    """Files gone from disk that ``--reconcile`` dealt with: it deleted the conversations
    no file on disk holds any more."""

    TOPIC = "lineage:ImportLedger.FilesForgotten"
    paths: list[str]

    def apply(self, aggregate: Any) -> None:
        for path in self.paths:
            aggregate.files.pop(path, None)


class ImportLedger(Aggregate):
    """What ``lineage import`` has read of one host folder, kept in the journal itself so a
    re-import reads only what changed, on every store, and survives export and import.

    ``files`` maps a path (relative to the folder) to its entry: size, mtime, the byte offset
    after the last complete line read, the reader state needed to resume there, and the
    conversations the file contributed (for ``--reconcile``). ``groups`` keeps reader state
    shared by several files (a Claude session and its agent files). The projection ignores
    these events: they place no node.
    """

    TOPIC = "lineage:ImportLedger"

    Event = LedgerEvent
    Created = LedgerOpened
    FilesRead = FilesRead
    FilesForgotten = FilesForgotten

    def __init__(self, host: str, folder: str) -> None:
        self.host = host
        self.folder = folder
        self.files: dict[str, Any] = {}
        self.groups: dict[str, Any] = {}

    @classmethod
    def open(cls, host: str, folder: str) -> ImportLedger:
        return cls._create(cls.Created, id=ledger_id(host, folder), host=host, folder=folder)

    def record(self, files: dict[str, Any], groups: dict[str, Any]) -> None:
        if files or groups:
            self.trigger_event(self.FilesRead, files=files, groups=groups)

    def forget(self, paths: list[str]) -> None:
        if paths:
            self.trigger_event(self.FilesForgotten, paths=sorted(paths))


#: The ledger's event classes by topic (the registry adds them on first lookup).
LEDGER_EVENT_CLASSES: dict[str, type[Any]] = {
    cls.TOPIC: cls for cls in (LedgerOpened, FilesRead, FilesForgotten)
}
