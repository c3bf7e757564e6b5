"""Which lines of a Claude Code transcript to parse, found by searching bytes for markers.

Almost every byte of a profile is prompts, thinking and tool output, and looping over lines in
Python costs several times a search in C, so a file is read in large chunks and only the lines
a marker points to are parsed: ``Agent``/``Task`` calls (``"type":"tool_use"`` with that
name), the results of calls still open (by their ``tool_use_id``), ``<task-notification>`` rows
while background agents run, ``agent_progress`` rows in the versions that wrote them, and in a
session file the first row of another session (a recorder's concatenation of a ``/clear``).
Which markers are watched at a moment is the reader's business
(:class:`~.claude_session.SessionReader`); finding the lines is this module's.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from lineage_es.hosts.claude_rows import (
    COMPACT_TYPE_BYTES,
    SESSION_ID_BYTES,
    SPAWN_NAME_BYTES,
    TOOL_NAME_BYTES,
    TOOL_USE_BYTES,
    session_bytes,
)

#: The queue entry of a line that may start another session (:func:`next_session`).
_NEXT_SESSION = b"\0session"


def parse_marked_lines(
    data: bytes,
    pos: int,
    *,
    watched: Callable[[], set[bytes]],
    parse: Callable[[int, int], None],
    speaker: Callable[[], str | None] | None = None,
) -> None:
    """Parse, in order, each line of ``data`` from ``pos`` that a marker points to:
    ``parse(start, end)`` of the line. Spawn calls matter everywhere; any other marker only
    while ``watched()`` holds it, so each is searched for one occurrence at a time (a spawn's
    result is usually a few lines on, and after it nothing is left to look for). With
    ``speaker`` (a session file: the session its rows speak for so far), the first line of
    each other session is parsed too."""
    queue: list[tuple[int, int, bytes]] = [(s, e, b"") for s, e in spawn_calls(data, pos)]
    heapq.heapify(queue)
    scheduled: dict[bytes, int] = {}

    def look(marker: bytes, after: int) -> None:
        line = next_marked(data, after, marker)
        if line is not None:
            scheduled[marker] = line[0]
            heapq.heappush(queue, (*line, marker))
        else:
            scheduled.pop(marker, None)

    def look_for_next_session(after: int) -> None:
        line = next_session(data, after, speaker()) if speaker is not None else None
        if line is not None:
            heapq.heappush(queue, (*line, _NEXT_SESSION))

    for marker in watched():
        look(marker, pos)
    look_for_next_session(pos)
    parsed = -1
    while queue:
        start, end, marker = heapq.heappop(queue)
        watching = marker and marker != _NEXT_SESSION
        before = watched()
        if watching and marker not in before:
            scheduled.pop(marker, None)
            continue
        after = before
        if start != parsed:
            parsed = start
            parse(start, end)
            after = watched()
            for new in after - before:
                if new not in scheduled:
                    look(new, end)
        if watching:
            # Looked for again only while still watched: the line just parsed is usually
            # the one that ends the watch (a spawn's result), and a search for a marker
            # that occurs once runs to the end of the region.
            if marker in after:
                look(marker, end)
            else:
                scheduled.pop(marker, None)
        if marker == _NEXT_SESSION:
            look_for_next_session(end)  # a session after the one this line started


def spawn_calls(data: bytes, pos: int) -> list[tuple[int, int]]:
    """Lines holding an ``Agent``/``Task`` call: each ``tool_use`` block's name is checked
    just after it, without searching the rest of the line."""
    found: list[tuple[int, int]] = []
    marker = TOOL_USE_BYTES
    at = data.find(marker, pos)
    while at >= 0:
        name = data.find(TOOL_NAME_BYTES, at, at + 400)
        newline = data.find(b"\n", at, name) if name >= 0 else 0
        if (
            name >= 0
            and newline < 0
            and data.startswith(SPAWN_NAME_BYTES, name + len(TOOL_NAME_BYTES))
        ):
            end = data.index(b"\n", name) + 1
            found.append((data.rfind(b"\n", 0, at) + 1, end))
            at = data.find(marker, end)
        else:
            at = data.find(marker, at + len(marker))
    return found


def next_session(data: bytes, pos: int, session: str | None) -> tuple[int, int] | None:
    """The first line from ``pos`` whose ``sessionId`` is not ``session``'s, as (start, end)
    in ``data``: a second session in the file (a recorder's concatenation of a ``/clear``)
    starts at its own first row, which no other marker may point to. Checked first by the
    region's last line naming a session, so a region of one session costs one short search;
    a line naming ``session`` too (a fork's ``forkedFrom``) is the session's own."""
    if session is None:
        return None
    mine = session_bytes(session)
    last = data.rfind(SESSION_ID_BYTES, pos)
    if last < 0 or data.find(mine, data.rfind(b"\n", 0, last) + 1, len(data)) >= 0:
        return None
    at = data.find(SESSION_ID_BYTES, pos)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.index(b"\n", at) + 1
        if data.find(mine, start, end) < 0:
            return start, end
        at = data.find(SESSION_ID_BYTES, end)
    return None


def next_marked(data: bytes, pos: int, marker: bytes) -> tuple[int, int] | None:
    """The next line from ``pos`` holding ``marker``, as (start, end) in ``data``."""
    at = data.find(marker, pos)
    if at < 0:
        return None
    return data.rfind(b"\n", 0, at) + 1, data.index(b"\n", at) + 1


def parsed_whole(version: str, raw: bytes) -> bool:
    """Whether a file must be parsed whole: written before 2.1 (inline subagents, results
    without ``agentId``), or not in the compact JSON the markers look for."""
    return version.startswith(("0.", "1.", "2.0.")) or COMPACT_TYPE_BYTES not in raw


def mirrors_progress_rows(version: str) -> bool:
    """Whether the version may mirror children as ``agent_progress`` rows (seen in 2.1.38
    and 2.1.39, gone by 2.1.101)."""
    parts = version.split(".")
    try:
        return parts[:2] == ["2", "1"] and int(parts[2]) < 101
    except (IndexError, ValueError):
        return False
