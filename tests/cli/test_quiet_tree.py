"""``lineage tree`` leaves out live roots whose whole tree has had no fact for a while
(``--quiet-after``, ``LINEAGE_QUIET_AFTER``, default 2h) and says how many; ``--all`` shows
them marked with how long they have been quiet; time travel counts up to its moment; nothing
is stopped for being quiet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from lineage_es.cli.live import watch_loop
from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.facts import Stopped
from tests.support.quiet_facts import act, ago, send, start_family

HOUR = timedelta(hours=1)
NOW = datetime.now(UTC)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """BUSY acted a minute ago; QUIET's last fact was 3 hours ago; WOKEN's root has been
    silent 5 hours but its child stopped an hour ago; ENDED stopped 5 hours ago. The quiet
    limit is the default one."""
    monkeypatch.delenv("LINEAGE_QUIET_AFTER", raising=False)
    url = f"sqlite:///{tmp_path / 'journal.sqlite'}"
    with open_engine(url) as engine:
        start_family(engine, "QUIET", "Q1", seconds=ago(4 * HOUR, NOW))
        act(engine, "Q1", seconds=ago(3 * HOUR, NOW), root="QUIET")
        start_family(engine, "WOKEN", "W1", seconds=ago(6 * HOUR, NOW))
        act(engine, "WOKEN", seconds=ago(5 * HOUR, NOW), root="WOKEN")
        send(engine, "W1", Stopped("W1"), seconds=ago(HOUR, NOW), root="WOKEN")
        start_family(engine, "ENDED", "E1", seconds=ago(6 * HOUR, NOW))
        send(engine, "ENDED", Stopped("ENDED"), seconds=ago(5 * HOUR, NOW), root="ENDED")
        start_family(engine, "BUSY", "B1", seconds=ago(2 * HOUR, NOW))
        act(engine, "B1", seconds=ago(timedelta(minutes=1), NOW), root="BUSY")
    return url


def tree(store: str, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["tree", "--store", store, *args], env=env)


def roots_of(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [root["conversation"] for root in orjson.loads(result.stdout)["roots"]]


def test_the_default_tree_leaves_out_a_quiet_root(store: str) -> None:
    assert roots_of(tree(store, "--format", "json")) == ["WOKEN", "BUSY"]


def test_a_recent_fact_of_a_stopped_child_keeps_its_root_in_the_tree(store: str) -> None:
    """WOKEN's own last fact is 5 hours old, but its child stopped an hour ago."""
    assert "WOKEN" in roots_of(tree(store, "--format", "json"))


def test_json_says_how_many_it_left_out_on_stderr(store: str) -> None:
    result = tree(store, "--format", "json")
    assert result.stderr == (
        "1 quiet root left out (no fact for 2h or more; "
        "--all shows them, --quiet-after changes the limit)\n"
    )


def test_text_says_how_many_it_left_out_in_its_last_line(store: str) -> None:
    result = tree(store)
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("1 quiet root left out")
    assert "QUIET" not in result.stdout


def test_all_shows_the_quiet_root_marked_with_how_long(store: str) -> None:
    result = tree(store, "--all")
    (line,) = [line for line in result.stdout.splitlines() if " QUIET " in line]
    assert line.endswith("  quiet 3h")
    assert "left out" not in result.output


def test_a_quiet_root_stays_live(store: str) -> None:
    roots = orjson.loads(tree(store, "--all", "--format", "json").stdout)["roots"]
    (quiet,) = [root for root in roots if root["conversation"] == "QUIET"]
    assert quiet["status"] == "live"


def test_a_longer_limit_keeps_the_root(store: str) -> None:
    assert "QUIET" in roots_of(tree(store, "--format", "json", "--quiet-after", "4h"))


def test_the_environment_sets_the_limit(store: str) -> None:
    result = tree(store, "--format", "json", env={"LINEAGE_QUIET_AFTER": "4h"})
    assert "QUIET" in roots_of(result)


def test_the_flag_wins_over_the_environment(store: str) -> None:
    result = tree(
        store, "--format", "json", "--quiet-after", "2h", env={"LINEAGE_QUIET_AFTER": "4h"}
    )
    assert "QUIET" not in roots_of(result)


def test_off_leaves_no_root_out(store: str) -> None:
    result = tree(store, "--format", "json", "--quiet-after", "off")
    assert roots_of(result) == ["WOKEN", "QUIET", "BUSY"]
    assert result.stderr == ""


def test_a_bad_limit_is_a_usage_error(store: str) -> None:
    result = tree(store, "--quiet-after", "soon")
    assert result.exit_code == 2
    assert "'soon' is not a duration" in result.stderr


def test_a_bad_limit_in_the_environment_is_named_as_such(store: str) -> None:
    result = tree(store, env={"LINEAGE_QUIET_AFTER": "soon"})
    assert result.exit_code == 2
    assert "LINEAGE_QUIET_AFTER (environment)" in result.stderr


def test_a_tree_as_of_a_past_moment_counts_quiet_up_to_it(store: str) -> None:
    """Two hours and a half ago, QUIET's last fact was half an hour old."""
    moment = (NOW - timedelta(hours=2, minutes=30)).isoformat()
    assert "QUIET" in roots_of(tree(store, "--format", "json", "--at", moment))


def test_a_tree_asked_for_by_its_root_shows_it_quiet_or_not(store: str) -> None:
    result = tree(store, "QUIET")
    assert result.stdout.splitlines()[0].endswith("  quiet 3h")


def test_watch_draws_again_when_the_time_alone_has_moved() -> None:
    """No new fact, but the refresh time passed: a root may have gone quiet meanwhile."""
    ticks = iter([0.0, 10.0, 40.0, 45.0, 50.0])
    steps = iter([None, None, None])
    drawn: list[int] = []

    def sleep(_: float) -> None:
        if next(steps, "done") == "done":
            raise KeyboardInterrupt

    draws = watch_loop(
        lambda: 7,
        lambda: drawn.append(1),
        interval=1,
        sleep=sleep,
        refresh=30,
        clock=lambda: next(ticks),
    )
    assert draws == 2


def test_watch_without_refresh_draws_only_on_new_facts() -> None:
    steps = iter([None, None, None])

    def sleep(_: float) -> None:
        if next(steps, "done") == "done":
            raise KeyboardInterrupt

    assert watch_loop(lambda: 7, lambda: None, interval=1, sleep=sleep) == 1


def test_a_quiet_limit_longer_than_any_duration_is_a_usage_error(store: str) -> None:
    result = tree(store, "--quiet-after", "9999999999w")
    assert result.exit_code == 2 and "longer than the longest duration" in result.output
