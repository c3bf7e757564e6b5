"""What the web page draws, and what changed in it between two journal positions.

The page holds the whole forest (stopped nodes too: it filters by status itself) and, once
drawn, is only told what changed: the trees of the roots that journal entries after its
position touched, each whole. Finding them reads the journal entries in between (each names
its root aggregate), so an update costs what changed, never the size of the forest.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from lineage_es.domain.ids import root_id
from lineage_es.model import ForestNode
from lineage_es.read.render import nested, node_fields

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine
    from lineage_es.read.readonly import ViewReader


class RootTopics(NamedTuple):
    """How a journal entry's topic says it is a root's, and that it names the root."""

    #: Every journal topic of a root aggregate starts so; index and ledger entries do not.
    prefix: str
    #: Topics whose entry names its root's host and conversation.
    naming: frozenset[str]


@functools.cache
def root_topics() -> RootTopics:
    """The root aggregate's topics, read from its event classes on first use: they import
    the event library, which a server answering from the view loads only once it reads
    the journal (a change to draw), never to answer its first ``GET /tree``."""
    from lineage_es.domain.events import RootCreated, RootRedated

    return RootTopics(
        RootCreated.TOPIC.rsplit(".", 1)[0] + ".",
        frozenset((RootCreated.TOPIC, RootRedated.TOPIC)),
    )


def node_data(forest: Iterable[ForestNode]) -> list[dict[str, object]]:
    """The page's form of the forest's trees: the keys of ``lineage tree --format json``,
    plus ``name`` once renamed and ``last_seen`` when the node carries one."""
    return nested(forest, _page_fields)


def _page_fields(node: ForestNode) -> dict[str, object]:
    out = node_fields(node)
    if node.name is not None:
        out["name"] = node.name
    if node.last_seen is not None:
        out["last_seen"] = node.last_seen
    return out


@dataclass(frozen=True, slots=True)
class RootRef:
    """A root as the page keys it: its host and its conversation."""

    host: str
    conversation: str


@dataclass(frozen=True, slots=True)
class ForestChange:
    """What changed between two positions: the trees of the touched roots (whole, stopped
    nodes included), and the roots that are gone (deleted)."""

    start: int
    position: int
    roots: tuple[dict[str, object], ...]
    gone: tuple[RootRef, ...]

    def data(self) -> dict[str, object]:
        """The change as the page reads it."""
        return {
            "from": self.start,
            "position": self.position,
            "roots": list(self.roots),
            "gone": [{"host": r.host, "conversation": r.conversation} for r in self.gone],
        }


class ForestChanges:
    """Tells which roots changed between two journal positions, and draws their trees.

    It learns each root's name from the entry that started it, and the names of roots
    started before from the forest (:meth:`learn_roots`, :meth:`remember`); an entry of a
    root it cannot name sends it to the forest once more.
    Safe to call from several threads.
    """

    def __init__(self, engine: Engine | ViewReader) -> None:
        self.engine = engine
        self._names: dict[str, RootRef] = {}
        self._lock = threading.Lock()

    def remember(self, forest: Iterable[ForestNode]) -> None:
        """Learn the aggregate id of each root of ``forest``."""
        with self._lock:
            for node in forest:
                self._names[root_id(node.host, node.conversation).hex] = RootRef(
                    node.host, node.conversation
                )

    def learn_roots(self) -> None:
        """Learn the name of every root there is now (the server does, as it starts)."""
        self.remember(self.engine.forest(include_stopped=True))

    def touched(self, start: int, stop: int) -> tuple[RootRef, ...]:
        """The roots entries after ``start`` up to ``stop`` touched, the most recently
        touched last."""
        touched: dict[str, None] = {}
        unnamed = False
        topics = root_topics()
        for event in self.engine.journal(start, stop):
            if not event.topic.startswith(topics.prefix):
                continue
            if event.topic in topics.naming:
                ref = RootRef(str(event.state["host"]), str(event.state["conversation"]))
                with self._lock:
                    self._names[event.originator_id] = ref
            touched.pop(event.originator_id, None)
            touched[event.originator_id] = None
            unnamed = unnamed or event.originator_id not in self._names
        if unnamed:
            self.learn_roots()
        with self._lock:
            return tuple(self._names[key] for key in touched if key in self._names)

    def between(self, start: int, stop: int) -> ForestChange:
        """The trees of the roots that changed after ``start`` up to ``stop``."""
        trees: list[dict[str, object]] = []
        gone: list[RootRef] = []
        for ref in self.touched(start, stop):
            forest = self.engine.forest(ref.host, include_stopped=True, root=ref.conversation)
            if forest:
                trees.extend(node_data(forest))
            else:
                gone.append(ref)
        return ForestChange(start, stop, tuple(trees), tuple(gone))
