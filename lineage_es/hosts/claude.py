"""Claude Code hook payloads as host-neutral observations.

Every Claude hook payload names the root (``session_id``); one fired inside a subagent adds that
subagent's ``agent_id``. A spawn is an ``Agent``/``Task`` tool call, keyed by its
``tool_use_id``; the spawner's ``PostToolUse`` names the child (``tool_response.agentId``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from lineage_es.facts import (
    Acted,
    ChildIdentified,
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
)
from lineage_es.hosts.base import (
    CallerRule,
    HookFile,
    nested_str,
    optional_object,
    optional_str,
)
from lineage_es.hosts.session_envelope import (
    ENVELOPE_LOG_FIELDS,
    SHARED_HOOK_EVENTS,
    TOOL_EVENTS,
    envelope_observation,
    has_session_envelope,
    read_envelope,
    subagent_facts,
)

HOST: Host = "claude"

#: The tools that start a subagent: ``Task`` until 2.1.62, ``Agent`` since (``Task`` kept).
SPAWN_TOOLS = frozenset({"Agent", "Task"})

#: How Claude Code names an MCP server's tool: ``mcp__<server>__<tool>`` (HOSTS.md 1.5).
MCP_TOOL_PREFIX = "mcp__"

#: The ``_meta`` key of an MCP tool call that repeats its ``PreToolUse`` hook's ``tool_use_id``.
MCP_CALL_META = "claudecode/toolUseId"

#: How an answer says its caller was told by :data:`MCP_CALL_META`.
BY_TOOL_USE = "claude:toolUseId"

#: Agents Claude Code runs for itself (compaction, prompt suggestions, side questions): no
#: ``tool_use`` spawned them, so they are not delegation.
INTERNAL_AGENT_PREFIXES = ("acompact-", "aprompt_suggestion-", "aside_question-")

_PATH_SEPARATORS = re.compile(r"[\\/]")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: A subagent id as Claude Code writes it: 7 or 8 hex (to 2.1.39), ``a`` + 16 hex (2.1.101 on).
_AGENT_ID = re.compile(r"[0-9a-f]{7,8}|a[0-9a-f]{16}")

#: Notice statuses that mean a background task is over.
_FINAL_STATUSES = frozenset({"completed", "killed"})
_NOTICE = re.compile(r"<task-notification>(.*?)</task-notification>", re.DOTALL)
_TASK_ID = re.compile(r"<task-id>([^<]+)</task-id>")
_STATUS = re.compile(r"<status>([^<]+)</status>")


def is_internal_agent(agent_id: str) -> bool:
    """Whether ``agent_id`` names one of Claude Code's own helper agents."""
    return agent_id.startswith(INTERNAL_AGENT_PREFIXES)


class ClaudeAdapter:
    """Turns Claude Code hook payloads into observations."""

    host: Host = HOST
    mcp_meta = False
    hook_events: tuple[str, ...] = (*SHARED_HOOK_EVENTS, "SessionEnd")
    tool_events = TOOL_EVENTS
    #: Every tool's ``PreToolUse`` (a call is an act: it revives a subagent resumed by
    #: ``SendMessage``, places one whose start was missed, and is how an MCP call of
    #: ``lineage mcp`` is told apart); ``PostToolUse`` of the spawn tools alone, whose result
    #: names the child (another tool's repeats the act of its ``PreToolUse``).
    tool_matchers: Mapping[str, str] = {
        "PreToolUse": "*",
        "PostToolUse": "|".join(sorted(SPAWN_TOOLS)),
    }
    hook_file = HookFile(".claude", "settings.json", folder_env="CLAUDE_CONFIG_DIR", grouped=True)
    log_fields: tuple[str, ...] = ENVELOPE_LOG_FIELDS
    meta_thread_fields = ""
    caller_meta = repr(MCP_CALL_META)
    #: The ``PreToolUse`` of the server's tools journals the call's id with its caller.
    mcp_caller_hooks: tuple[str, ...] = ("PreToolUse",)
    display_name = "Claude Code"
    #: Asked last: Claude Code's envelope is the one Codex borrowed, so this adapter takes a
    #: payload in it that shows none of Codex's marks.
    detection_rank = 2

    def recognises(self, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` is a Claude Code hook payload.

        Claude and Codex share the envelope (``session_id``, PascalCase ``hook_event_name``), so
        this relies on what only Codex sends: a ``turn_id``; a ``rollout-*.jsonl`` transcript
        or one in a ``.codex`` folder; a thread id (a UUID) as ``agent_id``, where Claude's
        agent ids are short hex; a snake_case tool name such as ``spawn_agent``, where Claude's
        tools are PascalCase or ``mcp__…``. Cursor names its hooks in camelCase and sends a
        ``conversation_id``.
        """
        if not isinstance(payload, Mapping) or not has_session_envelope(payload):
            return False
        return bool(payload["session_id"]) and not _looks_like_codex(payload)

    def own_fields(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        """The fields only Claude Code sends: a transcript under a ``.claude`` folder, an
        Anthropic ``toolu_…`` tool use id, a subagent id in Claude's form (Codex's are UUIDs;
        Cursor sends none)."""
        if not isinstance(payload, Mapping):
            return ()
        found: list[str] = []
        for field in ("transcript_path", "agent_transcript_path"):
            path = payload.get(field)
            # (the substring first: another host's paths hold none, and a split costs more)
            if (
                isinstance(path, str)
                and ".claude" in path
                and ".claude" in _PATH_SEPARATORS.split(path)
            ):
                found.append(field)
        tool_use = payload.get("tool_use_id")
        if isinstance(tool_use, str) and tool_use.startswith("toolu_"):
            found.append("tool_use_id")
        agent = payload.get("agent_id")
        if isinstance(agent, str) and (_AGENT_ID.fullmatch(agent) or is_internal_agent(agent)):
            found.append("agent_id")
        return tuple(found)

    def observe(self, payload: Mapping[str, Any], *, at: datetime | None = None) -> Observation:
        """What one hook payload means; :class:`PayloadError` when it cannot be understood.
        A payload fired inside one of Claude Code's own helper agents has no requester."""
        key, session, event, agent = read_envelope(payload, HOST)
        if agent is not None and is_internal_agent(agent):
            return envelope_observation(
                payload, HOST, key=key, root=session, requester=None, facts=(), at=at
            )
        facts = subagent_facts(payload, event, HOST)
        if facts is None:
            facts = _event_facts(payload, event, session, agent)
        return envelope_observation(
            payload, HOST, key=key, root=session, requester=agent or session, facts=facts, at=at
        )

    def claim(self, meta: Mapping[str, Any]) -> Claim | None:
        """Claude Code puts no lineage in an MCP tool call's ``_meta``."""
        return None

    def meta_names_thread(self, meta: Mapping[str, Any]) -> bool:
        """Claude Code's ``_meta`` names no conversation."""
        return False

    def caller_rule(self, meta: Mapping[str, Any]) -> CallerRule | None:
        """An MCP tool call's caller is whoever journaled, with its ``PreToolUse`` hook, the
        tool call ``_meta[MCP_CALL_META]`` repeats (HOSTS.md 1.5); ``None`` for a ``_meta``
        without that key, and a refusal when it holds anything but a non-empty string."""
        call = meta.get(MCP_CALL_META)
        if call is None:
            return None
        if not isinstance(call, str) or not call:
            return CallerRule(
                "refused", subject=f"_meta[{MCP_CALL_META!r}] must be a non-empty string"
            )
        return CallerRule(
            "tool_use", BY_TOOL_USE, subject=call, meta_field=MCP_CALL_META, hook="PreToolUse"
        )

    def caller_meta_problem(self, meta: Mapping[str, Any]) -> str | None:
        """A Claude Code call names its caller by the id of the tool call its ``PreToolUse``
        hook journaled, which ``_meta`` must repeat."""
        call = meta.get(MCP_CALL_META)
        if isinstance(call, str) and call:
            return None
        return (
            f"'mcp._meta' names no tool call: missing required field {MCP_CALL_META!r}, "
            "the tool_use_id of the call's PreToolUse hook"
        )


def _looks_like_codex(payload: Mapping[str, Any]) -> bool:
    if "turn_id" in payload:
        return True
    for field in ("transcript_path", "agent_transcript_path"):
        path = payload.get(field)
        parts = _PATH_SEPARATORS.split(path) if isinstance(path, str) else []
        if ".codex" in parts or (parts and parts[-1].startswith("rollout-")):
            return True
    agent = payload.get("agent_id")
    if isinstance(agent, str) and _UUID.fullmatch(agent):
        return True
    tool = payload.get("tool_name")
    return isinstance(tool, str) and tool[:1].islower() and not tool.startswith("mcp__")


def _event_facts(
    payload: Mapping[str, Any], event: str, session: str, agent: str | None
) -> tuple[Fact, ...]:
    """Facts of an event fired by the root or, with ``agent``, inside that subagent."""
    requester = agent or session
    # Acting first places an unknown spawner before anything hangs from it.
    facts: list[Fact] = [Acted(agent)] if agent is not None else []
    if event == "SessionStart" and agent is None:
        facts.append(RootSeen(session, source=optional_str(payload, "source", HOST) or ""))
    elif event == "UserPromptSubmit" and agent is None:
        facts.append(RootSeen(session, source="prompt"))
        prompt = payload.get("prompt")
        facts.extend(notified_stops(prompt) if isinstance(prompt, str) else ())
    elif event == "SessionEnd":
        facts.append(SessionEnded(session))
    elif event in ("PreToolUse", "PostToolUse") and (
        optional_str(payload, "tool_name", HOST) in SPAWN_TOOLS
    ):
        facts.extend(_spawn_facts(payload, event, requester))
    elif event == "PreToolUse":
        facts.extend(_mcp_call_facts(payload, requester, acted=agent is not None))
    return tuple(facts) if facts else (Acted(requester),)


def _mcp_call_facts(payload: Mapping[str, Any], requester: str, *, acted: bool) -> list[Fact]:
    """A ``PreToolUse`` of an MCP tool (``mcp__<server>__<tool>``) with its ``tool_use_id``:
    the call the MCP server will see with that id in ``_meta`` (:data:`MCP_CALL_META`) is
    ``requester``'s. ``acted``: the requester's act is already among the facts."""
    tool = optional_str(payload, "tool_name", HOST)
    call = optional_str(payload, "tool_use_id", HOST)
    if tool is None or call is None or not tool.startswith(MCP_TOOL_PREFIX):
        return []
    return [*(() if acted else (Acted(requester),)), ToolCalled(requester, tool, call=call)]


def notified_stops(text: str) -> list[Fact]:
    """The stops a ``<task-notification>`` text states: a background agent's completion or
    kill re-enters the root as such a prompt, its only stop when no ``SubagentStop`` comes
    (HOSTS.md 1.2, quirk 2). Only a text that is a notice counts, not one quoting it; ids of
    tasks that are not agents name nothing the engine knows."""
    if not text.lstrip().startswith("<task-notification>"):
        return []
    stops: list[Fact] = []
    for body in _NOTICE.findall(text):
        task, status = _TASK_ID.search(body), _STATUS.search(body)
        if task and status and status.group(1).strip() in _FINAL_STATUSES:
            stops.append(Stopped(conversation=task.group(1).strip()))
    return stops


def _spawn_facts(payload: Mapping[str, Any], event: str, requester: str) -> list[Fact]:
    """An ``Agent``/``Task`` call: a spawn, or a resume of an existing agent (quirk 8)."""
    tool_input = _object(payload, "tool_input")
    resume = _nested_str(tool_input, "resume", "tool_input")
    agent_type = _nested_str(tool_input, "subagent_type", "tool_input")
    description = _nested_str(tool_input, "description", "tool_input")
    spawn_key = optional_str(payload, "tool_use_id", HOST)
    if event == "PreToolUse":
        if resume is not None:
            return [Resumed(resume)]
        if spawn_key is None:
            return []
        return [SpawnRequested(requester, spawn_key, agent_type, description)]
    response = payload.get("tool_response")
    if not isinstance(response, Mapping):
        # MCP-style string responses (quirk 6) and failures carry no child.
        return []
    child = _nested_str(response, "agentId", "tool_response")
    if child is None:
        return []
    facts: list[Fact] = []
    if resume is None:
        facts.append(
            ChildIdentified(
                parent=requester,
                child=child,
                resolution="confirmed",
                spawn_key=spawn_key,
                agent_type=_nested_str(response, "agentType", "tool_response") or agent_type,
                description=description,
            )
        )
    # A completed result means the child finished, even when its SubagentStop never comes.
    if _nested_str(response, "status", "tool_response") == "completed":
        facts.append(Stopped(conversation=child))
    return facts


def _object(payload: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return optional_object(payload, key, HOST)


def _nested_str(mapping: Mapping[str, Any], key: str, parent: str) -> str | None:
    return nested_str(mapping, key, parent, HOST)
