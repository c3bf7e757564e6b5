"""A click group that imports a command's module only when that command runs.

Each ``lineage`` command lives in its own module, with imports of its own (the web server's,
the importers', the MCP server's). A new process answers one command, so the group names its
commands without importing them: click's documented pattern for lazily loaded subcommands
(a name to ``"module:attribute"`` map), plus each command's one-line summary, so that
``lineage --help`` lists every command without importing any of them. A test holds each
summary to the one click makes from the command's own help, so the listing cannot drift.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import click


class Lazy(NamedTuple):
    """Where a command is defined, and the summary ``--help`` lists it with."""

    #: ``"package.module:attribute"``: the click command object.
    target: str
    #: The first sentence of the command's help: what click shortens for the listing.
    summary: str


class LazyGroup(click.Group):
    """A :class:`click.Group` whose ``lazy`` commands are imported on first use (running
    them, their ``--help``, completion); the group's own ``--help`` lists them from their
    summaries, shortened exactly as click shortens a command's help."""

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            self.add_command(self._load(cmd_name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def _load(self, name: str) -> click.Command:
        """The command ``name``'s target, imported now."""
        module, _, attribute = self.lazy[name].target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy[name].target} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The ``Commands:`` section as :meth:`click.Group.format_commands` writes it, a
        command not imported yet standing in by its summary (nothing is imported)."""
        listed: Sequence[tuple[str, click.Command]] = [
            (name, self._listed(ctx, name)) for name in self.list_commands(ctx)
        ]
        shown = [(name, command) for name, command in listed if not command.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        rows = [(name, command.get_short_help_str(limit)) for name, command in shown]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _listed(self, ctx: click.Context, name: str) -> click.Command:
        """The command as the listing shows it: itself once imported, else a stand-in
        holding its summary as help (click shortens it the same way)."""
        if name in self.commands or name not in self.lazy:
            command = super().get_command(ctx, name)
            assert command is not None
            return command
        return click.Command(name, help=self.lazy[name].summary)
