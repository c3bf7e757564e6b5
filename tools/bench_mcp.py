"""Benchmark ``lineage mcp``'s ``list_agents`` on a 1,000-agent family against the same query
made in process, measured in one run.

Builds a SQLite journal holding one Claude Code root with 1,000 subagents (10 children of the
root, each with 99 below it, nested to depth 3) and the ``PreToolUse`` of an MCP call by one
agent at depth 2. Then, interleaved, it times:

- the floor: the same answer in process, with no MCP: ``engine.agents(caller)`` kept to the
  caller's root, on an engine open on the store (what ``lineage agents --as`` asks);
- ``list_agents`` through the MCP SDK's stdio client to ``lineage mcp`` running in its own
  process (one session, opened before timing): the round trip, the caller identified from
  ``_meta["claudecode/toolUseId"]``, the store caught up, the answer built and encoded.

Goal: the MCP answer within 5x the floor.

Usage: python tools/bench_mcp.py [--runs 30] [--agents 1000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import cast

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import RequestParamsMeta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import ChildIdentified, Fact, Observation, RootSeen

ROOT = "5f1c2e4a-0000-4000-8000-0000000b3c11"
CALL = "toolu_bench_list_agents"


def build(store: str, agents: int) -> str:
    """Journal the family; the caller (at depth 2) is returned."""
    with open_engine(store) as engine:
        engine.observe("claude", _observation(ROOT, (RootSeen(ROOT, "startup"),), "k-root"))
        tops = max(1, agents // 100)
        made: list[Observation] = []
        for n in range(agents):
            child = f"a{n:016x}"
            if n < tops:
                parent = ROOT
            elif n < tops * 10:
                parent = f"a{n % tops:016x}"
            else:
                parent = f"a{tops + n % (tops * 9):016x}"
            fact = ChildIdentified(parent, child, "native")
            made.append(_observation(child, (fact,), f"k-{n}"))
        engine.observe_many(made)
        caller = f"a{tops:016x}"  # a child of a child of the root: depth 2
        engine.observe(
            "claude",
            {
                "session_id": ROOT,
                "agent_id": caller,
                "hook_event_name": "PreToolUse",
                "tool_name": "mcp__lineage__list_agents",
                "tool_use_id": CALL,
                "tool_input": {},
            },
        )
        assert engine.lineage(caller).depth == 2
        return caller


def _observation(requester: str, facts: tuple[Fact, ...], key: str) -> Observation:
    return Observation(host="claude", requester=requester, key=key, facts=facts, root=ROOT)


def in_process(engine: Engine, caller: str) -> int:
    """The floor: the family with relations to the caller, asked of the engine directly."""
    return len([m for m in engine.agents(caller, "claude") if m.root == ROOT])


async def measure(store: str, caller: str, runs: int) -> tuple[list[float], list[float], int]:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "lineage_es.cli.main", "mcp", "--store", store]
    )
    floor: list[float] = []
    served: list[float] = []
    listed = 0
    with open_engine(store, create=False) as engine, open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            meta = cast("RequestParamsMeta", {"claudecode/toolUseId": CALL})
            await session.call_tool("list_agents", {}, meta=meta)
            in_process(engine, caller)
            for _ in range(runs):
                start = time.perf_counter()
                count = in_process(engine, caller)
                floor.append(time.perf_counter() - start)
                start = time.perf_counter()
                result = await session.call_tool("list_agents", {}, meta=meta)
                served.append(time.perf_counter() - start)
                assert not result.is_error, result.content
                listed = len(result.structured_content["agents"])
                assert listed == count
    return floor, served, listed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--agents", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = f"sqlite:///{Path(folder) / 'journal.sqlite'}"
        caller = build(store, args.agents)
        floor, served, listed = anyio.run(measure, store, caller, args.runs)
    low, high = statistics.median(floor), statistics.median(served)
    print(f"list_agents on a family of {listed} agents ({args.runs} runs, medians):")
    print(f"  in process (floor)      {low * 1000:8.2f} ms")
    print(f"  lineage mcp over stdio  {high * 1000:8.2f} ms   {high / low:.2f}x the floor")
    print(f"  goal: within 5x the floor: {'met' if high <= 5 * low else 'NOT met'}")


if __name__ == "__main__":
    main()
