"""The ``lineage`` command: see and keep your agents' history.

This module holds the ``lineage`` group and the map of its commands; each command lives in
its own module (:mod:`~lineage_es.cli.tree`, :mod:`~lineage_es.cli.questions` for show,
relation, chain, provenance, family and agents, :mod:`~lineage_es.cli.corrections`,
:mod:`~lineage_es.cli.journal`, :mod:`~lineage_es.cli.imports`, :mod:`~lineage_es.cli.live`
...), imported only when it runs (:class:`~lineage_es.cli.lazy.LazyGroup`): a new process
answering ``lineage show`` loads show's module and no other command's. Each command is thin
over :mod:`lineage_es.engine.engine`: it opens the store, asks one question and prints the
answer. Errors print their reason and exit with status 2, never a traceback.
"""

from __future__ import annotations

import click

from lineage_es.cli.lazy import Lazy, LazyGroup

#: Every command: where it is defined, and the summary ``lineage --help`` lists it with (the
#: first sentence of its help; a test holds each to the command's own).
COMMANDS: dict[str, Lazy] = {
    "agents": Lazy(
        "lineage_es.cli.questions:agents",
        "List every known agent with its relation to the one asking (an orchestrator's "
        "list_agents, as a tree rather than a flat list).",
    ),
    "chain": Lazy(
        "lineage_es.cli.questions:chain",
        "Print CONVERSATION's delegation chain up to its root (at most 20 hops).",
    ),
    "delete": Lazy(
        "lineage_es.cli.corrections:delete",
        "Delete CONVERSATION and its whole subtree (journaled, never silent), and say how "
        "many nodes that was.",
    ),
    "demo": Lazy(
        "lineage_es.cli.demo:demo",
        "Put the demo recordings into a demo store of their own, and say how to look at it.",
    ),
    "family": Lazy(
        "lineage_es.cli.questions:family",
        "List every node of ROOT's family that is not deleted, with depth, name, status.",
    ),
    "fold": Lazy(
        "lineage_es.cli.fold:fold",
        "Journal the rows the hook accepted into the store's inbox.",
    ),
    "hook": Lazy(
        "lineage_es.cli.live:hook",
        "Journal one hook payload read from stdin: what Claude Code, Codex or Cursor runs.",
    ),
    "import": Lazy(
        "lineage_es.cli.imports:import_command",
        "Import the hosts' own agent history: months of past sessions become journal events, "
        "so tree, family and time travel answer for the past too, and keep it after the "
        "hosts delete their transcripts (Claude Code after 30 days by default).",
    ),
    "ingest": Lazy(
        "lineage_es.cli.journal:ingest",
        "Journal recorded streams: hook captures, `lineage hook --record` files, Claude "
        "session transcripts (with their subagents folder) and Codex rollouts.",
    ),
    "install-hooks": Lazy(
        "lineage_es.cli.live:install_hooks",
        "Add lineage's hook to each host's own hook config, keeping every existing entry.",
    ),
    "install-mcp": Lazy(
        "lineage_es.cli.mcp_install:install_mcp",
        "Add the lineage MCP server to each host's own MCP config, keeping everything else.",
    ),
    "journal": Lazy(
        "lineage_es.cli.journal:journal",
        "Keep the journal: export, import, verify, rebuild the view.",
    ),
    "mcp": Lazy(
        "lineage_es.cli.mcp:mcp",
        "Serve MCP on stdin/stdout: tools an agent calls to learn who it is.",
    ),
    "provenance": Lazy(
        "lineage_es.cli.questions:provenance",
        "What a message from SENDER to RECIPIENT should carry, as JSON (--format text: in "
        "words, for a person).",
    ),
    "relation": Lazy(
        "lineage_es.cli.questions:relation",
        "Say what A is to B: self, child, descendant, parent, ancestor, sibling, kin or unrelated.",
    ),
    "rename": Lazy(
        "lineage_es.cli.corrections:rename",
        "Give CONVERSATION a display name (journaled; the last rename wins).",
    ),
    "serve": Lazy(
        "lineage_es.cli.live:serve",
        "Show the agent forest as a live web page, and answer lineage questions over a small "
        "read-only HTTP JSON API.",
    ),
    "show": Lazy(
        "lineage_es.cli.questions:show",
        "Print CONVERSATION's lineage (root, parent, depth, resolution) and its tree, as "
        "JSON (--format text: the same, a field a line, for a person).",
    ),
    "tree": Lazy(
        "lineage_es.cli.tree:tree",
        "Draw the live forest, or the tree of CONVERSATION's root.",
    ),
    "uninstall-hooks": Lazy(
        "lineage_es.cli.live:uninstall_hooks",
        "Remove exactly the hook entries install-hooks added; everything else stays.",
    ),
    "uninstall-mcp": Lazy(
        "lineage_es.cli.mcp_install:uninstall_mcp",
        "Take out exactly the MCP server entry install-mcp added; everything else stays.",
    ),
}


@click.group(cls=LazyGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="lineage-es")
def main() -> None:
    """See which AI coding agent spawned which, live and back in time.

    lineage_es keeps a journal of what Claude Code, Codex and Cursor hooks report, and
    answers from it: the live tree, any agent's lineage, relations and delegation chains.

    \b
    Examples:
      lineage tree                      the live forest, drawn in the terminal
      lineage tree --all --format json  every root, stopped nodes too, as JSON
      lineage tree --position 120       the forest as it was after journal entry 120
      lineage show 5f1c2e4a-...         one conversation's lineage and tree
      lineage chain a1000000000000001   its delegation chain up to the root
      lineage journal export -o j.jsonl keep a portable copy of the journal
    """


if __name__ == "__main__":  # pragma: no cover
    main()
