"""Where a file's end stops its conversation, and agents that go on after something else
stopped them.

A file's last timestamped row stops its conversation (provisionally: the file may go on), under
a key of the row's own plus where it stands. An agent stopped by another file's row (its
parent's result or notification, the root's last row) that still writes rows later acts again
at the first such row. A mixin of :class:`~.claude_session.SessionReader`, which calls it
once a file's last row is known and once every file of the session is read.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import orjson

from lineage_es.facts import Acted, Fact, Stopped
from lineage_es.hosts.claude_rows import row_time
from lineage_es.importers.claude_session_state import FileState, SessionState
from lineage_es.importers.lines import Skips, read_lines

_EARLIEST = datetime.min.replace(tzinfo=UTC)


class FileStops(SessionState):
    """Stops a file's conversation at its last row, and has agents act again after stops."""

    def _observe_file_stop(
        self, file: FileState, offset: int, row: dict[str, Any], at: datetime
    ) -> None:
        """Stop the file's conversation at its last row, under a key of the row's own plus
        where it stands (a resumed session copies its old rows verbatim, and the copy of a
        row that stopped the file in an earlier run must stop it again): with the row's own
        facts, or apart when the stop comes later than the row (rows out of time order)."""
        assert file.speaker is not None
        stop: list[Fact] = [Stopped(conversation=file.speaker, provisional=True)]
        tag = "end" if file.kind == "main" else "own"
        suffix = f"stop@{offset}"
        index = file.emitted.get(offset)
        # A stop stamped before the resume that took the last run's stop back sorts after
        # it (the conversation went on, then stopped), dated at its row all the same.
        order = max(at, file.went_on) if file.went_on is not None else at
        if order != at or (index is not None and self.timed[index][0] != at):
            self._observe_at_row(
                file,
                offset,
                row,
                file.speaker,
                file.root,
                stop,
                at=order,
                key_suffix=suffix,
                last=True,
                tag=tag,
                dated=at,
            )
            return
        self._observe_at_row(file, offset, row, file.speaker, file.root, stop, at=at)
        index = file.emitted.get(offset)
        if index is None:
            return
        when, rank, place, observation = self.timed[index]
        key = f"{observation.key}:{suffix}"
        self.timed[index] = (when, rank, place, replace(observation, key=key))
        self.kinds[index] = tag

    # -- agents that go on after something stopped them -----------------------------------------

    def _acting_after_stops(self) -> None:
        """An agent stopped by another file's row (its parent's result or notification, the
        root's last row) that still writes rows later acts again at the first such row."""
        stops: dict[str, list[datetime]] = {}
        root_end: datetime | None = None
        for index, (order, _, _, observation) in enumerate(self.timed):
            tag = self.kinds.get(index, "")
            when = observation.at or order  # a stop's own time, wherever it sorts
            for fact in observation.facts:
                if not isinstance(fact, Stopped):
                    continue
                target = fact.conversation or self.spawns.spawned.get(fact.spawn_key or "")
                if target is None:
                    continue
                if target == observation.requester and tag == "own":
                    continue  # a file's end stops its own agent: it writes no later row
                if target == observation.requester and tag == "end":
                    root_end = when
                else:
                    stops.setdefault(target, []).append(when)
        for file in self.files:
            if file.kind == "main" or file.agent is None or file.last_at is None:
                continue
            first = file.first_at or _EARLIEST
            times = sorted(
                t
                for t in [*stops.get(file.agent, []), *([root_end] if root_end else [])]
                if first <= t < file.last_at
            )
            if times:
                self._act_again(file, times)

    def _act_again(self, file: FileState, times: list[datetime]) -> None:
        """Observe the agent acting at its first row after each of ``times``, no later than
        its file's stop (rows are not always in time order: a row stamped after the file's
        last one would leave the agent live past its own end)."""
        agent = file.agent
        assert agent is not None
        waiting = list(times)
        try:
            with open(file.found.path, "rb") as stream:
                stream.seek(file.start)
                offset = file.start
                for raw, size, complete in read_lines(stream, Skips()):
                    here, offset = offset, offset + size
                    if not waiting or not complete:
                        return
                    try:
                        row = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        continue
                    at = row_time(row) if isinstance(row, dict) else None
                    if at is None or at <= waiting[0]:
                        continue
                    while waiting and waiting[0] < at:
                        waiting.pop(0)
                    when = min(at, file.last_at) if file.last_at else at
                    self._observe_at_row(file, here, row, agent, file.root, [Acted(agent)], at=when)
        except OSError:
            return
