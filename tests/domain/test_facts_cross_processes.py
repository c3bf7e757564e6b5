"""Facts and observations cross to another process unchanged: an import's reading processes
pickle what they found for the process that journals it."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC
from typing import Any, get_type_hints

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineage_es import facts
from lineage_es.facts import HOSTS, Claim, Observation

FACT_CLASSES: list[type[Any]] = [
    facts.RootSeen,
    facts.SpawnRequested,
    facts.ChildStarted,
    facts.ChildIdentified,
    facts.Acted,
    facts.Resumed,
    facts.Stopped,
    facts.SessionEnded,
    facts.Renamed,
    facts.Deleted,
    facts.ToolCalled,
    facts.ToolReturned,
]


def every_field_set(cls: type[Any]) -> st.SearchStrategy[Any]:
    """``cls`` with every field drawn, those with defaults too."""
    hints = get_type_hints(cls, vars(facts))
    return st.builds(cls, **{f.name: st.from_type(hints[f.name]) for f in dataclasses.fields(cls)})


any_fact = st.one_of([every_field_set(cls) for cls in FACT_CLASSES])
names = st.none() | st.text(max_size=12)

observations = st.builds(
    Observation,
    host=st.sampled_from(HOSTS),
    requester=names,
    key=st.text(max_size=12),
    facts=st.lists(any_fact, max_size=4).map(tuple),
    root=names,
    workspace=st.lists(st.text(max_size=8), max_size=2).map(tuple),
    at=st.none() | st.datetimes(timezones=st.just(UTC)),
    recurs=st.booleans(),
)


def round_trip(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


@given(observations)
def test_an_observation_comes_back_equal_with_its_facts_of_the_same_kinds(
    observation: Observation,
) -> None:
    back = round_trip(observation)
    assert back == observation
    assert [type(f) for f in back.facts] == [type(f) for f in observation.facts]


@given(every_field_set(Claim))
def test_a_claim_comes_back_equal(claim: Claim) -> None:
    assert round_trip(claim) == claim


def test_a_fact_kind_with_a_keyword_only_field_is_refused_at_definition() -> None:
    with pytest.raises(TypeError, match="positional constructor argument"):

        @facts._pickled_by_constructor
        @dataclasses.dataclass(frozen=True, slots=True)
        class Odd:
            conversation: str
            note: str = dataclasses.field(default="", kw_only=True)
