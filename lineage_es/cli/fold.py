"""``lineage fold``: journal what the fast hook accepted into a store's inbox.

Every reader folds first (:func:`lineage_es.engine.engine.open_engine`), so nobody needs to run
this by hand; it says what waits and why a row was refused. With ``--background`` it is the
folder the fast hook starts (:func:`lineage_es.hook_fast.start_folder`): one per inbox (it holds
the inbox's running lock, and a second one exits at once), it folds rows as they come and exits
once the inbox has been empty for :data:`IDLE_SECONDS`. A store it cannot reach (PostgreSQL down
or locked) is tried again, waiting longer each time, for at most :data:`RETRY_SECONDS`: the
rows wait in the inbox, and the next hook starts a folder again.
"""

from __future__ import annotations

import fcntl
import os
import time

import click

from lineage_es.cli.common import plural, reports_errors, store_option

#: The background folder exits after the inbox has been empty this long (seconds).
IDLE_SECONDS = 5.0
#: How often the background folder looks for new rows (seconds).
POLL_SECONDS = 0.05
#: For how long the background folder keeps trying a store it cannot reach (seconds).
RETRY_SECONDS = 600.0


@click.command("fold")
@store_option
@click.option(
    "--background",
    is_flag=True,
    help="Run as the folder the hook starts: fold rows as they come, exit when idle.",
)
@click.option("--lock-fd", type=int, hidden=True, help="The running lock, taken by the hook.")
@reports_errors
def fold(store: str | None, background: bool, lock_fd: int | None) -> None:
    """Journal the rows the hook accepted into the store's inbox.

    Readers (every lineage command, serve, the engine) do this first anyway; run it to see
    what waited. A row refused (not JSON, refused by its host's adapter) is written to
    hook.log in the state dir with its segment and line. Exit status 1 when a row was
    refused.
    """
    from lineage_es.engine.engine import open_engine
    from lineage_es.inbox import fold_inbox, waiting
    from lineage_es.stores import default_store_url, parse_store_url

    url = parse_store_url(store or default_store_url()).url
    if background:
        run_background(url, lock_fd)
        return
    if not waiting(url):
        click.echo("nothing waits in the inbox")
        return
    with open_engine(url, fold=False) as engine:
        report = fold_inbox(engine, url)
    click.echo(
        f"journaled {plural(report.journaled, 'row')}, refused {report.refused}"
        + (" (see hook.log in the state dir)" if report.refused else "")
    )
    if report.refused:
        raise SystemExit(1)


def run_background(url: str, lock_fd: int | None = None) -> None:
    """The folder's loop (see the module's docstring); every failure goes to hook.log.
    ``lock_fd`` is the running lock the hook took and handed over (else it is taken here)."""
    from lineage_es.user_files import RUNNING_LOCK, inbox_dir, open_private, write_log

    folder = inbox_dir(url)
    if folder is None or not os.path.isdir(folder):
        return
    path = os.path.join(folder, RUNNING_LOCK)
    lock = lock_fd if lock_fd is not None else open_private(path, os.O_WRONLY)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # another folder runs
        try:
            _fold_until_idle(url)
        except Exception as exc:
            write_log("fold", f"{type(exc).__name__}: {exc}; the rows wait in {folder}")
    finally:
        os.close(lock)


def _fold_until_idle(url: str) -> None:
    from lineage_es.engine.engine import open_engine
    from lineage_es.errors import StoreError
    from lineage_es.inbox import fold_inbox, waiting
    from lineage_es.user_files import write_log

    give_up = time.monotonic() + RETRY_SECONDS
    pause = 0.5
    while True:
        try:
            with open_engine(url, fold=False) as engine:
                idle_since = time.monotonic()
                while time.monotonic() - idle_since < IDLE_SECONDS:
                    if waiting(url):
                        done = fold_inbox(engine, url)
                        if done.journaled or done.refused or done.deleted:
                            idle_since = time.monotonic()  # idle: no row moved
                    time.sleep(POLL_SECONDS)
                return
        except StoreError as exc:
            if time.monotonic() + pause > give_up:
                raise
            write_log("fold", f"{exc}; trying again in {pause:g} s")
            time.sleep(pause)
            pause = min(pause * 2, 30.0)
