"""The hook envelope Claude Code and Codex share, and the events they read alike.

Both name the tree's root (``session_id``) and the event (a PascalCase ``hook_event_name``);
one fired inside a child adds that child's ``agent_id``. ``SubagentStart`` and
``SubagentStop`` carry the same fields in both and mean the same, so both adapters read them
here; the adapters differ in how they tell their payloads apart and in the other events.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lineage_es.errors import PayloadError
from lineage_es.facts import ChildStarted, Fact, Host, Observation, Stopped
from lineage_es.hosts.base import checked_key, optional_str, recurs, require_str

#: The hook events both adapters read (Claude Code's adapter reads ``SessionEnd`` too, an
#: event Codex has no hook for), in the order they are installed.
SHARED_HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "SubagentStart",
    "SubagentStop",
    "Stop",
)

#: The envelope fields a ``hook.log`` line names for a payload of either host that failed.
ENVELOPE_LOG_FIELDS = ("hook_event_name", "session_id", "agent_id", "tool_name", "tool_use_id")

#: The events whose matcher is a tool name, in both hosts' configs.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})

_PASCAL_CASE = re.compile(r"[A-Z][A-Za-z]*")


def has_session_envelope(payload: Mapping[str, Any]) -> bool:
    """Whether ``payload`` is in the shared envelope: a string ``session_id`` and a PascalCase
    ``hook_event_name``, and no ``conversation_id`` (Cursor's camelCase envelope has one)."""
    event = payload.get("hook_event_name")
    return (
        isinstance(payload.get("session_id"), str)
        and isinstance(event, str)
        and _PASCAL_CASE.fullmatch(event) is not None
        and "conversation_id" not in payload
    )


def read_envelope(payload: Mapping[str, Any], host: Host) -> tuple[str, str, str, str | None]:
    """The checked envelope of ``payload``: its idempotency key, root (``session_id``), event,
    and the child it was fired in (``agent_id``; ``None`` for the root itself).
    :class:`PayloadError` when it is not an object, is nested too deep or too large, or has a
    missing or mistyped envelope field. (A plain tuple: this is on every hook's path, where
    building a named tuple class costs more than the rest of this module.)"""
    if not isinstance(payload, Mapping):
        raise PayloadError("payload must be a JSON object", host=host)
    key = checked_key(payload)  # refuses a payload nested too deep or too large
    session = require_str(payload, "session_id", host)
    event = require_str(payload, "hook_event_name", host)
    agent = optional_str(payload, "agent_id", host)
    optional_str(payload, "cwd", host)  # validated: a mistyped field is refused
    return key, session, event, agent


def subagent_facts(payload: Mapping[str, Any], event: str, host: Host) -> tuple[Fact, ...] | None:
    """The facts of a ``SubagentStart`` (the child ``agent_id`` started) or ``SubagentStop``
    (it stopped); ``None`` for any other event.

    A stop comes without an ``Acted``: a stop for a child never seen must not create it.
    (Codex fires ``SubagentStop`` at the end of every child turn; the child's next act
    resumes it.)"""
    if event == "SubagentStart":
        child = require_str(payload, "agent_id", host)
        return (ChildStarted(child=child, agent_type=optional_str(payload, "agent_type", host)),)
    if event == "SubagentStop":
        return (Stopped(conversation=require_str(payload, "agent_id", host)),)
    return None


def envelope_observation(
    payload: Mapping[str, Any],
    host: Host,
    *,
    key: str,
    root: str,
    requester: str | None,
    facts: tuple[Fact, ...],
    at: datetime | None,
) -> Observation:
    """The observation of a payload in the shared envelope: rooted at its ``session_id``; it
    recurs unless it names a tool call (``tool_use_id``)."""
    return Observation(
        host=host,
        requester=requester,
        key=key,
        facts=facts,
        root=root,
        workspace=(),  # roots are scoped by workspace for Cursor only
        at=at,
        recurs=recurs(payload, ("tool_use_id",)),
    )
