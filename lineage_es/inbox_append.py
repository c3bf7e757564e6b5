"""Accepting one hook payload into its store's inbox, for :mod:`lineage_es.hook_fast`.

Standard library only, and nothing of the package but :mod:`lineage_es.user_files` (imported
as a top-level ``user_files`` when run from ``hook_fast.py``, whose folder is first on
``sys.path``): kept out of the script so that its bytecode is cached (a script is compiled on
every run, a module once).

What it does, in order: read the payload from stdin (at most 8 MiB, as the adapters accept);
take the inbox's append lock (``flock``); append one recording row
``{"host":HOST,"at":TIME,"payload":PAYLOAD}`` to the newest segment (``O_APPEND``), opening a
new segment past 1 MiB; ``fsync`` it (and the folder, for a new segment); let the lock go; start
the folder (``python -m lineage_es fold``, detached, never waited for) unless one is running;
exit 0. The folder journals the rows into the store in order, exactly once.

The payload's bytes are written as they came, not decoded: the row is valid JSON exactly when
the payload is one JSON value (its CR and LF, which valid JSON holds only as whitespace
between tokens, are written as spaces, so a row stays one line). The folder reads the row by
its fixed prefix and decodes the payload on its own, so a payload that is not JSON is refused
there, at its segment and line in ``hook.log``, as the full hook refuses it, and cannot pass
for a row's other fields. Decoding it here would import ``json`` (and ``re``) on every call.

Never in the host's way: any failure (no payload, a full inbox, a store URL that names no
place to keep it) is written to ``hook.log`` in the state dir and the exit status is 0.
"""

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from lineage_es import user_files
elif __name__ == "inbox_append":  # imported by hook_fast.py, its folder first on sys.path
    import user_files
else:
    from lineage_es import user_files

#: The most a payload may hold (:data:`lineage_es.hosts.base.MAX_PAYLOAD_BYTES`).
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024


class Refused(Exception):
    """A payload the hook does not accept: its reason goes to ``hook.log``."""


def parse_args(argv: list[str]) -> tuple[str, str | None]:
    """The host and the store (``--store URL``, else ``$LINEAGE_STORE``); everything from a
    ``#`` on is a comment and other words are ignored, as in :mod:`lineage_es.hook`."""
    host = ""
    store = os.environ.get("LINEAGE_STORE") or None
    i = 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("#"):
            break
        if word == "--store" and i + 1 < len(argv):
            i += 1
            store = argv[i]
        elif word.startswith("--store="):
            store = word.split("=", 1)[1]
        elif not word.startswith("-") and not host:
            host = word
        i += 1
    return host, store


def read_payload(fd: int) -> bytes:
    """The payload on ``fd``; one longer than :data:`MAX_PAYLOAD_BYTES` is read to its end
    (the host must not fail on a closed pipe) and refused."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size <= MAX_PAYLOAD_BYTES:
            chunks.append(chunk)
    if size > MAX_PAYLOAD_BYTES:
        raise Refused(f"the payload holds {size} bytes, more than {MAX_PAYLOAD_BYTES}")
    return b"".join(chunks)


def row(host: str, at: int, payload: bytes) -> bytes:
    """The recording row of ``payload`` from ``host`` received at ``at`` (nanoseconds since
    the epoch)."""
    body = payload.strip().replace(b"\r", b" ").replace(b"\n", b" ")
    stamp = user_files.utc_stamp(at)
    return b'{"host":"%s","at":"%s","payload":%s}\n' % (host.encode(), stamp.encode(), body)


def append_row(path: str, data: bytes) -> None:
    """Append ``data`` to the inbox in ``folder`` under its append lock, on disk when this
    returns. Raises :class:`Refused` when the inbox holds :data:`~user_files.MAX_SEGMENTS`
    segments already."""
    import fcntl

    user_files.make_private_folder(path)
    lock = user_files.open_private(os.path.join(path, user_files.APPEND_LOCK), os.O_WRONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        names = user_files.segments(path)
        target = names[-1] if names else ""
        fresh = not target or os.stat(os.path.join(path, target)).st_size >= (
            user_files.SEGMENT_BYTES
        )
        if fresh:
            if len(names) >= user_files.MAX_SEGMENTS:
                raise Refused(
                    f"the inbox {path} is full ({len(names)} segments wait to be journaled): "
                    "this payload was not accepted; run `lineage fold` to see why they wait"
                )
            # Numbered after the newest segment, or from the clock when none waits: a
            # drained segment's number is never used again.
            newest = int(target[:20]) if target else 0
            target = user_files.segment_name(max(newest + 1, time.time_ns()))
        fd = user_files.open_private(os.path.join(path, target), os.O_WRONLY | os.O_APPEND)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if fresh:
            _sync_folder(path)
    finally:
        os.close(lock)  # lets the flock go


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``; on a failure part-way (a full disk), cut the segment back to
    where it was, so no half row is left for the folder."""
    start = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError("nothing written")
            view = view[written:]
    except BaseException:
        os.ftruncate(fd, start)
        raise


def _sync_folder(path: str) -> None:
    """fsync the folder, so a new segment's name is on disk with its row."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def start_folder(folder: str, store: str) -> None:
    """Start the folder of this inbox unless one runs (it holds the running lock): detached
    in a session of its own, its stdin, stdout and stderr ``/dev/null`` (a host reading the
    hook's stdout must not wait for it), never waited for. The hook takes the running lock
    itself and hands it to the folder as its fd 3, so a hook right behind this one sees it
    taken and starts no second folder."""
    import fcntl

    lock_path = os.path.join(folder, user_files.RUNNING_LOCK)
    fd = user_files.open_private(lock_path, os.O_WRONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a folder is running
        package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        parts = (package_parent, env.get("PYTHONPATH"))
        env["PYTHONPATH"] = os.pathsep.join(p for p in parts if p)
        argv = [sys.executable, "-m", "lineage_es", "fold", "--store", store]
        argv += ["--background", "--lock-fd", "3"]
        null = os.devnull
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, fd, 3),
        ]
        os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
    finally:
        os.close(fd)  # the folder's fd 3 keeps the lock


def run(argv: list[str]) -> None:
    """Accept one payload (see the module's docstring); failures go to ``hook.log``."""
    host, store = parse_args(argv)
    try:
        if not host or not host.isascii() or not host.isalpha() or not host.islower():
            raise Refused(
                f"no host given ({host!r}); usage: python -S hook_fast.py HOST [--store URL]"
            )
        at = time.time_ns()
        payload = read_payload(0)
        if not payload or payload.isspace():
            raise Refused("no payload on stdin")
        url = store or user_files.default_store_url()
        folder = user_files.inbox_dir(url)
        if folder is None:
            if url in user_files.MEMORY_URLS:
                raise Refused(
                    f"{url!r} keeps nothing for hooks: each hook is a process of its own and "
                    "its memory goes when it exits, so this payload was not journaled; set "
                    "--store or LINEAGE_STORE to sqlite:///PATH or postgresql://USER@HOST/DB"
                )
            raise Refused(f"{url!r} is not a store URL; this payload was not journaled")
        append_row(folder, row(host, at, payload))
    except Refused as exc:
        user_files.write_log(host or "?", str(exc))
        return
    except Exception as exc:
        user_files.write_log(host or "?", f"{type(exc).__name__}: {exc}; payload not accepted")
        return
    try:
        start_folder(folder, url)
    except Exception as exc:  # the row is safe: the next hook or reader folds it
        user_files.write_log(host, f"cannot start the folder: {type(exc).__name__}: {exc}")


def main(argv: list[str]) -> None:
    """Run as the hook's process: accept the payload, then exit 0 at once (nothing to tear
    down), whatever happened."""
    try:
        run(argv)
    except BaseException as exc:  # even an interrupt: the host must not see a failure
        user_files.write_log("?", f"{type(exc).__name__}: {exc}")
    os._exit(0)
