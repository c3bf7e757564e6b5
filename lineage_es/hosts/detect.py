"""Telling where input came from: which host a hook payload is from, and which form a recorded
file is in, judged by its first row.

The hook, ``lineage ingest`` and ``lineage-replay`` ask here rather than look at field names
themselves: what each host's payloads and files look like is known in :mod:`lineage_es.hosts`
alone. This module stays light (no adapter is imported until one is asked), as it lies on the
hook's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from lineage_es.errors import UnknownHost
from lineage_es.facts import Host
from lineage_es.hosts import adapter, adapters
from lineage_es.hosts.codex_rows import ROW_TYPES as _CODEX_ROW_TYPES

#: The forms a recorded file can be in: bare hook payloads, the recording form of ``lineage
#: hook --record`` (``{host, at, payload}`` or ``{host, at, mcp}``), a Claude Code session
#: transcript, a Codex rollout.
Form = Literal["hooks", "recording", "claude-transcript", "codex-rollout"]

#: The host each transcript form belongs to.
FORM_HOST: dict[Form, Host] = {"claude-transcript": "claude", "codex-rollout": "codex"}

#: The ``type`` of a Claude Code transcript's rows that marks a first row as one on its own
#: (other typed rows need a ``sessionId`` or ``uuid``). Not :data:`.claude_rows.ROW_TYPES`,
#: on purpose: that is every type the importer reads (it has since grown ``last-prompt``,
#: ``tag``, ``agent-name``, ``pr-link``), and taking it here would read a file opening with
#: such a row and neither field as a transcript rather than hook payloads, as it is read now;
#: and :mod:`.claude_rows` imports Claude's adapter, which this module must not load.
_CLAUDE_ROW_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "permission-mode",
        "mode",
        "ai-title",
        "custom-title",
    }
)

#: Fields of which a Cursor payload carries at least one (its adapter recognises none that
#: lacks both): only a payload with one is worth importing Cursor's adapter for.
_CURSOR_MARKS = ("cursor_version", "conversation_id")


def payload_host(payload: Mapping[str, Any]) -> Host:
    """The host whose hook payload this is; :class:`UnknownHost` when none recognises it.

    Adapters are asked by their :attr:`~lineage_es.hosts.base.HostAdapter.detection_rank`:
    a host whose envelope is its own before one whose envelope another host borrowed."""
    for candidate in sorted(adapters(), key=lambda each: each.detection_rank):
        if candidate.recognises(payload):
            return candidate.host
    raise UnknownHost("payload is from no known host (no adapter recognises its fields)")


def hook_host(named: str, payload: Mapping[str, Any]) -> str:
    """The host a payload given to ``named``'s hook is from: ``named``, except a Cursor payload
    run through another host's hooks (Cursor loads Claude Code's hook settings as third-party
    hooks and sends its own payloads to them). Cursor's adapter is imported only for a payload
    that carries one of its marks, so the hook of another host loads nothing more."""
    if named == "cursor" or not any(mark in payload for mark in _CURSOR_MARKS):
        return named
    return "cursor" if adapter("cursor").recognises(payload) else named


def contradiction(payload: Mapping[str, Any], host: str, given: str) -> str | None:
    """Why ``payload`` cannot be ``host``'s (``given`` says where that host came from), or
    ``None`` when it can: it carries another host's own fields and none of ``host``'s. A
    payload whose host cannot be told apart (Claude and Codex share an envelope) is never
    contradicted: it takes the host given."""
    if adapter(host).own_fields(payload):
        return None
    for other in adapters():
        fields = other.own_fields(payload) if other.host != host else ()
        if fields:
            return (
                f"the payload is from {other.host}, not {host} ({given}): it carries "
                f"{other.host}'s own field{'s' if len(fields) > 1 else ''} {', '.join(fields)}"
            )
    return None


def likely_host(payload: Mapping[str, Any], previous: Host | None = None) -> Host | None:
    """The host a payload that no adapter recognises was most likely meant for, to say what
    it lacks: the one host whose own fields it carries; else by its ``hook_event_name``
    (camelCase is Cursor's; PascalCase Claude's or Codex's, the file's ``previous`` host
    breaking that tie, Claude by default); ``None`` when nothing points to a host."""
    evident = [each.host for each in adapters() if each.own_fields(payload)]
    if len(evident) == 1:
        return evident[0]
    event = payload.get("hook_event_name")
    if not isinstance(event, str) or not event[:1].isalpha():
        return None
    if event[0].islower():
        return "cursor"
    return previous if previous in ("claude", "codex") else "claude"


def is_hook_payload(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` is a bare hook payload by its shape: it names its hook event (every
    host's payloads do, as ``hook_event_name``)."""
    return "hook_event_name" in row


def row_form(first: Mapping[str, Any]) -> Form:
    """The form of a file, judged by its first row's shape: a hook payload; a recorded row
    (``host`` with ``payload`` or ``mcp``); a Codex rollout row (a rollout ``type`` and an
    object ``payload``); a Claude transcript row (a transcript ``type``, or a typed row with a
    ``sessionId`` or ``uuid``); anything else is taken for a hook payload."""
    kind = first.get("type")
    if is_hook_payload(first):
        return "hooks"
    if "host" in first and ("payload" in first or "mcp" in first):
        return "recording"
    if kind in _CODEX_ROW_TYPES and isinstance(first.get("payload"), dict):
        return "codex-rollout"
    if isinstance(kind, str) and (
        kind in _CLAUDE_ROW_TYPES or "sessionId" in first or "uuid" in first
    ):
        return "claude-transcript"
    return "hooks"


def opens_a_recording(first: Mapping[str, Any]) -> bool:
    """Whether a file whose first row is ``first`` is in a form ingest and replay read: a
    recorded, transcript or rollout row, a hook payload naming its event, or any other object
    some host's adapter recognises as its payload (the form every object falls to)."""
    if row_form(first) != "hooks" or is_hook_payload(first):
        return True
    try:
        payload_host(first)
    except UnknownHost:
        return False
    return True
