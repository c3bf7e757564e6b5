"""Times in what one Codex import leaves the next about rollouts still being written (the
carryover) are compared as times, whatever ISO form they are written in (``Z`` or
``+00:00``, fractions of any length or none).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import orjson

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import Observation, Stopped
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.codex import HOST as CODEX
from lineage_es.importers import import_codex
from lineage_es.importers.codex_carryover import Carry, GoesOn
from lineage_es.importers.ledger import Ledger
from tests.support.codex_sessions import (
    CHILD,
    MOMENTS,
    PARENT,
    live_at,
    message,
    meta,
    one_shot,
    rollout,
    spawned,
)

# -- rows stamped in mixed ISO forms ----------------------------------------------------------


def stamped(row: bytes, stamp: str) -> bytes:
    """``row`` with its timestamp written as ``stamp``."""
    return orjson.dumps(orjson.loads(row) | {"timestamp": stamp}) + b"\n"


def event_at(stamp: str, payload: dict[str, str]) -> bytes:
    return orjson.dumps({"timestamp": stamp, "type": "event_msg", "payload": payload}) + b"\n"


def test_codex_rows_stamped_in_mixed_iso_forms_grow_into_the_history_of_one_import(
    tmp_path: Path, memory: Engine
) -> None:
    """Evidence that the import normalises every time before the carryover keeps it: the
    child's rollout ends at a row stamped ``…04Z``, its parent closes it at ``…04.5Z``
    (which sorts before ``…04Z`` as text), and it goes on: it stays closed from 4.5."""
    close = {"type": "collab_close_end", "receiver_thread_id": CHILD}
    spawn = {"type": "collab_agent_spawn_end", "new_thread_id": CHILD}
    parent = (
        stamped(meta(0, PARENT), "2026-09-03T08:00:00+00:00"),
        stamped(message(1), "2026-09-03T08:00:01.5Z"),
        event_at("2026-09-03T08:00:03Z", spawn),
        event_at("2026-09-03T08:00:04.5Z", close),
        stamped(message(10), "2026-09-03T08:00:10.000000+00:00"),
    )
    child = (
        stamped(spawned(2, CHILD, PARENT), "2026-09-03T08:00:02.1+00:00"),
        stamped(message(4), "2026-09-03T08:00:04Z"),
        stamped(message(6), "2026-09-03T08:00:06.123456Z"),
        stamped(message(9), "2026-09-03T10:00:09.25+02:00"),
    )
    rollout(tmp_path / "a", PARENT, *parent)
    rollout(tmp_path / "b", PARENT, *parent)
    rollout(tmp_path / "b", CHILD, *child)
    path = rollout(tmp_path / "a", CHILD, *child[:2])
    import_codex(memory, tmp_path / "a")
    path.write_bytes(b"".join(child))
    import_codex(memory, tmp_path / "a")
    assert live_at(memory, *MOMENTS) == live_at(one_shot(tmp_path / "b"), *MOMENTS)


# -- the Codex carryover's own state, in other ISO forms -----------------------------------------


def carry(state: dict[str, object]) -> Carry:
    """A carryover over a ledger whose ``carry:PARENT`` group holds ``state`` (times written
    in forms this code never writes: another writer's, or a hand-edited ledger's)."""
    ledger = Ledger(open_engine("memory://"), CODEX, Path("/nowhere"))
    ledger.put_group(f"carry:{PARENT}", state)
    return Carry(ledger)


def time(text: str) -> datetime:
    parsed = parse_time(text)
    assert parsed is not None
    return parsed


def test_a_stop_kept_without_fraction_is_before_a_step_in_the_same_second() -> None:
    memory = open_engine("memory://")
    kept = carry({"own": {CHILD: ["2026-09-03T08:00:04Z", []]}, "ended": None})
    when = time("2026-09-03T08:00:04.500Z")
    closed = Observation(
        host=CODEX,
        requester=PARENT,
        key="close",
        facts=(Stopped(conversation=CHILD),),
        root=PARENT,
        at=when,
    )
    kept.note(memory, memory.position(), [(when, 0, 0, closed)], [])
    assert kept.tree(PARENT).own[CHILD][1] == [[when.isoformat(), "stop"]]


def test_an_own_stop_kept_in_two_forms_of_one_time_is_observed_again_with_its_root() -> None:
    kept = carry(
        {
            "own": {CHILD: ["2026-09-03T08:00:06Z", []]},
            "ended": ["2026-09-03T08:00:04Z", {CHILD: [["2026-09-03T08:00:06.000+00:00", "own"]]}],
        }
    )
    stop, at = time("2026-09-03T08:00:04Z"), time("2026-09-03T08:00:05Z")
    timed = kept.go_on([GoesOn(PARENT, PARENT, stop, at, "row", 0)], [])
    again = [fact for *_, observation in timed for fact in observation.facts]
    assert Stopped(conversation=CHILD, provisional=True) in again


def test_the_carryovers_state_written_by_this_code_still_loads() -> None:
    """The ledger keeps the text it always kept: ``isoformat()`` of UTC times."""
    kept = carry(
        {
            "own": {CHILD: ["2026-09-03T08:00:06+00:00", [["2026-09-03T08:00:07.5+00:00", "x"]]]},
            "ended": ["2026-09-03T08:00:04+00:00", {CHILD: []}],
            "junk": 1,
        }
    )
    tree = kept.tree(PARENT)
    assert tree.own == {
        CHILD: ["2026-09-03T08:00:06+00:00", [["2026-09-03T08:00:07.5+00:00", "x"]]]
    }
    assert tree.ended == ["2026-09-03T08:00:04+00:00", {CHILD: []}]
