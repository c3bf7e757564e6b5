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


def contradiction(payload: Mapping[str, Any], host: str, given: str) -> str | None:
    """Why ``payload`` cannot be ``host``'s (``given`` says where that host came from), or
    ``None`` when it can: it carries another host's own fields and none of ``host``'s. A
    payload whose host cannot be told apart (Claude and Codex share an envelope) is never
    contradicted: it takes the host given."""
    if adapter(host).own_fields(payload):
        return None
    for other in HOSTS:
        fields = adapter(other).own_fields(payload) if other != host else ()
        if fields:
            return (
                f"the payload is from {other}, not {host} ({given}): it carries {other}'s own "
                f"field{'s' if len(fields) > 1 else ''} {', '.join(fields)}"
            )
    return None


def likely_host(payload: Mapping[str, Any], previous: Host | None = None) -> Host | None:
    """The host a payload that no adapter recognises was most likely meant for, to say what
    it lacks: the one host whose own fields it carries; else by its ``hook_event_name``
    (camelCase is Cursor's; PascalCase Claude's or Codex's, the file's ``previous`` host
    breaking that tie, Claude by default); ``None`` when nothing points to a host."""
    evident = [host for host in HOSTS if adapter(host).own_fields(payload)]
    if len(evident) == 1:
        return evident[0]
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or not event[:1].isalpha():
        return None
    if event[0].islower():
        return "cursor"
    return previous if previous in ("claude", "codex") else "claude"


__all__ = ["HostAdapter", "adapter", "contradiction", "detect", "likely_host"]
