"""The JSON writer of trees of any depth (`dumps_deep`): orjson's bytes wherever orjson writes
them, the same layout capped at 64 levels of indent, and the same value below orjson's
nesting limit (255 levels), where orjson refuses."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lineage_es.read.render import MAX_INDENT_LEVELS, dumps_deep

#: orjson refuses data nested deeper than this.
ORJSON_LIMIT = 255

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
plain_json = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)


def nest(value: Any, levels: int) -> Any:
    """``value`` inside ``levels`` containers, objects and arrays in turn."""
    for level in range(levels):
        value = {"children": value} if level % 2 else [value]
    return value


def capped(text: bytes) -> bytes:
    """orjson's indented ``text`` with every line indented at most
    :data:`MAX_INDENT_LEVELS` levels: the layout `dumps_deep` promises."""
    most = b"  " * MAX_INDENT_LEVELS
    return re.sub(rb"(?m)^ {%d,}" % (len(most) + 1), most, text)


@settings(max_examples=150, deadline=None)
@given(value=plain_json, levels=st.integers(min_value=0, max_value=ORJSON_LIMIT - 20))
def test_compact_json_is_orjsons_wherever_orjson_writes_it(value: Any, levels: int) -> None:
    data = nest(value, levels)
    assert dumps_deep(data) == orjson.dumps(data)


@settings(max_examples=150, deadline=None)
@given(value=plain_json, levels=st.integers(min_value=0, max_value=ORJSON_LIMIT - 20))
def test_indented_json_is_orjsons_with_its_indent_capped(value: Any, levels: int) -> None:
    data = nest(value, levels)
    assert dumps_deep(data, indent=True) == capped(orjson.dumps(data, option=orjson.OPT_INDENT_2))


@pytest.mark.parametrize("indent", [False, True])
@settings(max_examples=30, deadline=None)
@given(value=plain_json, levels=st.integers(min_value=ORJSON_LIMIT, max_value=ORJSON_LIMIT + 300))
def test_data_deeper_than_orjson_writes_is_written_as_the_same_value(
    indent: bool, value: Any, levels: int
) -> None:
    data = nest(value, levels)
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(data)
    assert json.loads(dumps_deep(data, indent=indent)) == json.loads(json.dumps(data))


def test_an_indented_line_is_never_deeper_than_the_cap() -> None:
    text = dumps_deep(nest(1, 2 * MAX_INDENT_LEVELS), indent=True)
    deepest = max(len(line) - len(line.lstrip(b" ")) for line in text.splitlines())
    assert deepest == 2 * MAX_INDENT_LEVELS


def test_what_is_not_json_is_refused_as_orjson_refuses_it() -> None:
    with pytest.raises(orjson.JSONEncodeError):
        dumps_deep({"a": object()})
