"""Which live roots are quiet (no fact about any node of their tree for a while), how long
for, and the durations ``--quiet-after`` takes (:mod:`lineage_es.read.quiet`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from lineage_es.model import ForestNode
from lineage_es.read.quiet import left_out_line, parse_duration, quiet_label, split_quiet
from lineage_es.read.render import forest_text

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def node(name: str, seen: timedelta | None, *kids: ForestNode, status: str = "live") -> ForestNode:
    """A node last seen ``seen`` before :data:`NOW` (``None``: not known)."""
    return ForestNode(
        conversation=name,
        host="claude",
        depth=0,
        status=status,  # type: ignore[arg-type]
        resolution="native",
        started_at=(NOW - 10 * HOUR).isoformat(),
        children=kids,
        last_seen=None if seen is None else (NOW - seen).isoformat(),
    )


def split(*roots: ForestNode, keep: bool = False) -> tuple[list[str], dict[str, timedelta], int]:
    done = split_quiet(roots, now=NOW, after=2 * HOUR, keep=keep)
    return [r.conversation for r in done.shown], dict(done.quiet), done.left_out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90", timedelta(seconds=90)),
        ("90s", timedelta(seconds=90)),
        ("30m", timedelta(minutes=30)),
        ("2h", timedelta(hours=2)),
        ("1d", timedelta(days=1)),
        ("1h30m", timedelta(minutes=90)),
        ("0.5h", timedelta(minutes=30)),
        (" 2H ", timedelta(hours=2)),
    ],
)
def test_a_duration_is_read_with_its_unit(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize("text", ["off", "never", "OFF"])
def test_off_sets_no_limit(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize("text", ["", "0", "0h", "-1h", "2x", "h", "2h-", "1 2", "2hours"])
def test_anything_else_is_refused_saying_what_is_accepted(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a duration.*30m, 2h"):
        parse_duration(text)


def test_a_duration_longer_than_any_is_refused_saying_the_longest() -> None:
    with pytest.raises(ValueError, match=r"longer than the longest duration.*'off'"):
        parse_duration("9999999999w")


def test_a_root_with_a_recent_fact_is_shown() -> None:
    assert split(node("R", HOUR)) == (["R"], {}, 0)


def test_a_root_quiet_for_longer_than_the_limit_is_left_out() -> None:
    assert split(node("R", 3 * HOUR)) == ([], {}, 1)


def test_a_recent_fact_of_a_child_keeps_its_root_shown() -> None:
    assert split(node("R", 5 * HOUR, node("A", 4 * HOUR, node("B", HOUR)))) == (["R"], {}, 0)


def test_a_stopped_root_is_never_quiet() -> None:
    assert split(node("R", 5 * HOUR, status="stopped")) == (["R"], {}, 0)


def test_a_root_with_no_known_time_is_never_quiet() -> None:
    assert split(node("R", None)) == (["R"], {}, 0)


def test_kept_quiet_roots_are_shown_with_how_long_they_have_been_quiet() -> None:
    assert split(node("R", 3 * HOUR), node("S", HOUR), keep=True) == (
        ["R", "S"],
        {"R": 3 * HOUR},
        0,
    )


def test_no_limit_leaves_nothing_out() -> None:
    done = split_quiet([node("R", 100 * HOUR)], now=NOW, after=None, keep=False)
    assert (len(done.shown), done.left_out) == (1, 0)


def test_a_wider_look_can_show_a_root_its_drawn_nodes_call_quiet() -> None:
    """A stopped child a live-only tree does not draw may hold the latest fact."""
    recent = (NOW - HOUR).isoformat()
    done = split_quiet(
        [node("R", 5 * HOUR)],
        now=NOW,
        after=2 * HOUR,
        keep=False,
        newest_of=lambda roots: [recent for _ in roots],
    )
    assert (len(done.shown), done.left_out) == (1, 0)


def test_the_wider_look_is_asked_once_about_the_roots_that_look_quiet_alone() -> None:
    asked: list[list[str]] = []

    def newest_of(roots: Sequence[ForestNode]) -> list[str | None]:
        asked.append([root.conversation for root in roots])
        return [None if root.conversation == "Q1" else (NOW - HOUR).isoformat() for root in roots]

    done = split_quiet(
        [node("Q1", 5 * HOUR), node("busy", HOUR), node("Q2", 3 * HOUR)],
        now=NOW,
        after=2 * HOUR,
        keep=True,
        newest_of=newest_of,
    )

    assert asked == [["Q1", "Q2"]]
    # Q1: no time found wider (never quiet); Q2: a fact an hour ago (not quiet after all)
    assert ([r.conversation for r in done.shown], dict(done.quiet)) == (["Q1", "busy", "Q2"], {})


def test_quiet_is_counted_up_to_the_moment_shown() -> None:
    """A tree as of 4 hours ago: a root last seen 5 hours ago had been quiet for an hour."""
    done = split_quiet([node("R", 5 * HOUR)], now=NOW - 4 * HOUR, after=2 * HOUR, keep=False)
    assert done.left_out == 0


def test_the_text_tree_marks_a_quiet_root_with_how_long() -> None:
    text = forest_text((node("R", 3 * HOUR),), now=NOW, quiet={"R": 3 * HOUR})
    assert text.endswith("  quiet 3h")


def test_the_text_tree_marks_no_root_that_is_not_quiet() -> None:
    assert "quiet" not in forest_text((node("R", 3 * HOUR),), now=NOW)


@pytest.mark.parametrize(
    ("since", "label"),
    [
        (timedelta(seconds=5), "quiet 5s"),
        (90 * timedelta(minutes=1), "quiet 1h"),
        (HOUR * 50, "quiet 2d"),
    ],
)
def test_quiet_labels_count_in_the_largest_whole_unit(since: timedelta, label: str) -> None:
    assert quiet_label(since) == label


def test_the_left_out_line_says_how_many_and_how_to_see_them() -> None:
    assert left_out_line(3, timedelta(minutes=90)) == (
        "3 quiet roots left out (no fact for 1h30m or more; "
        "--all shows them, --quiet-after changes the limit)"
    )
