"""Who is calling an MCP server: its caller's lineage, told from journaled facts only.

Each host names an MCP tool call's caller its own way (HOSTS.md 1.5, 2.1, 3.5):

- Codex states the calling thread in ``_meta`` (``x-codex-turn-metadata``, ``threadId``):
  answered by :meth:`~lineage_es.engine.engine.Engine.resolve`, as before.
- Claude Code repeats, as ``_meta["claudecode/toolUseId"]``, the ``tool_use_id`` of the
  ``PreToolUse`` hook it fired for this very call; that hook journaled the id with its caller.
- Cursor names nobody: its ``beforeMCPExecution`` hook journaled a window for the tool and its
  arguments, which ``afterMCPExecution`` closes; a call matches the open windows for its tool
  and arguments, and only one conversation among them names the caller.

Anything else (an id no hook journaled, several Cursor candidates, no ``_meta`` and no
window) is :class:`CallerUnknown`, whose message says why: never a guess. Every answer says
how its caller was identified (:attr:`Identified.resolution`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lineage_es import hosts
from lineage_es.errors import LineageError
from lineage_es.hosts.base import canonical_arguments
from lineage_es.hosts.claude import MCP_CALL_META
from lineage_es.model import AgentLineage
from lineage_es.read.tool_calls import Caller, ToolCallIndex

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

#: How a caller was identified, per host.
BY_CLAUDE_TOOL_USE = "claude:toolUseId"
BY_CODEX_META = "codex:_meta"
BY_CURSOR_WINDOW = "cursor:beforeMCPExecution"

#: Ids a message names at most when it lists candidates.
_LISTED = 5


class CallerUnknown(LineageError):
    """An MCP tool call whose caller the journal cannot name; the message says why."""


@dataclass(frozen=True, slots=True)
class Identified:
    """An MCP tool call's caller: its lineage with its live tree, and how it was told
    (``claude:toolUseId``, ``codex:_meta`` or ``cursor:beforeMCPExecution``)."""

    lineage: AgentLineage
    resolution: str


class CallerFinder:
    """Identifies the callers of an MCP server's tool calls from ``engine``'s journal."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.index = ToolCallIndex(engine.app.recorder)

    def identify(
        self, meta: Mapping[str, Any] | None, tool: str, arguments: Mapping[str, Any] | None
    ) -> Identified:
        """The caller of a call of ``tool`` with ``arguments`` and ``meta`` (its ``_meta``);
        :class:`CallerUnknown` saying why when it cannot be told."""
        meta = meta or {}
        call = meta.get(MCP_CALL_META)
        if call is not None:
            if not isinstance(call, str) or not call:
                raise CallerUnknown(f"_meta[{MCP_CALL_META!r}] must be a non-empty string")
            return self._by_tool_use(call)
        if hosts.adapter("codex").meta_names_thread(meta):
            lineage = self.engine.resolve("codex", meta)
            assert lineage is not None  # a _meta naming a thread is claimed
            return Identified(lineage, BY_CODEX_META)
        return self._by_window(tool, canonical_arguments(arguments))

    def _by_tool_use(self, call: str) -> Identified:
        self.index.catch_up()
        found = self.index.callers_of(call)
        if not found:
            raise CallerUnknown(
                f"no PreToolUse hook journaled the tool call {call!r} named by "
                f"_meta[{MCP_CALL_META!r}]: is `lineage install-hooks claude` installed, "
                "writing to the store this server reads?"
            )
        if len({c.conversation for c in found}) > 1:
            raise CallerUnknown(
                f"the tool call {call!r} was journaled by several conversations "
                f"({_listed(found)}): its caller cannot be told"
            )
        return Identified(self._lineage(found[0]), BY_CLAUDE_TOOL_USE)

    def _by_window(self, tool: str, arguments: str) -> Identified:
        self.index.catch_up()
        found = self.index.open_windows(tool, arguments)
        if not found:
            others = self.index.windows_for(tool)
            detail = (
                f"{others} open beforeMCPExecution window(s) for {tool!r} have other arguments"
                if others
                else f"no open Cursor beforeMCPExecution window is journaled for {tool!r}"
            )
            raise CallerUnknown(
                "the caller cannot be identified: _meta names none (no "
                f"{MCP_CALL_META!r}, no Codex thread) and {detail}"
            )
        if len(found) > 1:
            raise CallerUnknown(
                f"{len(found)} conversations have a call of {tool!r} with these arguments open "
                f"({_listed(found)}): which one is calling cannot be told"
            )
        return Identified(self._lineage(found[0]), BY_CURSOR_WINDOW)

    def _lineage(self, caller: Caller) -> AgentLineage:
        """The lineage, with its live tree, of a caller the index names."""
        self.engine.catch_up()
        rows = self.engine.view.root_rows(caller.root_id)
        host = rows[0].host if rows else None
        return self.engine.lineage(caller.conversation, host)


def _listed(callers: list[Caller]) -> str:
    names = [repr(c.conversation) for c in callers[:_LISTED]]
    more = len(callers) - _LISTED
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")


__all__ = [
    "BY_CLAUDE_TOOL_USE",
    "BY_CODEX_META",
    "BY_CURSOR_WINDOW",
    "CallerFinder",
    "CallerUnknown",
    "Identified",
]
