"""Codex rollout files on disk as observations, row by row.

A rollout (``~/.codex/sessions/…/rollout-<time>-<threadId>.jsonl``) is one thread: its first
``session_meta`` names the thread, its root (``session_id``) and, for a thread-spawned child,
its parent (``source.subagent.thread_spawn``). The parent's rows name its spawns: a
``spawn_agent`` call keyed by its ``call_id``, answered by the child's id (v1) or a
``SubAgentActivity`` item (v2).

Forked threads (a user ``/fork``, a forked child) start with a copy of their source: its
``session_meta`` right after their own, then its rows, even its spawns. Those copies say
nothing about the fork, so only ``Acted`` is read from them until the fork's own rows begin.
Two rollouts concatenated into one file (as some recorders keep them) are read as two threads:
a ``session_meta`` naming another thread starts the next one, unless it is such a copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from lineage_es.errors import InputError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    Fact,
    Observation,
    Resumed,
    RootSeen,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.codex import HOST, spawned_agent_id, tool_base_name, uuid7_millis
from lineage_es.hosts.transcript import TranscriptRow
from lineage_es.lines import MAX_LINE_BYTES, OnBadLine, json_rows

#: v1 multi-agent tools, whose targets are thread ids (v2 ones name agent paths).
_V1_NAMESPACES = frozenset({"", "multi_agent_v1"})

#: ``SubAgentActivity`` kinds that end a child, and the one that wakes it again.
_ENDING_KINDS = frozenset({"completed", "interrupted"})
_WAKING_KIND = "interacted"


def read_rollout(path: Path, *, bad: OnBadLine | None = None) -> Iterator[TranscriptRow]:
    """The observations of a Codex rollout, one per line of ``path`` (numbered from 1).

    Rows that say nothing about lineage (before any ``session_meta``, blank, or in a thread
    that is not delegation, such as a ``/review`` subagent) carry ``None``. Raises
    :class:`InputError` naming the file and line of a row that is not a JSON object or whose
    lineage fields have the wrong type; a torn last line (no newline) is skipped. With
    ``bad``, such a line is handed to ``bad`` instead, has no row, and the rows after it are
    read as if it were absent.
    """
    path = Path(path)
    reader = RolloutReader(str(path))
    for number, row in _json_rows(path, bad):
        if row is None or bad is None:
            yield TranscriptRow(number, None if row is None else reader.observe(row, number))
        else:
            yield from _observed_leniently(reader, row, number, bad)


def _observed_leniently(
    reader: RolloutReader, row: dict[str, Any], number: int, bad: OnBadLine
) -> Iterator[TranscriptRow]:
    """The row's observation; a row the reader refuses is handed to ``bad`` instead, and the
    reader is put back as it was before the row (it may have opened a thread or noted a
    spawn call before finding the mistyped field)."""
    before = reader.state()
    try:
        observation = reader.observe(row, number)
    except InputError as exc:
        reader.thread, reader.delegation, reader.in_header = None, False, False  # as new
        reader.restore(before)
        bad(exc)
        return
    yield TranscriptRow(number, observation)


def _json_rows(
    path: Path, bad: OnBadLine | None = None
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Each line's number and object (``None`` when blank), bounded before it is parsed."""
    return json_rows(path, MAX_LINE_BYTES, bad=bad)


@dataclass
class RolloutThread:
    """The thread whose rows are being read (a :class:`RolloutReader`'s ``thread``)."""

    id: str
    root: str | None
    workspace: tuple[str, ...]
    #: The header names a thread this one came from (fork or parent): copies may follow.
    has_source: bool
    #: Creation time from the UUIDv7 id: turns started later are the thread's own.
    created_ms: int | None
    #: ``subagent_history_start_ordinal``: rows from here on are the thread's own.
    own_from_ordinal: int | None
    is_child: bool
    copying: bool = False
    spawn_calls: set[str] = field(default_factory=set)


class RolloutReader:
    """Turns the rows of one rollout file into observations, keeping the current thread.

    :func:`read_rollout` drives it over a file; a caller that reads lines itself (``lineage
    import``) constructs it with the file's path, then calls ``observe(row, line)`` for each
    row in order."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.line = 0
        self.thread: RolloutThread | None = None
        #: Whether the open thread is delegation (not a review, compaction… thread).
        self.delegation = False
        #: The previous row was a ``session_meta`` of the current thread's header.
        self.in_header = False

    def state(self) -> dict[str, Any]:
        """The open thread as plain data, so a later run resumes a grown rollout after its
        last line read (``codex resume`` appends to the same file)."""
        thread = self.thread
        if thread is None:
            return {}
        return {
            "thread": {
                "id": thread.id,
                "root": thread.root,
                "workspace": list(thread.workspace),
                "has_source": thread.has_source,
                "created_ms": thread.created_ms,
                "own_from_ordinal": thread.own_from_ordinal,
                "is_child": thread.is_child,
                "copying": thread.copying,
                "spawn_calls": sorted(thread.spawn_calls),
            },
            "delegation": self.delegation,
            "in_header": self.in_header,
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Take up a state :meth:`state` gave; an empty or unreadable one starts afresh."""
        thread = state.get("thread")
        if not isinstance(thread, Mapping) or not isinstance(thread.get("id"), str):
            return
        self.thread = RolloutThread(
            id=thread["id"],
            root=thread.get("root"),
            workspace=tuple(thread.get("workspace") or ()),
            has_source=bool(thread.get("has_source")),
            created_ms=thread.get("created_ms"),
            own_from_ordinal=thread.get("own_from_ordinal"),
            is_child=bool(thread.get("is_child")),
            copying=bool(thread.get("copying")),
            spawn_calls=set(thread.get("spawn_calls") or ()),
        )
        self.delegation = bool(state.get("delegation"))
        self.in_header = bool(state.get("in_header"))

    def observe(self, row: dict[str, Any], line: int) -> Observation | None:
        self.line = line
        kind = row.get("type")
        payload = row.get("payload")
        if kind == "session_meta":
            opened = self._session_meta(row, self._object(payload, "payload"))
            if opened is not None:
                return opened
        else:
            self.in_header = False
        thread = self.thread
        if thread is None or not self.delegation:
            return None
        facts: list[Fact] = [Acted(thread.id)]
        if isinstance(payload, dict) and kind != "session_meta":
            if thread.copying and self._own_row(thread, row, payload):
                thread.copying = False
            if not thread.copying:
                facts.extend(self._row_facts(thread, kind, payload))
        return self._observation(row, thread, tuple(facts))

    # -- headers ----------------------------------------------------------------------------

    def _session_meta(self, row: dict[str, Any], payload: Mapping[str, Any]) -> Observation | None:
        """Open the thread this header starts, or ``None`` when it only repeats or copies one
        (only the first ``session_meta`` of a thread is authoritative)."""
        thread_id = self._str(payload, "id", "payload", required=True)
        assert thread_id is not None
        current = self.thread
        if current is not None:
            if thread_id == current.id:
                return None
            if self.in_header and current.has_source:
                current.copying = True
                return None
        self.in_header = True
        return self._open_thread(row, payload, thread_id)

    def _open_thread(
        self, row: dict[str, Any], payload: Mapping[str, Any], thread_id: str
    ) -> Observation | None:
        source = payload.get("source")
        subagent = source.get("subagent") if isinstance(source, Mapping) else None
        spawn = subagent.get("thread_spawn") if isinstance(subagent, Mapping) else None
        spawn = self._object(spawn, "payload.source.subagent.thread_spawn")
        parent = self._str(spawn, "parent_thread_id", "thread_spawn") or self._str(
            payload, "parent_thread_id", "payload"
        )
        depth = spawn.get("depth")
        if depth is not None and (not isinstance(depth, int) or isinstance(depth, bool)):
            raise self._line_error("field 'thread_spawn.depth' must be an integer")
        session = self._str(payload, "session_id", "payload")
        self._str(payload, "cwd", "payload")  # validated: a mistyped field is refused
        ordinal = payload.get("subagent_history_start_ordinal")
        # Review, compaction, memory, guardian and agent-job threads run for the host itself.
        delegation = not (
            (subagent is not None and not spawn)
            or (isinstance(source, str) and source.startswith("agent_job"))
        )
        # Parentless threads are roots: a fork (``forked_from_id``) is a new tree. A child
        # without a root id still has one when its parent is a root (depth 1).
        root = thread_id if parent is None else session or (parent if depth == 1 else None)
        self.thread = RolloutThread(
            id=thread_id,
            root=root,
            workspace=(),  # roots are scoped by workspace for Cursor only
            has_source=parent is not None or payload.get("forked_from_id") is not None,
            created_ms=uuid7_millis(thread_id),
            own_from_ordinal=ordinal if isinstance(ordinal, int) else None,
            is_child=parent is not None,
        )
        self.delegation = delegation
        if not delegation:
            return None
        fact: Fact
        if parent is None:
            fact = RootSeen(thread_id, "transcript")
        else:
            fact = ChildIdentified(
                parent=parent,
                child=thread_id,
                resolution="transcript",
                depth=depth,
                agent_type=self._str(spawn, "agent_role", "thread_spawn"),
            )
        return self._observation(row, self.thread, (fact,))

    def _own_row(
        self, thread: RolloutThread, row: Mapping[str, Any], payload: Mapping[str, Any]
    ) -> bool:
        """Whether a row of a forked thread is its own rather than copied from its source."""
        ordinal = row.get("ordinal")
        own_from = thread.own_from_ordinal
        if own_from is not None and isinstance(ordinal, int) and ordinal >= own_from:
            return True
        event = payload.get("type")
        if event == "thread_settings_applied" and payload.get("thread_id") == thread.id:
            return True
        turn = payload.get("turn_id")
        started = uuid7_millis(turn) if isinstance(turn, str) else None
        if event not in ("task_started", None) or started is None or thread.created_ms is None:
            return False
        # Copied turns began before the fork existed; Codex turn ids are UUIDv7 too.
        return started >= thread.created_ms

    # -- rows -------------------------------------------------------------------------------

    def _row_facts(
        self, thread: RolloutThread, kind: Any, payload: Mapping[str, Any]
    ) -> list[Fact]:
        """The facts one row of ``thread`` states, told by the row's kind (``response_item``,
        ``event_msg``) and its payload's ``type``: agent tool calls and their outputs, the end
        of a child's turn, sub-agent activity, a collab agent's spawn or close; none for any
        other row."""
        item_type = payload.get("type")
        if kind == "response_item" and item_type == "function_call":
            return self._function_call(thread, payload)
        if kind == "response_item" and item_type == "function_call_output":
            return self._function_output(thread, payload)
        if kind != "event_msg":
            return []
        if item_type in ("task_complete", "turn_aborted"):
            # The end of a child's turn, as the SubagentStop hook reports it.
            return [Stopped(conversation=thread.id)] if thread.is_child else []
        if item_type == "item_completed":
            item = self._object(payload.get("item"), "payload.item")
            named = payload.get("thread_id")
            if item.get("type") != "SubAgentActivity" or named not in (None, thread.id):
                return []
            return self._sub_agent_activity(thread, item, spawn_key=self._str(item, "id", "item"))
        if item_type == "sub_agent_activity":
            return self._sub_agent_activity(thread, payload, spawn_key=None)
        if item_type == "collab_agent_spawn_end":
            child = self._str(payload, "new_thread_id", "payload")
            if child is None:
                return []
            spawn_key = self._str(payload, "call_id", "payload")
            return [self._identified(thread, child, spawn_key)]
        if item_type == "collab_close_end":
            child = self._str(payload, "receiver_thread_id", "payload")
            return [Stopped(conversation=child)] if child is not None else []
        return []

    def _function_call(self, thread: RolloutThread, payload: Mapping[str, Any]) -> list[Fact]:
        name = self._str(payload, "name", "payload")
        if name is None:
            return []
        base = tool_base_name(name)
        namespace = self._str(payload, "namespace", "payload") or ""
        arguments = _arguments(payload.get("arguments"))
        if base == "spawn_agent":
            call_id = self._str(payload, "call_id", "payload", required=True)
            assert call_id is not None
            thread.spawn_calls.add(call_id)
            return [
                SpawnRequested(
                    thread.id,
                    call_id,
                    agent_type=self._str(arguments, "agent_type", "arguments"),
                    description=self._str(arguments, "task_name", "arguments"),
                )
            ]
        if base in ("close_agent", "resume_agent") and namespace in _V1_NAMESPACES:
            target = self._str(arguments, "target", "arguments") or self._str(
                arguments, "id", "arguments"
            )
            if target is None:
                return []
            return [Stopped(conversation=target) if base == "close_agent" else Resumed(target)]
        return []

    def _function_output(self, thread: RolloutThread, payload: Mapping[str, Any]) -> list[Fact]:
        call_id = self._str(payload, "call_id", "payload")
        if call_id is None or call_id not in thread.spawn_calls:
            return []
        child = spawned_agent_id(payload.get("output"))
        return [] if child is None else [self._identified(thread, child, call_id)]

    def _sub_agent_activity(
        self, thread: RolloutThread, item: Mapping[str, Any], spawn_key: str | None
    ) -> list[Fact]:
        child = self._str(item, "agent_thread_id", "item") or self._str(
            item, "agentThreadId", "item"
        )
        kind = self._str(item, "kind", "item")
        if child is None or kind is None:
            return []
        if kind == "started":
            return [self._identified(thread, child, spawn_key)]
        if kind in _ENDING_KINDS:
            return [Stopped(conversation=child)]
        if kind == _WAKING_KIND:
            return [Resumed(child)]
        return []

    @staticmethod
    def _identified(thread: RolloutThread, child: str, spawn_key: str | None) -> ChildIdentified:
        return ChildIdentified(
            parent=thread.id, child=child, resolution="transcript", spawn_key=spawn_key
        )

    # -- helpers ----------------------------------------------------------------------------

    def _observation(
        self, row: Mapping[str, Any], thread: RolloutThread, facts: tuple[Fact, ...]
    ) -> Observation:
        return Observation(
            host=HOST,
            requester=thread.id,
            key=payload_key(row),
            facts=facts,
            root=thread.root,
            workspace=thread.workspace,
            at=parse_time(row.get("timestamp")),
        )

    def _line_error(self, reason: str) -> InputError:
        return InputError(reason, path=self.path, line=self.line)

    def _object(self, value: Any, name: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self._line_error(f"field {name!r} must be an object")
        return value

    def _str(
        self, mapping: Mapping[str, Any], key: str, parent: str, *, required: bool = False
    ) -> str | None:
        value = mapping.get(key)
        if value is None or value == "":
            if required:
                raise self._line_error(f"field '{parent}.{key}' is missing")
            return None
        if not isinstance(value, str):
            raise self._line_error(f"field '{parent}.{key}' must be a string")
        return value


def continuation_state(thread: str) -> dict[str, Any]:
    """A :meth:`RolloutReader.state` for a continuation of ``thread`` (a file that carries
    it on) when no earlier import read the thread: its rows still act for it."""
    return {"thread": {"id": thread}, "delegation": True, "in_header": False}


def _arguments(value: Any) -> Mapping[str, Any]:
    """A function call's arguments: JSON text, or already an object; empty when unreadable
    (the call is still a spawn; only its details are lost)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return {}
    return value if isinstance(value, Mapping) else {}
