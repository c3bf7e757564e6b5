"""Reading history files a line at a time, from a byte offset, never a whole file at once.

Every line is bounded (32 MiB, as by the transcript readers' :mod:`lineage_es.lines`) before
anything looks at it; an overlong line is skipped unread and counted. The last line of a file
without its newline may still be being written: the caller decides whether it is complete (it
parses) or is left for the next import, which starts again at the offset before it.
"""

from __future__ import annotations

import io
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from lineage_es.lines import MAX_LINE_BYTES, bounded_lines

#: Files larger than this are skipped by default: no real transcript is near it, and it keeps
#: a stray multi-gigabyte file from holding the import for minutes.
MAX_FILE_BYTES = 1024 * 1024 * 1024

_CHUNK = 1024 * 1024

#: How much :class:`Chunks` reads at a time (never more than a line may hold).
REGION_BYTES = 4 * _CHUNK

#: Why rows or files were skipped, with how many of each.
Skips = Counter[str]

OVERLONG = f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB"
NOT_JSON = "line is not JSON"
TORN = "torn line (a JSON row cut short)"
NOT_OBJECT = "line is not a JSON object"
UNKNOWN_TYPE = "row of an unknown type"
BAD_FIELDS = "row with mistyped lineage fields"
UNREADABLE = "unreadable file"
TOO_LARGE = "file larger than the size limit"
BAD_SIDECAR = "unreadable agent sidecar (.meta.json)"
CORRUPT = "corrupt compressed file"


def is_compressed(path: Path) -> bool:
    return path.name.endswith(".zst")


def open_binary(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes, decompressed as a stream when it ends in ``.zst``.

    A compressed file is read frame after frame; where it is damaged (cut off inside a
    frame, bytes after a frame that begin none) the stream ends, after everything that
    decompressed before that point, and :func:`damaged` says so: zstandard's own reader
    would end a cut-off frame as if the file were whole."""
    raw = path.open("rb")
    if not is_compressed(path):
        return raw
    try:
        import zstandard  # noqa: F401 (checked here: the reader below needs it)
    except BaseException:
        raw.close()
        raise
    return io.BufferedReader(_Frames(raw), buffer_size=_CHUNK)


def damaged(stream: IO[bytes]) -> bool:
    """Whether ``stream`` (from :func:`open_binary`) ended early at damage in its file."""
    return bool(getattr(getattr(stream, "raw", None), "damaged", False))


class _Frames(io.RawIOBase):
    """The decompressed bytes of a ``.zst`` file: its frames one after another, up to the
    end or to the first damage (then ``damaged`` is set and the stream ends there).

    The compressed bytes are fed :data:`FEED` at a time: zstd can write 128 KiB from four
    bytes, so this bounds what one step makes (32 MiB, as a line is bounded), whatever the
    file claims to hold."""

    FEED = 1024

    def __init__(self, raw: IO[bytes]) -> None:
        import zstandard

        self._compressed = raw
        self._new_frame_decoder = zstandard.ZstdDecompressor().decompressobj
        self._error = zstandard.ZstdError
        self._frame: Any = None  # the frame being decompressed; None between frames
        self._started = False  # whether the current frame was fed any byte
        self._input, self._in_pos = b"", 0
        self._out, self._out_pos = b"", 0
        self._done = False
        self.damaged = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._out_pos >= len(self._out) and not self._done:
            self._decompress_step()
        size = min(len(buffer), len(self._out) - self._out_pos)
        buffer[:size] = memoryview(self._out)[self._out_pos : self._out_pos + size]
        self._out_pos += size
        return size

    def _decompress_step(self) -> None:
        if self._in_pos >= len(self._input):
            self._input, self._in_pos = self._compressed.read(_CHUNK), 0
            if not self._input:
                self._done = True
                self.damaged = self._frame is not None and self._started  # cut inside a frame
                return
        piece = self._input[self._in_pos : self._in_pos + self.FEED]
        self._in_pos += len(piece)
        if self._frame is None:
            self._frame, self._started = self._new_frame_decoder(), False
        try:
            out = self._frame.decompress(piece)
        except self._error:
            self._done = self.damaged = True  # not a frame, or a frame's bytes garbled
            return
        self._started = True
        if self._frame.eof:  # the next frame begins with what this one left unused
            self._in_pos -= len(self._frame.unused_data)
            self._frame = None
        self._out, self._out_pos = out, 0

    def close(self) -> None:
        self._compressed.close()
        super().close()


def read_lines(stream: IO[bytes], skips: Skips) -> Iterator[tuple[bytes, int, bool]]:
    """Each line of ``stream`` from where it stands: its bytes, how many bytes it took, and
    whether it ended in a newline.

    A line over :data:`MAX_LINE_BYTES` is consumed in chunks, never held, counted in
    ``skips`` and yielded as empty bytes with its true length, so the caller's offsets stay
    right; one that reaches the end of the file without its newline is yielded incomplete.
    """

    def overlong() -> None:
        skips[OVERLONG] += 1

    return bounded_lines(stream, MAX_LINE_BYTES, overlong)


def looks_like_object(raw: bytes) -> bool:
    """Whether a line (with or without its newline) has a JSON object's shape: it begins
    with ``{`` and ends with ``}``. Lines of that shape are the ones :func:`count_bad_lines`
    leaves to whoever parses them."""
    line = raw[:-1] if raw.endswith(b"\n") else raw
    return line.startswith(b"{") and line.endswith(b"}")


def why_bad(raw: bytes) -> str | None:
    """Why a line cannot be a row (:data:`TORN`, :data:`NOT_JSON`, :data:`NOT_OBJECT`), or
    ``None`` for a row and for a blank line."""
    line = raw.strip()
    if not line:
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        cut_short = line.startswith(b"{") and exc.pos >= len(line)
        return TORN if cut_short else NOT_JSON
    return None if isinstance(value, dict) else NOT_OBJECT


def count_bad_lines(data: bytes, skips: Skips) -> None:
    """Count in ``skips`` the lines of ``data`` (complete lines) that cannot be rows, without
    parsing the others: a row is a JSON object on one line, so a line that begins with ``{``
    and ends with ``}`` is taken for one (whoever parses it counts it if it is not), and only
    the others are parsed here, to say why (blank lines are no rows, and no fault).

    One C-level search per line (``bytes.find`` of the newline), two byte compares, and no
    copy: a few per cent of the time the marker searches take, where rows are long."""
    find = data.find
    pos, end = 0, len(data)
    while pos < end:
        stop = find(b"\n", pos)
        if stop < 0:
            stop = end
        if stop > pos and (data[pos] != 0x7B or data[stop - 1] != 0x7D):  # { ... }
            reason = why_bad(data[pos:stop])
            if reason is not None:
                skips[reason] += 1
        pos = stop + 1


class Region(NamedTuple):
    """Complete lines read in one go: ``data`` starts at byte ``offset`` of the file and ends
    right after a newline."""

    data: bytes
    offset: int


class Chunks:
    """A file read in large chunks from a byte offset, as regions of complete lines.

    Searching a large region for a few markers runs in C; looping over every line in Python
    costs several times that, so callers look only at the lines a marker points to. After
    the iteration, ``end`` is the offset after the last complete line, ``partial`` says an
    incomplete last line was left for the next import, and :meth:`last_lines` gives up to
    :data:`TAIL` of the last complete lines, newest first (cut from their regions only when
    asked for: most callers want one or two of them).
    """

    TAIL = 16

    def __init__(self, stream: IO[bytes], offset: int, skips: Skips) -> None:
        self.stream = stream
        self.end = offset
        self.skips = skips
        self.partial = False
        #: The last complete lines as (region offset, region data, start, stop).
        self._tail: list[tuple[int, bytes, int, int]] = []

    def last_lines(self) -> Iterator[tuple[int, bytes]]:
        """The last complete lines as (offset, bytes), newest first."""
        for base, data, start, stop in reversed(self._tail):
            yield base + start, data[start:stop]

    def _bytes_left(self) -> int | None:
        """How many bytes the file holds after the offset, when the stream is a file."""
        try:
            return os.fstat(self.stream.fileno()).st_size - self.end
        except (OSError, ValueError, AttributeError):
            return None

    def __iter__(self) -> Iterator[Region]:
        carry = b""
        skipping = 0  # > 0 while discarding an overlong line: the bytes discarded so far
        limit = MAX_LINE_BYTES
        size = min(REGION_BYTES, limit)
        left = self._bytes_left()
        while True:
            # Ask for no more than the file holds: a read allocates what it is asked for,
            # and most files are far smaller than a region. A file that grew since is read on
            # in whole regions, as one of unknown size is.
            data = self.stream.read(left if left is not None and 0 < left < size else size)
            if not data:
                break
            if left is not None:
                left -= len(data)
            if skipping:
                newline = data.find(b"\n")
                if newline < 0:
                    skipping += len(data)
                    continue
                self.skips[OVERLONG] += 1
                self.end += skipping + newline + 1
                skipping = 0
                data = data[newline + 1 :]
            buffer = carry + data if carry else data
            if carry and buffer.find(b"\n", len(carry)) >= limit:
                # The line begun in the previous chunk ends here, too long to look at.
                newline = buffer.find(b"\n", len(carry))
                self.skips[OVERLONG] += 1
                self.end += newline + 1
                buffer, carry = buffer[newline + 1 :], b""
            cut = buffer.rfind(b"\n") + 1
            if cut == 0:
                if len(buffer) > limit:
                    skipping, carry = len(buffer), b""
                else:
                    carry = buffer
                continue
            region = Region(buffer[:cut] if cut < len(buffer) else buffer, self.end)
            carry = buffer[cut:]
            if len(carry) > limit:
                skipping, carry = len(carry), b""
            self._remember_tail(region)
            self.end += cut
            yield region
        self.partial = bool(carry) or skipping > 0

    def _remember_tail(self, region: Region) -> None:
        """Where the region's last lines are; no line is copied (tool output makes them
        large, and a file's stop needs only its last timed row)."""
        data, base = region.data, region.offset
        found: list[tuple[int, bytes, int, int]] = []
        stop = len(data)
        while len(found) < self.TAIL and stop > 0:
            start = data.rfind(b"\n", 0, stop - 1) + 1
            found.append((base, data, start, stop))
            stop = start
        found.reverse()
        self._tail = (self._tail + found)[-self.TAIL :]
