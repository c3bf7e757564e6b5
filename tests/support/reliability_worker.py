"""Processes the reliability tests start, kill and race:
``python -m tests.support.reliability_worker``.

``write``    observes a crash stream into a store, appending each returned index to a side
             file with fsync (the record of what "returned"), until it is killed.
``rebuild``  rebuilds the tree view over and over, until it is killed.
``contend``  observes one worker's share of a contention stream and prints its figures.
``machine``  an engine that follows a shared PostgreSQL journal and takes commands on stdin.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
from eventsourcing.persistence import IntegrityError

from lineage_es.engine.engine import Engine, open_engine
from lineage_es.errors import ConcurrencyError
from tests.support.reliability_streams import contention_stream, crash_stream


def _say(lock: threading.Lock, **message: Any) -> None:
    with lock:
        sys.stdout.write(orjson.dumps({**message, "t": time.time()}).decode() + "\n")
        sys.stdout.flush()


def write(store: str, side: str, start: int, length: int) -> None:
    """Observe the crash stream from ``start``; after each observe returns, record its index."""
    items = crash_stream(length)
    fd = os.open(side, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    engine = open_engine(store)
    print("ready", flush=True)
    for item in items[start:]:
        engine.observe("claude", item.payload, at=item.at)
        os.write(fd, f"{item.index}\n".encode())
        os.fsync(fd)
    print("done", flush=True)


def rebuild(store: str) -> None:
    """Throw the view away and replay the journal into it, forever."""
    engine = open_engine(store)
    print("ready", flush=True)
    while True:
        engine.rebuild()


def count_conflicts(engine: Engine) -> Callable[[], int]:
    """Count the optimistic-concurrency conflicts the engine meets (and retries) by wrapping
    ``save_aggregates`` on this engine's application: ``lineage_es.engine.application`` is
    left as it is."""
    conflicts = [0]
    save = engine.app.save_aggregates

    def counting_save(*objs: Any, **kwargs: Any) -> Any:
        try:
            return save(*objs, **kwargs)
        except IntegrityError:
            conflicts[0] += 1
            raise

    engine.app.save_aggregates = counting_save  # type: ignore[method-assign]
    return lambda: conflicts[0]


def contend(store: str, worker: int, count: int, roots: int) -> None:
    """Observe this worker's share of the contention stream as fast as the store allows."""
    items = contention_stream(worker, count, roots)
    engine = open_engine(store)
    conflicts = count_conflicts(engine)
    gave_up: list[str] = []
    print("ready", flush=True)
    sys.stdin.readline()  # start together
    for item in items:
        try:
            engine.observe("claude", item.payload, at=item.at)
        except ConcurrencyError:
            gave_up.append(item.key)
    engine.close()
    figures = {"worker": worker, "observed": len(items), "conflicts": conflicts()}
    print(orjson.dumps({**figures, "gave_up": gave_up}).decode(), flush=True)


def machine(store: str, name: str) -> None:
    """One "machine": an engine whose Follower reports every root its view learns, and which
    observes the payloads sent to it on stdin (one JSON command a line)."""
    from lineage_es.follow import Follower

    lock = threading.Lock()
    engine = open_engine(store)
    known = {row.conversation for row in engine.view.roots(None, live_only=False)}

    def changed(position: int, cause: str) -> None:
        # Read the view as it is: no catch-up here, the Follower did it.
        for row in engine.view.roots(None, live_only=False):
            if row.conversation not in known:
                known.add(row.conversation)
                _say(lock, event="seen", conversation=row.conversation, cause=cause, at=position)

    follower = Follower(engine, on_change=changed, poll_interval=None).start()
    follower.wait_subscribed(timeout=30)
    _say(lock, event="ready", name=name)
    for line in sys.stdin:
        command = orjson.loads(line)
        if "observe" in command:
            answer = engine.observe("claude", command["observe"])
            assert answer is not None
            _say(lock, event="observed", conversation=answer.conversation, at=engine.position())
        elif "stats" in command:
            _say(lock, event="stats", **follower.stats())
        else:
            break
    follower.stop()
    engine.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.support.reliability_worker")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("write")
    p.add_argument("--store", required=True)
    p.add_argument("--side", required=True)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--length", type=int, required=True)
    p = sub.add_parser("rebuild")
    p.add_argument("--store", required=True)
    p = sub.add_parser("contend")
    p.add_argument("--store", required=True)
    p.add_argument("--worker", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--roots", type=int, required=True)
    p = sub.add_parser("machine")
    p.add_argument("--store", required=True)
    p.add_argument("--name", required=True)
    args = parser.parse_args(argv)
    if args.command == "write":
        write(args.store, args.side, args.start, args.length)
    elif args.command == "rebuild":
        rebuild(args.store)
    elif args.command == "contend":
        contend(args.store, args.worker, args.count, args.roots)
    else:
        machine(args.store, args.name)


if __name__ == "__main__":
    main()
