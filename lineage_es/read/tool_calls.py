"""Which node made an MCP tool call: an index of the journal's tool-call events.

An MCP server is told its caller only indirectly (HOSTS.md 1.5, 3.5): Claude Code repeats the
id of the ``PreToolUse`` hook it fired for the call, Cursor names nobody and leaves a
``beforeMCPExecution`` window open around the call. The hooks journal those as
:class:`~lineage_es.domain.call_events.ToolCallStarted` and
:class:`~lineage_es.domain.call_events.ToolCallEnded`; this index follows just those topics of
the journal (the recorder filters them, so a call costs the entries journaled since the last
one) and answers, in memory, who made a call with an id, and whose windows are open for a tool
and its arguments. It is rebuilt from the journal, so every process sharing the store, and a
replay, finds the same callers.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from eventsourcing.persistence import ApplicationRecorder

from lineage_es.domain.call_events import CALL_TOPICS, ToolCallStarted
from lineage_es.read.decoding import PAGE_SIZE, originator_hex


@dataclass(frozen=True, slots=True)
class Caller:
    """A conversation of a root (its aggregate id, as the view's ``root_id``) that made a
    tool call."""

    root_id: str
    conversation: str


class ToolCallIndex:
    """The tool calls the journal holds, caught up on demand (:meth:`catch_up`)."""

    def __init__(self, recorder: ApplicationRecorder) -> None:
        self._recorder = recorder
        self._position = 0
        #: The callers of each call id (one, unless a host reused an id).
        self._by_call: dict[str, set[Caller]] = {}
        #: Open windows: (tool, canonical arguments) -> the callers with one open.
        self._windows: dict[tuple[str, str], set[Caller]] = {}

    def catch_up(self) -> int:
        """Read the tool-call events journaled since the last call; how many were read."""
        read = 0
        while True:
            page = self._recorder.select_notifications(
                start=self._position,
                limit=PAGE_SIZE,
                topics=CALL_TOPICS,
                inclusive_of_start=False,
            )
            if not page:
                return read
            for notification in page:
                state = orjson.loads(notification.state)
                caller = Caller(originator_hex(notification.originator_id), state["conversation"])
                self._apply(notification.topic, state, caller)
            read += len(page)
            self._position = page[-1].id

    def _apply(self, topic: str, state: dict[str, object], caller: Caller) -> None:
        call, tool, arguments = state.get("call"), state["tool"], state.get("arguments")
        assert isinstance(tool, str)
        if topic == ToolCallStarted.TOPIC and isinstance(call, str):
            self._by_call.setdefault(call, set()).add(caller)
            return
        window = (tool, arguments if isinstance(arguments, str) else "{}")
        if topic == ToolCallStarted.TOPIC:
            self._windows.setdefault(window, set()).add(caller)
        else:
            self._windows.get(window, set()).discard(caller)

    def callers_of(self, call: str) -> list[Caller]:
        """Who made the call with the host's id ``call`` (empty: no hook journaled it)."""
        return sorted(self._by_call.get(call, ()), key=_order)

    def open_windows(self, tool: str, arguments: str) -> list[Caller]:
        """Who has a call of ``tool`` with ``arguments`` (canonical JSON) begun and not
        returned."""
        return sorted(self._windows.get((tool, arguments), ()), key=_order)

    def windows_for(self, tool: str) -> int:
        """How many calls of ``tool`` are open, whatever their arguments."""
        return sum(len(callers) for (name, _), callers in self._windows.items() if name == tool)


def _order(caller: Caller) -> tuple[str, str]:
    return (caller.conversation, caller.root_id)


__all__ = ["Caller", "ToolCallIndex"]
