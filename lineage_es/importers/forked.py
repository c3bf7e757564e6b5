"""Reading in forked worker processes, the results handed back in order.

Searching a history file's bytes for markers holds the GIL, so threads would not share it;
forked processes do, without starting Python again or pickling what they are asked to do:
each inherits the importer as it stands and sends back only what it found, over its own
pipe. The parent takes the results in order while the workers read on, so it journals one
batch while they read the next.

Used only where ``fork`` is safe: on Linux, from a process running no other thread (a forked
child would inherit the other threads' locks held). The children never touch what they
inherited beyond reading it: they leave with ``os._exit``, running no finalizer (the parent's
store connections stay the parent's), and ignore Ctrl-C, which the parent handles by
stopping them.
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import struct
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import IO, NoReturn, TypeVar, cast

from lineage_es.errors import LineageError

R = TypeVar("R")

#: Each message: a tag (``R`` a result, ``E`` an exception) and the pickle's length.
_HEADER = struct.Struct("<cQ")

#: Ask for pipes this large, so the workers rarely wait for the parent to take a result.
_PIPE_BYTES = 1024 * 1024


def shares(sizes: Sequence[int], workers: int) -> list[int]:
    """Which worker does each task: in order, to the least loaded so far (by ``sizes``), so
    every worker goes through the tasks in order, at about the pace of the others."""
    loads = [0] * workers
    owners: list[int] = []
    for size in sizes:
        owner = loads.index(min(loads))
        owners.append(owner)
        loads[owner] += max(size, 1)
    return owners


def in_order(work: Callable[[int], R], sizes: Sequence[int], workers: int) -> Iterator[R]:
    """``work(i)`` for each task ``i`` of ``sizes``, done by ``workers`` forked processes
    and yielded in task order. An exception in a worker is raised here, at its task; the
    workers are stopped and reaped however the iteration ends. Where no process can be
    started (a limit reached), this one does the work."""
    owners = shares(sizes, workers)
    children: list[tuple[int, IO[bytes]]] = []
    try:
        # The children never collect (nor finalize) what they inherit. What a caller froze
        # before stays frozen: unfreezing is all or nothing.
        frozen_before = gc.get_freeze_count()
        gc.freeze()
        try:
            for worker in range(workers):
                mine = [task for task, owner in enumerate(owners) if owner == worker]
                children.append(_start_worker(work, mine, children))
        except OSError:
            _stop_workers(children)
            children.clear()
        finally:
            if not frozen_before:
                gc.unfreeze()
        if not children:
            for task in range(len(owners)):
                yield work(task)
            return
        for owner in owners:
            yield cast(R, _receive_result(children[owner][1]))
    finally:
        _stop_workers(children)


def _start_worker(
    work: Callable[[int], R], tasks: list[int], running: list[tuple[int, IO[bytes]]]
) -> tuple[int, IO[bytes]]:
    """A worker doing ``tasks``, and the pipe it answers on."""
    read_end, write_end = os.pipe()
    try:
        _widen_pipe(write_end)
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        raise
    if pid == 0:
        os.close(read_end)
        for _, stream in running:
            os.close(stream.fileno())
        _run_worker(work, tasks, write_end)
    os.close(write_end)
    return pid, os.fdopen(read_end, "rb")


def _stop_workers(children: list[tuple[int, IO[bytes]]]) -> None:
    """Close each worker's pipe, end it and reap it (none is left a zombie)."""
    for pid, stream in children:
        stream.close()  # a worker still writing gets a broken pipe and leaves
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)


def _widen_pipe(fd: int) -> None:
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass  # the system's default size works, with more waiting


def _run_worker(work: Callable[[int], R], tasks: list[int], fd: int) -> NoReturn:
    """In the forked child: do ``tasks`` in order, sending each result (or the first
    exception, then stop) down ``fd``; leave with ``os._exit``, running no finalizer."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        with os.fdopen(fd, "wb") as out:
            for task in tasks:
                try:
                    tag, blob = b"R", pickle.dumps(work(task), protocol=pickle.HIGHEST_PROTOCOL)
                except BaseException as exc:
                    tag, blob, code = b"E", _pickled_exception(exc), 1
                out.write(_HEADER.pack(tag, len(blob)))
                out.write(blob)
                if code:
                    break
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _pickled_exception(exc: BaseException) -> bytes:
    """``exc`` as the parent will raise it, with the worker's traceback as a note."""
    exc.add_note("in a forked reading process:\n" + "".join(traceback.format_exception(exc)))
    try:
        blob = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(blob)
    except Exception:
        plain = RuntimeError(f"{type(exc).__name__}: {exc}")
        plain.add_note("".join(traceback.format_exception(exc)))
        blob = pickle.dumps(plain, protocol=pickle.HIGHEST_PROTOCOL)
    return blob


def _receive_result(stream: IO[bytes]) -> object:
    """The next result a worker sent; its exception raised here; :class:`LineageError` when
    the worker ended before sending it."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise LineageError("a reading process ended before it was done (killed?)")
    tag, size = _HEADER.unpack(header)
    blob = stream.read(size)
    if len(blob) < size:
        raise LineageError("a reading process ended before it was done (killed?)")
    value = pickle.loads(blob)
    if tag == b"E":
        raise value
    return value
