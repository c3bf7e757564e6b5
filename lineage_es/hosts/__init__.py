"""Host adapters: the only code that knows each host's field names.

``adapter("claude")`` gives the Claude Code adapter; ``detect(payload)`` names the host a
native hook payload came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from lineage_es.errors import UnknownHost
from lineage_es.facts import HOSTS, Host
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


def detect(payload: Mapping[str, Any]) -> Host:
    """The host whose hook payload this is; :class:`UnknownHost` when none recognises it."""
    for host in ("cursor", "codex", "claude"):
        if adapter(host).recognises(payload):
            return adapter(host).host
    raise UnknownHost("payload is from no known host (no adapter recognises its fields)")


__all__ = ["HostAdapter", "adapter", "detect"]
