"""``lineage install-mcp`` / ``uninstall-mcp``: put the ``lineage mcp`` server into each host's
own MCP config, and take exactly it out again.

Thin over :mod:`lineage_es.mcp_config` (the config files), :mod:`lineage_es.mcp_caller_hooks`
(which hooks the server needs) and :mod:`lineage_es.hook_config` (``--with-hooks``);
:mod:`lineage_es.cli.main` registers them on the ``lineage`` group.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lineage_es.cli.common import (
    HOST_CHOICE,
    checked_store,
    dry_run_option,
    reports_errors,
    scope_option,
)

if TYPE_CHECKING:
    from lineage_es.hook_config import Scope
    from lineage_es.mcp_config import McpChange


def _server_store(value: str | None) -> str | None:
    """Refuse, before anything is written, a store the server could read nothing from."""
    from lineage_es.mcp_config import server_store

    return checked_store(value, server_store)


@click.command("install-mcp")
@click.argument("hosts", nargs=-1, required=True, type=HOST_CHOICE)
@scope_option("MCP config")
@dry_run_option("the change as a diff")
@click.option(
    "--store",
    default=None,
    callback=lambda ctx, param, value: _server_store(value),
    help="Write this store into the server's command: sqlite:///PATH (made absolute) or "
    "postgresql://USER@HOST:PORT/DB. Without it the server reads $LINEAGE_STORE of the "
    "host's environment when it starts, else the SQLite journal in your data dir.",
)
@click.option(
    "--with-hooks",
    is_flag=True,
    help="Also install lineage's hooks for these hosts (as install-hooks does, same scope "
    "and store): the server tells its caller from what they journal.",
)
@reports_errors
def install_mcp(
    hosts: tuple[str, ...], scope: Scope, dry_run: bool, store: str | None, with_hooks: bool
) -> None:
    """Add the lineage MCP server to each host's own MCP config, keeping everything else.

    Claude Code: ~/.claude.json; Codex: ~/.codex/config.toml; Cursor: ~/.cursor/mcp.json
    (with --scope project: .mcp.json, .codex/config.toml, .cursor/mcp.json here). The server
    is named lineage and runs `lineage mcp` with this install's Python, by absolute path.
    Running it again changes nothing; the file as it was before is kept beside it as
    *.lineage-es.bak. A config that does not parse is left alone, with the line at fault.

    The server tells which conversation calls it from what hooks journaled: Claude Code's
    PreToolUse hook, Cursor's beforeMCPExecution and afterMCPExecution hooks (Codex needs
    none). Missing ones are named, with the command that installs them; --with-hooks
    installs them too.

    \b
    Examples:
      lineage install-mcp claude --with-hooks     server and hooks for Claude Code
      lineage install-mcp codex cursor --dry-run  show the change as a diff
      lineage install-mcp cursor --scope project  this project only
      lineage uninstall-mcp claude                take exactly that entry out again
    """
    from lineage_es.durable_install import install_warnings
    from lineage_es.mcp_config import apply, plan_install, server_command

    command = server_command(store=store)
    plans = [plan_install(host, scope, command=command) for host in hosts]  # all parse first
    for plan in plans:
        _report(apply(plan) if not dry_run else plan, dry_run, scope)
    if with_hooks:
        _install_hooks(hosts, scope, store, dry_run)
    for host in hosts:
        if not (with_hooks and dry_run):
            _warn_missing_hooks(host, scope)
    # the entry names this Python: will it last?
    for warning in install_warnings("the MCP server entries", "install-mcp"):
        click.echo(warning, err=True)
    if store is None and os.environ.get("LINEAGE_STORE") and not dry_run:
        click.echo(
            "note: $LINEAGE_STORE is set here but not written into the server's command: it "
            "reads it from the host's environment when it starts; to pin this store, add "
            '--store "$LINEAGE_STORE"',
            err=True,
        )


@click.command("uninstall-mcp")
@click.argument("hosts", nargs=-1, required=True, type=HOST_CHOICE)
@scope_option("MCP config")
@dry_run_option("the change as a diff")
@reports_errors
def uninstall_mcp(hosts: tuple[str, ...], scope: Scope, dry_run: bool) -> None:
    """Take out exactly the MCP server entry install-mcp added; everything else stays.

    A config unchanged since install-mcp wrote it gets its earlier bytes back (or goes, when
    install-mcp created it). The hooks stay: `lineage uninstall-hooks` removes them.

    \b
    Examples:
      lineage uninstall-mcp claude codex cursor
      lineage uninstall-mcp cursor --scope project --dry-run
    """
    from lineage_es.mcp_config import apply, plan_uninstall

    plans = [plan_uninstall(host, scope) for host in hosts]
    for plan in plans:
        _report(apply(plan) if not dry_run else plan, dry_run, scope)


def _report(change: McpChange, dry_run: bool, scope: Scope) -> None:
    """Say what happened to one host's config on stderr; with ``--dry-run``, the diff on
    stdout."""
    from lineage_es.mcp_config import SERVER_NAME, mcp_file

    where = click.format_filename(change.path)
    if not change.changed:
        click.echo(f"{change.host}: {where} needs no change", err=True)
        return
    if dry_run:
        click.echo(f"# {change.host}: would change {where}", err=True)
        click.echo(change.diff(), nl=False)
        return
    if change.action == "removed":
        how = ""
        if change.restored:
            how = " (it is back as it was)" if change.after is not None else " (file removed)"
        click.echo(f"{change.host}: removed MCP server {SERVER_NAME} from {where}{how}", err=True)
        return
    kept = ""
    if change.backup is not None:
        kept = f" (previous file kept as {click.format_filename(change.backup)})"
    click.echo(
        f"{change.host}: {change.action} MCP server {SERVER_NAME} in {where}{kept}", err=True
    )
    note = mcp_file(change.host).project_note
    if scope == "project" and note is not None:
        click.echo(f"{change.host}: {note}", err=True)


def _install_hooks(hosts: tuple[str, ...], scope: Scope, store: str | None, dry_run: bool) -> None:
    """``--with-hooks``: what ``lineage install-hooks HOSTS --scope --store`` does."""
    from lineage_es.hook_config import hook_command, install
    from lineage_es.hosts import adapter

    for host in hosts:
        change = install(host, scope, command=hook_command(host, store=store), dry_run=dry_run)
        where = click.format_filename(change.path)
        if not change.changed:
            click.echo(f"{host}: hooks in {where} need no change", err=True)
        elif dry_run:
            click.echo(f"# {host}: would change {where}", err=True)
            click.echo(_diff(change.path, change.text), nl=False)
        else:
            click.echo(f"{host}: added hooks for {', '.join(change.added)} in {where}", err=True)
            note = adapter(host).hook_file.install_note
            if note is not None:
                click.echo(f"{host}: {note}", err=True)


def _diff(path: Path, after: str | None) -> str:
    """The hook config at ``path`` (empty when unreadable) to ``after``, as a unified diff."""
    from lineage_es.mcp_config import unified_diff

    try:
        before = path.read_text(encoding="utf-8")
    except OSError:
        before = ""
    return unified_diff(path, before, after or "")


def _warn_missing_hooks(host: str, scope: Scope) -> None:
    from lineage_es.mcp_caller_hooks import missing_caller_hooks
    from lineage_es.mcp_config import SERVER_NAME

    missing = missing_caller_hooks(host, scope, server=SERVER_NAME)
    if missing is not None:
        click.echo(f"warning: {missing.advice()}", err=True)
