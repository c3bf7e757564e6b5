"""What an expected file may hold, checked before and while it is read: its size, its nesting,
the nodes its aliases add, and the size of its numbers.

Each bound is far beyond what an expected file needs and far below what would exhaust time or
memory: a 300-byte "billion laughs" (anchors of anchors) would otherwise expand to a billion
nodes, and a 5,000-digit integer cannot even be printed. A document past a bound is refused
whole, naming the line where it passed it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from lineage_es.errors import InputError

#: The largest expected file read, in bytes (64 MiB): a generated file of 50,000 steps is about
#: 11 MB.
MAX_FILE_BYTES = 64 * 1024 * 1024
#: The deepest nesting of mappings and lists a document may have; an expected file needs 8.
MAX_DEPTH = 100
#: The nodes aliases may add to any document, however short (see :func:`alias_allowance`).
ALIAS_NODES = 100_000
#: The largest integer a document may hold: row numbers and depths are far below it, and a
#: larger one could not even be printed in an error (Python refuses int-to-text past 4,300
#: digits).
MAX_INTEGER = 2**63 - 1


def alias_allowance(text: str) -> int:
    """How many nodes (mappings, lists, scalars) the aliases of ``text`` may add in all:
    :data:`ALIAS_NODES`, or one per character of ``text`` when that is more, so that a
    document never grows past about twice what its text could hold without aliases."""
    return max(ALIAS_NODES, len(text))


def number_problem(value: Any, written: str) -> str | None:
    """Why a number read from the text ``written`` cannot be used, or ``None`` when it can: an
    integer past :data:`MAX_INTEGER`, or a float written finite that overflows to infinity."""
    if type(value) is int and abs(value) > MAX_INTEGER:
        return f"the integer {_short(written)} is too large (the limit is 2**63 - 1)"
    if type(value) is float and math.isinf(value) and "inf" not in written.lower():
        return f"the number {_short(written)} is too large for a float"
    return None


def _short(written: str) -> str:
    """A number's text, shortened when long: its ends and its length."""
    if len(written) <= 24:
        return written
    return f"{written[:12]}...{written[-6:]} ({len(written)} characters)"


class Refused(Exception):
    """The document breaks a bound: refused whole, at ``line``."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


def alias_refusal(line: int, allowance: int) -> Refused:
    """The refusal of a document whose aliases, the one at ``line`` last, add more nodes than
    ``allowance``."""
    return Refused(
        line,
        f"aliases expand this document past {allowance:,} added nodes (aliases may add "
        f"{ALIAS_NODES:,} nodes, or one per character of the file when that is more)",
    )


def depth_refusal(line: int) -> Refused:
    """The refusal of a document nested deeper than :data:`MAX_DEPTH` at ``line``."""
    return Refused(line, f"nested deeper than {MAX_DEPTH} levels of mappings and lists")


class NodeBudget:
    """The nodes a document may still build: those it writes plus the aliases' allowance."""

    __slots__ = ("allowance", "left")

    def __init__(self, written: int, allowance: int) -> None:
        self.allowance = allowance
        self.left = written + allowance


_PIECE_BYTES = 1024 * 1024


def read_bounded(path: Path) -> str:
    """The text of the file at ``path``, refused past :data:`MAX_FILE_BYTES` before any of it
    is parsed (naming the line at which it passes the limit)."""
    try:
        with path.open("rb") as stream:
            # In pieces: a read of the whole limit at once would take 64 MiB for any file.
            pieces: list[bytes] = []
            size = 0
            while size <= MAX_FILE_BYTES and (piece := stream.read(_PIECE_BYTES)):
                pieces.append(piece)
                size += len(piece)
        raw = b"".join(pieces)
        del pieces
        if len(raw) > MAX_FILE_BYTES:
            line = raw.count(b"\n", 0, MAX_FILE_BYTES) + 1
            reason = (
                f"the file is larger than {MAX_FILE_BYTES:,} bytes, the limit for an expected "
                "file; it passes the limit on this line"
            )
            raise InputError(reason, path=str(path), line=line)
    except OSError as exc:
        raise InputError(f"cannot read the expected file: {exc}", path=str(path)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        reason = f"not UTF-8: byte {raw[exc.start]:#04x} at offset {exc.start} ({exc.reason})"
        raise InputError(reason, path=str(path), line=line) from None


__all__ = [
    "ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_INTEGER",
    "NodeBudget",
    "Refused",
    "alias_allowance",
    "alias_refusal",
    "depth_refusal",
    "number_problem",
    "read_bounded",
]
