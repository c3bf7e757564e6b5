"""One hook invocation on the full path: read a host's payload, journal it at once (and answer
its lineage), and never get in the host's way.

The hook ``lineage install-hooks`` installs is the fast one (:mod:`lineage_es.hook_fast`): it
only appends the payload to the store's inbox. This path journals the payload in its own
process, for a caller that needs the answer (``--print-lineage``) or a recording
(``--record``); opening the engine folds what waits in the inbox first, so the order of
acceptance holds. It imports as little as it can (no click; the engine only once a payload is
in hand) and it never fails the host: whatever goes wrong is written to ``hook.log`` in the
state dir and the exit status is 0.

Run it as ``lineage hook HOST [--store URL] [--record FILE] [--print-lineage]`` or
``python -m lineage_es.hook HOST ...`` (no click to import), HOST being one of
:data:`lineage_es.facts.HOSTS`.

What a hook may print: Claude Code adds the stdout of ``SessionStart`` and ``UserPromptSubmit``
hooks to the model's context, Codex parses any non-empty stdout as a JSON reply (and fails a
``Stop`` hook whose reply it cannot parse), and Cursor treats output it cannot read as no
answer. Each accepts an empty stdout with exit status 0 as "carry on unchanged" (Codex:
``codex-rs/hooks/src/events/stop.rs`` skips an empty stdout; Cursor: the recorded
``preToolUse``/``sessionStart`` probes in the corpus printed nothing and the action went
ahead), so a hook that neither blocks nor changes the action prints nothing at all.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NamedTuple, NoReturn

if TYPE_CHECKING:
    from lineage_es.model import AgentLineage

#: How long the hook waits for another process's write lock on the store (seconds): well
#: inside the 10 s a host gives a hook (``install-hooks``), so a store held locked costs one
#: logged, lost event, never a host killing the hook or waiting on it at every event.
LOCK_TIMEOUT = 4

#: The error log in the state dir, and the size at which it is rotated to ``hook.log.1``.
LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1024 * 1024

#: What every host accepts on stdout from a hook that neither blocks nor changes the action
#: (see above): nothing at all.
QUIET_OUTPUT = b""


class HookOutcome(NamedTuple):
    """What one invocation did: the host the payload was taken as, what to print on stdout,
    the sender's lineage (``None`` when the payload was ignored or failed), and the error
    that was logged, if any."""

    host: str | None
    stdout: bytes
    lineage: AgentLineage | None = None
    error: str | None = None


def read_payload(stream: IO[bytes], limit: int | None = None) -> bytes:
    """At most ``limit + 1`` bytes of ``stream``: one more than allowed marks it too long
    without holding an unbounded stream in memory. By default the limit is the adapters'
    bound (:data:`lineage_es.hosts.base.MAX_PAYLOAD_BYTES`): a longer payload is refused
    unparsed. The rest of a longer one is read and dropped, so that the host writing it does
    not fail on a closed pipe."""
    if limit is None:
        from lineage_es.hosts.base import MAX_PAYLOAD_BYTES

        limit = MAX_PAYLOAD_BYTES
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        while stream.read(1 << 20):
            pass
    return b"".join(chunks)


def recording_line(host: str, at: datetime, payload: dict[str, Any]) -> bytes:
    """The payload in the recording form of ``lineage-replay``: host, receipt time, payload."""
    import orjson

    stamp = at.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return orjson.dumps({"host": host, "at": stamp, "payload": payload}) + b"\n"


def append_private(path: Path, data: bytes) -> None:
    """Append ``data`` to a file only its owner can read, in a folder only its owner can
    enter, whatever the umask (:mod:`lineage_es.private_files`): recordings hold prompts and
    tool input."""
    from lineage_es.private_files import append_private as append

    append(path, data)


def run_hook(
    host: str,
    raw: bytes,
    *,
    store: str | None = None,
    record: Path | None = None,
    at: datetime | None = None,
    answer: bool = True,
    own_process: bool = False,
) -> HookOutcome:
    """Journal one raw hook payload from ``host`` into ``store`` (default: the user's store).

    Never raises: any failure is logged to ``hook.log`` and reported in the outcome, and
    ``stdout`` is always what the host accepts from a hook that changes nothing.
    """
    received = at or datetime.now(UTC)
    taken: str | None = None
    try:
        from lineage_es.errors import PayloadError
        from lineage_es.facts import HOSTS
        from lineage_es.hosts.base import parse_payload
        from lineage_es.hosts.detect import hook_host

        if host not in HOSTS:
            raise ValueError(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}")
        taken = host
        if not raw or raw.isspace():
            raise PayloadError("no payload on stdin")
        # Depth and size as JSON are the adapter's to check, with the encoding it makes the
        # key from: checking them here too would encode every payload twice.
        payload = parse_payload(raw, check=False)
        taken = hook_host(host, payload)
        _import_engine(taken, freeze=own_process)
        from lineage_es.engine.engine import open_engine
        from lineage_es.hosts import adapter

        # The adapter judges the payload before it is recorded: a recording holds only what
        # ``lineage ingest`` takes back, and one nested past orjson's 255 levels never
        # reaches the recording's encoding. It is recorded before it is journaled, so a
        # failure while journaling leaves it in the recording all the same.
        observation = adapter(taken).observe(payload, at=received)
        if record is not None:
            _append_to_recording(record, taken, received, payload)
        refuse_a_store_hooks_cannot_keep(store)
        with open_engine(store, lock_timeout=LOCK_TIMEOUT) as engine:
            # Without ``answer`` nobody reads it: it is not built (the tree of every live root).
            lineage = engine.observe(observation.host, observation, at=received, answer=answer)
    except Exception as exc:
        said = getattr(exc, "reason", None) if getattr(exc, "host", None) == taken else None
        reason = f"{type(exc).__name__}: {said if isinstance(said, str) else exc}"
        expected = isinstance(exc, ValueError) or _is_lineage_error(exc)
        where = payload_context(raw, taken)
        log_error(
            taken or host,
            f"{reason} [{where}]" if where else reason,
            "" if expected else _traceback(),
        )
        return HookOutcome(taken, QUIET_OUTPUT, error=reason)
    return HookOutcome(taken, QUIET_OUTPUT, lineage=lineage)


def payload_context(raw: bytes, host: str | None = None) -> str:
    """``hook_event_name=… session_id=…``: what a payload from ``host`` that failed was about
    (:func:`lineage_es.inbox.payload_context`, which the inbox's folder logs with too)."""
    from lineage_es.inbox import payload_context as context

    return context(raw, host)


def _import_engine(host: str, *, freeze: bool) -> None:
    """Import what journaling a payload from ``host`` needs with the cyclic garbage collector
    paused: the imports allocate some 18,000 objects that live as long as the process
    (modules, classes, functions), which the collector would otherwise scan over and over
    for garbage they never hold, a few milliseconds of every hook. In the hook's own process
    they are also frozen, so that the collections observing runs skip them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        import lineage_es.engine.engine
        import lineage_es.read.sqlview  # noqa: F401 (the view of SQLite and PostgreSQL stores)
        from lineage_es.hosts import adapter

        adapter(host)  # imports the host's adapter module
        if freeze:
            gc.freeze()
    finally:
        if enabled:
            gc.enable()


def _append_to_recording(path: Path, host: str, at: datetime, payload: dict[str, Any]) -> None:
    """Append the payload, which its adapter has accepted, to the recording; a recording that
    cannot be written is logged and the payload is journaled all the same."""
    try:
        append_private(path, recording_line(host, at, payload))
    except OSError as exc:
        log_error(host, f"cannot record to {path}: {exc.strerror or exc}")


def _traceback() -> str:
    import traceback  # only on the error path: the hook path imports as little as it can

    return traceback.format_exc()


def _is_lineage_error(exc: Exception) -> bool:
    """A refusal the library means (a bad payload, a store it cannot open): its reason is
    the whole story, no traceback needed."""
    from lineage_es.errors import LineageError

    return isinstance(exc, LineageError)


def log_path() -> Path:
    """Where hook errors are written: ``hook.log`` in the state dir
    (``$XDG_STATE_HOME/lineage``, default ``~/.local/state/lineage``), not the data dir: a log
    is no data of the journal's (:func:`lineage_es.user_files.state_dir`)."""
    from lineage_es.user_files import state_dir

    return Path(state_dir()) / LOG_NAME


def log_error(host: str, reason: str, detail: str = "") -> None:
    """Append one error to ``hook.log`` (rotated past :data:`LOG_MAX_BYTES`); a log that
    cannot be written is given up silently: the host must never see it."""
    try:
        path = log_path()
        try:
            if path.stat().st_size > LOG_MAX_BYTES:
                os.replace(path, path.with_name(LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        text = f"{stamp} {printable(host)}: {printable(reason)}\n"
        if detail and not detail.startswith("NoneType: None"):
            text += "".join(f"    {printable(line)}\n" for line in detail.rstrip().split("\n"))
        append_private(path, text.encode("utf-8", "replace"))
    except Exception:  # the host must not see a logging failure
        return


def printable(text: str) -> str:
    """``text`` with every character that is not printable escaped as Python writes it in a
    string (``\\x1b``, ``\\n``, ``\\u202e``): a log line holds ids and reasons taken from
    payloads, and a control character in one would drive the terminal of whoever reads the
    log (an escape sequence clears it or rewrites what it shows) or forge a line of its own."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def refuse_a_store_hooks_cannot_keep(store: str | None) -> None:
    """Refuse ``memory://`` (given, or from ``$LINEAGE_STORE``): each hook is a process of its
    own, and its memory goes when it exits, so every payload would be dropped in silence.
    ``install-hooks`` refuses it too; here the refusal goes to ``hook.log``."""
    from lineage_es.stores import default_store_url
    from lineage_es.stores.locations import MEMORY_URLS

    url = store or default_store_url()
    if url in MEMORY_URLS:
        from lineage_es.errors import StoreError

        raise StoreError(
            f"{url!r} keeps nothing for hooks: each hook is a process of its own and its "
            "memory goes when it exits, so this payload was not journaled; set --store or "
            "LINEAGE_STORE to sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        )


def usage() -> str:
    """The hook's command line, for a log line about one that named no host."""
    from lineage_es.facts import HOSTS

    return (
        f"usage: python -m lineage_es.hook {'|'.join(HOSTS)} "
        "[--store URL] [--record FILE] [--print-lineage]"
    )


class HookArgs(NamedTuple):
    """The command line of ``python -m lineage_es.hook``."""

    host: str
    store: str | None = None
    record: Path | None = None
    print_lineage: bool = False


def parse_args(argv: Sequence[str]) -> HookArgs:
    """The hook's arguments; unknown ones are ignored rather than refused, and everything
    from a ``#`` on is a comment (the installed command carries a marker comment, which a
    host that runs it without a shell passes on as words)."""
    host = ""
    store: str | None = os.environ.get("LINEAGE_STORE") or None
    record: Path | None = None
    print_lineage = False
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("#"):
            break
        if word == "--print-lineage":
            print_lineage = True
        elif word in ("--store", "--record") and i + 1 < len(words):
            i += 1
            if word == "--store":
                store = words[i]
            else:
                record = Path(words[i]).expanduser()
        elif word.startswith("--store="):
            store = word.split("=", 1)[1]
        elif word.startswith("--record="):
            record = Path(word.split("=", 1)[1]).expanduser()
        elif not word.startswith("-") and not host:
            host = word
        i += 1
    return HookArgs(host, store, record, print_lineage)


def lineage_json(lineage: AgentLineage | None) -> bytes:
    """The resolved lineage as JSON (``null`` when the payload was ignored)."""
    import orjson

    from lineage_es.model import to_json

    return orjson.dumps(to_json(lineage)) + b"\n"


def emit(outcome: HookOutcome, print_lineage: bool, stdout: IO[bytes], stderr: IO[bytes]) -> None:
    """Write what the host accepts on stdout and, when asked, the lineage on stderr."""
    try:
        if outcome.stdout:
            stdout.write(outcome.stdout)
            stdout.flush()
        if print_lineage:
            if outcome.error is not None:
                error = printable(outcome.error)
                stderr.write(f"lineage hook: {error}\n".encode("utf-8", "replace"))
            else:
                stderr.write(lineage_json(outcome.lineage))
            stderr.flush()
    except Exception as exc:  # a closed pipe must not fail the host either
        log_error(outcome.host or "?", f"cannot write the hook's output: {exc}")


def main(argv: Sequence[str] | None = None, *, own_process: bool = False) -> int:
    """Entry point of ``python -m lineage_es.hook``: always exits 0."""
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        if not args.host:
            log_error("?", f"no host given; {usage()}")
            return 0
        raw = read_payload(sys.stdin.buffer)
        outcome = run_hook(
            args.host,
            raw,
            store=args.store,
            record=args.record,
            answer=args.print_lineage,
            own_process=own_process,
        )
        emit(outcome, args.print_lineage, sys.stdout.buffer, sys.stderr.buffer)
    except BaseException as exc:  # even an interrupt: the host must not see a failure
        log_error("?", f"{type(exc).__name__}: {exc}", _traceback())
    return 0


def run_process(argv: Sequence[str]) -> NoReturn:
    """Run as the hook's own process (``python -m lineage_es.hook``, ``lineage hook``):
    journal the payload, then exit 0 at once."""
    main(argv, own_process=True)
    # Everything is durable and closed by now; skip tearing the interpreter down (garbage
    # collecting the engine's modules and objects), which costs a hook process ~8 ms.
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


if __name__ == "__main__":
    run_process(sys.argv[1:])
