"""A Codex thread id is a UUIDv7: told apart from other ids exactly as :class:`uuid.UUID`
reads them, however the id is written."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from lineage_es.hosts.codex import is_uuid7

HEX = "0123456789abcdefABCDEF"


def by_the_uuid_module(value: str) -> bool:
    try:
        return uuid.UUID(value).version == 7
    except ValueError:
        return False


#: UUIDs of every version and variant, written every way ``uuid.UUID`` reads them.
uuids = st.builds(
    lambda number, form: form(uuid.UUID(int=number)),
    st.integers(min_value=0, max_value=2**128 - 1),
    st.sampled_from(
        [
            str,
            lambda u: str(u).upper(),
            lambda u: u.hex,
            lambda u: "{" + str(u) + "}",
            lambda u: "urn:uuid:" + str(u),
        ]
    ),
)
#: A UUIDv7's own digits with any variant, upper or lower case.
sevens = st.builds(
    lambda head, variant, tail: (
        f"{head[:8]}-{head[8:12]}-7{head[12:15]}-{variant}{tail[:3]}-{tail[3:]}"
    ),
    st.text(HEX, min_size=15, max_size=15),
    st.sampled_from("0123456789abcdefABCDEF"),
    st.text(HEX, min_size=15, max_size=15),
)
#: Other ids hosts send: Claude's short hex agent ids, anything near a UUID's shape.
others = st.text(HEX + "-{}:urn", max_size=46)


@given(uuids | sevens | others)
def test_a_thread_id_is_a_uuid7_exactly_when_the_uuid_module_says_so(value: str) -> None:
    assert is_uuid7(value) == by_the_uuid_module(value)


def test_a_claude_agent_id_is_no_thread_id() -> None:
    assert not is_uuid7("a3f0c2d4e5b6a7c89")
