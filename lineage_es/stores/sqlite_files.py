"""The journal's SQLite file: created private, and refused when it is another program's
database (eventsourcing would add its tables to it)."""

from __future__ import annotations

import os
import sqlite3
import stat
import warnings
from contextlib import closing
from pathlib import Path

from lineage_es.errors import NoJournal, StoreError
from lineage_es.private_files import make_private_folder, open_private
from lineage_es.stores.locations import data_dir

#: The first bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"

#: The journal's table in a SQLite file, and its columns as eventsourcing's SQLite recorder
#: creates them: what tells a journal (of any version of this project) from another
#: program's database.
JOURNAL_TABLE = "stored_events"
JOURNAL_COLUMNS = ("originator_id", "originator_version", "topic", "state")
#: How this project's event topics begin (``lineage:`` as registered; a module path for any
#: class not registered under a short name).
JOURNAL_TOPIC_PREFIXES = ("lineage:", "lineage_es.")


def prepare_sqlite_file(path: Path, *, create: bool = True) -> None:
    """Create the journal's directory (0700, and each missing folder above it) and file
    (0600), whatever the umask, warning when an existing one is readable by others: agent
    history names every project a person works on. With
    ``create=False`` a missing file is :class:`NoJournal` and nothing is created.

    An existing database that is not a journal (:func:`_check_is_journal`) is refused before
    anything opens it to write: eventsourcing would add its tables to another program's file."""
    if not create and not path.exists():
        raise NoJournal(path)
    directory = path.parent
    try:
        if not directory.exists():
            make_private_folder(directory)
        elif directory == data_dir() and stat.S_IMODE(directory.stat().st_mode) & 0o077:
            warnings.warn(
                f"store directory {directory} is accessible to other users; "
                f"run: chmod 700 {directory}",
                stacklevel=3,
            )
        if not path.exists():
            os.close(open_private(path, os.O_WRONLY))
        found = path.stat()
    except OSError as exc:
        raise StoreError(f"cannot create the store at {path}: {exc.strerror}") from None
    # What SQLite itself checks first: a database file is empty or starts with its header
    # string. Read that rather than open a connection only to check it (every hook opens one).
    try:
        with open(path, "rb") as probe:
            header = probe.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot open the store at {path}: {exc.strerror}") from None
    if header and header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a SQLite journal: file is not a database")
    if header:
        _check_is_journal(path)
    # The advice is for a journal the user can chmod: a regular file of their own (a folder,
    # another user's file or one that is no journal gets the error above, or none).
    owner = getattr(os, "getuid", lambda: found.st_uid)()
    if stat.S_ISREG(found.st_mode) and found.st_uid == owner and found.st_mode & 0o077:
        warnings.warn(
            f"store file {path} is readable by other users; run: chmod 600 {path}",
            stacklevel=3,
        )


def _check_is_journal(path: Path) -> None:
    """Refuse a SQLite database that has tables but no journal table of the shape
    eventsourcing creates, or one whose first event is not this project's (another
    event-sourced program's). Keyed on that table alone, not on every table a journal holds
    now: a journal of an older version (no view tables yet) still opens. The check only reads, on
    a connection of its own that it closes whatever happens."""
    try:
        with closing(sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True)) as db:
            names = [
                name
                for (name,) in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
                )
            ]
            columns = tuple(
                str(row[1]).lower() for row in db.execute(f"PRAGMA table_info({JOURNAL_TABLE})")
            )
            first = (
                db.execute(f"SELECT topic FROM {JOURNAL_TABLE} LIMIT 1").fetchone()
                if columns == JOURNAL_COLUMNS
                else None
            )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the store at {path}: {exc}") from None
    if not names or (
        columns == JOURNAL_COLUMNS and (first is None or _is_our_topic(str(first[0])))
    ):
        return
    shown = ", ".join(names[:5]) + (f", and {len(names) - 5} more" if len(names) > 5 else "")
    raise StoreError(f"{path} is not a lineage journal: it holds other tables ({shown})")


def _is_our_topic(topic: str) -> bool:
    """Whether a stored event's topic is one this project journals: any other event-sourced
    program's ``stored_events`` has eventsourcing's shape too."""
    return topic.startswith(JOURNAL_TOPIC_PREFIXES)
