"""``lineage serve`` on a current view answers its first ``GET /tree`` without loading the
event library: the journal's topics (the domain's event classes) are read only when the
server reads the journal, to tell the page what changed."""

from __future__ import annotations

import os
import subprocess
import sys

import orjson

from lineage_es.engine.engine import open_engine
from lineage_es.serve.changes import ForestChanges, root_topics
from tests.support.feed import Feed

#: A child process: ``lineage serve`` in a thread, one ``GET /tree?all=1``, then what it
#: answered and whether the event library was loaded by then, as JSON on stdout.
SERVE_ONCE = """
import json, sys, threading, time, urllib.request
import click
from lineage_es.cli.main import main

said = []
echo = click.echo
def listen(message=None, *args, **kwargs):
    said.append(str(message))
    return echo(message, *args, **kwargs)
click.echo = listen
args = ["serve", "--port", "0", "--quiet"]
threading.Thread(target=main, args=(args,), daemon=True).start()
while not any(line.startswith("serving ") for line in said):
    time.sleep(0.01)
url = next(line for line in said if line.startswith("serving ")).split()[1]
with urllib.request.urlopen(url + "tree?all=1") as answer:
    tree = json.loads(answer.read())
print(json.dumps({"tree": tree, "eventsourcing": "eventsourcing" in sys.modules}))
"""


def serve_once(store: str) -> dict[str, object]:
    env = {**os.environ, "LINEAGE_STORE": store, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", SERVE_ONCE], env=env, capture_output=True, check=True, timeout=60
    )
    found: dict[str, object] = orjson.loads(done.stdout.splitlines()[-1])
    return found


def test_the_first_tree_a_server_answers_on_a_current_view_loads_no_event_library(
    store: str,
) -> None:
    assert serve_once(store)["eventsourcing"] is False


def test_the_first_tree_a_server_answers_on_a_current_view_holds_the_journal_s_forest(
    store: str,
) -> None:
    tree = serve_once(store)["tree"]
    assert isinstance(tree, dict)
    (root,) = tree["roots"]
    assert (root["conversation"], [c["conversation"] for c in root["children"]]) == ("R", ["A"])


def test_the_root_topics_are_the_root_aggregate_s_own() -> None:
    from lineage_es.domain.events import RootCreated, RootRedated

    topics = root_topics()
    assert RootCreated.TOPIC.startswith(topics.prefix)
    assert topics.naming == {RootCreated.TOPIC, RootRedated.TOPIC}


def test_a_change_names_the_roots_the_journal_entries_after_a_position_touched(
    store: str,
) -> None:
    with open_engine(store) as engine:
        before = engine.position()
        Feed(engine).root("S")
        changes = ForestChanges(engine)
        touched = changes.touched(before, engine.position())
    assert [(ref.host, ref.conversation) for ref in touched] == [("claude", "S")]
