"""The agent files of a Claude Code session: where they are, their sidecars, and their rows.

Each subagent writes ``agent-<agentId>.jsonl``: in ``<sessionId>/subagents/`` (2.1.2 on, with
an optional ``agent-<agentId>.meta.json`` sidecar naming its spawn) or beside the session file
(~2.0.24 to 2.1.1, where only the rows tell which session a file belongs to). An agent starts
at its file's first row and stops at its last. Claude Code's own helper agents and 2.0.x
``Warmup`` sidechains are not delegation and are passed over.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from lineage_es.errors import InputError
from lineage_es.facts import Acted, ChildIdentified, ChildStarted, Fact, Observation, Stopped
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.claude import is_internal_agent
from lineage_es.hosts.claude_evidence import SessionEvidence
from lineage_es.hosts.claude_rows import is_warmup, text_field
from lineage_es.lines import MAX_LINE_BYTES, OnBadLine, json_rows, unreported

#: An agent file's name, its agent id the one group.
AGENT_FILE = re.compile(r"agent-(.+)\.jsonl")

#: The time of a file whose rows carry none: before every other.
EARLIEST = datetime.min.replace(tzinfo=UTC)


class FirstLook(NamedTuple):
    """A file's first row, and the first time and session its rows carry."""

    row: dict[str, Any] | None
    time: datetime | None
    session: str | None


def first_look(path: Path, bad: OnBadLine | None = None) -> FirstLook:
    """The first row of ``path``, and its first time and session, reading no further than
    needed. Unreadable input ends the look quietly: the real read reports it with its line
    (with ``bad``, a bad line is looked past, as that read passes over it)."""
    first: dict[str, Any] | None = None
    time: datetime | None = None
    session: str | None = None
    try:
        for _, row in json_rows(path, bad=None if bad is None else unreported):
            if row is None:
                continue
            if first is None:
                first = row
            time = time or parse_time(row.get("timestamp"))
            session = session or text_field(row, "sessionId")
            if time is not None and session is not None:
                break
    except InputError:
        pass
    return FirstLook(first, time, session)


class AgentRow(NamedTuple):
    """One row of an agent file: the time it is merged by (never earlier than the rows
    before it), its line number, and whether it is the file's first or last row."""

    key: datetime
    number: int
    row: dict[str, Any]
    first: bool
    last: bool


@dataclass
class AgentFile:
    """One subagent's transcript: it starts at its first row and stops at its last."""

    path: Path
    agent: str
    session: str | None
    start: datetime | None
    meta: Mapping[str, Any]
    #: Where bad lines go, read leniently (:func:`~.claude_transcript.read_transcript`).
    bad: OnBadLine | None = None
    #: Lines read so far (all of them once the rows are exhausted).
    lines: int = field(default=0, init=False)
    _rows: Iterator[AgentRow] | None = field(default=None, init=False, repr=False)

    def next_row(self) -> AgentRow | None:
        """The file's next row (the file is opened at the first); ``None`` at its end."""
        if self._rows is None:
            self._rows = self._rows_in_order()
        return next(self._rows, None)

    def _rows_in_order(self) -> Iterator[AgentRow]:
        """Rows in order, repeats dropped, each knowing whether it is the first or last.

        ``key`` never goes back in time, so the merge can rely on each file being ordered.
        """
        seen: set[str] = set()
        key = self.start or EARLIEST
        held: tuple[datetime, int, dict[str, Any]] | None = None
        first = True
        for number, row in json_rows(self.path, bad=self.bad):
            self.lines = number
            if row is None:
                continue
            uuid = text_field(row, "uuid")
            if uuid is not None:
                if uuid in seen:
                    continue
                seen.add(uuid)
            key = max(key, parse_time(row.get("timestamp")) or key)
            if held is not None:
                yield AgentRow(*held, first=first, last=False)
                first = False
            held = (key, number, row)
        if held is not None:
            yield AgentRow(*held, first=first, last=True)

    def observe(self, item: AgentRow, state: SessionEvidence) -> list[Observation]:
        """The row's observations; none for a row of a running agent that says nothing
        more than that it is still running."""
        row = item.row
        agent = text_field(row, "agentId") or self.agent
        session = text_field(row, "sessionId") or self.session
        facts = state.meaning.facts(row, agent)
        if item.first:
            facts.insert(0, state.place(agent_start(self.meta, agent, session), row, session))
        elif facts or agent in state.meaning.stopped:
            # Acting first places an unknown spawner, or resumes a stopped agent.
            facts.insert(0, Acted(agent))
        if item.last:
            facts.append(Stopped(conversation=agent))
        if not facts:
            return []
        at = parse_time(row.get("timestamp")) or item.key
        return state.observe(row, agent, session, facts, at, (self.path, item.number))


def agent_start(meta: Mapping[str, Any], agent: str, session: str | None) -> Fact:
    """A child's start, placed by its ``.meta.json`` sidecar when that says enough."""
    tool_use = text_field(meta, "toolUseId")
    parent_agent = text_field(meta, "parentAgentId")
    depth = meta.get("spawnDepth")
    depth = depth if isinstance(depth, int) and not isinstance(depth, bool) else None
    agent_type = text_field(meta, "agentType")
    description = text_field(meta, "description")
    # parentAgentId is written only at depth >= 2, so depth 1 alone names the root; a
    # toolUseId alone lets the engine find the parent from the spawn it names.
    parent = parent_agent or (session if depth == 1 else None)
    if parent is None:
        return ChildStarted(
            child=agent, spawn_key=tool_use, agent_type=agent_type, description=description
        )
    return ChildIdentified(
        parent=parent,
        child=agent,
        resolution="transcript",
        spawn_key=tool_use,
        depth=depth,
        agent_type=agent_type,
        description=description,
    )


def placement_key(agent: str, started: Any, spawn_key: str) -> str:
    """The key of the placement ``lineage import`` makes of an agent started at ``started``
    without its call, once the call ``spawn_key`` is found for it."""
    return payload_key({"agentId": agent, "placedAt": started, "call": spawn_key})


def open_agent_file(
    path: Path, agent: str, session: str | None, *, same_session: bool, bad: OnBadLine | None
) -> AgentFile | None:
    """The agent file at ``path``, or ``None`` when it is not delegation (Claude Code's own
    helpers, 2.0.x ``Warmup`` sidechains) or, with ``same_session``, is another session's.
    Its sidecar is read now (:func:`_sidecar_or_absent`)."""
    if is_internal_agent(agent):
        return None
    head = first_look(path, bad)
    if head.row is not None:
        if is_internal_agent(text_field(head.row, "agentId") or agent):
            return None
        if is_warmup(head.row):
            return None
    if same_session and (head.session is None or head.session != session):
        return None
    meta = _sidecar_or_absent(path, bad)
    return AgentFile(path, agent, head.session or session, head.time, meta, bad)


def _sidecar_or_absent(agent_path: Path, bad: OnBadLine | None) -> Mapping[str, Any]:
    """The agent file's sidecar (:func:`read_meta`). With ``bad``, one that cannot be read is
    handed to ``bad`` (the :class:`InputError` naming it) and read as absent: its agent is
    placed by the transcripts (:meth:`.SessionEvidence.place`), as ``lineage import`` places
    it."""
    if bad is None:
        return read_meta(agent_path)
    try:
        return read_meta(agent_path)
    except InputError as exc:
        bad(exc)
        return {}


def read_meta(agent_path: Path) -> Mapping[str, Any]:
    """The ``agent-<id>.meta.json`` sidecar beside an agent file; empty when absent.
    Raises :class:`InputError` naming the sidecar when it is unreadable."""
    path = agent_path.with_name(agent_path.name[: -len(".jsonl")] + ".meta.json")
    try:
        with path.open("rb") as stream:
            # Asked for no more than the file holds: a read allocates all it is asked for.
            size = os.fstat(stream.fileno()).st_size
            raw = stream.read(min(size, MAX_LINE_BYTES) + 1)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=str(path)) from None
    if len(raw) > MAX_LINE_BYTES:
        raise InputError("sidecar is larger than 32 MiB; refused unread", path=str(path))
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"sidecar is not JSON ({exc})", path=str(path)) from None
    if not isinstance(value, dict):
        raise InputError("sidecar is not a JSON object", path=str(path))
    return value


def _subagents_folder(path: Path, session: str | None) -> Path:
    """The session's ``subagents/`` folder: ``<stem>/subagents`` beside the file or, failing
    that (a transcript copied under another name), ``<sessionId>/subagents`` beside it, the
    session id being the one its rows carry."""
    named = path.with_suffix("") / "subagents"
    if named.is_dir() or session is None or not _plain_name(session):
        return named
    return path.parent / session / "subagents"


def _plain_name(name: str) -> bool:
    """Whether ``name`` names an entry of one folder (no separator, not ``.``/``..``): an id
    read from a row never leads outside the transcript's own folder."""
    return name not in (".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def session_agent_files(path: Path, session: str | None, bad: OnBadLine | None) -> list[AgentFile]:
    """The session's agent files: under its ``subagents/`` folder (:func:`_subagents_folder`),
    and beside the session file in the older flat layout (there, only those whose rows name
    this session)."""
    nested = sorted(_subagents_folder(path, session).glob("agent-*.jsonl"))
    flat = sorted(path.parent.glob("agent-*.jsonl")) if session is not None else []
    found: dict[str, AgentFile] = {}
    for candidate, same_session in [(p, False) for p in nested] + [(p, True) for p in flat]:
        match = AGENT_FILE.fullmatch(candidate.name)
        if match is None or match.group(1) in found:
            continue
        agent = open_agent_file(
            candidate, match.group(1), session, same_session=same_session, bad=bad
        )
        if agent is not None:
            found[match.group(1)] = agent
    return sorted(found.values(), key=lambda a: (a.start or EARLIEST, a.path.name))
