"""Answering a new process's first question from the materialised tree view, without the
event library: no eventsourcing, no domain, no recorder is imported to read rows that are
already on disk.

:func:`open_view_reader` opens the view of a SQLite or PostgreSQL store only when it can
answer exactly as the full engine would (:func:`lineage_es.engine.engine.open_engine`):

- nothing waits in the store's inbox (one ``listdir``; rows waiting are folded by the full
  engine, which journals them first: :func:`lineage_es.inbox.fold_first`);
- the view is current: its position equals the journal's last notification id, read in one
  statement (a hook that crashed between journaling and projecting, or another process
  writing meanwhile, leaves the view behind; the engine would catch it up from the journal).

Otherwise it answers ``None`` and the caller opens the engine. A :class:`ViewReader` answers
every lineage question through a :class:`~lineage_es.read.answers.TreeReader`, as the engine
does; anything else asked of it (a write, time travel, the journal, ledgers) opens the full
engine on first use and goes there from then on, reads included, so that a command that reads
and then writes (``lineage delete``) sees its own write.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from lineage_es.errors import StoreError
from lineage_es.model import AgentLineage, Chain, ForestNode, LineageTree, Member, Provenance
from lineage_es.model import Relation as RelationName
from lineage_es.read.answers import TreeReader
from lineage_es.read.queries import Queries
from lineage_es.stores.connections import lock_timeout_for
from lineage_es.stores.locations import StoreLocation, default_store_url, parse_store_url
from lineage_es.stores.sqlite_files import JOURNAL_TABLE, prepare_sqlite_file
from lineage_es.user_files import inbox_dir, segments

if TYPE_CHECKING:
    from lineage_es.read.sqlview import SqlView

#: The eventsourcing application's name: its PostgreSQL events table is ``<name>_events``
#: (:attr:`lineage_es.engine.application.LineageApplication.name`, which a test compares).
JOURNAL_NAME = "lineage"

#: The view's position and the journal's last notification id, in one statement (one
#: snapshot of the database): equal when the view is current. SQLite numbers a journal entry
#: by its ``rowid``.
SQLITE_POSITIONS = (
    "SELECT (SELECT position FROM lineage_view WHERE id = 1), "
    f"(SELECT coalesce(max(rowid), 0) FROM {JOURNAL_TABLE})"
)


def postgres_positions(location: StoreLocation) -> str:
    """:data:`SQLITE_POSITIONS` on PostgreSQL, the events table in the store's schema."""
    schema = location.postgres.get("schema") or "public"  # as eventsourcing defaults it
    return (
        "SELECT (SELECT position FROM lineage_view WHERE id = 1), "
        f'(SELECT coalesce(max(notification_id), 0) FROM "{schema}"."{JOURNAL_NAME}_events")'
    )


#: Opens the full engine, for what the view alone cannot answer.
EngineOpener = Callable[[], Any]


class ViewReader:
    """The lineage questions answered from a current view; everything else, from the full
    engine ``open_engine()`` opens on first use (see the module's docstring).

    It has the engine's read methods and signatures, and answers alike (a property test
    compares them): the same argument checks, :class:`~lineage_es.errors.UnknownConversation`
    for an id the view does not know, and a :class:`StoreError` naming the store when the
    store fails. A ``live`` reader (a server, ``tree --watch``) checks before each question
    that the view is still current (:func:`view_is_current`) and opens the engine, which
    catches up, the first time it is not; a one-shot reader checked once, when opened.
    Thread-safe: one lock serialises its questions, as the engine's does."""

    def __init__(
        self,
        location: StoreLocation,
        view: SqlView,
        open_engine: EngineOpener,
        *,
        live: bool = False,
    ) -> None:
        self.location = location
        self._view = view
        self._own_queries = Queries(view)
        self._reader = TreeReader.opening(self._view_queries)
        self._open_engine = open_engine
        self._engine: Any = None
        self._live = live
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def _view_queries(self) -> Iterator[Queries]:
        """The view's queries, under the lock, a store failure named as the engine names it."""
        with self._lock:
            try:
                yield self._own_queries
            except (sqlite3.Error, OSError) as exc:
                raise StoreError(f"cannot read store {self.location.display}: {exc}") from exc

    def _view_answers(self) -> bool:
        """Whether the view answers the next question: the engine is not open, and a live
        reader's view is still current (else the engine opens now, and answers from then on)."""
        with self._lock:
            if self._engine is None and self._live and not self._still_current():
                self._engine = self._open_engine()
            return self._engine is None

    def _still_current(self) -> bool:
        """:func:`view_is_current`; a view that fails to say is not (the engine, opening,
        names what failed)."""
        try:
            return view_is_current(self.location, self._view)
        except Exception:
            return False

    @property
    def engine(self) -> Any:
        """The full engine, opened now if it is not yet (the view stays open until
        :meth:`close`)."""
        with self._lock:
            if self._engine is None:
                self._engine = self._open_engine()
            return self._engine

    @property
    def queries(self) -> Queries:
        """The queries over the view (the engine's, once it is open)."""
        return self._own_queries if self._view_answers() else self._engine.queries

    def catch_up(self) -> int:
        """Nothing to apply while the view is current (the engine's catch-up, once open)."""
        return 0 if self._view_answers() else int(self._engine.catch_up())

    def position(self) -> int:
        """The journal's last position, which the view has reached while it answers."""
        return self._view.position() if self._view_answers() else int(self._engine.position())

    def _answerer(self) -> Any:
        return self._reader if self._view_answers() else self._engine

    def lineage(self, conversation: str, host: str | None = None) -> AgentLineage:
        """As :meth:`lineage_es.engine.engine.Engine.lineage`."""
        found: AgentLineage = self._answerer().lineage(conversation, host)
        return found

    def tree_for(self, conversation: str, host: str | None = None) -> LineageTree | None:
        """As :meth:`lineage_es.engine.engine.Engine.tree_for`."""
        found: LineageTree | None = self._answerer().tree_for(conversation, host)
        return found

    def relation(self, a: str, b: str, host: str | None = None) -> RelationName:
        """As :meth:`lineage_es.engine.engine.Engine.relation`."""
        found: RelationName = self._answerer().relation(a, b, host)
        return found

    def chain(self, conversation: str, host: str | None = None) -> Chain:
        """As :meth:`lineage_es.engine.engine.Engine.chain`."""
        found: Chain = self._answerer().chain(conversation, host)
        return found

    def provenance(self, sender: str, recipient: str, host: str | None = None) -> Provenance:
        """As :meth:`lineage_es.engine.engine.Engine.provenance`."""
        found: Provenance = self._answerer().provenance(sender, recipient, host)
        return found

    def family(self, root: str, host: str | None = None) -> tuple[Member, ...]:
        """As :meth:`lineage_es.engine.engine.Engine.family`."""
        found: tuple[Member, ...] = self._answerer().family(root, host)
        return found

    def families(self, roots: Iterable[tuple[str, str | None]]) -> tuple[tuple[Member, ...], ...]:
        """As :meth:`lineage_es.engine.engine.Engine.families`."""
        found: tuple[tuple[Member, ...], ...] = self._answerer().families(roots)
        return found

    def agents(self, as_: str, host: str | None = None) -> tuple[Member, ...]:
        """As :meth:`lineage_es.engine.engine.Engine.agents`."""
        found: tuple[Member, ...] = self._answerer().agents(as_, host)
        return found

    def forest(
        self, host: str | None = None, *, include_stopped: bool = False, root: str | None = None
    ) -> tuple[ForestNode, ...]:
        """As :meth:`lineage_es.engine.engine.Engine.forest`."""
        found: tuple[ForestNode, ...] = self._answerer().forest(
            host, include_stopped=include_stopped, root=root
        )
        return found

    def __getattr__(self, name: str) -> Any:
        """Anything the view cannot answer (writes, ``as_of``, ``journal``, ``ledgers``...):
        the full engine's."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.engine, name)

    def close(self) -> None:
        """Close the view's connection, and the engine's if it was opened."""
        try:
            self._view.close()
        finally:
            if self._engine is not None:
                self._engine.close()

    def __enter__(self) -> ViewReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_view_reader(
    url: str | None, open_engine: EngineOpener, *, live: bool = False
) -> ViewReader | None:
    """A :class:`ViewReader` on the store ``url`` names (default: ``$LINEAGE_STORE``, else
    the SQLite journal in the data dir) when its view can answer now; ``None`` when the full
    engine must open instead (``open_engine``, which the reader also calls for anything
    else): an in-memory store, a SQLite file that does not exist (the engine says why), rows
    waiting in the inbox, a view behind the journal or not made yet, or a store that fails to
    open this way (the engine then reports it).

    A SQLite file is checked as the engine checks it (another program's database is refused,
    a file others can read is warned about). ``live``: see :class:`ViewReader`."""
    location = parse_store_url(url or default_store_url())
    if location.kind == "memory":
        return None
    if location.kind == "sqlite":
        assert location.path is not None
        if not location.path.exists():
            return None
        prepare_sqlite_file(location.path, create=False)
    view = _open_current_view(location)
    return None if view is None else ViewReader(location, view, open_engine, live=live)


def _rows_wait(url: str) -> bool:
    """Whether the store's inbox holds a segment (one ``listdir``), as
    :func:`lineage_es.inbox.waiting` says, without importing the fold's code."""
    folder = inbox_dir(url)
    return folder is not None and bool(segments(folder))


def view_is_current(location: StoreLocation, view: SqlView) -> bool:
    """Whether ``view`` answers as the engine would now: nothing waits in the inbox, and the
    view's position is the journal's last (one statement)."""
    if _rows_wait(location.url):
        return False
    statement = SQLITE_POSITIONS if location.kind == "sqlite" else postgres_positions(location)
    ((position, last),) = view.select(statement)
    return position is not None and int(position) == int(last)


def _open_current_view(location: StoreLocation) -> SqlView | None:
    """The store's view, opened, when it is current (:func:`view_is_current`); else
    ``None``, nothing left open."""
    from lineage_es.read.sqlview import PostgresView, SQLiteView

    if _rows_wait(location.url):
        return None
    view: SqlView | None = None
    try:
        if location.kind == "sqlite":
            assert location.path is not None
            view = SQLiteView(location.path, timeout=lock_timeout_for("sqlite"))
        else:
            view = PostgresView(location.postgres)
        if view_is_current(location, view):
            return view
    except Exception:  # any failure: the engine opens the store, and names what failed
        pass
    if view is not None:
        with contextlib.suppress(Exception):
            view.close()
    return None


__all__ = ["ViewReader", "open_view_reader", "view_is_current"]
