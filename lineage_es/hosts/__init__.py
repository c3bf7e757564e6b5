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
    """Every host's adapter, in the order of :data:`~lineage_es.facts.HOSTS`."""
    return tuple(adapter(host) for host in HOSTS)


__all__ = ["HostAdapter", "adapter", "adapters"]
