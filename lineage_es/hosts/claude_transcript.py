"""Claude Code session transcripts on disk as observations, row by row.

A session is ``<project>/<sessionId>.jsonl``; its subagents write ``agent-<agentId>.jsonl`` files
in ``<sessionId>/subagents/`` (2.1.2 on, with optional ``.meta.json`` sidecars) or beside the
session file (~2.0.24 to 2.1.1). Observations from agent files are merged in by time and
numbered with the main-file row after which they happened, so a replay checks them after it.

Children are placed and timed as ``lineage import`` places and times them, by what the rows
read so far state: an agent file's agent at its first row, under its sidecar's call, else the
one open call its first prompt repeats (:mod:`.claude_agents`); a child no file of its own
speaks for at its call, observed when its result (or a progress row) names it.

Reading streams: each file is read a line at a time, and an agent file is opened only when the
merge reaches its first row, so a session with hundreds of subagents keeps few files open.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from lineage_es.errors import InputError, PayloadError
from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Observation,
    Resumed,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.hosts.base import parse_time, payload_key
from lineage_es.hosts.claude import HOST, SPAWN_TOOLS, is_internal_agent, notified_stops
from lineage_es.hosts.claude_agents import Spawns, nests, prompt_digest
from lineage_es.hosts.transcript import TranscriptRow
from lineage_es.lines import MAX_LINE_BYTES, OnBadLine, json_rows, unreported

AGENT_FILE = re.compile(r"agent-(.+)\.jsonl")
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def read_transcript(path: Path, *, bad: OnBadLine | None = None) -> Iterator[TranscriptRow]:
    """The observations of a session transcript, numbered by the rows of ``path``.

    ``path`` may also be a lone ``agent-<id>.jsonl`` (its session file gone or unpublished):
    its own rows are numbered then. Raises :class:`InputError` naming the file and line of a
    row that is not a JSON object, or naming an agent's ``.meta.json`` sidecar that cannot be
    read; a torn last line (no newline, an interrupted append) is skipped. With ``bad``, such
    a line (in any of the session's files) is handed to ``bad`` instead and the rows after it
    are read as if it were absent; such a sidecar is handed to ``bad`` too (the error names
    no line) and its agent is placed as if it had none, as ``lineage import`` places it.
    """
    path = Path(path)
    match = AGENT_FILE.fullmatch(path.name)
    if match is not None:
        return _lone_agent_rows(path, match.group(1), bad)
    return _session_rows(path, bad)


# -- lines ----------------------------------------------------------------------------------


def _lines(path: Path, bad: OnBadLine | None = None) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Each line's number and object (``None`` when blank), bounded before it is parsed."""
    return json_rows(path, MAX_LINE_BYTES, bad=bad)


class _Head(NamedTuple):
    row: dict[str, Any] | None
    time: datetime | None
    session: str | None


def _head(path: Path, bad: OnBadLine | None = None) -> _Head:
    """The first row of ``path``, and its first time and session, reading no further than
    needed. Unreadable input ends the look quietly: the real read reports it with its line
    (with ``bad``, a bad line is looked past, as that read passes over it)."""
    first: dict[str, Any] | None = None
    time: datetime | None = None
    session: str | None = None
    try:
        for _, row in _lines(path, None if bad is None else unreported):
            if row is None:
                continue
            if first is None:
                first = row
            time = time or parse_time(row.get("timestamp"))
            session = session or _str(row, "sessionId")
            if time is not None and session is not None:
                break
    except InputError:
        pass
    return _Head(first, time, session)


def _str(mapping: Mapping[str, Any], key: str) -> str | None:
    value = mapping.get(key)
    return value if isinstance(value, str) and value else None


def _dict(mapping: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = mapping.get(key)
    return value if isinstance(value, dict) else {}


def _texts(content: Any) -> list[str]:
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


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


def _observation(
    row: dict[str, Any],
    requester: str,
    root: str | None,
    facts: list[Fact],
    at: datetime | None,
    where: tuple[Path, int],
    *,
    suffix: str = "",
) -> Observation:
    """The row's observation; with ``suffix``, one made apart from the row's own (under a
    key of its own), as ``lineage import`` makes it."""
    try:
        key = payload_key(row)
    except PayloadError as exc:
        raise InputError(exc.reason, path=str(where[0]), line=where[1]) from None
    return Observation(
        host=HOST,
        requester=requester,
        key=f"{key}:{suffix}" if suffix else key,
        facts=tuple(facts),
        root=root,
        workspace=(),  # roots are scoped by workspace for Cursor only
        at=at,
    )


# -- what rows mean, in whichever file ---------------------------------------------------------


class _ToolUse(NamedTuple):
    name: str
    resume: str | None
    prompt: bytes | None
    agent_type: str | None
    description: str | None


@dataclass
class _Meaning:
    """What rows mean given the rows before them, across the main file and agent files.

    Tool calls are remembered only until their result arrives.
    """

    tool_uses: dict[str, _ToolUse] = field(default_factory=dict)
    progress_children: set[str] = field(default_factory=set)
    #: Agents these rows stopped: the next row such an agent writes resumes it.
    stopped: set[str] = field(default_factory=set)

    def note(self, facts: list[Fact]) -> None:
        for fact in facts:
            if isinstance(fact, Stopped) and fact.conversation is not None:
                self.stopped.add(fact.conversation)
            elif isinstance(fact, Acted | Resumed):
                self.stopped.discard(fact.conversation)

    def facts(self, row: Mapping[str, Any], requester: str) -> list[Fact]:
        kind = row.get("type")
        content = _dict(row, "message").get("content")
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
        facts.extend(_notified_stops(row))
        return facts

    def inline_child(self, row: Mapping[str, Any], parent: str) -> list[Fact]:
        """A 2.0.x subagent written inline in its parent's file (no ``agentId``).

        Its first row repeats the spawn's prompt verbatim; when exactly one open spawn of
        ``parent`` has that prompt, the child is pending under it (it never gets an id).
        """
        texts = _texts(_dict(row, "message").get("content"))
        if row.get("type") != "user" or row.get("parentUuid") is not None or len(texts) != 1:
            return []
        prompt = _digest(texts[0])
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

    def _tool_use(self, block: Mapping[str, Any], requester: str) -> list[Fact]:
        key, name = _str(block, "id"), _str(block, "name")
        if key is None or name is None:
            return []
        if name not in SPAWN_TOOLS:
            self.tool_uses[key] = _ToolUse(name, None, None, None, None)
            return []
        tool_input = _dict(block, "input")
        prompt = _str(tool_input, "prompt")
        use = _ToolUse(
            name,
            _str(tool_input, "resume"),
            _digest(prompt) if prompt is not None else None,
            _str(tool_input, "subagent_type"),
            _str(tool_input, "description"),
        )
        self.tool_uses[key] = use
        if use.resume is not None:
            return [Resumed(use.resume)]
        return [SpawnRequested(requester, key, use.agent_type, use.description)]

    def _tool_result(self, keys: list[Any], result: Any, requester: str) -> list[Fact]:
        uses = [self.tool_uses.pop(k, None) if isinstance(k, str) else None for k in keys]
        if not keys or not isinstance(keys[0], str) or not isinstance(result, dict):
            return []
        key, use = keys[0], uses[0]
        if use is not None and use.name not in SPAWN_TOOLS:
            return []
        child = _str(result, "agentId")
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
                    agent_type=_str(result, "agentType") or (use.agent_type if use else None),
                    description=use.description if use else None,
                )
            )
        if completed:
            facts.append(Stopped(conversation=child))
        return facts

    def _progress(self, row: Mapping[str, Any], requester: str) -> list[Fact]:
        """2.1.38 to 2.1.39 mirror a running child in its parent's file as progress rows."""
        data = _dict(row, "data")
        child, key = _str(data, "agentId"), _str(row, "parentToolUseID")
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


def _notified_stops(row: Mapping[str, Any]) -> list[Fact]:
    """A background task's ``<task-notification>`` (queued, delivered, or attached) with a
    final status stops it; ids of tasks that are not agents name nothing the engine knows."""
    kind = row.get("type")
    if kind == "queue-operation":
        texts = [row["content"]] if isinstance(row.get("content"), str) else []
    elif kind == "user":
        texts = _texts(_dict(row, "message").get("content"))
    elif kind == "attachment":
        prompt = _dict(row, "attachment").get("prompt")
        texts = [prompt] if isinstance(prompt, str) else []
    else:
        return []
    return [stop for text in texts for stop in notified_stops(text)]


# -- what a session's files have shown so far, to place its children by ------------------------


@dataclass
class _Session:
    """What the rows read so far say about one session's spawn calls and children, across
    its main file and agent files (:class:`~lineage_es.hosts.claude_agents.Spawns`), to place
    children by the same evidence as ``lineage import`` (which has every row of the session
    read when it places them).
    """

    meaning: _Meaning
    #: The agents with a file of their own in this session.
    agent_ids: frozenset[str] = frozenset()
    spawns: Spawns = field(default_factory=Spawns)

    def note(self, facts: list[Fact], at: datetime | None) -> None:
        """Remember what ``facts``, observed at ``at``, say about calls and children."""
        self.meaning.note(facts)
        for fact in facts:
            self.spawns.note(fact, at, self.meaning.tool_uses)

    def observe(
        self,
        row: dict[str, Any],
        requester: str,
        root: str | None,
        facts: list[Fact],
        at: datetime | None,
        where: tuple[Path, int],
        *,
        otherwise: Fact | None = None,
    ) -> list[Observation]:
        """The row's observations: first the start of each child it names that started at
        its call (observed at the call's time, under a key of its own, as ``lineage import``
        observes it), then the row's other facts (``otherwise`` when there are none, or
        nothing). ``facts`` are noted."""
        early, rest = self.spawns.started_at_calls(facts, at, self.agent_ids)
        if not rest and otherwise is not None:
            rest = [otherwise]
        made: list[Observation] = []
        for fact, when in early:
            self.note([fact], when)
            suffix = f"start:{fact.child}"
            made.append(_observation(row, requester, root, [fact], when, where, suffix=suffix))
        if rest or not early:
            self.note(rest, at)
            made.append(_observation(row, requester, root, rest, at, where))
        return made

    def place(self, start: Fact, row: Mapping[str, Any], root: str | None) -> Fact:
        """An agent's start from its first ``row``, placed where the transcripts place it
        when its sidecar did not (:meth:`~lineage_es.hosts.claude_agents.Spawns.place`)."""
        if not isinstance(start, ChildStarted) or start.child is None:
            return start
        placed = self.spawns.place(
            start, prompt=prompt_digest(row), nesting=nests(row.get("version")), root=root
        )
        return placed or start


# -- the main file ------------------------------------------------------------------------------


@dataclass
class _MainFile:
    """Rows of the session file: the session's own activity, and where one session ends."""

    path: Path
    state: _Session
    #: The time of a row that carries none: the latest one before it (or the file's first).
    at: datetime | None
    session: str | None = None
    seen: set[str] = field(default_factory=set)

    def observe(self, number: int, row: dict[str, Any] | None) -> list[Observation | None]:
        """The row's observation, preceded by the end of the previous session when the
        session changes (``/clear`` recordings hold two sessions in one file), and by the
        start of a child it names that started at its call (:meth:`_Session.observe`)."""
        if row is None:
            return [None]
        uuid = _str(row, "uuid")
        if uuid is not None:
            if uuid in self.seen:  # rows repeat (quirk 5)
                return [None]
            self.seen.add(uuid)
        self.at = parse_time(row.get("timestamp")) or self.at
        session = _str(row, "sessionId")
        if session is None:  # it belongs to the next session, which it does not name
            return [None]
        where = (self.path, number)
        before: list[Observation | None] = []
        facts: list[Fact] = []
        if self.session is None:
            facts.append(RootSeen(session, source="transcript"))
        elif session != self.session:
            ended: list[Fact] = [SessionEnded(self.session)]
            before.append(_observation(row, self.session, self.session, ended, self.at, where))
            facts.append(RootSeen(session, source="clear"))
        self.session = session
        meaning = self.state.meaning
        if row.get("isSidechain") is True and _str(row, "agentId") is None:
            # 2.0.x inline subagent rows: not the root's doing, and the child has no id.
            facts.extend(meaning.inline_child(row, session))
            if not facts:
                return [*before, None]
        else:
            facts.extend(meaning.facts(row, session))
        # A row that says nothing else (or only names children that started at their
        # calls) is the session acting.
        made = self.state.observe(
            row, session, session, facts, self.at, where, otherwise=Acted(session)
        )
        return [*before, *made]


# -- agent files ----------------------------------------------------------------------------------


class _AgentRow(NamedTuple):
    key: datetime
    number: int
    row: dict[str, Any]
    first: bool
    last: bool


@dataclass
class _AgentFile:
    """One subagent's transcript: it starts at its first row and stops at its last."""

    path: Path
    agent: str
    session: str | None
    start: datetime | None
    meta: Mapping[str, Any]
    #: Where bad lines go, read leniently (:func:`read_transcript`).
    bad: OnBadLine | None = None
    #: Lines read so far (all of them once the rows are exhausted).
    lines: int = field(default=0, init=False)
    _rows: Iterator[_AgentRow] | None = field(default=None, init=False, repr=False)

    def next_row(self) -> _AgentRow | None:
        if self._rows is None:
            self._rows = self._read()
        return next(self._rows, None)

    def _read(self) -> Iterator[_AgentRow]:
        """Rows in order, repeats dropped, each knowing whether it is the first or last.

        ``key`` never goes back in time, so the merge can rely on each file being ordered.
        """
        seen: set[str] = set()
        key = self.start or _EARLIEST
        held: tuple[datetime, int, dict[str, Any]] | None = None
        first = True
        for number, row in _lines(self.path, self.bad):
            self.lines = number
            if row is None:
                continue
            uuid = _str(row, "uuid")
            if uuid is not None:
                if uuid in seen:
                    continue
                seen.add(uuid)
            key = max(key, parse_time(row.get("timestamp")) or key)
            if held is not None:
                yield _AgentRow(*held, first=first, last=False)
                first = False
            held = (key, number, row)
        if held is not None:
            yield _AgentRow(*held, first=first, last=True)

    def observe(self, item: _AgentRow, state: _Session) -> list[Observation]:
        """The row's observations; none for a row of a running agent that says nothing
        more than that it is still running."""
        row = item.row
        agent = _str(row, "agentId") or self.agent
        session = _str(row, "sessionId") or self.session
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
    tool_use = _str(meta, "toolUseId")
    parent_agent = _str(meta, "parentAgentId")
    depth = meta.get("spawnDepth")
    depth = depth if isinstance(depth, int) and not isinstance(depth, bool) else None
    agent_type = _str(meta, "agentType")
    description = _str(meta, "description")
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


def _agent_file(
    path: Path, agent: str, session: str | None, *, same_session: bool, bad: OnBadLine | None
) -> _AgentFile | None:
    """The agent file at ``path``, or ``None`` when it is not delegation (Claude Code's own
    helpers, 2.0.x ``Warmup`` sidechains) or, with ``same_session``, is another session's.
    Its sidecar is read now (:func:`_sidecar`)."""
    if is_internal_agent(agent):
        return None
    head = _head(path, bad)
    if head.row is not None:
        if is_internal_agent(_str(head.row, "agentId") or agent):
            return None
        if _texts(_dict(head.row, "message").get("content")) == ["Warmup"]:
            return None
    if same_session and (head.session is None or head.session != session):
        return None
    meta = _sidecar(path, bad)
    return _AgentFile(path, agent, head.session or session, head.time, meta, bad)


def _sidecar(agent_path: Path, bad: OnBadLine | None) -> Mapping[str, Any]:
    """The agent file's sidecar (:func:`_meta`). With ``bad``, one that cannot be read is
    handed to ``bad`` (the :class:`InputError` naming it) and read as absent: its agent is
    placed by the transcripts (:meth:`_Session.place`), as ``lineage import`` places it."""
    if bad is None:
        return _meta(agent_path)
    try:
        return _meta(agent_path)
    except InputError as exc:
        bad(exc)
        return {}


def _meta(agent_path: Path) -> Mapping[str, Any]:
    """The ``agent-<id>.meta.json`` sidecar beside an agent file; empty when absent."""
    path = agent_path.with_name(agent_path.name[: -len(".jsonl")] + ".meta.json")
    try:
        with path.open("rb") as stream:
            raw = stream.read(MAX_LINE_BYTES + 1)
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


def _session_agents(path: Path, session: str | None, bad: OnBadLine | None) -> list[_AgentFile]:
    """The session's agent files: under its ``subagents/`` folder (:func:`_subagents_folder`),
    and beside the session file in the older flat layout (there, only those whose rows name
    this session)."""
    nested = sorted(_subagents_folder(path, session).glob("agent-*.jsonl"))
    flat = sorted(path.parent.glob("agent-*.jsonl")) if session is not None else []
    found: dict[str, _AgentFile] = {}
    for candidate, same_session in [(p, False) for p in nested] + [(p, True) for p in flat]:
        match = AGENT_FILE.fullmatch(candidate.name)
        if match is None or match.group(1) in found:
            continue
        agent = _agent_file(candidate, match.group(1), session, same_session=same_session, bad=bad)
        if agent is not None:
            found[match.group(1)] = agent
    return sorted(found.values(), key=lambda a: (a.start or _EARLIEST, a.path.name))


class _Merge:
    """Agent-file rows in time order, each file opened when the merge reaches it."""

    def __init__(self, agents: list[_AgentFile], state: _Session) -> None:
        self._state = state
        self._order = itertools.count()
        self._heap: list[tuple[datetime, int, int, _AgentFile, _AgentRow | None]] = [
            (agent.start or _EARLIEST, index, next(self._order), agent, None)
            for index, agent in enumerate(agents)
        ]
        heapq.heapify(self._heap)

    def before(self, limit: datetime | None) -> Iterator[Observation]:
        """Observations of rows earlier than ``limit`` (all of them when ``None``)."""
        while self._heap and (limit is None or self._heap[0][0] < limit):
            _, index, _, agent, item = heapq.heappop(self._heap)
            if item is not None:
                yield from agent.observe(item, self._state)
            following = agent.next_row()
            if following is not None:
                entry = (following.key, index, next(self._order), agent, following)
                heapq.heappush(self._heap, entry)


# -- putting it together --------------------------------------------------------------------------


def _session_rows(path: Path, bad: OnBadLine | None) -> Iterator[TranscriptRow]:
    head = _head(path, bad)
    agents = _session_agents(path, head.session, bad)
    state = _Session(_Meaning(), frozenset(a.agent for a in agents))
    main = _MainFile(path, state, head.time)
    merge = _Merge(agents, state)
    last = 0
    for number, row in _lines(path, bad):
        time = parse_time(row.get("timestamp")) if row is not None else None
        if time is not None and last:
            for merged in merge.before(time):
                yield TranscriptRow(last, merged, own=False)
        observations = main.observe(number, row)
        for index, observation in enumerate(observations):
            yield TranscriptRow(number, observation, own=index == len(observations) - 1)
        last = number
    if last:
        for merged in merge.before(None):
            yield TranscriptRow(last, merged, own=False)


def _lone_agent_rows(path: Path, agent: str, bad: OnBadLine | None) -> Iterator[TranscriptRow]:
    """An agent file read on its own: its rows numbered in it, its session unread."""
    found = _agent_file(path, agent, None, same_session=False, bad=bad)
    if found is None:
        for number, _ in _lines(path, bad):
            yield TranscriptRow(number, None)
        return
    state = _Session(_Meaning(), frozenset({found.agent}))
    done = 0
    while (item := found.next_row()) is not None:
        for number in range(done + 1, item.number):
            yield TranscriptRow(number, None)
        observations: list[Observation | None] = [*found.observe(item, state)] or [None]
        for index, observation in enumerate(observations):
            yield TranscriptRow(item.number, observation, own=index == len(observations) - 1)
        done = item.number
    for number in range(done + 1, found.lines + 1):
        yield TranscriptRow(number, None)


# -- driving row meaning from outside (``lineage import`` reads rows itself) -----------------


class RowMeaning(_Meaning):
    """What rows mean, for a reader that picks and parses rows itself, with the open spawn
    calls as plain data: a later run resumes a grown file where this one stopped."""

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


def read_meta(agent_path: Path) -> Mapping[str, Any]:
    """The ``agent-<id>.meta.json`` sidecar beside an agent file; empty when absent.
    Raises :class:`InputError` naming the sidecar when it is unreadable."""
    return _meta(agent_path)


def is_warmup(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` opens a 2.0.x ``Warmup`` sidechain (Claude Code's own, not a child)."""
    return _texts(_dict(row, "message").get("content")) == ["Warmup"]


__all__ = [
    "AGENT_FILE",
    "RowMeaning",
    "TranscriptRow",
    "agent_start",
    "is_warmup",
    "read_meta",
    "read_transcript",
]
