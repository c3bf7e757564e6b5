"""Put ``lineage`` hooks into each host's own hook config, and take exactly them out again.

Each host's adapter (:mod:`lineage_es.hosts`) declares the hook events it reads, which of them
take a tool matcher, and where and in what shape the host reads its hooks
(:class:`~lineage_es.hosts.base.HookFile`):

- Claude Code: ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR`` when set) or
  ``.claude/settings.json`` in the project; ``{"hooks": {"<Event>": [{"matcher": "...",
  "hooks": [{"type": "command", "command": "...", "timeout": N}]}]}}``.
- Codex CLI: ``~/.codex/hooks.json`` (``$CODEX_HOME`` when set) or ``.codex/hooks.json`` in the
  project, the same shape as Claude's (openai/codex ``codex-rs/hooks``; Codex also reads inline
  ``[hooks]`` tables in ``config.toml``, which are left alone). Codex runs a new command hook only
  after it is trusted in ``/hooks``.
- Cursor: ``~/.cursor/hooks.json`` or ``.cursor/hooks.json`` in the project;
  ``{"version": 1, "hooks": {"<event>": [{"command": "..."}]}}``.

Every entry added carries :data:`MARKER` at the end of its command (a shell comment), so
uninstalling removes those entries and nothing else. Installing keeps every existing entry,
adds nothing twice, writes atomically and keeps a backup of the file it changed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from lineage_es.errors import LineageError, StoreError
from lineage_es.facts import HOSTS
from lineage_es.hook_command import command_line
from lineage_es.hook_manifest import HookManifest
from lineage_es.hosts import adapter
from lineage_es.hosts.base import HookFile
from lineage_es.private_files import replace_text
from lineage_es.stores import parse_store_url

Scope = Literal["user", "project"]

#: The comment that marks a command as ours; uninstall removes exactly the entries ending in it.
MARKER = "# added by lineage install-hooks"

#: Seconds a host waits for the hook before killing it (a store locked by another writer
#: must not hold an agent up for long). Cursor's entries take no timeout here.
TIMEOUT_SECONDS = 10

BACKUP_SUFFIX = ".lineage-es.bak"


def backup_path(path: Path) -> Path:
    """Where the config at ``path`` is kept as it was: beside the file a link points to."""
    real = Path(os.path.realpath(path))
    return real.with_name(real.name + BACKUP_SUFFIX)


class HookConfigError(LineageError):
    """A host's config file cannot be read or changed safely; it is left as it was."""


@dataclass(frozen=True, slots=True)
class ConfigChange:
    """What an install or uninstall did (or, with ``dry_run``, would do) to one file."""

    host: str
    path: Path
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    backup: Path | None = None
    dry_run: bool = False
    text: str | None = None  # the file as written; None when the change removes it

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)


def config_path(host: str, scope: Scope = "user", *, cwd: Path | None = None) -> Path:
    """The file ``host`` reads its hooks from, for the user or for the project in ``cwd``."""
    where = _hook_file(host)
    if scope == "project":
        return (cwd or Path.cwd()) / where.folder / where.name
    if scope != "user":
        raise HookConfigError(f"unknown scope {scope!r}; expected user or project")
    moved = os.environ.get(where.folder_env) if where.folder_env is not None else None
    return Path(moved or Path.home() / where.folder) / where.name


def hook_command(
    host: str,
    *,
    python: str | None = None,
    store: str | None = None,
    record: Path | None = None,
    full: bool = False,
) -> str:
    """The command a host runs, then :data:`MARKER`: this install's Python, by absolute
    path, running the fast hook script (:func:`lineage_es.hook_command.command_line`: no site
    import, no package import; it puts the payload in the store's inbox). With ``record`` or
    ``full``, the full hook module instead (it journals before it exits, and only it can
    record). A SQLite store's path is made absolute: hosts run hooks in each session's own
    folder."""
    _hook_file(host)
    url = hook_store(store) if store is not None else None
    interpreter = str(Path(python or sys.executable).absolute())
    if record is None and not full:
        return f"{shlex.join(command_line(host, url, interpreter))} {MARKER}"
    words = [interpreter, "-m", "lineage_es.hook", host]
    if url is not None:
        words += ["--store", url]
    if record is not None:
        words += ["--record", str(record.expanduser().absolute())]
    return f"{shlex.join(words)} {MARKER}"


def hook_store(store: str) -> str:
    """``store`` as a hook command carries it (a SQLite path made absolute), refused when no
    hook could keep anything in it: a URL the store parser refuses (every hook would fail,
    logged only to hook.log), or ``memory://`` (each hook is a process of its own, and its
    memory goes with it)."""
    wanted = "give sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
    try:
        location = parse_store_url(store)
    except StoreError as exc:
        if store.partition(":")[0] in ("sqlite", "postgresql", "postgres"):
            raise HookConfigError(str(exc)) from None  # the parser says what is wrong in it
        # Not the parser's own advice, which offers memory:// too.
        raise HookConfigError(f"{store!r} is not a store URL a hook can use; {wanted}") from None
    if location.kind == "memory":
        raise HookConfigError(
            f"{store!r} keeps nothing for hooks: each hook is a process of its own and its "
            f"memory goes when it exits; {wanted}"
        )
    return location.url


def is_ours(command: object) -> bool:
    """Whether a configured command is one ``install-hooks`` added: every form it ever wrote
    (the full hook module, the fast hook script, with or without a store) ends in
    :data:`MARKER`, and nothing else does."""
    return isinstance(command, str) and command.rstrip().endswith(MARKER)


def install(
    host: str,
    scope: Scope = "user",
    *,
    cwd: Path | None = None,
    command: str | None = None,
    dry_run: bool = False,
) -> ConfigChange:
    """Add a hook entry for every event ``host``'s adapter reads, keeping every existing entry.

    Idempotent: an event that already holds our entry as it would be written gets nothing
    new. An entry of ours written otherwise (an older command, install path, store or
    matcher) is replaced by the new one, and ours in an event the adapter no longer reads
    is removed.
    """
    path = config_path(host, scope, cwd=cwd)
    wanted = command or hook_command(host)
    host_adapter = adapter(host)
    versioned = not host_adapter.hook_file.grouped
    existed = path.exists()
    document = _read_config(path)
    created = HookManifest.read(path)
    created.file = created.file or not existed
    created.hooks = created.hooks or "hooks" not in document
    created.version = created.version or (versioned and "version" not in document)
    hooks = _hooks_table(document, path, create=True)
    assert hooks is not None
    if versioned:
        document.setdefault("version", 1)
    added: list[str] = []
    removed: list[str] = []
    for event in host_adapter.hook_events:
        if event not in hooks:
            created.events.add(event)
        entries = _event_list(hooks, event, path)
        entry = _hook_entry(host, event, wanted)
        if entry in entries:
            continue
        if _drop_ours(host, entries):
            removed.append(event)
        entries.append(entry)
        added.append(event)
    removed += _drop_ours_from(host, hooks, created, keep=host_adapter.hook_events)
    change = _apply_change(host, path, document, tuple(added), tuple(removed), dry_run)
    if change.changed and not dry_run:
        try:
            created.write(path)
        except OSError as exc:
            where = HookManifest.where(path)
            raise HookConfigError(f"cannot write {where}: {exc.strerror}") from None
    return change


def uninstall(
    host: str, scope: Scope = "user", *, cwd: Path | None = None, dry_run: bool = False
) -> ConfigChange:
    """Remove every entry ``install`` added for ``host``, and the containers it created (an
    event's list, the hooks table, Cursor's ``version``, the file) once they are empty;
    everything else stays as it was, empty lists the user had included."""
    path = config_path(host, scope, cwd=cwd)
    if not path.exists():
        return ConfigChange(host, path, dry_run=dry_run)
    document = _read_config(path)
    hooks = _hooks_table(document, path, create=False)
    if hooks is None:
        return ConfigChange(host, path, dry_run=dry_run)
    created = HookManifest.read(path)
    removed = _drop_ours_from(host, hooks, created)
    if removed and not hooks and created.hooks:
        del document["hooks"]
        versioned = not _hook_file(host).grouped
        if versioned and list(document) == ["version"] and created.version:
            del document["version"]
    change = _apply_change(host, path, document, (), tuple(removed), dry_run, gone=created.file)
    if change.changed and not dry_run:
        HookManifest.forget(path)
    return change


def missing_mcp_hooks(host: str, path: Path, server: str = "lineage") -> tuple[str, ...]:
    """The hook events ``lineage mcp`` needs from ``host`` (its adapter's
    ``mcp_caller_hooks``) that ``host``'s config at ``path`` does not run our hook for (for
    Claude: with a matcher that covers the tools of MCP server ``server``, named
    ``mcp__<server>__<tool>``); empty when ``lineage mcp`` can tell its callers.
    :class:`HookConfigError` when the file cannot be read."""
    if host not in HOSTS:
        raise HookConfigError(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}")
    needed = adapter(host).mcp_caller_hooks
    hooks = _hooks_table(_read_config(path), path, create=False) or {}
    tool = f"mcp__{server}__list_agents"
    missing: list[str] = []
    for event in needed:
        entries = hooks.get(event)
        entries = entries if isinstance(entries, list) else []
        if not any(_runs_ours_for(host, entry, tool) for entry in entries):
            missing.append(event)
    return tuple(missing)


def _runs_ours_for(host: str, entry: object, tool: str) -> bool:
    """Whether ``entry`` runs one of our commands for a call of ``tool``."""
    if not isinstance(entry, dict):
        return False
    if not _hook_file(host).grouped:
        return is_ours(entry.get("command"))
    inner = entry.get("hooks")
    ours = isinstance(inner, list) and any(
        isinstance(h, dict) and is_ours(h.get("command")) for h in inner
    )
    return ours and matcher_covers(entry.get("matcher"), tool)


def matcher_covers(matcher: object, tool: str) -> bool:
    """Whether a Claude Code or Codex matcher matches ``tool``, as they read one: none,
    ``""`` and ``*`` match every tool; one of letters, digits, ``_`` and ``|`` lists tool
    names matched exactly (``A|B``); any other is a regular expression that matches when it
    is found anywhere in the name (``^mcp__``, ``mcp__.*``); one that does not compile
    matches nothing."""
    if matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if _EXACT_MATCHER.fullmatch(matcher):
        return tool in matcher.split("|")
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


#: A matcher the hosts read as a list of exact tool names rather than a regular expression.
_EXACT_MATCHER = re.compile(r"[A-Za-z0-9_|]+")


def command_of(host: str, entry: object) -> str | None:
    """The command of one of ``host``'s entries when it is a single command of ours, else
    ``None`` (Claude and Codex entries hold a list of commands; Cursor's are one each)."""
    if not isinstance(entry, dict):
        return None
    if not _hook_file(host).grouped:
        command = entry.get("command")
        return command if is_ours(command) else None
    inner = entry.get("hooks")
    if isinstance(inner, list) and len(inner) == 1 and isinstance(inner[0], dict):
        command = inner[0].get("command")
        return command if is_ours(command) else None
    return None


def _drop_ours_from(
    host: str,
    hooks: dict[str, Any],
    created: HookManifest,
    *,
    keep: Collection[str] = (),
) -> list[str]:
    """Remove our commands from every event's list but those in ``keep``, and the lists
    ``install`` created that this leaves empty; the events something was removed from."""
    removed: list[str] = []
    for event, entries in list(hooks.items()):
        if event in keep or not isinstance(entries, list):
            continue
        if _drop_ours(host, entries):
            removed.append(event)
            if not entries and event in created.events:
                del hooks[event]
    return removed


def _drop_ours(host: str, entries: list[Any]) -> bool:
    """Remove our commands from ``entries`` in place; a Claude/Codex matcher group that held
    only ours goes too. Whether anything was removed."""
    found = False
    grouped = _hook_file(host).grouped
    for entry in list(entries):
        if not isinstance(entry, dict):
            continue
        if not grouped:
            if is_ours(entry.get("command")):
                entries.remove(entry)
                found = True
            continue
        inner = entry.get("hooks")
        if not isinstance(inner, list):
            continue
        kept = [h for h in inner if not (isinstance(h, dict) and is_ours(h.get("command")))]
        if len(kept) == len(inner):
            continue
        found = True
        if kept:
            entry["hooks"] = kept
        else:
            entries.remove(entry)
    return found


def _hook_entry(host: str, event: str, command: str) -> dict[str, Any]:
    """Our entry running ``command`` for ``event``, in ``host``'s shape: a bare command, or a
    matcher group (for a tool event, matching the tools the adapter reads:
    :attr:`~lineage_es.hosts.base.HostAdapter.tool_matchers`) holding one command handler."""
    host_adapter = adapter(host)
    if not host_adapter.hook_file.grouped:
        return {"command": command}
    handler = {"type": "command", "command": command, "timeout": TIMEOUT_SECONDS}
    group: dict[str, Any] = {}
    if event in host_adapter.tool_events:
        group["matcher"] = host_adapter.tool_matchers.get(event, "*")
    group["hooks"] = [handler]
    return group


def _hook_file(host: str) -> HookFile:
    """Where and how ``host`` reads its hooks; :class:`HookConfigError` for a host we do not
    know."""
    if host not in HOSTS:
        raise HookConfigError(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}")
    return adapter(host).hook_file


def _read_config(path: Path) -> dict[str, Any]:
    """The config at ``path`` (empty when absent or blank); :class:`HookConfigError` when it
    cannot be read or is not a JSON object."""
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise HookConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}); fix it by hand first, nothing was changed"
        ) from None
    except OSError as exc:
        raise HookConfigError(f"cannot read {path}: {exc.strerror}") from None
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HookConfigError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it by hand first, nothing was changed"
        ) from None
    if not isinstance(document, dict):
        raise HookConfigError(f"{path} holds a JSON {type(document).__name__}, not an object")
    return document


def _hooks_table(document: dict[str, Any], path: Path, *, create: bool) -> dict[str, Any] | None:
    hooks = document.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = document["hooks"] = {}
    if not isinstance(hooks, dict):
        raise HookConfigError(f"{path}: 'hooks' is not an object; nothing was changed")
    return hooks


def _event_list(hooks: dict[str, Any], event: str, path: Path) -> list[Any]:
    entries = hooks.setdefault(event, [])
    if not isinstance(entries, list):
        raise HookConfigError(f"{path}: hooks.{event} is not a list; nothing was changed")
    return entries


def render(document: Mapping[str, Any]) -> str:
    """The config as written: two-space JSON, keys in their order, non-ASCII kept."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _apply_change(
    host: str,
    path: Path,
    document: dict[str, Any],
    added: tuple[str, ...],
    removed: tuple[str, ...],
    dry_run: bool,
    *,
    gone: bool = False,
) -> ConfigChange:
    """The change to ``path``, written (with a backup) unless ``dry_run`` or nothing changed.
    A config an install created, left empty by the uninstall (``gone``), is removed."""
    text = None if gone and removed and not added and not document else render(document)
    change = ConfigChange(host, path, added, removed, dry_run=dry_run, text=text)
    if dry_run or not change.changed:
        return change
    backup = _write_atomically(path, text)
    return ConfigChange(host, path, added, removed, backup=backup, text=text)


def _write_atomically(path: Path, text: str | None) -> Path | None:
    """Write ``text`` to ``path`` atomically (``None``: remove the file), keeping the previous
    file as a backup and its permissions; returns the backup's path (``None`` for a new file)."""
    backup: Path | None = None
    path = Path(os.path.realpath(path))  # a linked config (dotfiles) is written where it lives
    try:
        if path.exists():
            backup = backup_path(path)
            shutil.copy2(path, backup)
        replace_text(path, text)
    except OSError as exc:
        raise HookConfigError(f"cannot write {path}: {exc.strerror}") from None
    return backup
