"""The import ledger: what ``lineage import`` has read of each host history folder.

Its events live in the journal with the lineage's own, under the same ``lineage:`` topics as
ever, but the classes are defined here, apart from :mod:`lineage_es.domain.root`: a hook process
never reads or writes a ledger, and each event class eventsourcing builds costs it time.
The importers import this module; :data:`lineage_es.domain.root.EVENT_CLASSES` imports it on the
first lookup of a ledger topic (the projection skips these events, journal export and
verify decode them).
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate

from lineage_es.domain.root import EVENT_CLASSES, LEDGER_TOPICS, name_id


def ledger_id(host: str, folder: str) -> UUID:
    """The id of the import ledger of one host's history folder (an absolute path)."""
    return name_id(f"import-ledger\x00{host}\x00{folder}")


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

    class Created(Aggregate.Created):
        TOPIC = "lineage:ImportLedger.Opened"
        host: str
        folder: str

    class FilesRead(Aggregate.Event):
        """One import run's changes: new or updated entries replace the old ones."""

        TOPIC = "lineage:ImportLedger.FilesRead"
        files: dict[str, Any]
        groups: dict[str, Any]

        def apply(self, aggregate: Any) -> None:
            aggregate.files.update(self.files)
            aggregate.groups.update(self.groups)

    class FilesForgotten(Aggregate.Event):
        """Files gone from disk that ``--reconcile`` dealt with: it deleted the conversations
        no file on disk holds any more."""

        TOPIC = "lineage:ImportLedger.FilesForgotten"
        paths: list[str]

        def apply(self, aggregate: Any) -> None:
            for path in self.paths:
                aggregate.files.pop(path, None)

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


LEDGER_EVENT_CLASSES: dict[str, type[Any]] = {
    cls.TOPIC: cls
    for cls in (ImportLedger.Created, ImportLedger.FilesRead, ImportLedger.FilesForgotten)
}
assert set(LEDGER_EVENT_CLASSES) == LEDGER_TOPICS
EVENT_CLASSES.update(LEDGER_EVENT_CLASSES)
