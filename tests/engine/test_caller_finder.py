"""The caller finder takes its rules from the host adapters: it asks them in the order of the one
list of hosts, takes the first rule read from ``_meta``, and matches a window (a rule that reads
nothing from ``_meta``) only when no host's ``_meta`` names the caller. Its refusals name what
was missing, in the adapters' words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lineage_es.engine.callers import CallerFinder, CallerUnknown
from lineage_es.engine.engine import Engine, open_engine
from lineage_es.hosts import adapter, adapters
from tests.support.mcp_families import (
    CODEX_CHILD,
    CODEX_ROOT,
    CURSOR_CHILD,
    GRANDCHILD,
    claude_family,
    claude_mcp_call,
    claude_meta,
    codex_meta,
    cursor_family,
    cursor_mcp,
)


@pytest.fixture
def engine() -> Iterator[Engine]:
    """A journal holding Claude's family, with the grandchild's call ``toolu_09G`` of
    ``list_agents``, and Cursor's, with the child's ``list_agents`` window open."""
    with open_engine("memory://") as engine:
        for payload in [*claude_family(), claude_mcp_call("toolu_09G", GRANDCHILD)]:
            engine.observe("claude", payload, answer=False)
        for payload in [
            *cursor_family(),
            cursor_mcp(CURSOR_CHILD, "beforeMCPExecution", "list_agents"),
        ]:
            engine.observe("cursor", payload, answer=False)
        yield engine


def test_the_finder_asks_the_adapters_of_the_one_list_of_hosts(engine: Engine) -> None:
    assert CallerFinder(engine).adapters == adapters()


def test_a_tool_use_id_in_meta_names_the_caller_that_journaled_it(engine: Engine) -> None:
    found = CallerFinder(engine).identify(claude_meta("toolu_09G"), "list_agents", {})
    assert (found.lineage.conversation, found.resolution) == (GRANDCHILD, "claude:toolUseId")


def test_a_meta_naming_nobody_is_matched_to_the_open_window(engine: Engine) -> None:
    found = CallerFinder(engine).identify({"progressToken": 7}, "list_agents", {})
    assert (found.lineage.conversation, found.resolution) == (
        CURSOR_CHILD,
        "cursor:beforeMCPExecution",
    )


def test_a_rule_read_from_meta_wins_over_a_window_asked_before_it(engine: Engine) -> None:
    finder = CallerFinder(engine, [adapter("cursor"), adapter("claude")])
    found = finder.identify(claude_meta("toolu_09G"), "list_agents", {})
    assert found.resolution == "claude:toolUseId"


def test_among_rules_read_from_meta_the_first_host_of_the_list_decides(engine: Engine) -> None:
    meta = claude_meta("toolu_09G") | codex_meta(CODEX_CHILD, CODEX_ROOT)
    finder = CallerFinder(engine, [adapter("codex"), adapter("claude")])
    found = finder.identify(meta, "list_agents", {})
    assert (found.lineage.conversation, found.resolution) == (CODEX_CHILD, "codex:_meta")


def test_a_refused_meta_is_unknown_for_the_adapters_reason(engine: Engine) -> None:
    with pytest.raises(CallerUnknown) as refused:
        CallerFinder(engine).identify({"claudecode/toolUseId": 5}, "list_agents", {})
    assert str(refused.value) == "_meta['claudecode/toolUseId'] must be a non-empty string"


def test_an_unjournaled_tool_use_id_names_its_host_hook_and_install_command(
    engine: Engine,
) -> None:
    with pytest.raises(CallerUnknown) as unknown:
        CallerFinder(engine).identify(claude_meta("toolu_never"), "list_agents", {})
    assert str(unknown.value) == (
        "no PreToolUse hook journaled the tool call 'toolu_never' named by "
        "_meta['claudecode/toolUseId']: is `lineage install-hooks claude` installed, "
        "writing to the store this server reads?"
    )


def test_no_open_window_says_what_every_hosts_meta_lacks(engine: Engine) -> None:
    with pytest.raises(CallerUnknown) as unknown:
        CallerFinder(engine).identify(None, "lineage", {})
    assert str(unknown.value) == (
        "the caller cannot be identified: _meta names none (no 'claudecode/toolUseId', "
        "no Codex thread) and no open Cursor beforeMCPExecution window is journaled for "
        "'lineage'"
    )


def test_a_window_with_other_arguments_is_counted_not_matched(engine: Engine) -> None:
    with pytest.raises(CallerUnknown) as unknown:
        CallerFinder(engine).identify(None, "list_agents", {"all": True})
    assert str(unknown.value) == (
        "the caller cannot be identified: _meta names none (no 'claudecode/toolUseId', "
        "no Codex thread) and 1 open beforeMCPExecution window(s) for 'list_agents' have "
        "other arguments"
    )


def test_with_no_host_to_match_a_window_a_meta_naming_nobody_is_unknown(engine: Engine) -> None:
    finder = CallerFinder(engine, [adapter("claude"), adapter("codex")])
    with pytest.raises(CallerUnknown) as unknown:
        finder.identify({}, "list_agents", {})
    assert str(unknown.value) == (
        "the caller cannot be identified: _meta names none (no 'claudecode/toolUseId', "
        "no Codex thread)"
    )
