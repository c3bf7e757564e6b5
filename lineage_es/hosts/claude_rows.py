"""What the rows of a Claude Code transcript mean, given the rows before them.

One row meaning reads a session's rows in whichever file they are (the session file, its
agent files): the spawn calls it opens (an ``Agent``/``Task`` tool use), the children their
results and progress rows name, the background tasks a notice stops. ``lineage-replay`` and
``lineage ingest`` drive it from :mod:`.claude_transcript`; ``lineage import`` drives it from
rows it picks itself, keeping its open calls between runs (:meth:`RowMeaning.state`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Resumed,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.claude import SPAWN_TOOLS, is_internal_agent, notified_stops


def text_field(mapping: Mapping[str, Any], key: str) -> str | None:
    """The non-empty string ``mapping[key]``; ``None`` when absent or of another type."""
    value = mapping.get(key)
    return value if isinstance(value, str) and value else None


def object_field(mapping: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """The object ``mapping[key]``; empty when absent or of another type."""
    value = mapping.get(key)
    return value if isinstance(value, dict) else {}


def message_texts(content: Any) -> list[str]:
    """The plain text of a message's content: a string, or its ``text`` blocks."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def text_digest(text: str) -> bytes:
    """The digest a prompt is kept and compared by (an agent's first prompt repeats its
    spawn call's)."""
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def is_warmup(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` opens a 2.0.x ``Warmup`` sidechain (Claude Code's own, not a child)."""
    return message_texts(object_field(row, "message").get("content")) == ["Warmup"]


class _ToolUse(NamedTuple):
    """A tool call as the row meaning keeps it until its result: for a spawn call, the agent
    it resumes, its prompt's digest, the agent type and description it asks for."""

    name: str
    resume: str | None
    prompt: bytes | None
    agent_type: str | None
    description: str | None


@dataclass
class RowMeaning:
    """What rows mean given the rows before them, across the main file and agent files.

    Tool calls are remembered only until their result arrives; a reader that stops part way
    (``lineage import``) keeps the open spawn calls as plain data (:meth:`state`) and resumes
    a grown file where it stopped (:meth:`from_state`).
    """

    tool_uses: dict[str, _ToolUse] = field(default_factory=dict)
    progress_children: set[str] = field(default_factory=set)
    #: Agents these rows stopped: the next row such an agent writes resumes it.
    stopped: set[str] = field(default_factory=set)

    def note(self, facts: list[Fact]) -> None:
        """Remember which agents ``facts`` stop, and which they show acting again."""
        for fact in facts:
            if isinstance(fact, Stopped) and fact.conversation is not None:
                self.stopped.add(fact.conversation)
            elif isinstance(fact, Acted | Resumed):
                self.stopped.discard(fact.conversation)

    def facts(self, row: Mapping[str, Any], requester: str) -> list[Fact]:
        """What ``row``, written by ``requester``, means: spawn calls and resumes, the
        children results and progress rows name, the tasks notices stop."""
        kind = row.get("type")
        content = object_field(row, "message").get("content")
        facts: list[Fact] = []
        if kind == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    facts.extend(self._tool_use(block, requester))
        elif kind == "user" and isinstance(content, list):
            results = [
                b.get("tool_use_id")
                for b in content
                if isinstance(b, dict) and b.get("type") == "tool_result"
            ]
            facts.extend(self._tool_result(results, row.get("toolUseResult"), requester))
        elif kind == "progress":
            facts.extend(self._progress(row, requester))
        facts.extend(_row_notified_stops(row))
        return facts

    def inline_child(self, row: Mapping[str, Any], parent: str) -> list[Fact]:
        """A 2.0.x subagent written inline in its parent's file (no ``agentId``).

        Its first row repeats the spawn's prompt verbatim; when exactly one open spawn of
        ``parent`` has that prompt, the child is pending under it (it never gets an id).
        """
        texts = message_texts(object_field(row, "message").get("content"))
        if row.get("type") != "user" or row.get("parentUuid") is not None or len(texts) != 1:
            return []
        prompt = text_digest(texts[0])
        matches = [
            (key, use)
            for key, use in self.tool_uses.items()
            if use.name in SPAWN_TOOLS and use.resume is None and use.prompt == prompt
        ]
        if len(matches) != 1:
            return []
        key, use = matches[0]
        self.tool_uses[key] = use._replace(prompt=None)
        return [
            ChildStarted(
                spawn_key=key, parent=parent, agent_type=use.agent_type, resolution="transcript"
            )
        ]

    def state(self) -> dict[str, Any]:
        """The open spawn calls and children seen in progress rows (other tools' calls are
        dropped: only spawn results name children)."""
        return {
            "spawns": {
                key: [
                    use.name,
                    use.resume,
                    use.prompt.hex() if use.prompt else None,
                    use.agent_type,
                    use.description,
                ]
                for key, use in self.tool_uses.items()
                if use.name in SPAWN_TOOLS
            },
            "progress": sorted(self.progress_children),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> RowMeaning:
        """A row meaning holding the open spawn calls and progress children of ``state``
        (what :meth:`state` gave); malformed entries are left out."""
        meaning = cls()
        spawns = state.get("spawns")
        for key, fields in (spawns if isinstance(spawns, dict) else {}).items():
            if isinstance(fields, list) and len(fields) == 5:
                name, resume, prompt, agent_type, description = fields
                digest = bytes.fromhex(prompt) if isinstance(prompt, str) else None
                meaning.tool_uses[key] = _ToolUse(name, resume, digest, agent_type, description)
        progress = state.get("progress")
        meaning.progress_children.update(p for p in progress or () if isinstance(p, str))
        return meaning

    def open_spawns(self) -> list[str]:
        """Spawn calls whose result has not been read yet."""
        return [k for k, use in self.tool_uses.items() if use.name in SPAWN_TOOLS]

    def _tool_use(self, block: Mapping[str, Any], requester: str) -> list[Fact]:
        """A ``tool_use`` block: remembered until its result; a spawn call requests a child
        or resumes the agent it names."""
        key, name = text_field(block, "id"), text_field(block, "name")
        if key is None or name is None:
            return []
        if name not in SPAWN_TOOLS:
            self.tool_uses[key] = _ToolUse(name, None, None, None, None)
            return []
        tool_input = object_field(block, "input")
        prompt = text_field(tool_input, "prompt")
        use = _ToolUse(
            name,
            text_field(tool_input, "resume"),
            text_digest(prompt) if prompt is not None else None,
            text_field(tool_input, "subagent_type"),
            text_field(tool_input, "description"),
        )
        self.tool_uses[key] = use
        if use.resume is not None:
            return [Resumed(use.resume)]
        return [SpawnRequested(requester, key, use.agent_type, use.description)]

    def _tool_result(self, keys: list[Any], result: Any, requester: str) -> list[Fact]:
        """A row of ``tool_result`` blocks answering the calls ``keys`` (``result`` its
        ``toolUseResult``): a spawn's result names its child, and says when it completed."""
        uses = [self.tool_uses.pop(k, None) if isinstance(k, str) else None for k in keys]
        if not keys or not isinstance(keys[0], str) or not isinstance(result, dict):
            return []
        key, use = keys[0], uses[0]
        if use is not None and use.name not in SPAWN_TOOLS:
            return []
        child = text_field(result, "agentId")
        completed = result.get("status") == "completed"
        if child is None or is_internal_agent(child):
            # A 2.0.x result names no child: the pending inline child, if any, is done.
            spawned = use is not None and use.resume is None
            return [Stopped(spawn_key=key)] if spawned and completed else []
        facts: list[Fact] = []
        if use is None or use.resume is None:
            facts.append(
                ChildIdentified(
                    parent=requester,
                    child=child,
                    resolution="transcript",
                    spawn_key=key,
                    agent_type=text_field(result, "agentType") or (use.agent_type if use else None),
                    description=use.description if use else None,
                )
            )
        if completed:
            facts.append(Stopped(conversation=child))
        return facts

    def _progress(self, row: Mapping[str, Any], requester: str) -> list[Fact]:
        """2.1.38 to 2.1.39 mirror a running child in its parent's file as progress rows."""
        data = object_field(row, "data")
        child, key = text_field(data, "agentId"), text_field(row, "parentToolUseID")
        if data.get("type") != "agent_progress" or child is None or key is None:
            return []
        if child in self.progress_children or is_internal_agent(child):
            return []
        self.progress_children.add(child)
        use = self.tool_uses.get(key)
        return [
            ChildIdentified(
                parent=requester,
                child=child,
                resolution="transcript",
                spawn_key=key,
                agent_type=use.agent_type if use else None,
                description=use.description if use else None,
            )
        ]


def _row_notified_stops(row: Mapping[str, Any]) -> list[Fact]:
    """A background task's ``<task-notification>`` (queued, delivered, or attached) with a
    final status stops it; ids of tasks that are not agents name nothing the engine knows."""
    kind = row.get("type")
    if kind == "queue-operation":
        texts = [row["content"]] if isinstance(row.get("content"), str) else []
    elif kind == "user":
        texts = message_texts(object_field(row, "message").get("content"))
    elif kind == "attachment":
        prompt = object_field(row, "attachment").get("prompt")
        texts = [prompt] if isinstance(prompt, str) else []
    else:
        return []
    return [stop for text in texts for stop in notified_stops(text)]


# -- a row's fields, read one at a time, and the bytes that find rows unparsed --------------
# ``lineage import`` parses only the lines these bytes point to (in the compact JSON Claude
# Code writes) and reads the few fields it routes rows by with the readers below.

#: Row types Claude Code writes that can say something of lineage (a spawn, a child's rows,
#: a result, a notice that a background agent stopped).
LINEAGE_ROW_TYPES = frozenset(
    {"user", "assistant", "system", "attachment", "progress", "queue-operation"}
)

#: Row types Claude Code writes (2.0 to 2.1.2xx) that say nothing of lineage: the session's
#: settings, titles, file snapshots, its worktree, compaction bookkeeping. ``lineage import``
#: passes over them as known rows, never counting them as rows of an unknown type.
NO_LINEAGE_ROW_TYPES = frozenset(
    {
        "file-history-snapshot",
        "file-history-delta",
        "summary",
        "permission-mode",
        "ai-title",
        "custom-title",
        "last-prompt",
        "mode",
        "tag",
        "agent-name",
        "agent-color",
        "pr-link",
        "worktree-state",
        "content-replacement",
        "marble-origami-commit",
        "marble-origami-snapshot",
        "task-summary",
        "bridge-session",
        "frame-link",
    }
)

#: Every row type Claude Code writes. Others are counted as unknown and passed over.
ROW_TYPES = LINEAGE_ROW_TYPES | NO_LINEAGE_ROW_TYPES

#: What opens a row's ``sessionId`` value.
SESSION_ID_BYTES = b'"sessionId":"'
#: What a ``tool_use`` block holds, its ``name`` a little further on.
TOOL_USE_BYTES = b'"type":"tool_use"'
TOOL_NAME_BYTES = b'"name":"'
#: How the name of a spawn call (:data:`~.claude.SPAWN_TOOLS`) begins after ``"name":"``.
SPAWN_NAME_BYTES = tuple(sorted(f'{name}"'.encode() for name in SPAWN_TOOLS))
#: What a row of a background task's notice holds.
TASK_NOTIFICATION_BYTES = b"<task-notification>"
#: What a 2.1.3x ``agent_progress`` row (a child mirrored in its parent's file) holds.
AGENT_PROGRESS_BYTES = b'"agent_progress"'
#: What every row in the compact JSON the other bytes are written in holds.
COMPACT_TYPE_BYTES = b'"type":"'


def session_bytes(session: str) -> bytes:
    """What a row naming ``session`` as its ``sessionId`` holds."""
    return SESSION_ID_BYTES + session.encode() + b'"'


def result_bytes(tool_use_id: str) -> bytes:
    """What a row holding the result of the tool call ``tool_use_id`` holds."""
    return b'"tool_use_id":"' + tool_use_id.encode() + b'"'


def is_known_row(row: Mapping[str, Any]) -> bool:
    """Whether a row is of a type Claude Code writes (:data:`ROW_TYPES`)."""
    return row.get("type") in ROW_TYPES


def row_uuid(row: Mapping[str, Any]) -> str | None:
    """The ``uuid`` a row is written under (rows repeat under theirs); ``None`` when none."""
    value = row.get("uuid")
    return value if isinstance(value, str) else None


def row_version(row: Mapping[str, Any]) -> str | None:
    """The Claude Code ``version`` that wrote a row; ``None`` when it names none."""
    value = row.get("version")
    return value if isinstance(value, str) else None


def row_time(row: Mapping[str, Any]) -> datetime | None:
    """When a row was written; ``None`` when it has no readable time."""
    return parse_time(row.get("timestamp"))


def is_timed(row: Mapping[str, Any]) -> bool:
    """Whether a row carries a time at all (a title or a mode row does not)."""
    return row.get("timestamp") is not None


def session_row(session: str, **fields: Any) -> dict[str, Any]:
    """A row of ``session`` the importer makes up to key what no row of the host states
    (``fields`` say what): it names the session as a row of it does."""
    return {"sessionId": session, **fields}


def row_session(row: Mapping[str, Any]) -> str | None:
    """The ``sessionId`` a row names, as written (empty too); ``None`` when it names none."""
    value = row.get("sessionId")
    return value if isinstance(value, str) else None


def row_agent(row: Mapping[str, Any]) -> str | None:
    """The ``agentId`` a row names, as written (empty too); ``None`` when it names none."""
    value = row.get("agentId")
    return value if isinstance(value, str) else None


def is_forked_copy(row: Mapping[str, Any]) -> bool:
    """Whether a row is history a fork copied from the session it was forked from."""
    return bool(row.get("forkedFrom"))


def is_inline_sidechain(row: Mapping[str, Any]) -> bool:
    """Whether a row is a child's, written in its parent's session file (before 2.1: a
    sidechain row that names no agent)."""
    return row.get("isSidechain") is True and not row.get("agentId")


def launched_agent(row: Mapping[str, Any]) -> str | None:
    """The agent a row's tool result says was launched in the background, if any."""
    result = row.get("toolUseResult")
    if isinstance(result, dict) and result.get("status") == "async_launched":
        return row_agent(result)
    return None
