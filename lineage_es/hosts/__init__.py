"""Host adapters: the only code that knows each host's field names, events and files.

``adapter("claude")`` gives the Claude Code adapter, its module imported when first asked
for (a hook process loads only its own host's); :mod:`.detect` tells which host a hook
payload is from and which form a recorded file is in.
"""

from __future__ import annotations

from functools import cache

from lineage_es.errors import UnknownHost
from lineage_es.facts import HOSTS
from lineage_es.hosts.base import HostAdapter


@cache
def adapter(host: str) -> HostAdapter:
    """The adapter for ``host``; :class:`UnknownHost` for a name we do not know."""
    if host == "claude":
        from lineage_es.hosts.claude import ClaudeAdapter

        return ClaudeAdapter()
    if host == "codex":
        from lineage_es.hosts.codex import CodexAdapter

        return CodexAdapter()
    if host == "cursor":
        from lineage_es.hosts.cursor import CursorAdapter

        return CursorAdapter()
    raise UnknownHost(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}")


def adapters() -> tuple[HostAdapter, ...]:
    """Every host's adapter, in the order of :data:`~lineage_es.facts.HOSTS`: the order in
    which their rules for naming an MCP tool call's caller are asked
    (:meth:`~lineage_es.hosts.base.HostAdapter.caller_rule`)."""
    return tuple(adapter(host) for host in HOSTS)


def log_fields(host: str | None) -> tuple[str, ...]:
    """The payload fields a ``hook.log`` line names for a payload from ``host`` that failed:
    its adapter's :attr:`~HostAdapter.log_fields`, or, for a host we do not know, those of
    every adapter, each field after the one it follows in its own adapter's list."""
    if host in HOSTS:
        return adapter(host).log_fields
    merged: list[str] = []
    for each in adapters():
        for i, name in enumerate(each.log_fields):
            if name not in merged:
                merged.insert(merged.index(each.log_fields[i - 1]) + 1 if i else 0, name)
    return tuple(merged)


__all__ = ["HostAdapter", "adapter", "adapters", "log_fields"]
