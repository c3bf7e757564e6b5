"""Quiet roots: live roots whose whole tree has had no fact for a while.

A host that sends no session end (Codex has none; a Claude or Cursor session killed or crashed
sends none) leaves its root live for good: the journal never learns it ended, and nothing is
stopped by guesswork. The default ``lineage tree`` leaves such roots out instead, once no fact
about any node of their tree has arrived for :data:`DEFAULT_QUIET_AFTER` (``--quiet-after``,
``LINEAGE_QUIET_AFTER``), and says how many it left out; ``--all`` shows them, marked with
how long they have been quiet. Quietness is counted up to the moment the tree shows: now, or
a time-travelling tree's moment.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from lineage_es.model import ForestNode

#: How long a live root's tree may go without a fact before the default tree leaves it out.
DEFAULT_QUIET_AFTER = timedelta(hours=2)

#: The environment variable that sets ``--quiet-after``.
QUIET_AFTER_ENV = "LINEAGE_QUIET_AFTER"

#: What ``--quiet-after`` takes to leave no root out.
NEVER = frozenset({"off", "never", "none"})

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw]?)")


def parse_duration(text: str) -> timedelta | None:
    """A ``--quiet-after`` value: a positive number with an optional unit (``s``, ``m``,
    ``h``, ``d``, ``w``; none: seconds), or several (``1h30m``); ``off`` (or ``never``,
    ``none``) for no limit, returned as ``None``. Anything else raises :class:`ValueError`
    saying what is accepted."""
    cleaned = text.strip().lower()
    if cleaned in NEVER:
        return None
    seconds = 0.0
    at = 0
    for match in _DURATION.finditer(cleaned):
        if match.start() != at or (not match.group(2) and match.end() != len(cleaned)):
            break
        seconds += float(match.group(1)) * _UNITS[match.group(2) or "s"]
        at = match.end()
    if not cleaned or at != len(cleaned) or seconds <= 0:
        raise ValueError(
            f"{text!r} is not a duration: give a positive number of seconds, or one with a "
            "unit (90s, 30m, 2h, 1d, 1h30m), or 'off' to leave no root out"
        )
    try:
        return timedelta(seconds=seconds)
    except OverflowError:
        raise ValueError(
            f"{text!r} is longer than the longest duration ({timedelta.max.days:,} days): give "
            "'off' to leave no root out"
        ) from None


def newest_in(node: ForestNode) -> str | None:
    """The latest ``last_seen`` in ``node``'s drawn tree (``None`` when no node has one),
    walked without recursion (a chain of agents may be deeper than the recursion limit)."""
    newest: str | None = None
    stack = [node]
    while stack:
        item = stack.pop()
        if item.last_seen is not None and (newest is None or item.last_seen > newest):
            newest = item.last_seen
        stack.extend(item.children)
    return newest


def _moment(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class QuietSplit:
    """A forest split by quietness: the roots to draw, how long each drawn quiet root has
    been quiet (by conversation), and how many quiet roots were left out."""

    shown: tuple[ForestNode, ...]
    quiet: Mapping[str, timedelta]
    left_out: int


def split_quiet(
    forest: Iterable[ForestNode],
    *,
    now: datetime,
    after: timedelta | None,
    keep: bool,
    newest_of: Callable[[Sequence[ForestNode]], Sequence[str | None]] | None = None,
) -> QuietSplit:
    """Split ``forest`` at ``now``: a live root is quiet when the latest fact about any node
    of its tree is ``after`` or more before ``now``. Quiet roots are left out, unless
    ``keep`` (then they are drawn and listed with how long they have been quiet). A root with
    no known time, or a stopped one, is never quiet; ``after`` ``None`` leaves nothing out.

    The latest fact is first looked for among the drawn nodes (:func:`newest_in`); the roots
    that look quiet by them are then asked about together, once, by ``newest_of`` (the latest
    time of each, in order), when given: the caller may look wider (stopped nodes a live-only
    tree does not draw) at little cost."""
    roots = tuple(forest)
    quiet = {
        index: since
        for index, root in enumerate(roots)
        if after is not None
        and root.status == "live"  # the drawn tree is walked only where it can be quiet
        and (since := _quiet_for(root, now, after, newest_in(root))) is not None
    }
    if newest_of is not None and quiet:
        looked_at = list(quiet)
        wider = newest_of([roots[index] for index in looked_at])
        for index, newest in zip(looked_at, wider, strict=True):
            since = _quiet_for(roots[index], now, after, newest)
            if since is None:
                del quiet[index]
            else:
                quiet[index] = since
    shown: list[ForestNode] = []
    quiet_roots: dict[str, timedelta] = {}
    left_out = 0
    for index, root in enumerate(roots):
        since = quiet.get(index)
        if since is None:
            shown.append(root)
        elif keep:
            shown.append(root)
            quiet_roots[root.conversation] = since
        else:
            left_out += 1
    return QuietSplit(tuple(shown), quiet_roots, left_out)


def _quiet_for(
    root: ForestNode, now: datetime, after: timedelta | None, newest: str | None
) -> timedelta | None:
    """How long ``root``, whose latest fact is at ``newest``, has been quiet at ``now``, when
    that is ``after`` or more."""
    if after is None or root.status != "live":
        return None
    last = _moment(newest) if newest is not None else None
    if last is None:
        return None
    since = now - last
    return since if since >= after else None


def quiet_label(since: timedelta) -> str:
    """How long a root has been quiet, as the text tree marks it: ``quiet 3h``."""
    seconds = int(since.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"quiet {seconds // size}{unit}"
    return f"quiet {max(seconds, 0)}s"


def left_out_line(count: int, after: timedelta) -> str:
    """What the tree says about the roots it left out."""
    roots = "root" if count == 1 else "roots"
    return (
        f"{count} quiet {roots} left out (no fact for {_span(after)} or more; "
        "--all shows them, --quiet-after changes the limit)"
    )


def _span(after: timedelta) -> str:
    seconds = int(after.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"
