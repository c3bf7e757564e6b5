"""A session known only from its agents' files: its own file is gone, or not there yet.

Claude Code's cleanup deletes old session files and can leave ``<session>/subagents/``
behind; a recorder may copy the agents' files before the session's. Such a root is known from
its agents' rows alone, and those rows are all there is to time it by: it stops at the last
row its files hold, as if its session file had ended there (provisionally, as any file's end
stops its conversation). When the agents' files go on, the root goes on from that stop and
stops again at their new end; when its session file turns up, that file's rows take over as
usual, from that same stop (:meth:`~.claude_carryover.Carryover._resume_session`), and the history
reads as one import of all the files.

Every agent file of such a session holds its root for ``--reconcile``
(:func:`~lineage_es.importers.reconcile.reconcile`): the root is deleted as ``gc`` once no
file of it remains. Once the session's own file has given a row, that file alone holds the
root (a session whose own file is gone goes with its agents).

A mixin of :class:`~.claude_session.SessionReader`, which calls it once every file is read.
"""

from __future__ import annotations

from typing import Any

from lineage_es.facts import Fact, RootSeen, Stopped
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude_rows import session_row
from lineage_es.importers.claude_carryover import Carryover
from lineage_es.importers.claude_session_state import FileState
from lineage_es.importers.walk import Found


class Fileless(Carryover):
    """Stops, takes on and holds a root its session file does not speak for."""

    #: The session's absent file, when this run took its root on from the last run's stop.
    fileless_on: FileState | None

    def _fileless_root(self) -> str | None:
        """The root of this session when no file of its own has spoken for it: its session
        file is absent and was never read, or has no row yet. ``None`` for a session whose
        file gave a row (that file stops its root) and for flat agent files of no known
        session."""
        group = self.group
        if group.key.startswith("flat:"):
            return None
        rel = group.main.rel if group.main is not None else f"{group.key}.jsonl"
        entry = self.entries.get(rel) or self.ledger.entry(rel)
        if entry is not None and entry.get("speaker"):
            return None
        return group.session

    def _fileless_goes_on(self) -> None:
        """Before the agents' files are read: a root the last run stopped at their end goes
        on from that stop when any of them changed, as a session file that goes on takes
        its root on before its agents' files are read (what that stop would have stopped
        them with is then not observed again). Where that sorts is known once they are read
        (:meth:`_end_fileless`)."""
        session, since = self._fileless_root(), self.fileless_stop
        if session is None or since is None:
            return
        if all(self.ledger.unchanged(found) for found in self.group.agents):
            return
        anchor = self._fileless_file(0)
        row = session_row(session, fileless="on", since=since.isoformat())
        self._resume_session(anchor, 0, row | {"files": self._agent_file_sizes()}, session, since)
        self.fileless_on = anchor

    def _start_fileless(self) -> None:
        """Date a root known only from its agents' files from their earliest first row: an
        agent file found later that starts earlier than any read before (its first rows
        were not there, or it was) shows the root started there, as one import of all the
        files has it, and the root is seen then (the domain re-dates its start)."""
        session = self._fileless_root()
        if session is None:
            self.fileless_from = None
            return
        firsts = [
            file.first_at
            for file in self.files
            if file.kind != "main" and not file.internal and file.root == session
            if file.first_at is not None
        ]
        if not firsts:
            return
        first, known = min(firsts), self.fileless_from
        if known is not None and first < known:
            anchor = self._fileless_file(0)
            row = session_row(session, fileless="from", at=first.isoformat())
            seen: list[Fact] = [RootSeen(session)]
            keyed = row | {"files": self._agent_file_sizes()}
            self._observe_at_row(
                anchor, 0, keyed, session, session, seen, at=first, key_suffix="from"
            )
        if known is None or first < known:
            self.fileless_from = first

    def _end_fileless(self) -> None:
        """Stop a root known only from its agents' files at the last row they hold (each
        agent file's own end: none of their rows is later), after everything else observed
        then. When it went on from the last run's stop (:meth:`_fileless_goes_on`), that
        sorts at the first row this run read (or at the stop, if earlier), and the new stop
        after it."""
        session = self._fileless_root()
        if session is None:
            return
        ends = [
            at
            for entry in self._agent_entries()
            if entry.get("speaker") and entry.get("root") == session
            for at in [parse_time(entry.get("at"))]
            if at is not None
        ]
        on = self.fileless_on
        since = self.fileless_stop
        if not ends or (on is None and since is not None and max(ends) <= since):
            return
        end = order = max(ends)
        if on is not None and on.extra:
            index = on.extra[0]
            when, rank, place, observation = self.timed[index]
            when = min([when, *(file.first_at for file in self.files if file.first_at)])
            self.timed[index] = (when, rank, place, observation)
            order = max(end, when)
        last = self._fileless_file(len(self.group.agents) + 1)
        row = session_row(session, fileless="end", at=end.isoformat())
        stop: list[Fact] = [Stopped(conversation=session, provisional=True)]
        self._observe_at_row(
            last,
            0,
            row | {"files": self._agent_file_sizes()},
            session,
            session,
            stop,
            at=order,
            dated=end,
            key_suffix="end",
            tag="end",
        )
        self.fileless_stop = end

    def _agent_file_sizes(self) -> list[list[Any]]:
        """The agents' files as this run found them (what a stop or a resume of their root
        is keyed by besides its time: the files change between two, the time may not)."""
        return sorted([found.rel, found.size] for found in self.group.agents)

    def _hold_fileless_root(self) -> None:
        """Every agent file of a session no file of its own speaks for holds its root (for
        ``--reconcile``), and so does the session's file while it is on disk with no row yet
        (torn, or only rows that name no session): the root stays while any of them does.
        Once the session's file has given a row, it alone holds the root."""
        session = self._fileless_root()
        if self.group.key.startswith("flat:"):
            return
        root = session or self.group.session
        main = self.group.main
        if session is not None and main is not None:
            entry = self.entries.get(main.rel) or self.ledger.entry(main.rel)
            if entry is not None and root not in (entry.get("owns") or ()):
                self.entries[main.rel] = {**entry, "owns": sorted({*entry.get("owns", ()), root})}
        for found in self.group.agents:
            entry = self.entries.get(found.rel) or self.ledger.entry(found.rel)
            if entry is None:
                continue
            owns = set(entry.get("owns") or ())
            held = owns | {root} if session is not None else owns - {root}
            if held != owns:
                self.entries[found.rel] = {**entry, "owns": sorted(held)}

    def _agent_entries(self) -> list[dict[str, Any]]:
        """The ledger entries of this session's agent files, as this run leaves them."""
        entries = [self.entries.get(f.rel) or self.ledger.entry(f.rel) for f in self.group.agents]
        return [entry for entry in entries if entry is not None]

    def _fileless_file(self, rank: int) -> FileState:
        """The session's absent file, sorted at ``rank`` among the session's files."""
        found = Found(f"{self.group.key}.jsonl", "", 0, 0)
        return FileState(found, rank, "main", 0)
