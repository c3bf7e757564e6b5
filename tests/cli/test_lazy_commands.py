"""The ``lineage`` group imports a command's module only when that command runs
(lineage_es/cli/lazy.py), and its ``--help`` lists every command exactly as a group holding
them all would, from summaries kept next to where each command lives."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import COMMANDS, main

#: Every module that defines a ``lineage`` command.
COMMAND_MODULES = frozenset(target.target.partition(":")[0] for target in COMMANDS.values())


@pytest.fixture
def eager_group() -> click.Group:
    """What the group listed before it was lazy: a plain group holding every command,
    each imported."""
    group = click.Group("lineage", help=main.help)
    for name, lazy in COMMANDS.items():
        module, _, attribute = lazy.target.partition(":")
        group.add_command(getattr(importlib.import_module(module), attribute), name)
    return group


def loaded_in_child(store: str, *args: str) -> set[str]:
    """The modules a new process running ``lineage ARGS`` on ``store`` had imported when
    the command ended (it must succeed)."""
    code = (
        "import sys\n"
        "from lineage_es.launch import main\n"
        "sys.argv = ['lineage', *sys.argv[1:]]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "print(*sorted(sys.modules), sep='\\n', file=sys.stderr)\n"
    )
    env = {**os.environ, "LINEAGE_STORE": store, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True
    )
    return set(done.stderr.split())


def commands_section(text: str) -> str:
    return text[text.index("Commands:") :]


@pytest.mark.parametrize("width", [60, 80, 200])
def test_help_lists_every_command_as_a_group_holding_them_all_would(
    eager_group: click.Group, width: int
) -> None:
    lazy = CliRunner().invoke(main, ["--help"], terminal_width=width)
    eager = CliRunner().invoke(eager_group, ["--help"], terminal_width=width)
    assert lazy.exit_code == 0, lazy.output
    assert commands_section(lazy.output) == commands_section(eager.output)


def test_help_names_every_command_the_map_holds() -> None:
    listed = CliRunner().invoke(main, ["--help"]).output
    names = {line.split()[0] for line in commands_section(listed).splitlines()[1:] if line}
    assert names == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_name_in_the_map_loads_the_command_of_that_name(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert isinstance(command, click.Command)
    assert command.name == name


def test_help_imports_no_command_module(store: str) -> None:
    loaded = loaded_in_child(store, "--help")
    assert not loaded & COMMAND_MODULES


@pytest.mark.parametrize(
    ("args", "own"),
    [
        (["show", "A"], "lineage_es.cli.questions"),
        (["tree", "--all"], "lineage_es.cli.tree"),
        (["tree", "R"], "lineage_es.cli.tree"),
    ],
)
def test_a_question_loads_its_own_command_module_and_no_other(
    store: str, args: list[str], own: str
) -> None:
    loaded = loaded_in_child(store, *args)
    assert loaded & COMMAND_MODULES == {own}


@pytest.mark.parametrize("args", [["show", "A"], ["tree", "--all"]])
def test_a_question_on_a_current_view_loads_neither_the_event_library_nor_the_engine(
    store: str, args: list[str]
) -> None:
    loaded = loaded_in_child(store, *args)
    assert "eventsourcing" not in loaded
    assert "lineage_es.engine.engine" not in loaded
    assert "lineage_es.domain.events" not in loaded
    assert "lineage_es.facts" not in loaded
