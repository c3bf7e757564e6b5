"""Recorded streams: which of the four forms a file is, and its rows in order.

A file is read as a stream (never whole), each line bounded before it is parsed, so a replay of a
huge or hostile recording fails on the offending line instead of exhausting memory.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from lineage_es.engine.callers import CallerFinder, CallerUnknown
from lineage_es.errors import InputError, LineageError, PayloadError, UnknownHost
from lineage_es.facts import HOSTS, LOGICAL_EPOCH, Host, Observation
from lineage_es.hosts import adapter
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.detect import (
    FORM_HOST,
    Form,
    contradiction,
    is_hook_payload,
    likely_host,
    payload_host,
    row_form,
)
from lineage_es.hosts.transcript import TranscriptRow
from lineage_es.lines import MAX_LINE_BYTES, OnBadLine, numbered_lines, unreported
from lineage_es.model import AgentLineage


@dataclass(frozen=True, slots=True)
class PayloadRow:
    """A native hook payload, as the host wrote it on the hook's stdin."""

    row: int
    host: Host
    payload: Mapping[str, Any]
    at: datetime


@dataclass(frozen=True, slots=True)
class McpRow:
    """An MCP tool call: its caller is identified as ``lineage mcp`` identifies it (its
    ``_meta``, and for Cursor its tool and ``arguments``) and checked; it journals nothing."""

    row: int
    host: Host
    tool: str
    meta: Mapping[str, Any]
    at: datetime
    arguments: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ObservationRow:
    """What a transcript reader made of one row of a Claude transcript or a Codex rollout."""

    row: int
    observation: Observation | None
    own: bool = True


@dataclass(frozen=True, slots=True)
class BadRow:
    """A line that cannot be used, read leniently (``read_rows(..., lenient=True)``): its
    number and why, the other lines still read. ``error`` names the file and line: a Claude
    agent file's line, merged into its session's rows, is numbered in the agent file."""

    row: int
    error: InputError


Row = PayloadRow | McpRow | ObservationRow | BadRow


def logical_time(row: int) -> datetime:
    """The replay's clock for a row that carries no time of its own: row order is time order."""
    return LOGICAL_EPOCH + timedelta(seconds=row)


def scan_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Each line of ``path`` with its 1-based number; :class:`InputError` for one longer than
    :data:`MAX_LINE_BYTES` (the journal's own bound)."""
    return numbered_lines(path, MAX_LINE_BYTES)


def parse_line(path: Path, number: int, line: bytes) -> dict[str, Any]:
    """One line as a JSON object, or :class:`InputError` naming the line and why not."""
    try:
        value = orjson.loads(line.strip())
    except orjson.JSONDecodeError as exc:
        raise _line_error(
            path, number, f"line is not JSON: {exc.msg} at column {exc.colno}"
        ) from None
    if not isinstance(value, dict):
        kind = type(value).__name__ if value is not None else "null"
        raise _line_error(path, number, f"line holds a JSON {kind}, not an object")
    return value


def detect_form(path: Path, *, lenient: bool = False) -> Form:
    """The form of the recording at ``path``, from its first non-blank line (``lenient``:
    its first line that is a JSON object)."""
    lines = numbered_lines(path, MAX_LINE_BYTES, overlong=unreported) if lenient else None
    for number, line in scan_lines(path) if lines is None else lines:
        if line.strip():
            try:
                return row_form(parse_line(path, number, line))
            except InputError:
                if not lenient:
                    raise
    raise InputError("the recording is empty: no rows to replay", path=str(path))


def read_rows(path: Path, *, host: str | None = None, lenient: bool = False) -> Iterator[Row]:
    """The rows of ``path`` in order, whatever its form.

    ``host`` names the host of bare hook payloads (from ``--host`` or the expected file); without
    it each payload's host is detected. Blank lines are skipped and keep their numbers. A line
    that cannot be used raises :class:`InputError`; ``lenient``, it is a :class:`BadRow`
    instead and the lines after it are read: an overlong one is passed over unread, and a
    transcript's reader (whose rows build on the ones before) reads on as if it were absent.
    """
    if host is not None and host not in HOSTS:
        raise InputError(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}")
    form = detect_form(path, lenient=lenient)
    implied = FORM_HOST.get(form)
    if implied is not None and host is not None and host != implied:
        raise InputError(
            f"the recording is a {form} (host {implied}), not host {host}", path=str(path)
        )
    if form == "hooks":
        return _hook_rows(path, host, lenient)
    if form == "recording":
        return _recording_rows(path, host, lenient)
    return _transcript_rows(path, form, lenient)


#: What a line of the recording form holds.
_RECORDING_FORM = "{host, at, payload} or {host, at, mcp}"

#: Where the host of a bare payload came from when it is given.
_GIVEN = "the host given by --host or the expected file"


def _lines(path: Path, lenient: bool) -> Iterator[tuple[int, bytes] | BadRow]:
    """:func:`scan_lines`; ``lenient``, a line too long to read is a :class:`BadRow`, passed
    over unread, and the lines after it follow."""
    return _lenient_lines(path) if lenient else scan_lines(path)


def _lenient_lines(path: Path) -> Iterator[tuple[int, bytes] | BadRow]:
    refused: list[InputError] = []
    for item in numbered_lines(path, MAX_LINE_BYTES, overlong=refused.append):
        yield from _bad_rows(refused)
        yield item
    yield from _bad_rows(refused)


def _bad_rows(refused: list[InputError]) -> Iterator[BadRow]:
    """The lines a lenient read passed over since it was last asked, as :class:`BadRow`."""
    for error in refused:
        yield BadRow(error.line or 0, error)
    refused.clear()


def _hook_rows(path: Path, host: str | None, lenient: bool) -> Iterator[Row]:
    fixed = None if host is None else _known_host(host)
    previous: Host | None = None
    for item in _lines(path, lenient):
        if isinstance(item, BadRow):
            yield item
            continue
        number, line = item
        if not line.strip():
            continue
        try:
            row = _hook_row(path, number, line, fixed, previous)
        except InputError as exc:
            if not lenient or exc.line != number:
                raise
            yield BadRow(number, exc)
            continue
        previous = row.host
        yield row


def _hook_row(
    path: Path, number: int, line: bytes, fixed: Host | None, previous: Host | None
) -> PayloadRow:
    payload = parse_line(path, number, line)
    if row_form(payload) == "recording":
        raise _line_error(
            path,
            number,
            f"the line is in the recording form ({_RECORDING_FORM}), but the file is a "
            "capture of bare hook payloads (as its first line is): a file holds one form",
        )
    if fixed is not None:
        reason = contradiction(payload, fixed, _GIVEN)
        if reason is not None:
            raise _line_error(path, number, reason)
    row_host = fixed if fixed is not None else _detected(path, number, payload, previous)
    return PayloadRow(row=number, host=row_host, payload=payload, at=logical_time(number))


def _detected(path: Path, number: int, payload: Mapping[str, Any], previous: Host | None) -> Host:
    """The host of a bare payload, from its own fields. One no adapter recognises is refused:
    by what it lacks when it looks like one host's (a Claude payload without ``session_id``),
    else as from no known host."""
    try:
        return payload_host(payload)
    except UnknownHost as exc:
        unknown = exc
    meant = likely_host(payload, previous)
    if meant is not None:
        try:
            adapter(meant).observe(payload)
        except PayloadError as exc:
            raise _line_error(path, number, str(exc)) from None
    raise _line_error(path, number, unknown.reason) from None


def _recording_rows(path: Path, host: str | None, lenient: bool) -> Iterator[Row]:
    for item in _lines(path, lenient):
        if isinstance(item, BadRow):
            yield item
            continue
        number, line = item
        if not line.strip():
            continue
        try:
            yield _recording_row(path, number, line, host)
        except InputError as exc:
            if not lenient or exc.line != number:
                raise
            yield BadRow(number, exc)


def _recording_row(path: Path, number: int, line: bytes, host: str | None) -> Row:
    record = parse_line(path, number, line)
    if not {"host", "payload", "mcp"} & record.keys():
        kind = "a bare hook payload" if is_hook_payload(record) else "no recorded row"
        raise _line_error(
            path,
            number,
            f"the line is not in the recording form ({_RECORDING_FORM}) the file's first "
            f"line is in: it holds {kind}, and a file holds one form",
        )
    row_host = record.get("host")
    if row_host not in HOSTS:
        raise _line_error(
            path, number, f"'host' must be one of {', '.join(HOSTS)}, not {row_host!r}"
        )
    if host is not None and row_host != host:
        raise _line_error(
            path, number, f"row is from host {row_host}, but the host given is {host}"
        )
    at = parse_time(record.get("at"))
    if at is None:
        raise _line_error(path, number, "'at' must be an ISO-8601 time (when the row was received)")
    if ("payload" in record) == ("mcp" in record):
        raise _line_error(path, number, "a recorded row holds exactly one of 'payload' or 'mcp'")
    if "payload" in record:
        payload = record["payload"]
        if not isinstance(payload, dict):
            raise _line_error(path, number, "'payload' must be a JSON object")
        reason = contradiction(payload, row_host, "the row's host")
        if reason is not None:
            raise _line_error(path, number, reason)
        return PayloadRow(row=number, host=_known_host(row_host), payload=payload, at=at)
    mcp = record["mcp"]
    if not isinstance(mcp, dict) or not isinstance(mcp.get("_meta"), dict):
        raise _line_error(path, number, "'mcp' must be an object with a '_meta' object")
    tool = mcp.get("tool")
    if not isinstance(tool, str):
        raise _line_error(path, number, "'mcp.tool' must be the tool's name")
    arguments = mcp.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise _line_error(path, number, "'mcp.arguments' must be an object when given")
    _check_meta(path, number, _known_host(row_host), mcp["_meta"])
    return McpRow(
        row=number,
        host=_known_host(row_host),
        tool=tool,
        meta=mcp["_meta"],
        at=at,
        arguments=arguments,
    )


def _check_meta(path: Path, number: int, host: Host, meta: Mapping[str, Any]) -> None:
    """Refuse an MCP row whose ``_meta`` can name no caller the way its host names one
    (:meth:`~lineage_es.hosts.base.HostAdapter.caller_meta_problem`)."""
    problem = adapter(host).caller_meta_problem(meta)
    if problem is not None:
        raise _line_error(path, number, problem)


def mcp_caller(engine: Any, row: McpRow) -> AgentLineage | None:
    """The caller's lineage of a recorded MCP call, as ``lineage mcp`` identifies it from
    what the rows before it journaled; ``None`` when it cannot be identified. ``engine`` is
    an :class:`~lineage_es.engine.engine.Engine` (the replay's own, or one on ``--store``)."""
    finder = _FINDERS.get(engine)
    if finder is None:
        finder = _FINDERS[engine] = CallerFinder(engine)
    try:
        return finder.identify(row.meta, row.tool, row.arguments, host=row.host).lineage
    except CallerUnknown:
        return None


def family_relations(engine: Any, lineage: AgentLineage | None) -> dict[str, str] | None:
    """What every agent of ``lineage``'s family is to it, as ``list_agents`` (and ``lineage
    agents --as``) gives it; ``None`` for no requester, or one the journal does not hold."""
    if lineage is None:
        return None
    try:
        members = engine.agents(lineage.conversation, lineage.host)
    except LineageError:
        return None
    return {m.conversation: m.relation for m in members if m.root == lineage.root}


#: One caller finder per engine a replay runs on (it follows that engine's journal).
_FINDERS: weakref.WeakKeyDictionary[Any, CallerFinder] = weakref.WeakKeyDictionary()


def _transcript_rows(path: Path, form: Form, lenient: bool) -> Iterator[Row]:
    """The reader's rows. Strictly, the first bad line ends them (the file's lines are bounded
    first, so the reader never sees a huge one); ``lenient``, the reader passes over each bad
    line, reading on as if it were absent, and it comes as a :class:`BadRow` in its place."""
    refused: list[InputError] = []
    bad: OnBadLine | None = refused.append if lenient else None
    if not lenient:
        for _ in scan_lines(path):
            pass
    rows: Iterator[TranscriptRow]
    try:
        if form == "claude-transcript":
            from lineage_es.hosts.claude_transcript import read_transcript

            rows = iter(read_transcript(path, bad=bad))
        else:
            from lineage_es.hosts.codex_rollout import read_rollout

            rows = iter(read_rollout(path, bad=bad))
    except ImportError as exc:
        raise InputError(
            f"cannot read a {form}: its reader is missing ({exc})", path=str(path)
        ) from None
    try:
        for item in rows:
            yield from _bad_rows(refused)
            yield ObservationRow(row=item.row, observation=item.observation, own=item.own)
        yield from _bad_rows(refused)
    except InputError as exc:
        if exc.path is None:
            raise InputError(exc.reason, path=str(path), line=exc.line) from None
        raise
    except LineageError as exc:
        raise InputError(str(exc), path=str(path)) from None


def _line_error(path: Path, line: int, reason: str) -> InputError:
    """The :class:`InputError` refusing line ``line`` of ``path`` for ``reason``."""
    return InputError(reason, path=str(path), line=line)


def _known_host(name: object) -> Host:
    """``name`` as a :data:`~lineage_es.facts.Host`; :class:`InputError` when it names none."""
    for host in HOSTS:
        if name == host:
            return host
    raise InputError(f"unknown host {name!r}; expected one of {', '.join(HOSTS)}")
