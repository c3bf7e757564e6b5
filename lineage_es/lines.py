"""Reading JSONL a line at a time, each line bounded before anything looks at it.

The one line reader of the transcript readers (``lineage-replay``, ``lineage ingest``), of the
replay's recordings, of ``lineage import`` and of ``lineage journal import``. It splits and
bounds; what becomes of a line that is too long, of a torn last line or of one that is not
JSON is each caller's policy:

- :func:`bounded_lines` gives every line with its size and whether it ended; an overlong line
  either stops the reading (:class:`LineTooLong`, nothing past the bound read) or, for a
  caller that skips such lines (``lineage import``), is read through unheld and reported;
- :func:`numbered_lines` refuses an overlong line with :class:`InputError` naming the file and
  line (the replay's recordings);
- :func:`json_rows` also refuses a complete line that is not a JSON object, and ends quietly
  at a torn last line (the transcript readers);
- both, read leniently (``lineage ingest``), pass over such a line instead, hand the
  :class:`InputError` naming it to the caller (:data:`OnBadLine`) and read on;
- the journal's import (:mod:`lineage_es.journal`) refuses an overlong line with its number,
  reports a torn last line it skips, and bounds the whole file too.

A line's bound does not count its newline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from lineage_es.errors import InputError

#: A line longer than this is never held (the journal's own bound).
MAX_LINE_BYTES = 32 * 1024 * 1024

#: How much of an overlong line is read at a time while passing over it.
_CHUNK = 1024 * 1024

#: The most levels of nesting orjson writes (it reads deeper): a row nested deeper cannot be
#: keyed by its encoding, as the transcript readers key each row.
_WRITABLE_DEPTH = 254

#: Where a lenient read hands each bad line it passes over: the :class:`InputError` naming
#: its file, line and reason.
OnBadLine = Callable[[InputError], None]


def unreported(error: InputError) -> None:
    """The :data:`OnBadLine` of a look ahead (a file's form, its first row) in a lenient read:
    it passes a bad line over, and the read itself reports it."""


class LineTooLong(Exception):
    """A line longer than the bound, met by a reader that does not skip such lines."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"line is longer than {describe_size(limit)}")


def describe_size(count: int) -> str:
    """``count`` bytes for a message: in MiB when it is a whole number of them."""
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count % mib == 0 else f"{count} bytes"


def bounded_lines(
    stream: IO[bytes],
    limit: int = MAX_LINE_BYTES,
    skipped: Callable[[], object] | None = None,
) -> Iterator[tuple[bytes, int, bool]]:
    """Each line of ``stream`` from where it stands: its bytes, how many bytes it took, and
    whether it ended in a newline (only a last line may not).

    A line longer than ``limit`` bytes raises :class:`LineTooLong` as soon as it is met,
    unless ``skipped`` is given: then it is consumed in chunks, never held, and yielded as
    empty bytes with its true size, so the caller's offsets stay right; ``skipped()`` is
    called for it when it ended in a newline (one that did not may still be being written).
    """
    readline = stream.readline
    cap = limit + 1
    while raw := readline(cap):
        if len(raw) < cap or raw[-1] == 10:  # 10 is b"\n"
            yield raw, len(raw), raw[-1] == 10
            continue
        if skipped is None:
            raise LineTooLong(limit)
        size = len(raw)
        complete = False
        while chunk := readline(_CHUNK):
            size += len(chunk)
            if chunk[-1] == 10:
                complete = True
                break
        if complete:
            skipped()
        yield b"", size, complete


def numbered_lines(
    path: Path, limit: int = MAX_LINE_BYTES, *, overlong: OnBadLine | None = None
) -> Iterator[tuple[int, bytes]]:
    """Each line of ``path`` with its 1-based number; :class:`InputError` naming the file and
    line for one longer than ``limit``, refused unread. With ``overlong``, such a line is
    passed over unread (never held) and handed to ``overlong`` as that error instead, and the
    lines after it follow. The file is opened as it is read."""
    with path.open("rb") as stream:
        for number, line, _ in _numbered_bounded_lines(stream, path, limit, overlong):
            yield number, line


def json_rows(
    path: Path, limit: int = MAX_LINE_BYTES, *, bad: OnBadLine | None = None
) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """Each line's 1-based number and object (``None`` when blank), bounded before it is parsed.

    :class:`InputError` names the file and line of one longer than ``limit`` or of a complete
    line that is not a JSON object, or says the file cannot be opened. A last line without
    its newline that is not one is torn (an interrupted append): the rows end before it.

    With ``bad``, a bad line ends nothing: it is passed over (an overlong one unread), handed
    to ``bad`` as the :class:`InputError` naming it, and the rows after it follow as if it
    were absent. A row nested deeper than orjson writes is such a line then too: a transcript
    reader keys each row by its encoding, and would refuse it only after taking in what it
    says.
    """
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=str(path)) from None
    with stream:
        for number, line, complete in _numbered_bounded_lines(stream, path, limit, bad):
            if not line.strip():
                yield number, None
                continue
            try:
                value = _parse_row(path, number, line, complete, keyed=bad is not None)
            except InputError as error:
                if bad is None:
                    raise
                bad(error)
                continue
            if value is None:
                return
            yield number, value


def _numbered_bounded_lines(
    stream: IO[bytes], path: Path, limit: int, overlong: OnBadLine | None
) -> Iterator[tuple[int, bytes, bool]]:
    """Each line of ``stream`` (the file at ``path``) with its 1-based number and whether it
    ended in a newline. A line longer than ``limit`` is refused with :class:`InputError`
    naming it, unread; with ``overlong``, it is passed over unread and handed to
    ``overlong`` as that error instead."""
    number = 0
    try:
        lines = bounded_lines(stream, limit, None if overlong is None else _passed_over)
        for number, (line, _, complete) in enumerate(lines, 1):
            if overlong is not None and not line:  # passed over (a read line is never empty)
                overlong(_refused(path, number, limit))
                continue
            yield number, line, complete
    except LineTooLong:
        raise _refused(path, number + 1, limit) from None


def _parse_row(
    path: Path, number: int, line: bytes, complete: bool, *, keyed: bool
) -> dict[str, Any] | None:
    """The JSON object on ``line``; ``None`` when the line is torn (not one, and without its
    newline); :class:`InputError` when a complete line is not one or, ``keyed``, when the
    object is nested deeper than orjson writes (so it cannot be keyed by its encoding)."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if not complete:
            return None
        raise InputError(f"line is not JSON ({exc})", path=str(path), line=number) from None
    if not isinstance(value, dict):
        if not complete:
            return None
        raise InputError("line is not a JSON object", path=str(path), line=number)
    if keyed and not _writable(value):
        reason = f"row is nested more than {_WRITABLE_DEPTH} levels deep: it cannot be keyed"
        raise InputError(reason, path=str(path), line=number)
    return value


def _writable(value: dict[str, Any]) -> bool:
    """Whether orjson writes ``value`` back, as a reader must to key its row (a plain
    encoding costs less than looking for deep nesting in the line would)."""
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return False
    return True


def _passed_over() -> None:
    """An overlong line a lenient read passed over (reported where it is met)."""


def _refused(path: Path, number: int, limit: int) -> InputError:
    """The :class:`InputError` refusing line ``number`` of ``path`` as longer than ``limit``."""
    return InputError(
        f"line is longer than {describe_size(limit)}; refused unread", path=str(path), line=number
    )
