"""A host's time is read as an aware UTC datetime; what is not a time, or is one no datetime
holds once in UTC (its offset carries it past year 9999 or before year 1), reads as none,
never as an error: a bad time in one row must not stop a whole import or replay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage_es.hosts.base import parse_time


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-01T12:00:00Z", datetime(2026, 3, 1, 12, tzinfo=UTC)),
        ("2026-03-01T12:00:00+02:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),
        ("2026-03-01T12:00:00", datetime(2026, 3, 1, 12, tzinfo=UTC)),
    ],
    ids=["zulu", "offset", "no-zone-is-utc"],
)
def test_a_time_is_read_in_utc(text: str, expected: datetime) -> None:
    assert parse_time(text) == expected
    assert parse_time(text).tzinfo is UTC  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+05:00"],
    ids=["after-9999-in-utc", "before-year-1-in-utc"],
)
def test_a_time_beyond_the_utc_range_reads_as_none(text: str) -> None:
    assert parse_time(text) is None


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01T00:00:00Z", None, 5])
def test_what_is_not_a_time_reads_as_none(text: object) -> None:
    assert parse_time(text) is None


#: Any naive datetime, a third of them within a day of either end of the range.
_MOMENTS = st.one_of(
    st.datetimes(),
    st.datetimes(max_value=datetime(1, 1, 2)),
    st.datetimes(min_value=datetime(9999, 12, 30)),
)


@given(moment=_MOMENTS, offset=st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1))
def test_any_written_time_reads_as_its_instant_or_as_none(moment: datetime, offset: int) -> None:
    """Every datetime Python writes with any offset: the same instant in UTC when a datetime
    holds it there, else none; never an exception."""
    zone = timezone(timedelta(minutes=offset))
    text = moment.replace(tzinfo=zone).isoformat()
    read = parse_time(text)
    try:
        instant = moment.replace(tzinfo=zone).astimezone(UTC)
    except OverflowError:
        assert read is None
    else:
        assert read == instant


@given(st.text())
def test_any_text_reads_without_raising(text: str) -> None:
    read = parse_time(text)
    assert read is None or read.tzinfo is UTC
