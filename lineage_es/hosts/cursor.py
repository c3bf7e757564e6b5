"""Cursor hook payloads as host-neutral observations.

Cursor names only the sender's ``conversation_id``: never its root, never its parent. A subagent
is a fresh conversation whose events carry no marker, so the engine binds it by order to the
oldest pending ``subagentStart`` in the same workspace. Only root-only events may start a root
(quirk 7): any other event from an unknown conversation is a child not bound yet.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lineage_es.errors import PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Claim,
    Fact,
    Host,
    Observation,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
    ToolCalled,
    ToolReturned,
)
from lineage_es.hosts.base import (
    CallerRule,
    HookFile,
    canonical_arguments,
    checked_key,
    nested_str,
    optional_str,
    recurs,
    require_str,
)

HOST: Host = "cursor"

#: Events only a root conversation fires (quirk 7): one from a conversation bound to a spawn by
#: order undoes that binding. ``sessionEnd`` also ends the root's session.
ROOT_EVENTS = frozenset({"sessionStart", "beforeSubmitPrompt", "stop", "preCompact", "sessionEnd"})

#: The conversation id an empty window sends before any chat exists: not a lasting root.
PLACEHOLDER_CONVERSATION = "empty-state-draft"

SPAWN_TOOL = "Task"

#: The hooks around each MCP tool call: the window in which a call is matched to its caller.
MCP_WINDOW_EVENTS = frozenset({"beforeMCPExecution", "afterMCPExecution"})

#: How an answer says its caller was told by the one window open for the call.
BY_WINDOW = "cursor:beforeMCPExecution"

_CAMEL_CASE = re.compile(r"[a-z][A-Za-z]*")

#: Envelope fields no other host sends.
_OWN_FIELDS = ("conversation_id", "cursor_version", "generation_id", "workspace_roots")


def unwrap_fixture(obj: Any) -> dict[str, Any]:
    """The Cursor payload a fusengine/harness fixture wraps under ``stdin``."""
    if not isinstance(obj, dict):
        raise PayloadError("fixture must be a JSON object", host=HOST)
    payload = obj.get("stdin")
    if not isinstance(payload, dict):
        raise PayloadError("fixture has no 'stdin' object holding the payload", host=HOST)
    return payload


#: Fields naming a tool call or the subagent it started: a payload with one happens once.
_ONCE_FIELDS = ("tool_use_id", "subagent_id", "tool_call_id")


class CursorAdapter:
    """Turns Cursor hook payloads into observations."""

    host: Host = HOST
    mcp_meta = False
    hook_events: tuple[str, ...] = (
        "sessionStart",
        "beforeSubmitPrompt",
        "preToolUse",
        "subagentStart",
        "subagentStop",
        "beforeMCPExecution",
        "afterMCPExecution",
        "stop",
        "sessionEnd",
    )
    tool_events: frozenset[str] = frozenset()  # Cursor's entries take no matcher
    tool_matchers: Mapping[str, str] = {}
    hook_file = HookFile(".cursor", "hooks.json", folder_env=None, grouped=False)
    log_fields: tuple[str, ...] = (
        "hook_event_name",
        "session_id",
        "conversation_id",
        "subagent_id",
        "tool_name",
        "tool_use_id",
    )
    meta_thread_fields = ""
    caller_meta = ""
    #: The window around each MCP call, opened and closed by these two hooks.
    mcp_caller_hooks: tuple[str, ...] = ("beforeMCPExecution", "afterMCPExecution")
    display_name = "Cursor"
    #: Asked first: Cursor's envelope is its own (and Cursor also sends its payloads to
    #: Claude Code's hooks, which it runs as third-party hooks).
    detection_rank = 0

    def recognises(self, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` is a Cursor hook payload: a ``conversation_id`` with a camelCase
        ``hook_event_name``, or a ``cursor_version``."""
        if not isinstance(payload, Mapping):
            return False
        if isinstance(payload.get("cursor_version"), str):
            return True
        event = payload.get("hook_event_name")
        return (
            isinstance(payload.get("conversation_id"), str)
            and isinstance(event, str)
            and _CAMEL_CASE.fullmatch(event) is not None
        )

    def own_fields(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        """The fields only Cursor sends: its envelope's ``conversation_id``, ``cursor_version``,
        ``generation_id``, ``workspace_roots``, and a camelCase ``hook_event_name`` (Claude's
        and Codex's are PascalCase)."""
        if not isinstance(payload, Mapping):
            return ()
        found = [field for field in _OWN_FIELDS if payload.get(field) is not None]
        event = payload.get("hook_event_name")
        if isinstance(event, str) and _CAMEL_CASE.fullmatch(event):
            found.append("hook_event_name")
        return tuple(found)

    def observe(self, payload: Mapping[str, Any], *, at: datetime | None = None) -> Observation:
        """What one hook payload means; :class:`PayloadError` when it cannot be understood."""
        if not isinstance(payload, Mapping):
            raise PayloadError("payload must be a JSON object", host=HOST)
        key = checked_key(payload)  # refuses a payload nested too deep or too large
        conversation = require_str(payload, "conversation_id", HOST)
        event = require_str(payload, "hook_event_name", HOST)
        workspace = _workspace(payload)
        if conversation == PLACEHOLDER_CONVERSATION:
            return Observation(host=HOST, requester=None, key=key, workspace=workspace, at=at)
        return Observation(
            host=HOST,
            requester=conversation,
            key=key,
            facts=_event_facts(payload, event, conversation),
            workspace=workspace,
            at=at,
            recurs=recurs(payload, _ONCE_FIELDS),
        )

    def claim(self, meta: Mapping[str, Any]) -> Claim | None:
        """Cursor puts no lineage in an MCP tool call's ``_meta``."""
        return None

    def meta_names_thread(self, meta: Mapping[str, Any]) -> bool:
        """Cursor's ``_meta`` names no conversation."""
        return False

    def caller_rule(self, meta: Mapping[str, Any]) -> CallerRule | None:
        """Cursor's ``_meta`` names nobody: an MCP tool call's caller is the one conversation
        whose ``beforeMCPExecution`` hook opened a window, not yet closed by
        ``afterMCPExecution``, for the call's tool and arguments (HOSTS.md 3.5). The rule
        reads nothing from ``_meta``, so it applies to every call."""
        return CallerRule("window", BY_WINDOW, hook="beforeMCPExecution")

    def caller_meta_problem(self, meta: Mapping[str, Any]) -> str | None:
        """A Cursor call is matched by its tool and arguments (HOSTS.md 3.5): any ``_meta``
        will do."""
        return None


def _event_facts(payload: Mapping[str, Any], event: str, conversation: str) -> tuple[Fact, ...]:
    """What one event from ``conversation`` means."""
    if event == "sessionEnd":
        # Seen as a root first, so a child bound by order is a root again before its end.
        return (RootSeen(conversation, source=event), SessionEnded(conversation))
    if event in ROOT_EVENTS:
        return (RootSeen(conversation, source=event),)
    if event == "subagentStart":
        spawn_key = _subagent_id(payload)
        return (
            ChildStarted(
                spawn_key=spawn_key,
                # It arrives on the parent's conversation, which older builds may not name.
                parent=optional_str(payload, "parent_conversation_id", HOST) or conversation,
                agent_type=optional_str(payload, "subagent_type", HOST),
                subagent_id=spawn_key,
            ),
        )
    if event == "subagentStop":
        return (Stopped(spawn_key=_subagent_id(payload)),)
    if event == "preToolUse" and optional_str(payload, "tool_name", HOST) == SPAWN_TOOL:
        return (Acted(conversation), *_task_facts(payload, conversation))
    if event in MCP_WINDOW_EVENTS:
        return (Acted(conversation), *_mcp_window_facts(payload, event, conversation))
    return (Acted(conversation),)


def _mcp_window_facts(
    payload: Mapping[str, Any], event: str, conversation: str
) -> tuple[Fact, ...]:
    """``beforeMCPExecution`` opens a window in which an MCP call of ``tool_name`` with
    ``tool_input`` is ``conversation``'s (Cursor's ``_meta`` names no caller: HOSTS.md 3.5);
    ``afterMCPExecution`` of the same tool and input closes it."""
    tool = optional_str(payload, "tool_name", HOST)
    if tool is None:
        return ()
    arguments = canonical_arguments(payload.get("tool_input"))
    if event == "beforeMCPExecution":
        return (ToolCalled(conversation, tool, arguments=arguments),)
    return (ToolReturned(conversation, tool, arguments=arguments),)


def _task_facts(payload: Mapping[str, Any], conversation: str) -> tuple[Fact, ...]:
    """A ``Task`` call: a spawn keyed by its tool use id, or a resume of the child it names
    (which also names the caller as that child's parent, the only payload that does).

    A resume runs the child again under the call's own id: the ``subagentStart`` and
    ``subagentStop`` that follow carry it as their ``subagent_id`` (HOSTS.md 3.1, 3.2). The
    call is therefore a spawn whose child is named outright (``native``): that start is the
    named child's, not a second child pending for a conversation not seen yet, and that stop
    stops it. A late stop of the run the resume interrupted no longer names it."""
    tool_input = payload.get("tool_input")
    if tool_input is None:
        tool_input = {}
    if not isinstance(tool_input, Mapping):
        raise PayloadError("field 'tool_input' must be an object", host=HOST)
    resume = _nested_str(tool_input, "resume")
    spawn_key = optional_str(payload, "tool_use_id", HOST)
    agent_type = _nested_str(tool_input, "subagent_type")
    description = _nested_str(tool_input, "description")
    if resume is not None and spawn_key is None:
        return (ChildIdentified(conversation, resume, "native"), Resumed(resume))
    if spawn_key is None:
        return ()
    spawn = SpawnRequested(
        parent=conversation, spawn_key=spawn_key, agent_type=agent_type, description=description
    )
    if resume is None:
        return (spawn,)
    named = ChildIdentified(
        conversation,
        resume,
        "native",
        spawn_key=spawn_key,
        agent_type=agent_type,
        description=description,
    )
    return (spawn, named, Resumed(resume))


def _subagent_id(payload: Mapping[str, Any]) -> str:
    """The subagent's id (= the ``Task`` tool call id), opaque: never split or trimmed."""
    found = optional_str(payload, "subagent_id", HOST) or optional_str(
        payload, "tool_call_id", HOST
    )
    if found is None:
        raise PayloadError("missing required field 'subagent_id'", host=HOST)
    return found


def _workspace(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The payload's ``workspace_roots`` as one workspace: the same folders name the same
    workspace in whatever order (or repetition) they come, so they are sorted and deduplicated.
    Empty when the envelope leaves the field out (HOSTS.md 3.1): the root learns it later."""
    roots = payload.get("workspace_roots")
    if roots is None:
        return ()
    if not isinstance(roots, list) or not all(isinstance(root, str) for root in roots):
        raise PayloadError("field 'workspace_roots' must be a list of strings", host=HOST)
    return tuple(sorted(set(roots)))


def _nested_str(mapping: Mapping[str, Any], key: str) -> str | None:
    return nested_str(mapping, key, "tool_input", HOST)
