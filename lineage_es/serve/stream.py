"""Live changes for the web page: one poll of the journal per server, pushed to every page.

A single task per server reads the journal's last position (one small query) each
``interval`` seconds; when it moved, it works out once what changed
(:class:`~lineage_es.serve.changes.ForestChanges`) and hands the change to every page
listening on ``/events``. Polling serves every store alike: hooks in other processes, an
import, other machines writing one PostgreSQL journal. A page that (re)connects says the
last position it saw (``Last-Event-ID``, which browsers resend on their own) and is sent
what changed since first; one too far behind is told to load the forest again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import anyio.to_thread

from lineage_es.errors import LineageError
from lineage_es.read.render import dumps_deep
from lineage_es.serve.changes import ForestChange, ForestChanges

log = logging.getLogger(__name__)

#: How often the journal's last position is read (seconds): a page shows a change within
#: about this long, plus the time to draw it.
POLL_INTERVAL = 0.5

#: A comment line is sent this often (seconds) on a quiet stream, so that a page (and any
#: proxy between) sees the connection alive, and a page that went away is noticed.
KEEP_ALIVE = 15.0

#: A page that has not taken this many changes is dropped (it reconnects and catches up).
BACKLOG = 64

#: A page this many journal entries behind is told to reload the forest instead of being
#: sent the change: reading that many entries would cost more than the forest itself.
CATCH_UP_LIMIT = 20_000


class Broadcaster:
    """Polls the journal and hands each change to every listening page's queue."""

    def __init__(self, changes: ForestChanges, *, interval: float = POLL_INTERVAL) -> None:
        self.changes = changes
        self.interval = interval
        self.position: int | None = None
        self.polls = 0
        self._listeners: set[asyncio.Queue[ForestChange | None]] = set()

    async def run(self) -> None:
        """Poll until cancelled; a store that fails is retried at the next poll."""
        engine = self.changes.engine
        while True:
            try:
                if self.position is None:  # first: learn the names of the roots there are
                    position = await anyio.to_thread.run_sync(engine.position)
                    await anyio.to_thread.run_sync(self.changes.learn_roots)
                    self.position = position
                else:
                    position = await anyio.to_thread.run_sync(engine.position)
                    self.polls += 1
                    if position != self.position:
                        change = await anyio.to_thread.run_sync(
                            self.changes.between, self.position, position
                        )
                        self.position = position
                        self._hand_out(change)
            except LineageError as exc:  # a store failure: the next poll tries again
                log.warning("lineage serve: reading the journal failed: %s", exc)
            await asyncio.sleep(self.interval)

    def _hand_out(self, change: ForestChange) -> None:
        for queue in list(self._listeners):
            try:
                queue.put_nowait(change)
            except asyncio.QueueFull:  # a page too slow to read: it reconnects
                self._listeners.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.get_nowait()
                    queue.put_nowait(None)

    async def events(self, since: int | None, stopping: Callable[[], bool]) -> AsyncIterator[bytes]:
        """The event stream of one page: the catch-up from ``since`` (when given), then each
        change as it comes, until the page goes or ``stopping()`` says the server stops."""
        queue: asyncio.Queue[ForestChange | None] = asyncio.Queue(BACKLOG)
        self._listeners.add(queue)
        try:
            yield b"retry: 1000\n\n"
            while self.position is None:  # the first poll has not named the roots yet
                if stopping():
                    return
                await asyncio.sleep(0.05)
            now = self.position
            if since is not None and since != now:
                if since > now or now - since > CATCH_UP_LIMIT:
                    yield _event("reload", {"position": now}, now)
                else:
                    caught_up = await anyio.to_thread.run_sync(self.changes.between, since, now)
                    yield _event("change", caught_up.data(), caught_up.position)
            since = now
            waited = 0.0
            while not stopping():
                try:
                    async with asyncio.timeout(0.5):
                        change = await queue.get()
                except TimeoutError:
                    waited += 0.5
                    if waited >= KEEP_ALIVE:
                        waited = 0.0
                        yield b": keep-alive\n\n"
                    continue
                if change is None:  # dropped for being slow: the page reconnects
                    return
                waited = 0.0
                if change.position <= since:
                    continue  # the catch-up already carried it
                yield _event("change", change.data(), change.position)
        finally:
            self._listeners.discard(queue)

    @property
    def listeners(self) -> int:
        """How many pages are listening now."""
        return len(self._listeners)


def _event(kind: str, data: object, position: int) -> bytes:
    """One Server-Sent Event: its id is the position it brings the page to."""
    return b"event: %s\nid: %d\ndata: %s\n\n" % (kind.encode(), position, dumps_deep(data))
