"""Times in what one import leaves the next about files still being written.

A row can be stamped before the row where the last import stopped its file's conversation
(rows are not always in time order): the conversation goes on from that stop all the same,
with what stopped with it. And times in the carryover are compared as times, whatever ISO
form they are written in (``Z`` or ``+00:00``, fractions of any length or none).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import orjson

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.facts import Observation, Stopped
from lineage_es.hosts.base import parse_time
from lineage_es.hosts.codex import HOST as CODEX
from lineage_es.importers import import_claude, import_codex
from lineage_es.importers.codex_carryover import Carry, GoesOn
from lineage_es.importers.ledger import Ledger
from tests.test_import_claude import AGENT, Session, members
from tests.test_import_claude import at as second
from tests.test_import_codex import (
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
from tests.test_import_growing import assert_as_one_import, background_child_then_waiting

# -- a row stamped before the stop it takes back (Claude) ------------------------------------


def test_child_stopped_with_its_root_goes_on_when_the_next_row_is_stamped_before_the_stop(
    tmp_path: Path, memory: Engine
) -> None:
    """The session file ends at 3 (its root and its background AGENT stop there); it goes on
    with a row stamped 2.5 (as attachments are stamped before what they follow), then more.
    AGENT ran on until its notice at 8, as one import of the finished file has it."""
    s = background_child_then_waiting(tmp_path)
    import_claude(memory, tmp_path)
    content = {"role": "user", "content": "see attached"}
    s.row(None, "user", message=content, timestamp="2026-09-03T08:00:02.500Z")
    s.answer(5)
    s.notice(8, AGENT)
    s.answer(9)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=second(6)))[AGENT].status == "live"
    assert_as_one_import(memory, tmp_path)


def test_agent_whose_file_goes_on_with_a_row_stamped_before_its_stop_is_stopped_by_its_result(
    tmp_path: Path, memory: Engine
) -> None:
    """AGENT's file ends at 6 (it stops there); it goes on with a row stamped 5.5, its
    parent's result stops it at 7, and it writes again at 8: stopped from 7 to 8, as one
    import of the finished files has it."""
    s = Session(tmp_path)
    s.prompt(1)
    s.spawn(2, "toolu_A")
    s.prompt(3, "do it", agent=AGENT)
    s.answer(6, agent=AGENT)
    import_claude(memory, tmp_path)
    text = {"role": "assistant", "content": [{"type": "text", "text": "more"}]}
    s.row(None, "assistant", AGENT, message=text, timestamp="2026-09-03T08:00:05.500Z")
    s.result(7, "toolu_A", AGENT)
    s.answer(8, agent=AGENT)
    s.answer(10)
    import_claude(memory, tmp_path)
    assert members(memory.as_of(time=second(7)))[AGENT].status == "stopped"
    assert_as_one_import(memory, tmp_path)


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
