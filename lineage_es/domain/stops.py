"""Stops, session ends and resumes of a root's nodes, provisional stops among them.

A stop is provisional when an import stopped a node where its record ended: a later fact
that shows the node went on takes it back from its own time. No node outlives its root's
session end for good (LINEAGE.md), even once the root is resumed: a node live at an end is
held to it (:mod:`lineage_es.domain.lifetimes` keeps the ends).
"""

from __future__ import annotations

from datetime import datetime

from lineage_es.domain import events
from lineage_es.domain.lifetimes import LifetimeRules
from lineage_es.domain.nodes import (
    DELETED,
    LIVE,
    STOPPED,
    Located,
    before_start,
    stamp,
    stop_replaces_provisional,
    stopped_for_good,
    stopped_provisionally_before,
    stopped_provisionally_since,
    stopped_with_root_after,
)


class StopRules(LifetimeRules):
    """What stops and resumes do to a root's nodes."""

    def see_root(self, *, at: datetime, fact: str) -> None:
        """The root acted as a root again: resume it if it had stopped. A fact of the root
        itself earlier than its start (its own header, read after a child's fact created
        the root) re-dates it: each conversation starts at its first known fact."""
        self.resume(self.conversation, at=at, fact=fact)
        node = self.nodes[self.conversation]
        if node["status"] != DELETED and before_start(at, self._start_of(self.conversation)):
            self._emit(
                events.RootRedated,
                at,
                fact,
                conversation=self.conversation,
                host=self.host,
                workspace=list(self.workspace),
            )

    def resume(self, conversation: str, *, at: datetime, fact: str) -> None:
        """Resume a stopped node, found as :meth:`stop` finds it: a pending child by its
        spawn key (an import that read a file to where it then ended stopped it there, and
        takes it on when the file goes on). A fact dated before the stop (read late) resumes
        nothing; one at the stop's own time or after does, from the stop itself when that
        was provisional (the node went on: no gap).

        No node outlives its root's session end for good, even once the root is resumed: a
        descendant's fact dated while the session had ended resumes nothing (as it would have
        then); a provisional stop from before an end is taken back up to that end at most
        (:meth:`_stop_at_session_end`), and only a fact after the resume that followed it
        resumes the node again, from its own time; a node resumed before an end stops at it."""
        found = self._locate(conversation, None)
        if found is None or found.node["status"] != STOPPED:
            return
        stopped: str | None = found.node.get("stopped")  # unknown in nodes of old snapshots
        if stopped is not None and stamp(at) < stopped:
            return  # a fact from before the stop, read late: it shows nothing went on after
        if found.conversation != self.conversation and stopped is not None:
            self._resume_within_ends(found, stopped, at, fact)
            return
        if stopped is not None and found.node.get("provisional"):
            at = datetime.fromisoformat(stopped)  # it went on from where the record ended
        self._emit(events.Resumed, at, fact, conversation=conversation)

    def _resume_within_ends(self, found: Located, stopped: str, at: datetime, fact: str) -> None:
        """Resume a descendant stopped at ``stopped`` by its own fact at ``at`` (not before
        the stop), within its root's session ends for good (:meth:`resume`)."""
        moment = stamp(at)
        if self._while_ended(moment):
            return  # dated while its root's session had ended: it changes nothing, as then
        if found.node.get("provisional"):
            end = self._first_end_from(stopped)
            if end is None:  # it went on from where the record ended
                self._emit(
                    events.Resumed, datetime.fromisoformat(stopped), fact, conversation=found.name
                )
                return
            self._stop_at_session_end(found, end, fact, reported=False)  # up to that end
            if moment <= end:
                return
        self._emit(events.Resumed, at, fact, conversation=found.name)
        end = self._first_end_from(moment)
        if end is not None:  # resumed before an end its root has been resumed from since
            self._stop_with_root(found, end, fact)

    def stop(
        self,
        conversation: str | None,
        spawn_key: str | None,
        *,
        at: datetime,
        fact: str,
        provisional: bool = False,
        reported: bool = False,
    ) -> None:
        """Stop a live node (the root: its session ends).

        A node stopped provisionally (an import's stop where a file ended) moves its stop:
        to a later stop of its own, which shows it went on (it is resumed from the
        provisional stop first), unless the stop is ``reported`` by another node (a parent's
        result, a close: that says it was done by then, not that it ran until then); to an
        earlier stop when it stopped provisionally only with its root (its own record,
        read late, shows where it stopped). A node stopped for good stays as it stopped.

        No node outlives its root's session (LINEAGE.md): while the root is stopped for good
        (its session ended), a stop after that end is capped at it, for good, as the end would
        have stopped the node (:meth:`_stop_at_session_end`). A node stopped provisionally
        before an end for good its root has been resumed from since is held to that end all
        the same.

        A stop for good at the very time of a node's provisional stop replaces it: the real
        end wins."""
        found = self._locate(conversation, spawn_key)
        if found is None:
            return
        node = found.node
        later = not reported and stop_replaces_provisional(node, at, provisional)
        if found.conversation == self.conversation:
            if node["status"] == LIVE or later:
                self.end_session(at=at, fact=fact, provisional=provisional)
            return
        end = self._session_end()
        if node["status"] == STOPPED and node.get("provisional") and node.get("stopped"):
            end = self._first_end_from(node["stopped"]) or end  # the first end after its stop
        if (
            end is not None
            and stamp(at) > end
            and self._stop_at_session_end(found, end, fact, reported)
        ):
            return
        if later:
            self._take_back_provisional_stop(found, fact)
        elif node["status"] != LIVE and not stopped_with_root_after(node, at):
            return  # stopped for good, or by a stop of its own this one does not move
        self._journal_stop(found, at, fact, provisional=provisional, cascade=False)

    def end_session(self, *, at: datetime, fact: str, provisional: bool = False) -> None:
        """The root's session ended: its live descendants stop with it, deepest first, as
        provisionally as the root (an import's stop at the session file's last row). A root
        stopped provisionally before went on to here: it is resumed from that stop first.

        An end for good (not provisional) also pulls back a descendant's provisional stop at
        or after the root's end (an import read its file to a later row first): the node is
        stopped again at the end, for good, as if the end had found it live. Its stop was
        provisional, so nothing showed it ran on without its root; the new stop's own time
        keeps every instant true (a view up to a time between the two has it stopped). A
        descendant's own stop for good after the end, journaled before the end was read, is
        left where it is: a resume of the root read later may show the node went on.

        An end for good at the very time of the root's provisional stop replaces that stop
        (the real end wins), and pulls back what stopped provisionally with it."""
        root = self.nodes[self.conversation]
        replaced = stop_replaces_provisional(root, at, provisional)
        ends_now = root["status"] == LIVE or replaced
        if replaced:
            self._take_back_provisional_stop(Located(self.conversation, None, root), fact)
        end = None if provisional else stamp(at) if ends_now else self._session_end()
        for member in reversed(self._subtree(self.conversation)):
            found = self._locate(*member)
            if found is None:
                continue
            if found.node["status"] == LIVE:
                cascade = found.conversation != self.conversation
                self._journal_stop(found, at, fact, provisional=provisional, cascade=cascade)
            elif (
                end is not None
                and found.conversation != self.conversation
                and stopped_provisionally_since(found.node, end)
            ):
                self._stop_with_root(found, end, fact)

    def _stop_if_placed_after_end(
        self,
        conversation: str | None,
        spawn_key: str | None,
        at: datetime,
        fact: str,
        went_on: str | None,
    ) -> None:
        """A child just placed or re-dated, starting at ``at``, under a root whose session
        had already ended by then (a start read late): it stops with its root, at the first
        end at or after its start, for good or provisionally as that end was
        (:meth:`end_session` would have stopped it there). A child starting after every end
        stays live while its root is (its stop is its own), and is stopped at its start while
        its root's session has ended for good, as a known child's late act changes nothing
        then. A re-dated child (known from ``went_on`` until now) is :meth:`_stop_redated`."""
        found = self._locate(conversation, spawn_key)
        root = self.nodes[self.conversation]
        if found is None or root["status"] == DELETED:
            return
        if went_on is not None:
            self._stop_redated(found, stamp(at), went_on, fact)
            return
        if found.node["status"] != LIVE:
            return
        started = stamp(at)
        end = self._first_end_from(started)
        if end is not None:
            self._stop_with_root(found, end, fact)
        elif (
            root["status"] == STOPPED
            and root.get("provisional")
            and root.get("stopped", "") >= started
        ):
            self._journal_stop(found, root["stopped"], fact, provisional=True, cascade=True)
        elif stopped_for_good(root):
            # Placed after its root's session ended for good, with no resume since: a start
            # delivered late (hooks run apart). It does not outlive the end: placed, stopped.
            self._journal_stop(found, at, fact, provisional=False, cascade=True)

    def _stop_redated(self, found: Located, started: str, went_on: str, fact: str) -> None:
        """A child known from ``went_on`` was just re-dated to ``started``. Only an end for
        good between the two is new to it (it was placed after the others, or they stopped
        it then, and whatever it did since stands; after a provisional stop, it went on past
        it): it stops there, and ``went_on`` resumes it as its own fact then would
        (:meth:`_resume_within_ends`). When that act resumes it (it came after the root's
        resume), the stop is held in the past (:meth:`_hold_in_past`): what the child did
        from ``went_on`` on (its stops and resumes since, the root's later ends) stands as
        journaled. Otherwise it stays stopped at the end (its act came while the session had
        ended), and a child stopped before ``went_on`` is stopped again as that stop found
        it: its stop and its start give the same history in either order of arrival.

        Stops are journaled after the re-dating event, which alone places the child in a view
        up to a time before ``went_on`` (time travel): a stop of its own dated before
        ``went_on`` is journaled again too, so that such a view has it stopped there, as the
        aggregate has it."""
        node = found.node
        if node["status"] == DELETED:
            return
        stop: tuple[str, bool, bool] | None = None
        if node["status"] != LIVE:
            if "stopped" not in node:  # stopped before stops kept their time
                return
            stop = (node["stopped"], bool(node.get("provisional")), bool(node.get("cascade")))
        end = self._first_end_from(started)
        if end is not None and end < went_on:
            if (stop is None or stop[0] >= went_on) and not self._while_ended(went_on):
                self._hold_in_past(found, end, went_on, fact)
                return
            self._stop_with_root(found, end, fact)
            self._resume_within_ends(found, end, datetime.fromisoformat(went_on), fact)
            if node["status"] != LIVE:
                return
        elif stop is None or stop[0] >= went_on:
            return
        if stop is not None:
            self._journal_stop(found, stop[0], fact, provisional=stop[1], cascade=stop[2])

    def _hold_in_past(self, found: Located, end: str, went_on: str, fact: str) -> None:
        """A re-dated child, live or stopped since ``went_on``, was held to its root's session
        end ``end`` (for good, before ``went_on``) until its act at ``went_on`` resumed it,
        after the root's resume. Journaled as a stop held in the past (a ``Stopped`` with
        ``until``) and the resume that ends it (``restores``): neither changes the node, so
        every stop and resume it had from ``went_on`` on stands, in the current view and in
        a view replayed up to any time after ``went_on``; a view up to a time between the two
        has it stopped at the end."""
        self._journal_stop(found, end, fact, provisional=False, cascade=True, until=went_on)
        self._emit(
            events.Resumed,
            datetime.fromisoformat(went_on),
            fact,
            conversation=found.name,
            restores=True,
        )

    def _stop_at_session_end(self, found: Located, end: str, fact: str, reported: bool) -> bool:
        """Stop a node of a root whose session ended for good at ``end`` there, not at a
        later stop: a live node that started by then; a node stopped provisionally before
        it, when the later stop is its own (it went on, up to the end at most: resumed from
        its stop first); a node stopped provisionally at or after the end (kept there).
        Whether the stop was dealt with (a reported stop leaves an earlier provisional stop
        where it was); ``False`` leaves it to :meth:`stop` (a node placed after the end, one
        stopped for good)."""
        node = found.node
        moment = datetime.fromisoformat(end)
        if node["status"] == LIVE:
            if before_start(moment, node.get("started")):
                return False  # started after its root's end: its stop is its own
        elif stopped_provisionally_before(node, moment):
            if reported:
                return True
            self._take_back_provisional_stop(found, fact)
        elif not stopped_provisionally_since(node, end):
            return False
        self._stop_with_root(found, end, fact)
        return True

    def _stop_with_root(self, found: Located, end: str, fact: str) -> None:
        """Stop a descendant for good at its root's session end ``end``."""
        self._journal_stop(found, end, fact, provisional=False, cascade=True)

    def _journal_stop(
        self,
        found: Located,
        at: datetime | str,
        fact: str,
        *,
        provisional: bool,
        cascade: bool,
        until: str | None = None,
    ) -> None:
        """Journal a stop of the node ``found`` at ``at``."""
        self._emit(
            events.Stopped,
            datetime.fromisoformat(at) if isinstance(at, str) else at,
            fact,
            conversation=found.conversation,
            spawn_key=found.spawn_key,
            provisional=provisional,
            cascade=cascade,
            until=until,
        )

    def _take_back_provisional_stop(self, found: Located, fact: str) -> None:
        """Resume a node from its provisional stop, which a later stop moves."""
        stopped = datetime.fromisoformat(found.node["stopped"])
        self._emit(events.Resumed, stopped, fact, conversation=found.name)
