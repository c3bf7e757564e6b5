"""Build the compatibility fixture: a SQLite store and a journal export written by a release.

The files it writes (``tests/fixtures/compat/<release>/``) are committed; the tests under
``tests/compat/`` open them with the current code and check that they verify and answer the
same forests, now and as of past moments, as the release that wrote them did. Run it only to
add a fixture for a new release (``python tools/build_compat_fixture.py 0.2.0``); never to
refresh an existing one, which would make the check vacuous.

The store holds every host recording of ../shared/corpus and the bundled replays, a rename, a
delete, and one synthetic Claude root large enough (over 200 events) to carry a snapshot.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
#: The past moments whose forests the fixture pins (journal positions).
POSITIONS = (1, 40, 100, 180, 260)


def lineage(*args: str) -> str:
    command = [str(Path(sys.executable).parent / "lineage"), *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", help="the release that writes the fixture, e.g. 0.1.0")
    release = parser.parse_args().release
    folder = REPO / "tests" / "fixtures" / "compat" / release
    if folder.exists():
        sys.exit(f"{folder} exists: a fixture is never rebuilt")
    folder.mkdir(parents=True)
    store = f"sqlite:///{folder / 'store.sqlite'}"
    lineage("ingest", str(CORPUS), str(REPO / "replays"), "--quiet", "--store", store)

    from lineage_es import open_engine

    root = "c0117a7e-0000-4000-8000-00000000f1a7"
    start = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    with open_engine(store) as engine:
        engine.observe(
            "claude",
            {"session_id": root, "hook_event_name": "SessionStart", "source": "startup"},
            at=start,
        )
        for n in range(120):
            at = start + timedelta(seconds=n + 1)
            tool = f"toolu_compat{n:04d}"
            agent = f"a{n:016x}"
            engine.observe(
                "claude",
                {
                    "session_id": root,
                    "hook_event_name": "PreToolUse",
                    "tool_name": "Agent",
                    "tool_use_id": tool,
                    "tool_input": {"subagent_type": "Explore"},
                },
                at=at,
            )
            engine.observe(
                "claude",
                {
                    "session_id": root,
                    "hook_event_name": "SubagentStart",
                    "agent_id": agent,
                    "agent_type": "Explore",
                },
                at=at,
            )
            engine.observe(
                "claude",
                {
                    "session_id": root,
                    "hook_event_name": "SubagentStop",
                    "agent_id": agent,
                    "agent_type": "Explore",
                },
                at=at,
            )
        engine.rename(f"a{3:016x}", "compat-three")
        engine.delete(f"a{7:016x}", "user")
        now = engine.forest(include_stopped=True)
        pasts = {str(p): engine.as_of(position=p).forest(include_stopped=True) for p in POSITIONS}
        moment = start + timedelta(seconds=60)
        at_time = engine.as_of(time=moment).forest(include_stopped=True)
        position = engine.position()

    def plain(forest: object) -> object:
        from lineage_es.model import to_json

        return to_json(forest)

    expected = {
        "release": release,
        "position": position,
        "forest": plain(now),
        "as_of_position": {p: plain(f) for p, f in pasts.items()},
        "as_of_time": {"time": moment.isoformat(), "forest": plain(at_time)},
    }
    (folder / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    lineage("journal", "export", "-o", str(folder / "journal.jsonl"), "--store", store)
    for extra in folder.glob("store.sqlite-*"):
        extra.unlink()
    print(f"wrote {folder}: {position} events")


if __name__ == "__main__":
    main()
