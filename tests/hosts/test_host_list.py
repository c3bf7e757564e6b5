"""One list of hosts: ``lineage_es.facts.HOSTS``, each with an adapter that declares its hook
events; every other host list (the replay's schema) is held to it."""

from __future__ import annotations

from typing import get_args

from lineage_es.facts import HOSTS, Host
from lineage_es.hosts import adapters, log_fields
from lineage_es.replay.schema_check import schema


def test_the_host_list_is_the_host_literal() -> None:
    assert get_args(Host) == HOSTS


def test_every_host_has_an_adapter_named_for_it() -> None:
    assert tuple(each.host for each in adapters()) == HOSTS


def test_the_expected_file_schema_names_every_host() -> None:
    assert schema()["properties"]["host"]["enum"] == list(HOSTS)


def test_each_adapter_declares_the_hook_events_it_reads() -> None:
    for each in adapters():
        assert each.hook_events and len(set(each.hook_events)) == len(each.hook_events)
        assert each.tool_events <= set(each.hook_events)


def test_detection_asks_each_adapter_at_a_rank_of_its_own() -> None:
    ranks = [each.detection_rank for each in adapters()]
    assert len(set(ranks)) == len(ranks)


def test_a_hook_log_line_names_each_adapters_fields_or_all_of_them_for_no_host() -> None:
    for each in adapters():
        assert log_fields(each.host) == each.log_fields
    # For a host we do not know: every adapter's, each after the one it follows in its own.
    every = (
        "hook_event_name",
        "session_id",
        "conversation_id",
        "subagent_id",
        "agent_id",
        "tool_name",
        "tool_use_id",
    )
    assert log_fields(None) == log_fields("nonesuch") == every


def test_only_a_host_that_reads_mcp_meta_names_what_names_a_thread_in_it() -> None:
    for each in adapters():
        assert bool(each.meta_thread_fields) == each.mcp_meta
