"""Every query command takes ``--format text|json``; ``--json`` stays as a hidden alias
where it was; ``show`` and ``provenance`` keep JSON as their default (scripts read them)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from tests.support.feed import Feed


@pytest.fixture
def store(tmp_path: Path) -> str:
    """R has child A, A has child B."""
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.child("R", "A", "B")
    return url


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


QUERIES = [
    ["show", "B"],
    ["relation", "B", "R"],
    ["chain", "B"],
    ["provenance", "B", "R"],
    ["family", "R"],
    ["agents", "--as", "A"],
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q[0])
def test_every_query_command_answers_json_with_format_json(store: str, query: list[str]) -> None:
    code, out = run(*query, "--format", "json", "--store", store)
    assert code == 0
    assert orjson.loads(out) is not None


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q[0])
def test_every_query_command_answers_text_with_format_text(store: str, query: list[str]) -> None:
    code, out = run(*query, "--format", "text", "--store", store)
    assert code == 0 and out.strip()
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(out)


def test_relation_as_json_names_both_ids_and_the_relation(store: str) -> None:
    code, out = run("relation", "B", "R", "--format", "json", "--store", store)
    assert code == 0 and orjson.loads(out) == {"a": "B", "b": "R", "relation": "descendant"}


def test_show_keeps_json_as_its_default(store: str) -> None:
    code, out = run("show", "B", "--store", store)
    assert code == 0 and orjson.loads(out)["parent"] == "A"


def test_show_as_text_gives_a_field_a_line(store: str) -> None:
    code, out = run("show", "B", "--format", "text", "--store", store)
    lines = out.splitlines()
    assert code == 0
    assert {"conversation: B", "root: R", "parent: A", "depth: 2"} <= set(lines)


def test_provenance_as_text_says_the_relation_in_words(store: str) -> None:
    code, out = run("provenance", "B", "R", "--format", "text", "--store", store)
    assert code == 0 and out.splitlines()[0] == "B is a descendant of R"
    assert "chain: B > A > R" in out.splitlines()


@pytest.mark.parametrize("query", [["chain", "B"], ["family", "R"], ["agents", "--as", "A"]])
def test_the_old_json_flag_still_prints_json(store: str, query: list[str]) -> None:
    assert run(*query, "--json", "--store", store) == run(
        *query, "--format", "json", "--store", store
    )


@pytest.mark.parametrize("command", ["chain", "family", "agents"])
def test_the_old_json_flag_is_hidden_and_named_as_an_alias(command: str) -> None:
    code, out = run(command, "--help")
    assert code == 0 and "--format [text|json]" in out
    assert "--json is the same as --format json" in out
    assert not any(line.lstrip().startswith("--json") for line in out.splitlines())
