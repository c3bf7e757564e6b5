"""Codex CLI hook payloads and MCP ``_meta`` as host-neutral observations.

Since 0.147 every hook payload names the tree's root thread (``session_id``); one fired inside
a child thread adds that child's ``agent_id``. A spawn is a ``spawn_agent`` call keyed by its
``tool_use_id``; ``SubagentStart`` names the child but not its parent, so the engine places it
under the open spawn. An MCP tool call's ``_meta`` states the caller's thread, root and parent
outright.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from lineage_es.errors import PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    Claim,
    Fact,
    Host,
    Observation,
    RootSeen,
    SpawnRequested,
)
from lineage_es.hosts.base import (
    CallerRule,
    HookFile,
    check_depth,
    nested_str,
    optional_object,
    optional_str,
    require_str,
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

HOST: Host = "codex"

#: How an answer says its caller was told by the thread its ``_meta`` names.
BY_META = "codex:_meta"

#: Namespaces Codex puts in front of its multi-agent tools (v1, and v2's default); a hook
#: payload joins namespace and name with no separator (``collaborationspawn_agent``).
AGENT_TOOL_NAMESPACES = ("collaboration", "multi_agent_v1")

#: Tool names only Codex uses; Claude's are PascalCase or ``mcp__…``.
CODEX_TOOLS = frozenset(
    {
        "spawn_agent",
        "send_input",
        "wait_agent",
        "close_agent",
        "resume_agent",
        "apply_patch",
        "exec_command",
        "write_stdin",
        "shell",
        "shell_command",
        "update_plan",
        "view_image",
    }
)


def tool_base_name(name: str) -> str:
    """``name`` without a multi-agent namespace prefix (``collaborationspawn_agent`` →
    ``spawn_agent``); MCP tools keep their full name."""
    if name.startswith("mcp__"):
        return name
    for namespace in AGENT_TOOL_NAMESPACES:
        if name.startswith(namespace) and len(name) > len(namespace):
            return name[len(namespace) :].lstrip("./:_")
    return name


#: A UUID as hosts write it (``8-4-4-4-12`` hex digits).
_CANONICAL_UUID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


def is_uuid7(value: str) -> bool:
    """Whether ``value`` is a UUIDv7, the form of every Codex thread id, as :class:`uuid.UUID`
    reads it. Asked of every payload's ids: a canonical UUID is judged by its version and
    variant digits, and a string too short to hold 32 hex digits (a Claude agent id) is none,
    without building a UUID or raising; any other form is left to :class:`uuid.UUID`."""
    if len(value) < 32:
        return False
    if len(value) == 36 and _CANONICAL_UUID.fullmatch(value):
        return value[14] == "7" and value[19] in "89abAB"
    try:
        return uuid.UUID(value).version == 7
    except ValueError:
        return False


def uuid7_millis(value: str) -> int | None:
    """The creation time (Unix milliseconds) a UUIDv7 carries; ``None`` for any other string."""
    if not is_uuid7(value):
        return None
    return uuid.UUID(value).int >> 80


def is_codex_path(path: str) -> bool:
    """Whether ``path`` is a Codex rollout: ``rollout-*.jsonl`` or anything under ``.codex``."""
    normal = path.replace("\\", "/")
    name = normal.rsplit("/", 1)[-1]
    return "/.codex/" in normal or (name.startswith("rollout-") and ".jsonl" in name)


def spawned_agent_id(output: Any) -> str | None:
    """The child thread a v1 ``spawn_agent`` result names (``{"agent_id": …}``): an object, the
    JSON text Codex stores, or that text wrapped as ``{"content": …}`` or as content items;
    ``None`` when the result names none (v2, failures)."""
    if isinstance(output, str):
        try:
            output = orjson.loads(output)
        except orjson.JSONDecodeError:
            return None
    if isinstance(output, Mapping):
        agent = output.get("agent_id")
        if isinstance(agent, str) and agent:
            return agent
        content = output.get("content")
        return spawned_agent_id(content) if isinstance(content, (str, list)) else None
    if isinstance(output, list):
        for item in output:
            text = item.get("text") if isinstance(item, Mapping) else None
            found = spawned_agent_id(text) if isinstance(text, str) else None
            if found is not None:
                return found
    return None


class CodexAdapter:
    """Turns Codex CLI hook payloads and MCP ``_meta`` into observations and claims."""

    host: Host = HOST
    mcp_meta = True
    hook_events: tuple[str, ...] = SHARED_HOOK_EVENTS
    tool_events = TOOL_EVENTS
    #: Every tool's ``PreToolUse`` (a child's call after the ``SubagentStop`` that ended its
    #: last turn is what shows it working again); ``PostToolUse`` of ``spawn_agent`` alone, in
    #: any namespace, whose v1 result names the child. Codex reads a matcher with other
    #: characters than letters, digits, ``_`` and ``|`` as a regular expression.
    tool_matchers: Mapping[str, str] = {
        "PreToolUse": "*",
        "PostToolUse": f"^({'|'.join(AGENT_TOOL_NAMESPACES)})?[./:_]*spawn_agent$",
    }
    hook_file = HookFile(
        ".codex",
        "hooks.json",
        folder_env="CODEX_HOME",
        grouped=True,
        install_note="Codex runs a new hook only once you trust it: open /hooks in Codex "
        "(and on Codex before hooks were on by default, set [features] hooks = true "
        "in ~/.codex/config.toml)",
    )
    log_fields: tuple[str, ...] = ENVELOPE_LOG_FIELDS
    meta_thread_fields = "'threadId' (or x-codex-turn-metadata's 'thread_id' or 'session_id')"
    caller_meta = "Codex thread"
    mcp_caller_hooks: tuple[str, ...] = ()
    display_name = "Codex"
    #: Asked before Claude Code's adapter, whose envelope Codex borrowed.
    detection_rank = 1

    def recognises(self, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` is a Codex hook payload: in the envelope Codex borrowed from
        Claude Code (``session_id``, PascalCase ``hook_event_name``; Cursor's events are
        camelCase and carry ``conversation_id``) with a field only Codex sends
        (:meth:`own_fields`)."""
        if not isinstance(payload, Mapping) or not has_session_envelope(payload):
            return False
        return bool(self.own_fields(payload))

    def own_fields(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        """The fields only Codex sends: a ``turn_id`` (every event but ``SessionStart``); a
        rollout transcript; a Codex tool name or ``call_…`` tool use id; a UUIDv7 thread id as
        ``session_id`` or ``agent_id`` (Claude's session ids are random UUIDs, its agent ids
        short hex)."""
        if not isinstance(payload, Mapping):
            return ()
        found = ["turn_id"] if "turn_id" in payload else []
        for field in ("transcript_path", "agent_transcript_path"):
            path = payload.get(field)
            if isinstance(path, str) and is_codex_path(path):
                found.append(field)
        tool = payload.get("tool_name")
        if isinstance(tool, str) and tool_base_name(tool) in CODEX_TOOLS:
            found.append("tool_name")
        tool_use = payload.get("tool_use_id")
        if isinstance(tool_use, str) and tool_use.startswith("call_"):
            found.append("tool_use_id")
        for field in ("session_id", "agent_id"):
            value = payload.get(field)
            if isinstance(value, str) and is_uuid7(value):
                found.append(field)
        return tuple(found)

    def observe(self, payload: Mapping[str, Any], *, at: datetime | None = None) -> Observation:
        """What one hook payload means; :class:`PayloadError` when it cannot be understood."""
        key, session, event, agent = read_envelope(payload, HOST)
        facts = subagent_facts(payload, event, HOST)
        if facts is None:
            facts = _event_facts(payload, event, session, agent)
        return envelope_observation(
            payload, HOST, key=key, root=session, requester=agent or session, facts=facts, at=at
        )

    def claim(self, meta: Mapping[str, Any]) -> Claim | None:
        """What an MCP ``tools/call`` ``_meta`` states about its calling thread.

        ``x-codex-turn-metadata`` (an object, or the JSON text Codex also sends as a header)
        names the thread, its root and parent; a bare ``threadId`` names the thread alone.
        ``None`` when neither names a thread; :class:`PayloadError` for mistyped fields.
        """
        if not isinstance(meta, Mapping):
            raise PayloadError("_meta must be a JSON object", host=HOST)
        check_depth(meta)
        turn = _turn_metadata(meta)
        stated = optional_str(turn, "thread_id", HOST)
        bare = optional_str(meta, "threadId", HOST)
        if stated is not None and bare is not None and stated != bare:
            raise PayloadError(
                f"_meta names two threads: threadId {bare!r} and thread_id {stated!r}", host=HOST
            )
        thread = stated or bare
        if thread is None:
            return None
        parent = optional_str(turn, "parent_thread_id", HOST)
        root = optional_str(turn, "session_id", HOST)
        depth = turn.get("depth")
        if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool)):
            raise PayloadError("field 'depth' must be an integer", host=HOST)
        if depth is not None and not 0 <= depth < 2**63:
            # an answer carries it as JSON, which holds no integer past 64 bits
            raise PayloadError(
                f"field 'depth' must be 0 or more (at most 2**63 - 1), not {depth}", host=HOST
            )
        if depth is None:
            depth = stated_depth(parent, root)
        return Claim(
            host=HOST,
            conversation=thread,
            root=root or thread,
            parent=parent,
            depth=depth,
        )

    def meta_names_thread(self, meta: Mapping[str, Any]) -> bool:
        """Whether ``_meta`` names any thread: ``threadId``, or ``x-codex-turn-metadata``'s
        ``thread_id`` or ``session_id`` (:class:`PayloadError` for mistyped metadata)."""
        if not isinstance(meta, Mapping):
            raise PayloadError("_meta must be a JSON object", host=HOST)
        turn = _turn_metadata(meta)
        return any(
            isinstance(value, str) and value != ""
            for value in (meta.get("threadId"), turn.get("thread_id"), turn.get("session_id"))
        )

    def caller_rule(self, meta: Mapping[str, Any]) -> CallerRule | None:
        """An MCP tool call's caller is the thread its ``_meta`` names (HOSTS.md 2.1), when it
        names one (:meth:`meta_names_thread`, :class:`PayloadError` for mistyped metadata)."""
        return CallerRule("thread", BY_META) if self.meta_names_thread(meta) else None

    def caller_meta_problem(self, meta: Mapping[str, Any]) -> str | None:
        """A Codex call names its caller by the thread ``_meta`` states, in the form
        :meth:`claim` reads."""
        try:
            self.claim(meta)
            names = self.meta_names_thread(meta)
        except PayloadError as exc:
            return str(exc)
        if names:
            return None
        return f"'mcp._meta' names no thread: missing required field {self.meta_thread_fields}"


def stated_depth(parent: str | None, root: str | None) -> int:
    """The least depth ``_meta`` allows for a thread with ``parent`` under ``root``: 0 with no
    parent; 1 when the parent is the root (or no root is named); else 2, because a parent that
    is not the root is itself a child (depth = parent's depth + 1, and it is at least 1)."""
    if parent is None:
        return 0
    if root is None or parent == root:
        return 1
    return 2


def _turn_metadata(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    value = meta.get("x-codex-turn-metadata")
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise PayloadError("x-codex-turn-metadata is not JSON", host=HOST) from None
    if not isinstance(value, Mapping):
        raise PayloadError("x-codex-turn-metadata must be a JSON object", host=HOST)
    return value


def _event_facts(
    payload: Mapping[str, Any], event: str, session: str, agent: str | None
) -> tuple[Fact, ...]:
    """Facts of an event fired by the root thread or, with ``agent``, inside that child."""
    requester = agent or session
    # Acting first places an unknown child before anything hangs from it.
    facts: list[Fact] = [Acted(agent)] if agent is not None else []
    if event == "SessionStart":
        facts.append(RootSeen(session, source=optional_str(payload, "source", HOST) or ""))
    elif event == "UserPromptSubmit" and agent is None:
        facts.append(RootSeen(session, source="prompt"))
    elif event in ("PreToolUse", "PostToolUse") and _is_spawn(payload):
        facts.extend(_spawn_facts(payload, event, requester))
    return tuple(facts) if facts else (Acted(requester),)


def _is_spawn(payload: Mapping[str, Any]) -> bool:
    tool = optional_str(payload, "tool_name", HOST)
    return tool is not None and tool_base_name(tool) == "spawn_agent"


def _spawn_facts(payload: Mapping[str, Any], event: str, requester: str) -> list[Fact]:
    """A ``spawn_agent`` call: requested before it runs; a v1 result names the child."""
    spawn_key = require_str(payload, "tool_use_id", HOST)
    tool_input = _object(payload, "tool_input")
    agent_type = _nested_str(tool_input, "agent_type", "tool_input")
    description = _nested_str(tool_input, "task_name", "tool_input")
    if event == "PreToolUse":
        return [SpawnRequested(requester, spawn_key, agent_type, description)]
    child = spawned_agent_id(payload.get("tool_response"))
    if child is None:
        return []
    return [
        ChildIdentified(
            parent=requester,
            child=child,
            resolution="confirmed",
            spawn_key=spawn_key,
            agent_type=agent_type,
            description=description,
        )
    ]


def _object(payload: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return optional_object(payload, key, HOST)


def _nested_str(mapping: Mapping[str, Any], key: str, parent: str) -> str | None:
    return nested_str(mapping, key, parent, HOST)
