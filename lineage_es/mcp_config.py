"""Put the ``lineage mcp`` server into each host's own MCP config, and take exactly it out again.

Where each host reads its MCP servers (user scope / project scope), and in what shape:

- Claude Code: ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json`` when set) / ``.mcp.json``
  in the project root; JSON, ``{"mcpServers": {"<name>": {"type": "stdio", "command": ...,
  "args": [...]}}}``. Claude Code asks before it starts a project's ``.mcp.json`` servers.
- Codex CLI: ``~/.codex/config.toml`` (``$CODEX_HOME`` when set) / ``.codex/config.toml`` in
  the project, read only when the project is trusted; TOML, ``[mcp_servers.<name>]`` with
  ``command``, ``args`` and ``env_vars`` (the variables Codex passes on: it gives an MCP server
  only a short default list of them).
- Cursor: ``~/.cursor/mcp.json`` / ``.cursor/mcp.json``; JSON, ``{"mcpServers": {"<name>":
  {"command": ..., "args": [...]}}}``.

The server entry is :data:`SERVER_NAME`, running this install's Python by absolute path with
``-m lineage_es mcp`` (the same pinning as :func:`lineage_es.hook_config.hook_command`). JSON
keeps its keys, order and indent; TOML is edited with tomlkit, so comments and layout stay.

Installing is idempotent and keeps a backup of the file as it was before the first change
(``<file>.lineage-es.bak``). Uninstalling takes out exactly our entry: a file unchanged since
we wrote it gets its previous bytes back (or goes, when we created it), else only our entry
and the table we created go. What we created is kept beside the file in
``<file>.lineage-es-mcp.json``. A file that does not parse is never written.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import shutil
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Final

from lineage_es.config_documents import (
    ConfigDocument,
    DocumentError,
    is_our_server,
    parse_document,
)
from lineage_es.errors import LineageError
from lineage_es.facts import HOSTS
from lineage_es.hook_config import HookConfigError, Scope, backup_path, hook_store
from lineage_es.install_manifest import InstallManifest, flag_field, text_field
from lineage_es.private_files import replace_text

#: The name the server is configured under (its tools reach Claude as ``mcp__lineage__*``).
SERVER_NAME: Final = "lineage"

#: Beside a config: what ``install-mcp`` created in it (``uninstall-mcp`` removes it).
MANIFEST_SUFFIX: Final = ".lineage-es-mcp.json"

#: The variables Codex must pass to the server for it to find the journal the hooks write
#: when no ``--store`` is pinned (Codex passes an MCP server only a short default list).
CODEX_PASSED_ENV: Final = ("LINEAGE_STORE", "XDG_DATA_HOME")


class McpConfigError(LineageError):
    """A host's MCP config cannot be read or changed safely; it is left as it was."""


@dataclass(frozen=True, slots=True)
class McpFile:
    """Where one host reads its MCP servers, and how."""

    user_folder: str  # below the home folder ("" for the home folder itself)
    user_name: str
    folder_env: str | None  # the variable that moves :attr:`user_folder`
    project_path: str  # below the project root
    table: str  # the key or table holding the servers
    toml: bool
    #: Said after a project-scope install: what the host asks before it uses the server.
    project_note: str | None = None


MCP_FILES: Final[dict[str, McpFile]] = {
    "claude": McpFile(
        "",
        ".claude.json",
        "CLAUDE_CONFIG_DIR",
        ".mcp.json",
        "mcpServers",
        toml=False,
        project_note="Claude Code asks before it starts a project's .mcp.json servers: "
        "approve lineage when it asks (or in /mcp)",
    ),
    "codex": McpFile(
        ".codex",
        "config.toml",
        "CODEX_HOME",
        ".codex/config.toml",
        "mcp_servers",
        toml=True,
        project_note="Codex reads .codex/config.toml only in a project you trust",
    ),
    "cursor": McpFile(".cursor", "mcp.json", None, ".cursor/mcp.json", "mcpServers", toml=False),
}


@dataclass(frozen=True, slots=True)
class McpChange:
    """What an install or uninstall does (or, with ``dry_run``, would do) to one file."""

    host: str
    path: Path
    before: str | None  # the file as it is (None: absent)
    after: str | None  # the file as written (None: removed)
    action: str = ""  # "added", "replaced", "removed", or "" for no change
    fresh: bool = False  # install: no entry of ours was there (this is the first change)
    created_table: bool = False
    restored: bool = False  # uninstall: the file's bytes from before the first install
    backup: Path | None = None
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """The change as a unified diff (empty when there is none)."""
        return unified_diff(self.path, self.before, self.after)


def unified_diff(path: Path, before: str | None, after: str | None) -> str:
    """``before`` to ``after`` of the file at ``path`` as a unified diff; an absent side
    (``None``) is ``/dev/null``."""
    name = str(path)
    return "".join(
        difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            fromfile=name if before is not None else "/dev/null",
            tofile=name if after is not None else "/dev/null",
        )
    )


def mcp_file(host: str) -> McpFile:
    """Where and how ``host`` reads its MCP servers; :class:`McpConfigError` for a host we
    do not know."""
    try:
        return MCP_FILES[host]
    except KeyError:
        raise McpConfigError(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}") from None


def config_path(host: str, scope: Scope = "user", *, cwd: Path | None = None) -> Path:
    """The file ``host`` reads its MCP servers from, for the user or the project in ``cwd``."""
    where = mcp_file(host)
    if scope == "project":
        return (cwd or Path.cwd()) / where.project_path
    if scope != "user":
        raise McpConfigError(f"unknown scope {scope!r}; expected user or project")
    moved = os.environ.get(where.folder_env) if where.folder_env else None
    return Path(moved or Path.home() / where.user_folder) / where.user_name


def server_command(*, store: str | None = None, python: str | None = None) -> list[str]:
    """The server's command line: this install's Python by absolute path (it keeps working
    from any folder, whatever is on the host's ``PATH``), ``-m lineage_es mcp`` and the
    ``--store`` when one is pinned (a SQLite path made absolute; ``memory://`` refused)."""
    words = [str(Path(python or sys.executable).absolute()), "-m", "lineage_es", "mcp"]
    if store is not None:
        words += ["--store", server_store(store)]
    return words


def server_store(store: str) -> str:
    """``store`` as the server's command carries it; :class:`McpConfigError` for one the
    server could read nothing from."""
    if store.strip() in ("memory://", "memory:", "memory"):
        raise McpConfigError(
            f"{store!r} holds nothing the server could read: the host starts the server as a "
            "process of its own, with an empty memory; give sqlite:///PATH or "
            "postgresql://USER@HOST:PORT/DB"
        )
    try:
        return hook_store(store)
    except HookConfigError as exc:
        raise McpConfigError(str(exc)) from None


def server_entry(host: str, command: list[str]) -> dict[str, Any]:
    """Our entry for ``host``, in its shape. Codex gets ``env_vars`` when no store is
    pinned, so the server finds the journal the hooks write (:data:`CODEX_PASSED_ENV`)."""
    mcp_file(host)
    entry: dict[str, Any] = {"type": "stdio"} if host == "claude" else {}
    entry["command"] = command[0]
    entry["args"] = command[1:]
    if host == "codex" and "--store" not in command:
        entry["env_vars"] = list(CODEX_PASSED_ENV)
    return entry


def plan_install(
    host: str, scope: Scope = "user", *, cwd: Path | None = None, command: list[str] | None = None
) -> McpChange:
    """The change that adds (or brings up to date) our server entry in ``host``'s config,
    keeping everything else; nothing is written."""
    path = config_path(host, scope, cwd=cwd)
    where = mcp_file(host)
    wanted = server_entry(host, command or server_command())
    before = _read_text(path)
    document = _parse(path, before, where)
    current = _current_entry(document, path)
    if current == wanted:
        return McpChange(host, path, before, before)
    created_table = not document.has_table()
    with _refusing(path):
        document.set_server(SERVER_NAME, wanted)
    action = "added" if current is None else "replaced"
    after = document.render()
    return McpChange(
        host, path, before, after, action, fresh=current is None, created_table=created_table
    )


def plan_uninstall(host: str, scope: Scope = "user", *, cwd: Path | None = None) -> McpChange:
    """The change that takes our server entry out of ``host``'s config again; nothing is
    written. A file unchanged since the install wrote it gets its earlier bytes back (or is
    removed, when the install created it); otherwise our entry goes, and the server table
    and the file when the install created them and nothing else is left in them."""
    path = config_path(host, scope, cwd=cwd)
    where = mcp_file(host)
    before = _read_text(path)
    if before is None:
        return McpChange(host, path, None, None)
    document = _parse(path, before, where)
    if not is_our_server(document.server(SERVER_NAME)):  # absent, or a server of the user's
        return McpChange(host, path, before, before)
    manifest = _Manifest.read(path)
    if manifest.written == _digest(before):
        if manifest.created_file:
            return McpChange(host, path, before, None, "removed", restored=True)
        pristine = _read_backup(path, manifest.pristine)
        if pristine is not None:
            return McpChange(host, path, before, pristine, "removed", restored=True)
    with _refusing(path):
        document.remove_server(SERVER_NAME, drop_empty_table=manifest.created_table)
    after: str | None = document.render()
    if manifest.created_file and document.is_empty():
        after = None
    return McpChange(host, path, before, after, "removed")


def apply(change: McpChange) -> McpChange:
    """Write ``change`` (atomically), keeping the file from before the first change as a
    backup and what was created in the manifest; a change with nothing to do writes nothing."""
    if not change.changed or change.dry_run:
        return change
    path = change.path
    if change.action == "removed":
        _write_atomically(path, change.after)
        _Manifest.forget(path)
        return change
    manifest = _Manifest.read(path)
    backup: Path | None = None
    if change.fresh or manifest.written is None:
        # Only a file without our entry is its earlier content (an entry of ours found
        # with no manifest beside it was not put there by this change).
        earlier = change.before if change.fresh else None
        manifest = _Manifest(
            created_file=change.before is None,
            created_table=change.created_table,
            pristine=_digest(earlier) if earlier is not None else None,
        )
        if change.before is not None:
            backup = _backup(path)
    elif manifest.pristine is not None:
        backup = backup_path(path)
    _write_atomically(path, change.after)
    manifest.written = _digest(change.after or "")
    try:
        manifest.write(path)
    except OSError as exc:
        raise McpConfigError(f"cannot write {manifest.where(path)}: {exc.strerror}") from None
    return replace(change, backup=backup)


def install(
    host: str,
    scope: Scope = "user",
    *,
    cwd: Path | None = None,
    command: list[str] | None = None,
    dry_run: bool = False,
) -> McpChange:
    """Add our server to ``host``'s MCP config (see :func:`plan_install`); with ``dry_run``
    only say what would change."""
    change = plan_install(host, scope, cwd=cwd, command=command)
    return replace(change, dry_run=True) if dry_run else apply(change)


def uninstall(
    host: str, scope: Scope = "user", *, cwd: Path | None = None, dry_run: bool = False
) -> McpChange:
    """Take our server out of ``host``'s MCP config (see :func:`plan_uninstall`)."""
    change = plan_uninstall(host, scope, cwd=cwd)
    return replace(change, dry_run=True) if dry_run else apply(change)


def _current_entry(document: ConfigDocument, path: Path) -> dict[str, Any] | None:
    """Our entry as configured now; :class:`McpConfigError` when the name is taken by a
    server that is not ours (we never overwrite a user's server)."""
    entry = document.server(SERVER_NAME)
    if entry is None:
        return None
    if not is_our_server(entry):
        line = document.line_of(SERVER_NAME)
        raise McpConfigError(
            f"{path}:{line}: an MCP server named {SERVER_NAME!r} is already configured and "
            "does not run lineage_es; rename or remove it first, nothing was changed"
        )
    return entry


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise McpConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}); fix it by hand first, nothing was changed"
        ) from None
    except OSError as exc:
        raise McpConfigError(f"cannot read {path}: {exc.strerror}") from None


def _parse(path: Path, text: str | None, where: McpFile) -> ConfigDocument:
    with _refusing(path):
        return parse_document(text, table=where.table, toml=where.toml)


@contextmanager
def _refusing(path: Path) -> Iterator[None]:
    """A :class:`DocumentError` in ``path``'s text as the :class:`McpConfigError` a person
    reads: the file, the line and column, the reason."""
    try:
        yield
    except DocumentError as exc:
        raise McpConfigError(
            f"{path}:{exc.line}:{exc.column}: {exc.reason}; nothing was changed"
        ) from None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _backup(path: Path) -> Path:
    """Copy the file as it is now beside it (permissions and times kept)."""
    backup = backup_path(path)
    try:
        shutil.copy2(os.path.realpath(path), backup)
    except OSError as exc:
        raise McpConfigError(f"cannot keep a backup at {backup}: {exc.strerror}") from None
    return backup


def _read_backup(path: Path, digest: str | None) -> str | None:
    """The backup's text when it is still the file from before the first install."""
    if digest is None:
        return None
    try:
        text = backup_path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if _digest(text) == digest else None


def _write_atomically(path: Path, text: str | None) -> None:
    """:func:`~lineage_es.private_files.replace_text`, failing as :class:`McpConfigError`."""
    try:
        replace_text(path, text)
    except OSError as exc:
        raise McpConfigError(f"cannot write {os.path.realpath(path)}: {exc.strerror}") from None


@dataclass
class _Manifest(InstallManifest):
    """What the first install found and created, kept beside the config so the uninstall
    takes out exactly that: whether it created the file and the server table, a digest of
    the file before (its backup's), and of the file as last written.

    On disk: ``{"version": 1, "created_file": bool, "created_table": bool, "pristine":
    digest or null, "written": digest or null}``.
    """

    SUFFIX = MANIFEST_SUFFIX
    HEADER: ClassVar[Mapping[str, Any]] = {"version": 1}

    created_file: bool = flag_field()
    created_table: bool = flag_field()
    pristine: str | None = text_field()
    written: str | None = text_field()
