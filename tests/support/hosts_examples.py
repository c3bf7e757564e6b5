"""The hook payload examples of shared/spec/HOSTS.md (sections 1.1, 2.1 and 3.1), verbatim:
what each host adapter must claim, and what the others must leave alone."""

from __future__ import annotations

from typing import Any

# HOSTS.md section 2.1, verbatim (ids elided there, so only the fields decide).
HOSTS_CODEX: list[dict[str, Any]] = [
    {
        "session_id": "019a…a1",
        "turn_id": "t2",
        "transcript_path": "…/rollout-2026-09-03T10-00-05-019a…b2.jsonl",
        "hook_event_name": "SubagentStart",
        "agent_id": "019a…b2",
        "agent_type": "default",
    },
    {
        "session_id": "019a…a1",
        "hook_event_name": "SubagentStop",
        "transcript_path": "…/rollout-…-019a…a1.jsonl",
        "agent_transcript_path": "…/rollout-…-019a…b2.jsonl",
        "agent_id": "019a…b2",
        "last_assistant_message": "done",
    },
]

# HOSTS.md section 1.1, verbatim.
HOSTS_CLAUDE: list[dict[str, Any]] = [
    {
        "session_id": "5f1c2e4a-0000-4000-8000-000000000001",
        "transcript_path": "…/5f1c2e4a-….jsonl",
        "agent_id": "a1000000000000001",
        "agent_type": "Explore",
        "hook_event_name": "SubagentStart",
    },
    {
        "session_id": "5f1c2e4a-…",
        "hook_event_name": "PostToolUse",
        "agent_id": "a1000000000000001",
        "tool_name": "Agent",
        "tool_use_id": "toolu_01B",
        "tool_input": {"prompt": "…", "subagent_type": "general-purpose"},
        "tool_response": {"status": "completed", "agentId": "a2000000000000002"},
    },
    {
        "session_id": "5f1c2e4a-…",
        "hook_event_name": "SubagentStop",
        "agent_id": "a2000000000000002",
        "agent_type": "general-purpose",
        "agent_transcript_path": "…/5f1c2e4a-…/subagents/agent-a2000000000000002.jsonl",
        "background_tasks": [],
    },
    {
        "session_id": "5f1c2e4a-…",
        "hook_event_name": "Stop",
        "background_tasks": [
            {"id": "a1000000000000001", "type": "subagent", "status": "running"},
        ],
    },
]

# HOSTS.md section 3.1, verbatim.
HOSTS_CURSOR: list[dict[str, Any]] = [
    {
        "conversation_id": "c0a1",
        "generation_id": "g1",
        "tool_name": "Task",
        "tool_input": {"prompt": "p", "subagent_type": "explore"},
        "tool_use_id": "call-1111…-7\nfc_6666…_0",
        "hook_event_name": "preToolUse",
        "workspace_roots": ["/w"],
    },
    {
        "conversation_id": "c0a1",
        "generation_id": "c0a1",
        "subagent_id": "call-1111…-7\nfc_6666…_0",
        "parent_conversation_id": "c0a1",
        "subagent_type": "explore",
        "hook_event_name": "subagentStart",
        "workspace_roots": ["/w"],
    },
    {
        "conversation_id": "d0b2",
        "tool_name": "Read",
        "hook_event_name": "preToolUse",
        "workspace_roots": ["/w"],
        "transcript_path": None,
    },
    {
        "conversation_id": "c0a1",
        "subagent_id": "call-1111…-7\nfc_6666…_0",
        "status": "completed",
        "hook_event_name": "subagentStop",
    },
]
