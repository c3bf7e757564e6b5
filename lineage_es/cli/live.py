"""The ``lineage`` commands for using it live: ``hook``, ``install-hooks``, ``uninstall-hooks``
and ``serve``; plus the loop behind ``lineage tree --watch``.

Each is thin over a library module (:mod:`lineage_es.hook`, :mod:`lineage_es.hook_config`,
:mod:`lineage_es.serve`); :mod:`lineage_es.cli.main` registers them on the ``lineage`` group.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from lineage_es.cli.common import (
    HOST_CHOICE,
    HOSTS_IN_WORDS,
    checked_store,
    dry_run_option,
    open_reader,
    reports_errors,
    scope_option,
    store_option,
)
from lineage_es.vocabulary import HOSTS

if TYPE_CHECKING:
    from lineage_es.hook_config import ConfigChange, Scope

#: The hook's options, which :func:`lineage_es.hook.parse_args` reads (the console script
#: hands ``lineage hook HOST ...`` to it without click): listed in ``lineage hook --help``.
HOOK_OPTIONS = (
    (
        "--store URL",
        "The store to journal into (memory://, sqlite:///PATH, postgresql://...). "
        "[env var: LINEAGE_STORE; default: the SQLite journal in your data dir, created "
        "on the first payload]",
    ),
    (
        "--record FILE",
        'Also append the payload, once accepted, to FILE as {"host", "at", "payload"}: a '
        "recording lineage-replay and lineage ingest read (a refused payload is only logged).",
    ),
    ("--print-lineage", "Write the sender's resolved lineage as JSON on stderr."),
)


class HookCommand(click.Command):
    """``lineage hook``: its words go to :func:`lineage_es.hook.parse_args` untouched (as on
    the console script's fast path), and its help lists the options that reads."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        options = [p for p in self.get_params(ctx) if isinstance(p, click.Option)]
        records = [r for p in options if (r := p.get_help_record(ctx))]
        with formatter.section("Options"):
            formatter.write_dl([*HOOK_OPTIONS, *records])


@click.command(
    cls=HookCommand,
    context_settings={"ignore_unknown_options": True, "help_option_names": ["-h", "--help"]},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="|".join(HOSTS))
def hook(args: tuple[str, ...]) -> None:
    """Journal one hook payload read from stdin: what Claude Code, Codex or Cursor runs.

    It prints on stdout only what the host accepts from a hook that neither blocks nor
    changes the action (nothing, for all three), and it never fails the host: any error is
    written to hook.log in your data dir and the exit status is still 0.

    \b
    Examples:
      echo '{"session_id":"s1","hook_event_name":"SessionStart"}' \\
        | lineage hook claude --print-lineage
      lineage hook codex --store sqlite:///team.sqlite --record codex.jsonl
      lineage install-hooks claude      # let Claude Code run it for you
    """
    from lineage_es import hook as hook_module

    if not hook_module.parse_args(args).host:
        click.echo(f"lineage hook: name the host: {HOSTS_IN_WORDS}", err=True)
        return
    hook_module.main(args)


@click.command("install-hooks")
@click.argument("hosts", nargs=-1, required=True, type=HOST_CHOICE)
@scope_option("hook config")
@dry_run_option("the config as it would be written")
@click.option(
    "--store",
    default=None,
    callback=lambda ctx, param, value: _store_a_hook_can_use(value),
    help="Write this store into the hook command: sqlite:///PATH (made absolute) or "
    "postgresql://USER@HOST:PORT/DB; memory:// is refused (each hook is a process of its "
    "own). Without it the command names no store: each hook uses $LINEAGE_STORE of the "
    "host's environment when the hook runs, else the SQLite journal in your data dir "
    "(~/.local/share/lineage-es/journal.sqlite); $LINEAGE_STORE set here is not read.",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Make the hooks also append every payload they accept to this recording (the "
    "full hook module does that: each hook then costs an import of lineage).",
)
@reports_errors
def install_hooks(
    hosts: tuple[str, ...], scope: Scope, dry_run: bool, store: str | None, record: Path | None
) -> None:
    """Add lineage's hook to each host's own hook config, keeping every existing entry.

    Claude Code: ~/.claude/settings.json; Codex: ~/.codex/hooks.json; Cursor:
    ~/.cursor/hooks.json (with --scope project: .claude/settings.json, .codex/hooks.json,
    .cursor/hooks.json here). Only the events lineage reads are hooked, and a tool event
    only for the tools it reads. Running it again changes nothing (over an older install, it
    replaces that install's entries); the file it changes is kept beside it as
    *.lineage-es.bak. The command installed is this install's Python, by absolute path,
    running the fast hook script (with --record, the full hook module): it warns when that
    Python or the package lives where it will not last (a temporary folder, a project's venv,
    a source tree).

    \b
    Examples:
      lineage install-hooks claude                  hook Claude Code for your user
      lineage install-hooks codex cursor --dry-run  show what would be written
      lineage install-hooks cursor --scope project  this project only
      lineage uninstall-hooks claude                take exactly those entries out again
    """
    from lineage_es.durable_install import install_warnings
    from lineage_es.hook_config import hook_command, install
    from lineage_es.hosts import adapter

    for warning in install_warnings():
        click.echo(warning, err=True)
    if store is None and os.environ.get("LINEAGE_STORE"):
        click.echo(
            "note: $LINEAGE_STORE is set here but not written into the hooks: they read it "
            "from the host's environment when they run; to pin this store, add "
            '--store "$LINEAGE_STORE"',
            err=True,
        )
    for host in hosts:
        command = hook_command(host, store=store, record=record)
        change = install(host, scope, command=command, dry_run=dry_run)
        _print_config_change(change, "added", change.added)
        note = adapter(host).hook_file.install_note
        if note is not None and change.changed and not dry_run:
            click.echo(f"{host}: {note}", err=True)


def _store_a_hook_can_use(value: str | None) -> str | None:
    """Refuse, before anything is written, a store no hook could keep anything in: every
    hook would fail later, and say so only in hook.log."""
    from lineage_es.hook_config import hook_store

    return checked_store(value, hook_store)


@click.command("uninstall-hooks")
@click.argument("hosts", nargs=-1, required=True, type=HOST_CHOICE)
@scope_option("hook config")
@dry_run_option("the config as it would be written")
@reports_errors
def uninstall_hooks(hosts: tuple[str, ...], scope: Scope, dry_run: bool) -> None:
    """Remove exactly the hook entries install-hooks added; everything else stays.

    \b
    Examples:
      lineage uninstall-hooks claude codex cursor
      lineage uninstall-hooks cursor --scope project --dry-run
    """
    from lineage_es.hook_config import uninstall

    for host in hosts:
        change = uninstall(host, scope, dry_run=dry_run)
        _print_config_change(change, "removed", change.removed)


def _print_config_change(change: ConfigChange, verb: str, events: tuple[str, ...]) -> None:
    """Say what an install or uninstall did to one host's config (on stderr), or with
    ``--dry-run`` what it would write (the file itself on stdout)."""
    where = click.format_filename(change.path)
    if change.dry_run:
        if change.changed and change.text is None:
            click.echo(f"# {change.host}: would remove {where} (nothing else is in it)", err=True)
        elif change.changed:
            click.echo(f"# {change.host}: would write {where}", err=True)
            click.echo(change.text, nl=False)
        else:
            click.echo(f"{change.host}: {where} needs no change", err=True)
        return
    if not change.changed:
        click.echo(f"{change.host}: {where} needs no change", err=True)
        return
    kept = ""
    if change.backup is not None:
        kept = f" (previous file kept as {click.format_filename(change.backup)})"
    click.echo(f"{change.host}: {verb} {', '.join(events)} in {where}{kept}", err=True)


@click.command()
@click.option(
    "--bind",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on (loopback only, unless --allow-remote).",
)
@click.option(
    "--host",
    "old_bind",
    default=None,
    hidden=True,
    help="Deprecated spelling of --bind (every other command's --host names the host).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=7421,
    show_default=True,
    help="0 picks a free port.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow an address other machines can reach: the journal names every project you "
    "work on, so think twice.",
)
@click.option("--quiet", is_flag=True, help="Do not log requests on stderr.")
@store_option
@reports_errors
def serve(
    bind: str,
    old_bind: str | None,
    port: int,
    allow_remote: bool,
    quiet: bool,
    store: str | None,
) -> None:
    """Show the agent forest as a live web page, and answer lineage questions over a small
    read-only HTTP JSON API.

    \b
    GET /                      in a browser: the live forest, with time travel
    GET /tree                  the live forest (?all=1 adds stopped nodes, ?host=, ?root=)
    GET /lineage/{id}          a conversation's lineage and live tree
    GET /relation?a=A&b=B      what A is to B
    GET /chain/{id}            the delegation chain up to the root
    GET /agents/{id}           every node of its host, with its relation to it
    GET /forest, /events       what the page draws, and its live changes (SSE)

    Ids are URL-encoded in paths; an unknown conversation is 404 (except to /relation,
    which answers "unrelated" for it, as relations are defined), bad parameters are 400.
    Every answer is read from the journal as it is now (hooks keep writing meanwhile).

    \b
    Examples:
      lineage serve &
      lineage serve --bind ::1 --port 0   IPv6 loopback, any free port
      curl -s 'http://127.0.0.1:7421/tree?all=1'
      curl -s http://127.0.0.1:7421/lineage/a1000000000000001
      curl -s 'http://127.0.0.1:7421/relation?a=a1000000000000001&b=5f1c2e4a-...'
    """
    from lineage_es.serve import make_server, url_of

    if old_bind is not None:
        given = click.get_current_context().get_parameter_source("bind")
        if given is not click.core.ParameterSource.DEFAULT:
            raise click.UsageError("give the address once, with --bind")
        click.echo(
            "warning: `lineage serve --host` is deprecated, use --bind: --host names "
            f"{HOSTS_IN_WORDS} in every other command",
            err=True,
        )
        bind = old_bind

    def log(line: str) -> None:
        click.echo(line, err=True)

    with open_reader(store, waits=True) as engine:
        server = make_server(
            engine, bind, port, allow_remote=allow_remote, log=None if quiet else log
        )
        click.echo(f"serving {url_of(server)}/ (read-only; Ctrl-C stops)", err=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


def watch_loop(
    position: Callable[[], int],
    draw: Callable[[], None],
    *,
    interval: float,
    sleep: Callable[[float], None] = time.sleep,
    refresh: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Draw now, then again each time the journal's position moves, until interrupted;
    returns how many times it drew. The position is read before each drawing, so facts that
    arrive while it draws bring one more. With ``refresh``, it also draws again once that
    many seconds (by ``clock``) have passed since the last drawing, facts or none: what the
    drawing shows may change with the time alone (a root going quiet)."""
    last = position()
    draw()
    drawn = clock()
    draws = 1
    try:
        while True:
            sleep(interval)
            now = position()
            due = refresh is not None and clock() - drawn >= refresh
            if now != last or due:
                last = now
                draw()
                drawn = clock()
                draws += 1
    except KeyboardInterrupt:
        pass
    return draws
