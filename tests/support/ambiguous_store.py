"""A store with a child placed ambiguous (root R has child A; R and A each have a spawn open
when X starts, so X is under R with no parent edge), a server over a store, and the command
runner: what the command-line and ``lineage serve`` views of such a child are tested on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from click.testing import CliRunner

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.serve import LineageServer
from tests.support.feed import Feed
from tests.support.serving import serving as serving_answerer


def ambiguous_store(url: str) -> str:
    """Fill the store at ``url`` (R, A; X ambiguous) and return its URL."""
    with open_engine(url) as engine:
        feed = Feed(engine)
        feed.root("R")
        feed.child("R", "R", "A")
        feed.spawn("R", "R", "K-root")
        feed.spawn("R", "A", "K-a")
        feed.start("R", "X")
    return url


@contextmanager
def serving(store: str) -> Iterator[LineageServer]:
    """``lineage serve`` over ``store`` on a free local port, in a thread, while in use."""
    with open_engine(store) as engine, serving_answerer(engine) as running:
        yield running


def run(*args: str) -> str:
    """The output of ``lineage *args``, which must exit 0."""
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output
