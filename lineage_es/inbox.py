"""Folding a store's inbox: journal the rows the fast hook accepted, in order, exactly once.

The fast hook (:mod:`lineage_es.hook_fast`) appends recording rows to segments in the store's
inbox folder (:func:`lineage_es.user_files.inbox_dir`). :func:`fold_inbox` journals them: for
each segment, oldest first, it reads the complete rows after the offset its ledger keeps and
journals them in groups the engine saves in one transaction each
(:meth:`~lineage_es.engine.engine.Engine.observe_many`, in acceptance order), the segment's new
offset saved in that same transaction (``also``). A segment read to its end is deleted under
the hooks' append lock.

Exactly once: a fold killed at any moment leaves the offset exactly after the rows it
journaled, so the next fold neither repeats nor skips one. (Journaling first and saving the
offset after is not enough: a row journaled again can act the second time where it did not
the first.) One fold at a time: :data:`~lineage_es.user_files.FOLD_LOCK`.

Each segment's ledger is an :class:`~lineage_es.domain.ledger.ImportLedger` of host
:data:`LEDGER_HOST`, its folder the machine's name and the segment's path: one per segment,
so that a ledger holds at most a segment's batches, and never read once its segment is gone.

A row that is not a recording row, or whose payload its adapter refuses, is written to
``hook.log`` with its segment and line and passed over, as the hook refuses such a payload.
Opening an engine folds first (:func:`fold_first`, from
:func:`lineage_es.engine.engine.open_engine`): a ``listdir`` when nothing waits.
"""

from __future__ import annotations

import copy
import fcntl
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from lineage_es.errors import LineageError, StoreError
from lineage_es.facts import Observation
from lineage_es.user_files import (
    APPEND_LOCK,
    FOLD_LOCK,
    inbox_dir,
    open_private,
    segments,
    write_log,
)

if TYPE_CHECKING:
    from lineage_es.domain.ledger import ImportLedger

#: The host named in an inbox segment's ledger (no host adapter is called that).
LEDGER_HOST = "inbox"
#: At most this many rows are journaled in one transaction.
BATCH_ROWS = 500
#: At most this many bytes of a segment are read at once (rows are never split).
READ_BYTES = 16 * 1024 * 1024
#: How long a fold waits for another one (the folder's batch, or another reader's) to end.
FOLD_WAIT_SECONDS = 30.0

#: A recording row as the fast hook writes it; the payload is decoded on its own.
ROW = re.compile(rb'\{"host":"([a-z]{1,32})","at":"([0-9T:.+Z-]{1,40})","payload":(.*)\}\s*')


class LedgerDoor(Protocol):
    """The engine's import ledgers (:class:`~lineage_es.engine.ledgers.LedgerStore`)."""

    def load(self, host: str, folder: str) -> ImportLedger | None: ...

    def save(self, ledger: ImportLedger) -> None: ...


class FoldingEngine(Protocol):
    """What folding needs of an :class:`~lineage_es.engine.engine.Engine` (the engine imports
    this module, so it is named by what it does)."""

    @property
    def ledgers(self) -> LedgerDoor: ...

    def observe_many(
        self,
        observations: Iterable[Observation],
        *,
        batch: int = ...,
        also: Callable[[], Sequence[Any]] | None = ...,
    ) -> int: ...

    def close(self) -> None: ...


Opened = TypeVar("Opened", bound=FoldingEngine)


@dataclass
class FoldReport:
    """What one fold did: rows journaled, rows refused (each logged), and segments deleted."""

    journaled: int = 0
    refused: int = 0
    deleted: int = 0


def waiting(url: str) -> bool:
    """Whether the inbox of the store at ``url`` holds any segment: one ``listdir``."""
    folder = inbox_dir(url)
    return folder is not None and bool(segments(folder))


def fold_first(url: str, opening: Callable[[bool], Opened], *, fold: bool = True) -> Opened:
    """The engine ``opening(waiting)`` opens on the store at ``url``, with the rows waiting
    in its inbox journaled (unless ``fold`` is false): every reader answers with what the
    hooks acknowledged. ``waiting`` says whether rows wait (a ``listdir``): a store that only
    its inbox holds yet is created, whatever a reader asked."""
    from lineage_es.stores.locations import parse_store_url

    location = parse_store_url(url)
    folder = inbox_dir(location.url) if fold else None
    rows_wait = folder is not None and bool(segments(folder))
    engine = opening(rows_wait)
    if rows_wait:
        try:
            fold_inbox(engine, location.url)
        except BaseException:
            engine.close()
            raise
    return engine


def fold_inbox(engine: FoldingEngine, url: str) -> FoldReport:
    """Journal every complete row waiting in the inbox of the store at ``url`` into
    ``engine`` (opened on that store). Raises :class:`StoreError` when the store fails
    (locked, down): the rows stay in the inbox for the next fold."""
    report = FoldReport()
    folder = inbox_dir(url)
    if folder is None or not segments(folder):
        return report
    with _held(os.path.join(folder, FOLD_LOCK)):
        for name in segments(folder):
            _fold_segment(engine, folder, name, report)
    return report


@contextmanager
def _held(path: str, wait: float = FOLD_WAIT_SECONDS) -> Iterator[None]:
    """The flock on ``path``, waited for at most ``wait`` seconds (then :class:`StoreError`)."""
    fd = open_private(path, os.O_WRONLY)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"another fold of {os.path.dirname(path)} held {path} for {wait:g} s"
                    ) from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)


def _ledger_folder(folder: str, name: str) -> str:
    return f"{os.uname().nodename}:{os.path.join(folder, name)}"


def _fold_segment(engine: FoldingEngine, folder: str, name: str, report: FoldReport) -> None:
    """Journal the rows of segment ``name`` after its saved offset, the offset saved in the
    transaction of the rows before it; delete the segment when read to its end and no hook
    can still append to it."""
    from lineage_es.domain.ledger import ImportLedger

    path = os.path.join(folder, name)
    key = _ledger_folder(folder, name)
    ledger = Advancing(
        engine.ledgers.load(LEDGER_HOST, key) or ImportLedger.open(LEDGER_HOST, key), name
    )
    while True:
        try:
            with open(path, "rb") as stream:
                stream.seek(ledger.offset)
                data = stream.read(READ_BYTES)
        except FileNotFoundError:
            return
        end = data.rfind(b"\n") + 1
        if end == 0:
            break
        rows = data[:end].split(b"\n")[:-1]
        observations = _observations(rows, path, ledger.line, report)
        for group in _transactions(rows, observations, ledger.offset, ledger.line):
            _journal(engine, group, ledger, report)
        if end < len(data) or len(data) < READ_BYTES:
            break
    _delete_if_drained(folder, name, ledger.offset, report)


def _observations(
    rows: list[bytes], segment: str, before: int, report: FoldReport
) -> list[Observation | None]:
    """The observation of each of ``rows`` (line ``before + 1`` on of the file ``segment``);
    ``None`` for a refused row, logged as ``segment:line``."""
    from lineage_es.hosts import adapter
    from lineage_es.hosts.base import parse_payload, parse_time
    from lineage_es.hosts.detect import hook_host

    found: list[Observation | None] = []
    for number, raw in enumerate(rows, start=before + 1):
        match = ROW.fullmatch(raw)
        host = match.group(1).decode() if match else "?"
        try:
            if match is None:
                raise LineageError("not a recording row of the fast hook")
            at = parse_time(match.group(2).decode())
            if at is None:
                raise LineageError(f"bad time {match.group(2).decode()!r}")
            payload = parse_payload(match.group(3), check=False)
            taken = hook_host(host, payload)
            found.append(adapter(taken).observe(payload, at=at))
        except (LineageError, ValueError) as exc:
            found.append(None)
            report.refused += 1
            where = payload_context(match.group(3), host) if match else ""
            reason = getattr(exc, "reason", None) or str(exc)
            write_log(host, f"{segment}:{number}: {reason}{' [' + where + ']' if where else ''}")
    return found


#: One row of a segment: its observation (``None``: refused, already logged), the offset
#: after it and its line number.
Row = tuple[Observation | None, int, int]


def _transactions(
    rows: list[bytes], observations: list[Observation | None], offset: int, line: int
) -> Iterator[list[Row]]:
    """The rows in groups the engine journals in one transaction each: consecutive rows
    that name their root, at most :data:`BATCH_ROWS`; a row that names none (Cursor's, which
    the engine routes through the view) alone."""
    group: list[Row] = []
    for raw, observation in zip(rows, observations, strict=True):
        offset += len(raw) + 1
        line += 1
        alone = observation is not None and observation.root is None
        if group and (alone or len(group) >= BATCH_ROWS):
            yield group
            group = []
        group.append((observation, offset, line))
        if alone:
            yield group
            group = []
    if group:
        yield group


class Advancing:
    """A segment's ledger, advanced only by a save that carried it: :meth:`to` makes, for
    each attempt at a transaction, a copy that records the new offset; :meth:`saved` keeps
    the copy once the transaction committed."""

    def __init__(self, ledger: ImportLedger, name: str) -> None:
        self.ledger = ledger
        self.name = name
        self.made: ImportLedger | None = None

    @property
    def offset(self) -> int:
        return int(self.ledger.files.get(self.name, {}).get("offset", 0))

    @property
    def line(self) -> int:
        """How many rows were folded before: the next row's line is one more."""
        return int(self.ledger.files.get(self.name, {}).get("line", 0))

    def to(self, offset: int, line: int) -> Callable[[], Sequence[ImportLedger]]:
        def make() -> Sequence[ImportLedger]:
            self.made = copy.deepcopy(self.ledger)
            self.made.record({self.name: {"offset": offset, "line": line}}, {})
            return [self.made]

        return make

    def saved(self) -> None:
        if self.made is not None:
            self.ledger, self.made = self.made, None


def _journal(
    engine: FoldingEngine, group: list[Row], ledger: Advancing, report: FoldReport
) -> None:
    """Journal ``group`` in one transaction with the offset after it; when the engine refuses
    one of its rows, each row in a transaction of its own with the offset after it, each
    refusal logged. A store failure is raised: the rows stay for the next fold."""
    observations = [o for o, _, _ in group if o is not None]
    _, offset, line = group[-1]
    try:
        report.journaled += engine.observe_many(
            observations, batch=BATCH_ROWS + 1, also=ledger.to(offset, line)
        )
        ledger.saved()
        return
    except StoreError:
        raise
    except LineageError:
        ledger.made = None
    for observation, offset, line in group:
        try:
            one = [observation] if observation is not None else []
            report.journaled += engine.observe_many(one, also=ledger.to(offset, line))
        except StoreError:
            raise
        except LineageError as exc:
            assert observation is not None  # an empty list journals nothing to refuse
            report.refused += 1
            write_log(observation.host, f"{type(exc).__name__}: {exc} [key {observation.key}]")
            engine.observe_many([], also=ledger.to(offset, line))
        ledger.saved()


def _delete_if_drained(folder: str, name: str, offset: int, report: FoldReport) -> None:
    """Delete segment ``name`` when it holds nothing past ``offset``, under the append lock
    (no hook is writing to it)."""
    with _held(os.path.join(folder, APPEND_LOCK)):
        try:
            if os.stat(os.path.join(folder, name)).st_size != offset:
                return
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:
            return
    report.deleted += 1


def payload_context(raw: bytes, host: str | None = None) -> str:
    """``hook_event_name=… session_id=…``: what a payload from ``host`` that failed was about,
    read from its bytes (it may be too large, too deep or not JSON at all), so that the log
    says which fact was lost: the fields its adapter names in a log line (every adapter's for
    a host we do not know). Only on the error path; first occurrences, top level or not."""
    try:
        from lineage_es.hosts import log_fields

        fields = log_fields(host)
    except Exception:  # the log line goes without its context rather than not at all
        return ""
    found: dict[str, str] = {}
    pattern = rb'"(' + "|".join(fields).encode() + rb')"\s*:\s*"([^"\\]{1,200})"'
    for match in re.finditer(pattern, raw):
        name = match.group(1).decode()
        if name not in found:
            found[name] = match.group(2).decode("utf-8", "replace")
        if len(found) == len(fields):
            break
    return " ".join(f"{name}={found[name]}" for name in fields if name in found)
