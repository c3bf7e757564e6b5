"""What every ``lineage`` command shares: its options, how it opens the store, how a failure
reaches the user, and how an answer is printed.

Command modules import this module and nothing else of :mod:`lineage_es.cli`, so the group in
:mod:`lineage_es.cli.main` can import them all without a cycle.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import click
import orjson

from lineage_es.errors import AmbiguousConversation, LineageError
from lineage_es.model import to_json
from lineage_es.vocabulary import HOSTS

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.read.readonly import ViewReader

P = ParamSpec("P")
R = TypeVar("R")
#: A click command function, as an option decorator takes and returns it.
FC = TypeVar("FC", bound=Callable[..., Any])

STORE_HELP = (
    "Where the journal lives: memory://, sqlite:///PATH (relative to the current folder; "
    "sqlite:////abs/path for an absolute one) or postgresql://USER@HOST:PORT/DB. "
    "Default: $LINEAGE_STORE, else a SQLite file in your data dir "
    "(~/.local/share/lineage-es/journal.sqlite). A command that only reads refuses a SQLite "
    "file that does not exist rather than create it; the default journal, until something "
    "is journaled, reads as empty."
)

#: What to do about a journal named for reading that does not exist.
NO_JOURNAL_HINT = "check the path; `lineage ingest`, `import` or `hook` create one"

#: The hosts a command's host argument or ``--host`` accepts.
HOST_CHOICE = click.Choice(HOSTS)

#: The hosts as a message names them: ``claude, codex or cursor``.
HOSTS_IN_WORDS = f"{', '.join(HOSTS[:-1])} or {HOSTS[-1]}"


class CommandFailed(click.ClickException):
    """A command could not do what it was asked: its reason on stderr, exit status 2 (a
    usage error's status too; 1 is kept for "done, but some input was bad")."""

    exit_code = 2


def store_option(func: FC) -> FC:
    """``--store URL`` (or ``$LINEAGE_STORE``): the journal a command works on."""
    return click.option("--store", envvar="LINEAGE_STORE", default=None, help=STORE_HELP)(func)


def host_option(func: FC) -> FC:
    """``--host H``: which host's conversation an id names, when several know it."""
    return click.option(
        "--host",
        type=HOST_CHOICE,
        default=None,
        help="Which host's conversation is meant, when an id is known under several.",
    )(func)


def reports_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn every failure into its reason on stderr and exit status 2; a warning meant for
    the user into one plain line (no line of our source); a reader that stopped reading
    (``| head``) into a quiet exit 0, as when the output fitted in the pipe before it did."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            with warnings.catch_warnings():
                warnings.showwarning = _show_warning_to_user
                return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BrokenPipeError:
            _point_stdout_at_devnull()
            raise click.exceptions.Exit(0) from None
        except AmbiguousConversation as exc:
            raise CommandFailed(
                f"{exc}: say which with --host {exc.hosts[0] if exc.hosts else 'HOST'}"
            ) from None
        except LineageError as exc:
            raise CommandFailed(str(exc)) from None
        except (OSError, ValueError) as exc:
            raise CommandFailed(f"{type(exc).__name__}: {exc}") from None

    return wrapper


_python_show_warning = warnings.showwarning


def _show_warning_to_user(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A ``UserWarning`` is advice for whoever runs the command (``chmod 600 …``): print it
    as such. Other categories are for developers and keep Python's form, location and all."""
    if issubclass(category, UserWarning):
        click.echo(f"warning: {message}", err=True)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


def _point_stdout_at_devnull() -> None:
    """Point stdout at devnull: what is still buffered for the reader that left would fail
    again when Python flushes it at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # not a real file (a test runner's): nothing to flush
        pass


def checked_store(value: str | None, check: Callable[[str], str]) -> str | None:
    """``--store`` as ``check`` makes it (``None`` stays ``None``), its refusal (a
    :class:`LineageError`) turned into click's usage error before anything is written."""
    if value is None:
        return None
    try:
        return check(value)
    except LineageError as exc:
        raise click.BadParameter(str(exc), param_hint="'--store'") from None


def open_reader(store: str | None, *, waits: bool = False) -> Engine | ViewReader:
    """Open ``store`` to answer questions (as :func:`open_store` with ``create=False``): from
    the materialised view, without importing the event library, while the view is current and
    nothing waits in the inbox (:func:`~lineage_es.read.readonly.open_view_reader`; one that
    ``waits`` checks before each question), so that a new process's first answer costs
    little more than Python's start; else through the engine. What the view cannot answer
    (time travel, the journal) opens the engine on first use."""
    from lineage_es.read.readonly import open_view_reader

    reader = open_view_reader(
        store, lambda: open_store(store, create=False, waits=waits), live=waits
    )
    return reader if reader is not None else open_store(store, create=False, waits=waits)


def open_store(store: str | None, *, create: bool = True, waits: bool = False) -> Engine:
    """Open the journal ``store`` names (``--store`` or ``$LINEAGE_STORE``), else the
    default one in the data dir.

    Commands that write keep ``create=True``: a SQLite journal is created when missing.
    Commands that only read pass ``create=False``: a SQLite file named explicitly that does
    not exist is refused, naming the path (a mistyped path must not answer as an empty
    journal), and nothing is created. The default journal not existing yet is no mistake
    (nothing has been journaled on this machine): a one-shot reader answers from an empty
    journal, says so on stderr and creates nothing; a reader that ``waits`` for what hooks
    write next (``tree --watch``, ``serve``) creates it, so that it sees the first facts.
    """
    from lineage_es.engine.engine import open_engine
    from lineage_es.errors import NoJournal

    if create:
        return open_engine(store)
    try:
        return open_engine(store, create=False)
    except NoJournal as exc:
        if store:
            raise CommandFailed(f"{exc}: {NO_JOURNAL_HINT}") from None
        if waits:
            return open_engine(store)
        click.echo(
            f"note: no journal yet at {exc.path}: nothing has been journaled on this machine "
            "(`lineage install-hooks`, `ingest` or `import` start one)",
            err=True,
        )
        return open_engine("memory://")


def resolve_ids(engine: Engine | ViewReader, host: str | None, *given: str) -> list[str]:
    """The conversation ids ``given`` name, each given whole or as a unique prefix of at
    least 4 characters, as in git (:func:`~lineage_es.read.prefixes.resolve_prefix`): an
    id known exactly is taken as it is; a prefix that starts several ids is refused, naming
    them. The view is brought up to date first, so an id journaled a moment ago is found."""
    from lineage_es.read.prefixes import resolve_prefix

    engine.catch_up()
    view = engine.queries.view
    return [resolve_prefix(view, text, host) for text in given]


def echo_json(value: Any) -> None:
    """Print an answer (a model value, or a tuple of them) as indented JSON."""
    click.echo(orjson.dumps(to_json(value), option=orjson.OPT_INDENT_2).decode())


def use_color() -> bool:
    """Colour only on a terminal, and never when ``NO_COLOR`` is set."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def plural(count: int, word: str) -> str:
    """``1 node``, ``2 nodes``: a count and its noun, for a summary line."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def scope_option(config: str) -> Callable[[FC], FC]:
    """``--scope user|project``: whose ``config`` (a host's hook or MCP config) to change."""
    return click.option(
        "--scope",
        type=click.Choice(["user", "project"]),
        default="user",
        show_default=True,
        help=f"user: your own {config} in your home; project: the one in this folder.",
    )


def dry_run_option(shows: str) -> Callable[[FC], FC]:
    """``--dry-run``: print what would change (``shows``), and change nothing."""
    return click.option("--dry-run", is_flag=True, help=f"Print {shows}; write nothing.")
