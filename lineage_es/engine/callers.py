"""Who is calling an MCP server: its caller's lineage, told from journaled facts only.

Each host names an MCP tool call's caller its own way (HOSTS.md 1.5, 2.1, 3.5), and its
adapter states that rule (:meth:`~lineage_es.hosts.base.HostAdapter.caller_rule`): a tool-use
id that a hook journaled with its caller (Claude Code), a thread the ``_meta`` names (Codex),
or the one window a hook left open for the call's tool and arguments (Cursor). The adapters
are asked in the order of the one list of hosts; a rule read from ``_meta`` is taken at
once, and a rule that reads nothing from it (a window) only when no host's ``_meta`` names
the caller.

Anything else (an id no hook journaled, several candidates, no ``_meta`` and no window) is
:class:`CallerUnknown`, whose message says why: never a guess. Every answer says how its
caller was identified (:attr:`Identified.resolution`, the rule's label).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lineage_es import hosts
from lineage_es.errors import LineageError
from lineage_es.hosts.base import CallerRule, HostAdapter, canonical_arguments
from lineage_es.model import AgentLineage
from lineage_es.read.tool_calls import Caller, ToolCallIndex

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

#: Ids a message names at most when it lists candidates.
_LISTED = 5


class CallerUnknown(LineageError):
    """An MCP tool call whose caller the journal cannot name; the message says why."""


@dataclass(frozen=True, slots=True)
class Identified:
    """An MCP tool call's caller: its lineage with its live tree, and how it was told (the
    label of the rule that told it: ``claude:toolUseId``, ``codex:_meta`` or
    ``cursor:beforeMCPExecution``)."""

    lineage: AgentLineage
    resolution: str


class CallerFinder:
    """Identifies the callers of an MCP server's tool calls from ``engine``'s journal, by the
    rules of ``adapters`` (every host's, in the order of the one list of hosts)."""

    def __init__(self, engine: Engine, adapters: Sequence[HostAdapter] | None = None) -> None:
        self.engine = engine
        self.index = ToolCallIndex(engine.app.recorder)
        self.adapters = tuple(hosts.adapters() if adapters is None else adapters)

    def identify(
        self,
        meta: Mapping[str, Any] | None,
        tool: str,
        arguments: Mapping[str, Any] | None,
        *,
        host: str | None = None,
    ) -> Identified:
        """The caller of a call of ``tool`` with ``arguments`` and ``meta`` (its ``_meta``), by
        every host's rule, or only by ``host``'s when the call is known to be that host's (a
        recorded one); :class:`CallerUnknown` saying why when it cannot be told."""
        meta = meta or {}
        window: tuple[HostAdapter, CallerRule] | None = None
        for adapter in self.adapters:
            if host is not None and adapter.host != host:
                continue
            rule = adapter.caller_rule(meta)
            if rule is None:
                continue
            if rule.kind == "window":
                window = window or (adapter, rule)
            elif rule.kind == "tool_use":
                return self._by_tool_use(adapter, rule)
            elif rule.kind == "thread":
                lineage = self.engine.resolve(adapter.host, meta)
                assert lineage is not None  # a _meta naming a thread is claimed
                return Identified(lineage, rule.resolution)
            else:
                raise CallerUnknown(rule.subject)
        if window is None:
            raise CallerUnknown(f"the caller cannot be identified: {self._unnamed()}")
        adapter, rule = window
        return self._by_window(adapter, rule, tool, canonical_arguments(arguments))

    def _by_tool_use(self, adapter: HostAdapter, rule: CallerRule) -> Identified:
        call = rule.subject
        self.index.catch_up()
        found = self.index.callers_of(call)
        if not found:
            raise CallerUnknown(
                f"no {rule.hook} hook journaled the tool call {call!r} named by "
                f"_meta[{rule.meta_field!r}]: is `lineage install-hooks {adapter.host}` "
                "installed, writing to the store this server reads?"
            )
        if len({c.conversation for c in found}) > 1:
            raise CallerUnknown(
                f"the tool call {call!r} was journaled by several conversations "
                f"({_listed(found)}): its caller cannot be told"
            )
        return Identified(self._lineage(found[0]), rule.resolution)

    def _by_window(
        self, adapter: HostAdapter, rule: CallerRule, tool: str, arguments: str
    ) -> Identified:
        self.index.catch_up()
        found = self.index.open_windows(tool, arguments)
        if not found:
            others = self.index.windows_for(tool)
            detail = (
                f"{others} open {rule.hook} window(s) for {tool!r} have other arguments"
                if others
                else f"no open {adapter.display_name} {rule.hook} window is journaled for {tool!r}"
            )
            raise CallerUnknown(f"the caller cannot be identified: {self._unnamed()} and {detail}")
        if len(found) > 1:
            raise CallerUnknown(
                f"{len(found)} conversations have a call of {tool!r} with these arguments open "
                f"({_listed(found)}): which one is calling cannot be told"
            )
        return Identified(self._lineage(found[0]), rule.resolution)

    def _unnamed(self) -> str:
        """What a ``_meta`` that names no caller lacks, by every host that names one there."""
        lacks = ", ".join(f"no {a.caller_meta}" for a in self.adapters if a.caller_meta)
        return f"_meta names none ({lacks})" if lacks else "_meta names none"

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
    "CallerFinder",
    "CallerUnknown",
    "Identified",
]
