"""Drive ``lineage mcp`` as a host does: hook payloads journaled by the real hook command (a
process each), and ``tools/call`` requests sent through the MCP SDK's own stdio client to the
server running in a process of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import mcp_types as types
import orjson
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import RequestParamsMeta


@dataclass(frozen=True)
class Call:
    """One ``tools/call``: a tool, its arguments, and the ``_meta`` the host sends."""

    tool: str
    arguments: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None


@dataclass(frozen=True)
class Answer:
    """What a call answered: the structured content, the text, and whether it is an error."""

    structured: Any
    text: str
    is_error: bool


#: A step of a session: a call, or something done between calls (another process writing).
Step = Call | Callable[[], None]


@dataclass
class McpStore:
    """A SQLite store in a private folder, the data dir with it (the hook's error log)."""

    folder: Path
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.env = {
            **os.environ,
            "XDG_DATA_HOME": str(self.folder / "data"),
            "XDG_STATE_HOME": str(self.folder / "state"),
            "HOME": str(self.folder / "home"),
        }
        self.env.pop("LINEAGE_STORE", None)

    @property
    def url(self) -> str:
        return f"sqlite:///{self.folder / 'journal.sqlite'}"

    def hook(self, host: str, *payloads: Mapping[str, Any]) -> None:
        """Journal each payload through the real hook command, as the host runs it; a
        payload the hook logged as failed fails the test."""
        for payload in payloads:
            subprocess.run(
                [sys.executable, "-m", "lineage_es.hook", host, "--store", self.url],
                input=orjson.dumps(payload),
                env=self.env,
                check=True,
                capture_output=True,
            )
        log = self.folder / "state" / "lineage" / "hook.log"
        assert not log.exists(), log.read_text()

    def copy_into(self, folder: Path) -> McpStore:
        """A store in ``folder`` holding what this one holds (its files copied while no
        process has them open): a family journaled once serves many tests."""
        folder.mkdir(parents=True, exist_ok=True)
        for path in self.folder.glob("journal.sqlite*"):
            shutil.copy2(path, folder / path.name)
        return McpStore(folder)

    def cli_json(self, *args: str) -> Any:
        """What ``lineage ARGS --store URL`` prints, as JSON."""
        done = subprocess.run(
            [sys.executable, "-m", "lineage_es.cli.main", *args, "--store", self.url],
            env=self.env,
            check=True,
            capture_output=True,
        )
        return orjson.loads(done.stdout)

    def session(self, *steps: Step) -> list[Answer]:
        """Run ``lineage mcp`` for this store and take the steps in order, through one
        client session; the answers of the calls, in order."""
        return anyio.run(self._session, steps)

    def tool_names(self) -> list[str]:
        """The tools ``lineage mcp`` lists for this store."""
        return anyio.run(self._tool_names)

    async def _tool_names(self) -> list[str]:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(self._server(), errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = await session.list_tools()
        return [tool.name for tool in listed.tools]

    def _server(self) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable,
            args=["-m", "lineage_es.cli.main", "mcp", "--store", self.url],
            env=self.env,
        )

    async def _session(self, steps: Sequence[Step]) -> list[Answer]:
        answers: list[Answer] = []
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(self._server(), errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for step in steps:
                    if isinstance(step, Call):
                        result = await session.call_tool(
                            step.tool,
                            step.arguments,
                            meta=cast("RequestParamsMeta | None", step.meta),
                        )
                        answers.append(_answer(result))
                    else:
                        await anyio.to_thread.run_sync(step)
        return answers


def _answer(result: types.CallToolResult) -> Answer:
    text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
    return Answer(result.structured_content, text, result.is_error)


def relations(answer: Answer) -> dict[str, str]:
    """``list_agents``'s relation of each agent, by conversation."""
    return {a["conversation"]: a["relation"] for a in answer.structured["agents"]}
