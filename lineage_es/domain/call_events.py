"""The events of a root that say which of its nodes made an MCP tool call.

They sit beside :mod:`lineage_es.domain.events` (module level, explicit stable topics, carried
by :class:`~lineage_es.domain.root.RootLineage` as attributes) and change nothing in the tree:
an MCP server reads them from the journal to tell who is calling it
(:mod:`lineage_es.read.tool_calls`), so every process sharing the store, and a replay, tells the
same caller. They name no host field: a call is a conversation, a tool, and the host's id for
the call or the call's arguments.
"""

from __future__ import annotations

from lineage_es.domain.events import RootEvent
from lineage_es.domain.state import LineageState


def window_of(conversation: str, tool: str, arguments: str | None) -> str:
    """The one key of a call begun with no id: its caller, tool and arguments."""
    return "\n".join((conversation, tool, arguments or "{}"))


class ToolCallStarted(RootEvent):
    """``conversation`` began calling ``tool``: ``call`` is the host's id for the call, when
    it gives one; ``arguments`` the call's arguments as canonical JSON, when it gives them and
    no id."""

    TOPIC = "lineage:RootLineage.ToolCallStarted"
    conversation: str
    tool: str
    call: str | None
    arguments: str | None

    def change(self, aggregate: LineageState) -> None:
        if self.call is None:
            window = window_of(self.conversation, self.tool, self.arguments)
            aggregate.tool_windows()[window] = self.fact


class ToolCallEnded(RootEvent):
    """The call of ``tool`` with ``arguments`` that ``conversation`` began (with no id) has
    returned."""

    TOPIC = "lineage:RootLineage.ToolCallEnded"
    conversation: str
    tool: str
    arguments: str | None

    def change(self, aggregate: LineageState) -> None:
        """The window closes, and the payload that opened it counts as seen in an ended
        lifetime: a hook payload carries no time, so the same call made again (the same tool
        and arguments, in the same turn) is byte for byte the same payload, and must open its
        window again rather than be taken for a duplicate delivery."""
        opened = aggregate.tool_windows().pop(
            window_of(self.conversation, self.tool, self.arguments), None
        )
        if opened is not None and opened in aggregate.seen:
            aggregate.seen[opened] = 0


#: The topics an MCP caller index follows.
CALL_TOPICS = (ToolCallStarted.TOPIC, ToolCallEnded.TOPIC)
