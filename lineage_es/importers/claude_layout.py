"""Which files of a Claude Code projects folder make one session.

Layout (HOSTS.md 1.3): ``<project>/<sessionId>.jsonl`` per session; its subagents in
``<sessionId>/subagents/agent-<agentId>.jsonl`` (with optional ``.meta.json`` sidecars) or,
in ~2.0.24 to 2.1.1, as flat ``agent-<agentId>.jsonl`` files beside the session file; 2.0.13
and before kept subagent rows inline in the session file.

A module of its own because both sides go by these names: :mod:`.claude_projects` groups the
files it finds into sessions, and reading a session (:mod:`.claude_session`) tells its
subagents' files from flat ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from lineage_es.hosts.claude_agent_files import AGENT_FILE
from lineage_es.hosts.claude_rows import row_session
from lineage_es.importers.walk import Found


@dataclass
class SessionFiles:
    """A session: its main file (absent when only agent files are left) and agent files;
    ``strays``, the flat agent files beside it that name no session yet (empty, or their
    first row still being written): any of them may turn out to be one of its agents."""

    key: str
    main: Found | None = None
    agents: list[Found] = field(default_factory=list)
    strays: list[Found] = field(default_factory=list)

    @property
    def session(self) -> str:
        """The session the group is named for (its main file's name)."""
        return self.key.rsplit("/", 1)[-1]

    @property
    def project(self) -> str:
        """The project folder the group's main file is in (``""``: the history folder)."""
        return self.key.rsplit("/", 1)[0] if "/" in self.key else ""


def nested_session(rel: str) -> str | None:
    """``<project>/<session>`` for ``<project>/<session>/subagents/agent-<id>.jsonl``;
    ``None`` for anything else (workflow agents under ``subagents/workflows/`` included: no
    row names which call ran them)."""
    parts = rel.split("/")
    if len(parts) >= 3 and parts[-2] == "subagents" and AGENT_FILE.fullmatch(parts[-1]):
        return "/".join(parts[:-2])
    return None


def agent_of(found: Found) -> str | None:
    """The agent an ``agent-<id>.jsonl`` file is named for."""
    match = AGENT_FILE.fullmatch(found.rel.rsplit("/", 1)[-1])
    return match.group(1) if match else None


def head_session(path: Path) -> str | None:
    """The ``sessionId`` of the first rows of a file that has one (flat agent files)."""
    try:
        with path.open("rb") as stream:
            for _ in range(8):
                line = stream.readline(1024 * 1024)
                if not line:
                    return None
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                session = row_session(row) if isinstance(row, dict) else None
                if session is not None:
                    return session
    except OSError:
        return None
    return None


def is_transcript(name: str) -> bool:
    return name.endswith(".jsonl")


def is_sidecar(name: str) -> bool:
    return name.endswith(".meta.json")
