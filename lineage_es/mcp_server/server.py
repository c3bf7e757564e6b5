"""``lineage mcp``: a stdio MCP server (the official ``mcp`` SDK) that tells the calling agent
who it is and how every agent of its family relates to it.

Each ``tools/call`` is answered from the store the hooks write, caught up first (another process
may have written since), its caller identified from journaled facts only
(:mod:`lineage_es.engine.callers`). A caller that cannot be identified, or a store that cannot
be read, is a tool error (``isError``) saying why; a protocol error is kept for what is not a
tool call of ours.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from lineage_es.engine.callers import CallerFinder, CallerUnknown
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import LineageError, NoJournal, UnknownConversation
from lineage_es.mcp_server import answers

SERVER_NAME = "lineage"

Answer = tuple[dict[str, Any], str]


class LineageTools:
    """The tools' logic over one store, opened on the first call that finds it (the server
    may start before any hook has created the journal)."""

    def __init__(self, store: str | None, opener: Callable[..., Engine] = open_engine) -> None:
        self.store = store
        self._opener = opener
        self._finder: CallerFinder | None = None

    def finder(self) -> CallerFinder:
        if self._finder is None:
            engine = self._opener(self.store, create=False)
            self._finder = CallerFinder(engine)
        return self._finder

    def call(
        self, tool: str, arguments: Mapping[str, Any] | None, meta: Mapping[str, Any] | None
    ) -> Answer:
        """The structured content and text of one tool call; :class:`LineageError` (a
        :class:`CallerUnknown` among them) when it cannot be answered."""
        finder = self.finder()
        identified = finder.identify(meta, tool, arguments)
        engine = finder.engine
        caller = identified.lineage
        if tool == "list_agents":
            try:
                known = engine.agents(caller.conversation, caller.host)
            except UnknownConversation:
                raise CallerUnknown(
                    f"the caller {caller.conversation!r} ({caller.host}) is not in the journal: "
                    "no hook has reported it yet, so its family cannot be listed"
                ) from None
            members = answers.family_of(caller, known)
            return answers.list_agents_answer(identified, members)
        if tool == "lineage":
            return answers.lineage_answer(identified)
        to = answers.recipient_of(arguments)
        return answers.provenance_answer(
            identified, engine.provenance(caller.conversation, to, caller.host)
        )

    def close(self) -> None:
        if self._finder is not None:
            self._finder.engine.close()


def build_server(tools: LineageTools) -> Server[Any]:
    """The MCP server offering :data:`~lineage_es.mcp_server.answers.TOOLS` over ``tools``."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=name, description=text, input_schema=schema)
                for name, (text, schema) in answers.TOOLS.items()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in answers.TOOLS:
            return _error(
                f"unknown tool {params.name!r}; this server offers {', '.join(answers.TOOLS)}"
            )
        meta = dict(params.meta) if params.meta else None
        try:
            structured, text = tools.call(params.name, params.arguments, meta)
        except NoJournal as exc:
            return _error(f"{exc}: no hook has written to this store yet")
        except CallerUnknown as exc:
            return _error(str(exc))
        except LineageError as exc:
            return _error(str(exc))
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=structured
        )

    return Server(
        SERVER_NAME,
        instructions=(
            "Ask who you are (lineage), how every agent of your family relates to you "
            "(list_agents), and what a message to another agent should carry (provenance)."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error(reason: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=reason)], is_error=True)


def run_stdio(store: str | None) -> None:
    """Serve MCP on stdin and stdout until the client closes them."""
    tools = LineageTools(store)
    server = build_server(tools)

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(serve)
    finally:
        tools.close()
