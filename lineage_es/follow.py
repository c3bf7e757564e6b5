"""Follow a shared journal: keep an engine's tree view current while other machines write.

Several engines (one per machine) can share one PostgreSQL journal. Each engine catches its
view up before it answers, but a daemon that pushes changes to its clients must learn of new
facts without being asked. PostgreSQL tells it: eventsourcing's recorder ``subscribe()``
LISTENs for the NOTIFY every insert sends. A dropped listening connection ends that
subscription for good (eventsourcing's own runner then stops), so the :class:`Follower`
supervises it: it catches up, resubscribes from the last position it applied, and retries
with a capped backoff until it is stopped. ``memory://`` stores can be followed too (within
the process). SQLite has no push subscription; there, call ``engine.catch_up()`` before
reading (the engine's own queries already do).

    with Follower(engine, on_change=lambda position, cause: push(engine.forest())):
        serve_forever()
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from eventsourcing.persistence import Subscription

from lineage_es.engine.engine import Engine
from lineage_es.errors import EngineClosed, StoreError

log = logging.getLogger(__name__)

#: ``on_change(position, cause)``: the view reached ``position``; ``cause`` says what woke
#: the follower: ``"notify"`` (the subscription), ``"resubscribe"`` (the catch-up after a
#: (re)subscription) or ``"poll"`` (the safety poll).
OnChange = Callable[[int, str], None]

#: After each (re)subscription, catch up again this long after it (seconds), then this long
#: after that: by then its LISTEN is in effect (:meth:`Follower._catch_up_after_subscribing`).
SETTLE_DELAYS = (0.1, 0.4)


class Follower:
    """Keeps ``engine``'s view current from its journal's subscription, in a thread.

    ``on_change`` is called (from the follower's threads, one call at a time) each time the
    view's position moves. ``poll_interval`` adds a periodic catch-up as a safety net for a
    notification lost in flight; ``None`` turns it off.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        on_change: OnChange | None = None,
        retry_delay: float = 0.05,
        max_retry_delay: float = 2.0,
        poll_interval: float | None = 10.0,
    ) -> None:
        if engine.location.kind == "sqlite":
            raise StoreError(
                "a SQLite journal cannot be followed (it has no push subscription); "
                "call engine.catch_up() before reading"
            )
        self.engine = engine
        self.on_change = on_change
        self.retry_delay = retry_delay
        self.max_retry_delay = max_retry_delay
        self.poll_interval = poll_interval
        self.position = 0
        self.subscriptions = 0
        self.drops = 0
        self.last_error: BaseException | None = None
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._apply_lock = threading.Lock()
        self._subscription: Subscription[Any] | None = None
        self._threads: list[threading.Thread] = []

    # -- control --------------------------------------------------------------------------

    def start(self) -> Follower:
        """Start following in daemon threads; returns ``self``."""
        if self._threads:
            raise RuntimeError("this follower has already been started")
        self._threads.append(threading.Thread(target=self._supervise, daemon=True))
        if self.poll_interval is not None:
            self._threads.append(threading.Thread(target=self._poll, daemon=True))
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop following and wait for the threads to end."""
        for thread in self._halt():
            thread.join(timeout)

    def _halt(self) -> list[threading.Thread]:
        """Stop following without waiting (a thread of the follower's own may call it):
        waiters are woken, the subscription stopped; the threads to wait for are returned."""
        self._stopping.set()
        with self._changed:
            subscription = self._subscription
            threads = [t for t in self._threads if t is not threading.current_thread()]
            self._changed.notify_all()
        if subscription is not None:
            subscription.stop()
        return threads

    def __enter__(self) -> Follower:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for(self, position: int, timeout: float) -> bool:
        """Wait until the view has applied ``position``; ``False`` when ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.position < position:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping.is_set():
                    return False
                self._changed.wait(left)
            return True

    def wait_subscribed(self, count: int = 1, timeout: float = 10.0) -> bool:
        """Wait until the follower has subscribed ``count`` times in all (a resubscription
        after a dropped connection counts); ``False`` when ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.subscriptions < count:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping.is_set():
                    return False
                self._changed.wait(left)
            return True

    def stats(self) -> dict[str, Any]:
        """What the follower has done: position, subscriptions made, connections lost."""
        return {
            "position": self.position,
            "subscriptions": self.subscriptions,
            "drops": self.drops,
            "last_error": None if self.last_error is None else str(self.last_error),
        }

    # -- the threads ----------------------------------------------------------------------

    def _supervise(self) -> None:
        """Follow one subscription after another, waiting longer after each failure."""
        delay = self.retry_delay
        while not self._stopping.is_set():
            try:
                self._follow_one_subscription()
                delay = self.retry_delay
            except EngineClosed:
                self._halt()  # nothing left to follow with
                break
            except Exception as exc:  # a dropped connection, a restarting server...
                if self._stopping.is_set():
                    break
                self.drops += 1
                self.last_error = exc
                log.warning("journal subscription lost (%s); resubscribing in %.2fs", exc, delay)
                self._stopping.wait(delay)
                delay = min(delay * 2, self.max_retry_delay)

    def _follow_one_subscription(self) -> None:
        """One subscription's life: catch up, subscribe from there, apply what it delivers."""
        position = self._catch_up("resubscribe")
        subscription = self.engine.app.recorder.subscribe(gt=position)
        with self._changed:
            self._subscription = subscription
            if self._stopping.is_set():
                subscription.stop()
        with subscription:
            # The subscription reads what is new since ``position`` before its LISTEN takes
            # effect, so a fact committed in between would wait for the next NOTIFY: the
            # catch-ups of SETTLE_DELAYS close that window.
            with self._changed:
                # Registered under the lock that ``stop`` takes its list under: the thread
                # either is on that list or sees the stop and never starts.
                if not self._stopping.is_set():
                    late = threading.Thread(target=self._catch_up_after_subscribing, daemon=True)
                    late.start()
                    self._threads = [t for t in self._threads if t.is_alive()] + [late]
                self.subscriptions += 1
                self._changed.notify_all()
            for notification in subscription:
                if notification.id > self.position:
                    self._catch_up("notify")

    def _catch_up_after_subscribing(self) -> None:
        """Catch up at each of :data:`SETTLE_DELAYS` after a subscription starts."""
        for delay in SETTLE_DELAYS:
            if self._stopping.wait(delay):
                return
            try:
                self._catch_up("resubscribe")
            except EngineClosed:
                self._halt()
                return
            except Exception as exc:
                log.warning("journal catch-up after subscribing failed: %s", exc)

    def _poll(self) -> None:
        """Catch up every ``poll_interval`` seconds, in case a notification was lost."""
        assert self.poll_interval is not None
        while not self._stopping.wait(self.poll_interval):
            try:
                self._catch_up("poll")
            except EngineClosed:
                self._halt()  # its engine is gone: the follower stops with it
                return
            except Exception as exc:
                log.warning("journal poll failed: %s", exc)

    def _catch_up(self, cause: str) -> int:
        """Catch the engine's view up; when its position moved, record it, wake the waiters
        and tell ``on_change`` (``cause`` says why). Returns the position applied."""
        with self._apply_lock:
            self.engine.catch_up()
            position = self.engine.view.position()
            if position <= self.position:
                return self.position
            with self._changed:
                self.position = position
                self._changed.notify_all()
            if self.on_change is not None:
                try:
                    self.on_change(position, cause)
                except Exception:
                    log.exception("the follower's on_change callback failed")
            return position


__all__ = ["Follower", "OnChange"]
