"""The commands that correct the journal: ``lineage rename`` and ``lineage delete``.

Both are journaled (a rename, a delete and its descendants' teardown are facts like any
other), and both need a journal that exists already.
"""

from __future__ import annotations

import click

from lineage_es.cli.common import (
    host_option,
    open_store,
    plural,
    reports_errors,
    resolve_ids,
    store_option,
)
from lineage_es.vocabulary import DELETE_REASONS

#: The reasons a user may give for a delete (a descendant's, parent-teardown, is the
#: journal's own).
USER_DELETE_REASONS = tuple(r for r in DELETE_REASONS if r != "parent-teardown")


@click.command()
@click.argument("conversation")
@click.argument("name")
@host_option
@store_option
@reports_errors
def rename(conversation: str, name: str, host: str | None, store: str | None) -> None:
    """Give CONVERSATION a display name (journaled; the last rename wins).

    The name shows in `lineage tree`, `family` and `agents`. The journal must exist already.

    \b
    Example:
      lineage rename a1000000000000001 "test runner"
    """
    if not name.strip():
        raise click.BadParameter("a name cannot be empty or only spaces", param_hint="'NAME'")
    with open_store(store, create=False) as engine:
        (conversation,) = resolve_ids(engine, host, conversation)
        engine.rename(conversation, name, host=host)


@click.command()
@click.argument("conversation")
@click.option(
    "--reason",
    type=click.Choice(USER_DELETE_REASONS),
    default="user",
    show_default=True,
    help="Why; each descendant is recorded as parent-teardown.",
)
@host_option
@store_option
@reports_errors
def delete(conversation: str, reason: str, host: str | None, store: str | None) -> None:
    """Delete CONVERSATION and its whole subtree (journaled, never silent), and say how
    many nodes that was. The journal must exist already.

    \b
    Examples:
      lineage delete a1000000000000001
      lineage delete 5f1c2e4a-... --reason gc     a whole root and its family
    """
    with open_store(store, create=False) as engine:
        (conversation,) = resolve_ids(engine, host, conversation)
        before = len(engine.family(conversation, host))
        engine.delete(conversation, reason, host=host)
        deleted = before - len(engine.family(conversation, host))
    click.echo(f"deleted {plural(deleted, 'node')}", err=True)
