"""A root's lifetimes and session ends: which deliveries are duplicates, and when the root's
session was over.

A lifetime of the root ends whenever one of its nodes stops or resumes (the root's own session
ending or resuming included); ``lifetime`` counts them from 1. An observation that can recur
(:attr:`~lineage_es.facts.Observation.recurs`, hook payloads) is a duplicate only if its key
was seen in the current lifetime; any other only if it was ever seen: hook payloads carry no
time, so a fact that truly happens again later (a session that ends the same way after a
resume, a subagent that stops again after it was resumed) is byte-identical to the first.
The lifetime is derived from the events alone (they carry no lifetime number), so replaying a
journal, old or new, gives the same one. Trade-off accepted: a duplicate delivered late, after
a node of its root stopped or resumed, cannot be told from the fact happening again unless it
carries the time it was recorded (:meth:`LifetimeRules.has_seen`), and is applied again.

Session ends: no node outlives its root's session end for good (a provisional stop is no
end). The root's node keeps, under ``gaps``, each such end that a real resume followed, as
``[end, resume]``, and a node is held to the first end at or after the time in question
whether the root has been resumed since or not (:meth:`LifetimeRules._first_end_from`).
"""

from __future__ import annotations

from datetime import datetime

from lineage_es.domain.nodes import STOPPED, stamp
from lineage_es.domain.state import LineageState


class LifetimeRules(LineageState):
    """Duplicate deliveries, and the root's session ends for good."""

    def has_seen(self, fact: str, *, recurs: bool = False, at: datetime | None = None) -> bool:
        """Whether an observation with key ``fact`` already changed this root: ever, or, for
        a payload that can recur (``recurs``), in its current lifetime (a duplicate delivery;
        one seen in an earlier lifetime may have happened again), or in an earlier lifetime
        whose facts it cannot have followed, by its time ``at``: a recorded payload delivered
        again (a recording ingested twice) keeps the time it was recorded, so it is that
        payload again when dated before the change that ended its lifetime, or no later than
        the last fact seen in that lifetime. At the very instant of the change, the payload
        seen then is the same payload at the same time; one seen earlier and now dated then is
        not a copy of its recording (that would carry the earlier time), and happens again.
        The last fact's time also holds when the change was dated back before it (a stop
        capped at its root's end). A live hook's time is when it was received, so its late
        duplicate still counts as happening again (a clock set back between the change and a
        true repeat would swallow the repeat)."""
        if not recurs:
            return fact in self.seen
        seen = self.seen.get(fact)
        if seen is None:
            return False
        if seen == self.lifetime:
            return True
        if at is None or not 0 < seen < len(self.began):
            return False  # lifetime 0: an ended lifetime of a root it left (``adopt``)
        moment = stamp(at)
        ended = self.began[seen]  # when the lifetime after the one it was seen in began
        last = self.latest[seen - 1] if seen <= len(self.latest) else None
        return (ended is not None and moment < ended) or (last is not None and moment <= last)

    def _session_end(self) -> str | None:
        """When the root's session ended for good: its stop's time while it is stopped and the
        stop is not provisional. ``None`` while it is live (a resume after an end starts a new
        lifetime: its descendants may run again), stopped provisionally, or stopped before
        stops kept their time (old snapshots)."""
        root = self.nodes[self.conversation]
        if root["status"] != STOPPED or root.get("provisional", True):
            return None
        stopped: str | None = root.get("stopped")
        return stopped

    def _session_ends(self) -> list[tuple[str, str | None]]:
        """The root's session ends for good, each with the real resume that followed it
        (``None`` for the end it is stopped at now)."""
        root = self.nodes[self.conversation]
        ends: list[tuple[str, str | None]] = [
            (end, resumed) for end, resumed in root.get("gaps", ())
        ]
        current = self._session_end()
        if current is not None:
            ends.append((current, None))
        return ends

    def _first_end_from(self, moment: str) -> str | None:
        """The first of the root's session ends for good at or after ``moment``, resumed
        since or not: a node live at ``moment`` did not run past it."""
        return min((end for end, _ in self._session_ends() if end >= moment), default=None)

    def _while_ended(self, moment: str) -> bool:
        """Whether ``moment`` falls after one of the root's session ends for good and before
        the real resume that followed it, if any."""
        return any(
            end < moment and (resumed is None or moment < resumed)
            for end, resumed in self._session_ends()
        )
