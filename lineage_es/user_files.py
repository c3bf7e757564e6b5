"""Where lineage keeps a user's files, and the inbox's layout: standard library only.

The fast hook (:mod:`lineage_es.hook_fast`) runs as a script with ``python -S``, its folder
first on ``sys.path``, and imports this module as a top-level ``user_files``: nothing of the
package is loaded, so this module imports nothing of ``lineage_es`` and only modules that are
built into the interpreter or start fast (``os``, ``sys``, ``time``, ``fcntl``). The rest of the
package imports it as ``lineage_es.user_files`` (:mod:`lineage_es.stores.locations` takes its
default location from here), so the hook and the readers agree by construction on where a
store's inbox is.

- the data dir (``$XDG_DATA_HOME/lineage-es``; macOS: ``~/Library/Application Support``): the
  default journal, and the inboxes of PostgreSQL stores;
- the state dir (``$XDG_STATE_HOME/lineage``, default ``~/.local/state/lineage``): ``hook.log``
  and any other log;
- a store's inbox: a folder of append-only segments next to a SQLite journal
  (``journal.sqlite.inbox/``), or ``inbox/<store>/`` in the data dir for a PostgreSQL store.

Modes are :mod:`lineage_es.private_files`'s (0700 folders, 0600 files), repeated here because
the hook may not import it (a test keeps the two equal).
"""

import os
import sys
import time

#: The modes of :mod:`lineage_es.private_files`, which the fast hook cannot import.
PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600

#: The hook's error log in the state dir, and the size at which it is rotated to ``.1``.
LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1024 * 1024

#: An inbox segment is closed once it holds this many bytes; the next row opens a new one.
#: Small, since a segment's ledger holds one event per transaction that folded some of it.
SEGMENT_BYTES = 1024 * 1024
#: At most this many segments wait in one inbox (256 MiB of rows, and one payload of at most
#: 8 MiB may run a segment past its size): a hook finding them all there refuses its row and
#: logs why, and no accepted row is ever dropped to make room.
MAX_SEGMENTS = 256
#: A segment's name: its number in acceptance order, 20 digits, then this suffix.
SEGMENT_SUFFIX = ".rows"
#: Taken (flock) by every hook appending and by a folder deleting a drained segment.
APPEND_LOCK = "append.lock"
#: Held (flock) by a folder for as long as it runs: a hook that can take it starts one.
RUNNING_LOCK = "folder.lock"
#: Held (flock) while rows are being journaled: by the folder or by a reader folding first.
FOLD_LOCK = "fold.lock"

MEMORY_URLS = frozenset({"memory://", "memory:", "memory"})


def data_dir() -> str:
    """The per-user data directory that holds the default journal."""
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Application Support", "lineage-es")
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(_home(), ".local", "share")
    return os.path.join(base, "lineage-es")


def _home() -> str:
    """The user's home, as :meth:`pathlib.Path.home` finds it."""
    return os.path.expanduser("~")


def state_dir() -> str:
    """The per-user state directory, where logs go: ``$XDG_STATE_HOME/lineage`` (default
    ``~/.local/state/lineage``; macOS: ``~/Library/Logs/lineage``)."""
    if sys.platform == "darwin":
        return os.path.join(_home(), "Library", "Logs", "lineage")
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(_home(), ".local", "state")
    return os.path.join(base, "lineage")


def log_path() -> str:
    """Where hook errors are written: ``hook.log`` in the state dir."""
    return os.path.join(state_dir(), LOG_NAME)


def default_store_url() -> str:
    """``$LINEAGE_STORE`` when set, else the SQLite journal in :func:`data_dir`."""
    default = os.path.join(data_dir(), "journal.sqlite")
    return os.environ.get("LINEAGE_STORE") or f"sqlite:///{default}"


def inbox_dir(url: str) -> str | None:
    """The inbox folder of the store at ``url``; ``None`` for ``memory://`` (nothing outlives
    its process) and for a URL that names no store (the caller says why).

    SQLite: ``PATH.inbox`` beside the journal file, ``PATH`` read as
    :func:`lineage_es.stores.locations.parse_store_url` reads it. PostgreSQL:
    ``inbox/KEY`` in the data dir, ``KEY`` the URL's user, host, port, database and schema
    (never its password) with every other character made ``_``: the same database named by two
    spellings of its URL shares one inbox."""
    if url in MEMORY_URLS:
        return None
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        if "%" in rest:
            from urllib.parse import unquote

            rest = unquote(rest)
        if not rest.startswith("/") or len(rest) < 2 or ":memory:" in rest:
            return None
        # as ``Path(...).expanduser().absolute()`` reads it: no ``..`` or links resolved
        path = os.path.expanduser(rest[1:])
        if not os.path.isabs(path):
            path = os.path.join(os.getcwd(), path)
        return _strip_dots(path) + ".inbox"
    key = postgres_key(url)
    return None if key is None else os.path.join(data_dir(), "inbox", key)


def _strip_dots(path: str) -> str:
    """``path`` without empty and ``.`` parts, as :class:`pathlib.Path` spells it (``..``
    is kept: it may cross a link)."""
    parts = [p for p in path.split("/") if p not in ("", ".")]
    return "/" + "/".join(parts)


def postgres_key(url: str) -> str | None:
    """A PostgreSQL URL as ``user@host-port-db-schema``, fit for a folder name; ``None`` for
    another URL. Parsed by hand (``urllib.parse`` would cost the hook its import)."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("postgresql", "postgres"):
        return None
    rest, _, query = rest.partition("?")
    netloc, _, dbname = rest.partition("/")
    user_info, at, hostport = netloc.rpartition("@")
    if not at:
        hostport = netloc
    user = user_info.partition(":")[0] or os.environ.get("USER", "postgres")
    host, port = hostport, "5432"
    if hostport.startswith("["):  # an IPv6 address
        host, _, after = hostport[1:].partition("]")
        port = after.lstrip(":") or port
    elif ":" in hostport:
        host, _, port = hostport.partition(":")
    schema = ""
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if name == "schema":
            schema = value
    words = (user, host or "127.0.0.1", port or "5432", dbname or "postgres", schema or "public")
    text = "-".join(words)
    key = "".join(c if c.isascii() and (c.isalnum() or c in "._") else "_" for c in text)
    return key[:200]


def segment_name(number: int) -> str:
    """The file name of segment ``number``: names sort in acceptance order."""
    return f"{number:020d}{SEGMENT_SUFFIX}"


def segments(folder: str) -> list[str]:
    """The inbox's segment names, oldest first (none when the folder is missing)."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if n.endswith(SEGMENT_SUFFIX) and len(n) == 20 + 5)


def make_private_folder(path: str) -> None:
    """Create ``path`` and each missing folder above it, 0700 whatever the umask (each is
    created with its mode and then set to exactly it: an odd umask, ``0277``, would take the
    owner's own bits); a folder that exists already is left as its owner chose."""
    missing: list[str] = []
    here = path
    while not os.path.isdir(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_FOLDER)
        except FileExistsError:
            if os.path.isdir(folder):
                continue
            raise
        os.chmod(folder, PRIVATE_FOLDER)


def open_private(path: str, flags: int) -> int:
    """``os.open`` for writing, a new file created 0600 whatever the umask; an existing file
    is opened as it is, its mode kept."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, PRIVATE_FILE)
    except FileExistsError:  # or a link: what it names is opened, created 0600 at most
        return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE)
    try:
        os.fchmod(fd, PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def printable(text: str) -> str:
    """``text`` with every character that is not printable escaped as Python writes it in a
    string: a log line holds ids and reasons taken from payloads, and a control character in
    one would drive the terminal of whoever reads the log or forge a line of its own."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def utc_stamp(nanoseconds: int, *, micro: bool = True) -> str:
    """``nanoseconds`` since the epoch as ISO 8601 in UTC: ``…T12:00:00.000001Z`` (to the
    microsecond, as the recordings spell it), or ``…T12:00:00+00:00`` (a log line's)."""
    whole, rest = divmod(nanoseconds, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
    return f"{text}.{rest // 1000:06d}Z" if micro else text + "+00:00"


def write_log(host: str, reason: str, detail: str = "") -> None:
    """Append one error to ``hook.log`` in the state dir (rotated to ``hook.log.1`` past
    :data:`LOG_MAX_BYTES`); a log that cannot be written is given up silently: the host must
    never see it."""
    try:
        path = log_path()
        try:
            if os.stat(path).st_size > LOG_MAX_BYTES:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        text = f"{utc_stamp(time.time_ns(), micro=False)} {printable(host)}: {printable(reason)}\n"
        if detail and not detail.startswith("NoneType: None"):
            text += "".join(f"    {printable(line)}\n" for line in detail.rstrip().split("\n"))
        make_private_folder(os.path.dirname(path))
        fd = open_private(path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, text.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # the host must not see a logging failure
        return
