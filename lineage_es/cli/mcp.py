"""``lineage mcp``: the MCP server that lets an agent ask its own lineage."""

from __future__ import annotations

import click

from lineage_es.cli.common import reports_errors, store_option
from lineage_es.stores import parse_store_url


@click.command("mcp")
@store_option
@reports_errors
def mcp(store: str | None) -> None:
    """Serve MCP on stdin/stdout: tools an agent calls to learn who it is.

    \b
    Tools:
      list_agents        every agent of the caller's family, with what it is to the caller
      lineage            the caller's lineage and live tree (as `lineage show`)
      provenance (to: X) what a message from the caller to X should carry

    The caller is told from what the hooks journaled: Claude Code's
    _meta["claudecode/toolUseId"] (its PreToolUse hook), Codex's _meta thread, Cursor's
    beforeMCPExecution window. A caller that cannot be told is a tool error saying why.

    \b
    Example (a host's MCP config):
      {"command": "lineage", "args": ["mcp", "--store", "sqlite:////home/me/lineage.sqlite"]}
    """
    if store is not None and parse_store_url(store).kind == "memory":
        raise click.UsageError(
            "memory:// holds nothing the hooks wrote (each hook is a process of its own); "
            "give the store the hooks write: sqlite:///PATH or postgresql://USER@HOST:PORT/DB"
        )
    from lineage_es.mcp_server import run_stdio  # the SDK loads only for this command

    run_stdio(store)
