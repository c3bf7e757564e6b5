"""The MCP server ``lineage mcp`` runs: the only package that imports the ``mcp`` SDK."""

from lineage_es.mcp_server.server import LineageTools, build_server, run_stdio

__all__ = ["LineageTools", "build_server", "run_stdio"]
