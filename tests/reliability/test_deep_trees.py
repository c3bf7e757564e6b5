"""`lineage tree` of a deep chain of agents: its JSON grows linearly with the nodes (not as the
square of the depth), it is the same JSON value as the compact form, and it reaches the reader
whole or the command fails: a short write is written on, a failed one is exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.facts import ChildStarted, Observation, RootSeen, SpawnRequested

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def chain_observations(depth: int) -> Iterator[Observation]:
    """A root D0000 and a chain of ``depth`` agents below it, each spawned by the last (ids
    of one width, so that every node takes the same bytes)."""
    clock = iter(range(1, 2 * depth + 2))

    def seen(requester: str, fact: RootSeen | SpawnRequested | ChildStarted) -> Observation:
        tick = next(clock)
        at = EPOCH + timedelta(seconds=tick)
        return Observation("claude", requester, f"k{tick}", (fact,), root="D0000", at=at)

    yield seen("D0000", RootSeen("D0000", "startup"))
    for i in range(1, depth + 1):
        parent, child = f"D{i - 1:04}", f"D{i:04}"
        yield seen(parent, SpawnRequested(parent, f"spawn{i}"))
        yield seen(child, ChildStarted(child=child))


def chain_store(folder: Path, depth: int) -> str:
    url = f"sqlite:///{folder / f'chain{depth}.sqlite'}"
    with open_engine(url) as engine:
        engine.observe_many(chain_observations(depth))
    return url


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> dict[int, str]:
    """Stores holding a chain 30 agents deep (the JSON indented level by level all the way
    down), 128 and 256 (far below the depth to which it is, and two and four times as deep
    as the text draws side by side)."""
    folder = tmp_path_factory.mktemp("chains")
    return {depth: chain_store(folder, depth) for depth in (30, 128, 256)}


def tree_json(store: str, *extra: str) -> bytes:
    result = CliRunner().invoke(main, ["tree", "--format", "json", "--store", store, *extra])
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


def nodes(data: dict[str, object]) -> int:
    """How many nodes a parsed ``tree --format json`` holds, counted without recursion."""
    count, stack = 0, list(data["roots"])  # type: ignore[call-overload]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(node["children"])
    return count


def test_tree_json_of_a_chain_twice_as_deep_is_about_twice_the_bytes(
    chains: dict[int, str],
) -> None:
    shallow, deep = len(tree_json(chains[128])), len(tree_json(chains[256]))
    assert deep < 2.2 * shallow, (shallow, deep)  # quadratic: 3.5 times and more


def test_tree_json_of_a_deep_chain_is_the_same_value_as_its_compact_form(
    chains: dict[int, str],
) -> None:
    indented = json.loads(tree_json(chains[256]))
    with open_engine(chains[256]) as engine:
        from lineage_es.read.render import dumps_deep, forest_data

        compact = json.loads(dumps_deep(forest_data(engine.forest())))
    assert indented == compact and nodes(indented) == 257


def test_tree_json_of_a_chain_30_deep_is_laid_out_as_orjson_lays_it_out(
    chains: dict[int, str],
) -> None:
    text = tree_json(chains[30])
    assert text == orjson.dumps(orjson.loads(text), option=orjson.OPT_INDENT_2) + b"\n"


def tree_text(store: str) -> str:
    result = CliRunner().invoke(main, ["tree", "--store", store])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_tree_text_of_a_chain_twice_as_deep_is_about_twice_the_bytes(
    chains: dict[int, str],
) -> None:
    shallow, deep = len(tree_text(chains[128]).encode()), len(tree_text(chains[256]).encode())
    assert deep < 2.2 * shallow, (shallow, deep)  # quadratic: 3.5 times and more


def test_tree_text_draws_a_node_past_64_levels_from_the_left_saying_how_many_are_not_drawn(
    chains: dict[int, str],
) -> None:
    lines = tree_text(chains[256]).splitlines()
    assert lines[64].startswith(" " * 3 * 63 + "└─ ● D0064 ")
    assert lines[65].startswith("…64 └─ ● D0065 ") and lines[66].startswith("…64    └─ ● D0066 ")
    assert lines[129].startswith("…128 └─ ● D0129 ")


class TakesAFewBytesAtATime(io.RawIOBase):
    """A standard output that takes at most ``most`` bytes a write (0: none at all)."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.taken = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: object) -> int:
        chunk = bytes(data)[: self.most]  # type: ignore[call-overload]
        self.taken += chunk
        return len(chunk)


def tree_into(
    stdout: TakesAFewBytesAtATime, store: str, monkeypatch: pytest.MonkeyPatch
) -> int | str | None:
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(stdout, write_through=True))  # type: ignore[type-var]
    try:
        main.main(["tree", "--format", "json", "--store", store], standalone_mode=False)
    except SystemExit as exit_:
        return exit_.code
    finally:
        monkeypatch.undo()
    return 0


def test_tree_writes_on_after_a_short_write_until_all_is_written(
    chains: dict[int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout = TakesAFewBytesAtATime(4096)
    assert tree_into(stdout, chains[128], monkeypatch) == 0
    assert nodes(json.loads(bytes(stdout.taken))) == 129


def test_tree_fails_when_standard_output_takes_nothing(
    chains: dict[int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lineage_es.cli.common import CommandFailed

    with pytest.raises(CommandFailed, match="cannot write the output: standard output took none"):
        tree_into(TakesAFewBytesAtATime(0), chains[128], monkeypatch)


def lineage(*args: str, stdout: int | io.BufferedWriter) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "lineage_es.cli.main", *args]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, check=False)


@pytest.mark.parametrize("fmt", ["json", "text", "mermaid"])
def test_tree_into_a_full_disk_exits_2_and_says_why(chains: dict[int, str], fmt: str) -> None:
    with open("/dev/full", "wb") as full:
        done = lineage("tree", "--format", fmt, "--store", chains[128], stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode().strip() == "Error: cannot write the output: No space left on device"


def test_tree_into_a_reader_that_stops_reading_exits_0_quietly(chains: dict[int, str]) -> None:
    command = [sys.executable, "-m", "lineage_es.cli.main", "tree", "--format", "json"]
    with subprocess.Popen(
        [*command, "--store", chains[256]], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as reader:
        assert reader.stdout is not None and reader.stderr is not None
        assert reader.stdout.read(10) == b'{\n  "roots'
        reader.stdout.close()  # as `| head -c 10` does
        errors = reader.stderr.read()
    assert (reader.returncode, errors) == (0, b"")
