"""The lineage command: thin over the engine, exit 2 with a reason on bad input."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from tests.support.ambiguous_store import run as run_ok
from tests.support.feed import Feed


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.child("R", "A", "B")
        feed.child("R", "R", "C")
        feed.stop("R", "C")
    return url


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_tree_json_nests_children_and_hides_stopped_nodes(store: str) -> None:
    code, out = run("tree", "--format", "json", "--store", store)
    assert code == 0
    roots = orjson.loads(out)["roots"]
    assert [r["conversation"] for r in roots] == ["R"]
    assert [c["conversation"] for c in roots[0]["children"]] == ["A"]
    assert roots[0]["children"][0]["children"][0]["conversation"] == "B"


def test_tree_all_includes_stopped_nodes_marked_stopped(store: str) -> None:
    code, out = run("tree", "--all", "--format", "json", "--store", store)
    children = orjson.loads(out)["roots"][0]["children"]
    assert code == 0 and [(c["conversation"], c["status"]) for c in children] == [
        ("A", "live"),
        ("C", "stopped"),
    ]


def test_tree_text_draws_one_line_per_node(store: str) -> None:
    code, out = run("tree", "--store", store)
    assert code == 0 and len(out.strip().splitlines()) == 3


def test_tree_mermaid_and_dot_draw_edges(store: str) -> None:
    assert "-->" in run("tree", "--format", "mermaid", "--store", store)[1]
    assert "->" in run("tree", "--format", "dot", "--store", store)[1]


def test_tree_at_an_earlier_position_travels_back(store: str) -> None:
    code, out = run("tree", "--position", "1", "--format", "json", "--store", store)
    assert code == 0 and orjson.loads(out)["roots"][0]["children"] == []


def test_show_prints_the_lineage_as_json(store: str) -> None:
    code, out = run("show", "B", "--store", store)
    lineage = orjson.loads(out)
    assert code == 0 and (lineage["parent"], lineage["depth"], lineage["root"]) == ("A", 2, "R")


def test_relation_prints_the_word(store: str) -> None:
    assert run("relation", "B", "R", "--store", store) == (0, "descendant\n")


def test_chain_prints_the_path_to_the_root(store: str) -> None:
    assert run("chain", "B", "--store", store) == (0, "B > A > R\n")


def test_family_and_agents_list_the_nodes(store: str) -> None:
    code, out = run("family", "R", "--json", "--store", store)
    assert code == 0 and [m["conversation"] for m in orjson.loads(out)] == ["R", "A", "B", "C"]
    code, out = run("agents", "--as", "A", "--json", "--store", store)
    assert code == 0 and {m["conversation"]: m["relation"] for m in orjson.loads(out)}["B"] == (
        "child"
    )


def test_an_unknown_conversation_exits_2_with_the_reason(store: str) -> None:
    code, out = run("show", "nobody", "--store", store)
    assert code == 2 and "unknown conversation 'nobody'" in out


def test_a_bad_store_url_exits_2_with_the_reason() -> None:
    code, out = run("tree", "--store", "mysql://x")
    assert code == 2 and "not a store URL" in out


def test_export_import_verify_and_rebuild_round_trip(store: str, tmp_path: Path) -> None:
    exported = tmp_path / "j.jsonl"
    assert run("journal", "export", "-o", str(exported), "--store", store)[0] == 0
    copy = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    assert run("journal", "import", str(exported), "--store", copy)[0] == 0
    assert run("journal", "verify", "--store", copy)[0] == 0
    assert run("journal", "rebuild", "--store", copy)[0] == 0
    assert run("chain", "B", "--store", copy) == (0, "B > A > R\n")


def test_journal_import_refuses_a_file_over_max_size(store: str, tmp_path: Path) -> None:
    exported = tmp_path / "j.jsonl"
    assert run("journal", "export", "-o", str(exported), "--store", store)[0] == 0
    with exported.open("ab") as stream:
        stream.write(b"\n" * (1024 * 1024))  # blank lines count towards the bound
    copy = f"sqlite:///{tmp_path / 'copy.sqlite'}"
    code, out = run("journal", "import", str(exported), "--max-size", "1", "--store", copy)
    assert code == 2 and "larger than the configured bound of 1048576 bytes" in out
    assert run("journal", "import", str(exported), "--max-size", "2", "--store", copy)[0] == 0


def test_journal_import_help_states_the_library_default_bound() -> None:
    from lineage_es.journal import DEFAULT_MAX_TOTAL_BYTES

    mib = DEFAULT_MAX_TOTAL_BYTES // (1024 * 1024)
    assert f"default {mib}" in run("journal", "import", "--help")[1]


def test_rename_and_delete_are_journaled(store: str) -> None:
    assert run("rename", "A", "scout", "--store", store)[0] == 0
    assert run("delete", "B", "--store", store)[0] == 0
    code, out = run("family", "R", "--json", "--store", store)
    members = {m["conversation"]: m["name"] for m in orjson.loads(out)}
    assert code == 0 and members == {"R": None, "A": "scout", "C": None}


def test_import_summary_counts_what_was_journaled_and_what_reconcile_deleted(
    tmp_path: Path,
) -> None:
    from tests.support.codex_sessions import (
        CHILD,
        PARENT,
        message,
        parent_spawning,
        rollout,
        spawned,
    )

    folder, store = tmp_path / "sessions", f"sqlite:///{tmp_path / 'j.sqlite'}"
    parent = parent_spawning(folder)
    rollout(folder, CHILD, spawned(3, CHILD, PARENT), message(5))
    args = ("import", "codex", str(folder), "--store", store, "--quiet")
    code, first = run(*args)
    assert code == 0 and "0 new lineage events journaled" not in first
    parent.unlink()
    code, out = run(*args, "--reconcile")
    assert code == 0 and "0 new lineage events journaled" in out
    assert "deleted 1 conversations whose files are gone, and 1 below them" in out


def test_tree_refuses_a_negative_position(store: str) -> None:
    code, out = run("tree", "--position", "-5", "--store", store)
    assert code == 2 and "'--position'" in out and "x>=0" in out


def test_tree_refuses_a_time_beyond_the_utc_range_saying_the_range(store: str) -> None:
    code, out = run("tree", "--at", "0001-01-01T00:00:00+05:00", "--store", store)
    assert code == 2 and "--at" in out and "years 1 to 9999" in out


@pytest.mark.parametrize("interval", ["nan", "inf", "1e308", "0"])
def test_tree_watch_refuses_an_interval_it_cannot_sleep_saying_why(
    store: str, interval: str
) -> None:
    code, out = run("tree", "--watch", "--interval", interval, "--store", store)
    assert code == 2 and "--interval" in out


def test_tree_refuses_a_position_past_the_journals_end_and_names_the_last(store: str) -> None:
    with open_engine(store) as engine:
        last = engine.position()
    code, out = run("tree", "--position", str(last + 1), "--store", store)
    assert code == 2 and f"its last position is {last}" in out


def test_tree_at_the_journals_last_position_is_todays_forest(store: str) -> None:
    with open_engine(store) as engine:
        last = engine.position()
    now = run("tree", "--format", "json", "--store", store)
    assert run("tree", "--position", str(last), "--format", "json", "--store", store) == now


@pytest.mark.parametrize("name", ["", "   "], ids=["empty", "spaces"])
def test_rename_refuses_an_empty_name_and_journals_nothing(store: str, name: str) -> None:
    with open_engine(store) as engine:
        before = engine.position()
    code, out = run("rename", "A", name, "--store", store)
    assert code == 2 and "a name cannot be empty" in out
    with open_engine(store) as engine:
        assert engine.position() == before


def test_hook_help_lists_the_store_option_and_its_environment_variable() -> None:
    code, out = run("hook", "--help")
    options = out.split("Options:", 1)[1]
    assert code == 0 and "--store URL" in options and "LINEAGE_STORE" in options
    assert "--record FILE" in options and "--print-lineage" in options


@pytest.fixture(scope="module")
def deep_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A root D0 with a chain of 600 agents below it, each spawned by the last."""
    url = f"sqlite:///{tmp_path_factory.mktemp('deep') / 'journal.sqlite'}"
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("D0")
        parent = "D0"
        for i in range(1, 601):
            feed.spawn("D0", parent, f"k{i}")
            feed.start("D0", f"D{i}")
            parent = f"D{i}"
    return url


@pytest.mark.parametrize("fmt", ["text", "json", "mermaid", "dot"])
def test_tree_draws_a_chain_600_deep_in_every_format(deep_store: str, fmt: str) -> None:
    code, out = run("tree", "--format", fmt, "--store", deep_store)
    assert code == 0 and "D600" in out


def test_tree_json_of_a_chain_600_deep_nests_every_agent(deep_store: str) -> None:
    code, out = run("tree", "--format", "json", "--store", deep_store)
    assert code == 0 and out.count('"conversation"') == 601


@pytest.mark.parametrize(
    "args", [("rename", "A", "scout"), ("delete", "A")], ids=["rename", "delete"]
)
def test_rename_and_delete_on_a_store_that_does_not_exist_create_nothing(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    missing = tmp_path / "typo.sqlite"
    code, out = run(*args, "--store", f"sqlite:///{missing}")
    assert code == 2 and "no journal at" in out and not missing.exists()


def test_delete_says_how_many_nodes_it_deleted(store: str) -> None:
    code, out = run("delete", "A", "--store", store)
    assert code == 0 and "deleted 2 nodes" in out


def test_an_id_known_under_several_hosts_suggests_host(store: str) -> None:
    with open_engine(store) as engine:
        Feed(engine, "codex").root("R")
    code, out = run("chain", "R", "--store", store)
    assert code == 2 and "known under several hosts" in out and "--host" in out


# -- on the store with an ambiguous child (the ``ambiguous_store`` fixture; Feed's clock: R starts
# at 2026-01-01T00:00:01Z, each later observation one second on) ---------------------------


def line_of(out: str, conversation: str) -> str:
    """The printed line naming ``conversation`` as one of its words."""
    return next(line for line in out.splitlines() if conversation in line.split())


def test_tree_at_a_time_counts_ages_from_that_time(ambiguous_store: str) -> None:
    out = run_ok("tree", "--all", "--at", "2026-01-01T00:00:51Z", "--store", ambiguous_store)
    assert line_of(out, "R").endswith(" 50s") and line_of(out, "X").endswith(" 44s ? ambiguous")


def test_tree_at_a_position_counts_ages_from_the_time_it_had_reached(ambiguous_store: str) -> None:
    with open_engine(ambiguous_store, create=False) as engine:
        last = engine.position()
    out = run_ok("tree", "--all", "--position", str(last), "--store", ambiguous_store)
    assert line_of(out, "R").endswith(" 6s") and line_of(out, "X").endswith(" 0s ? ambiguous")


def test_show_prints_the_name_a_rename_gave(ambiguous_store: str) -> None:
    run_ok("rename", "A", "scout", "--store", ambiguous_store)
    assert orjson.loads(run_ok("show", "A", "--store", ambiguous_store))["name"] == "scout"


def test_show_of_a_conversation_never_renamed_has_no_name_key(ambiguous_store: str) -> None:
    assert "name" not in orjson.loads(run_ok("show", "A", "--store", ambiguous_store))
