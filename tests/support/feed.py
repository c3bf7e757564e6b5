"""A small language for feeding host-neutral observations to an engine in tests."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from lineage_es.facts import (
    Acted,
    ChildIdentified,
    ChildStarted,
    Fact,
    Host,
    Observation,
    RootSeen,
    SessionEnded,
    SpawnRequested,
    Stopped,
)
from lineage_es.model import AgentLineage

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class Feed:
    """Sends observations in order, one logical second apart, each with a key no other
    feed uses (two feeds may share one store)."""

    def __init__(
        self, engine: Engine, host: Host = "claude", *, clock: Iterator[int] | None = None
    ) -> None:
        self.engine = engine
        self.host = host
        self.clock = clock if clock is not None else itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]

    def send(
        self,
        requester: str,
        *facts: Fact,
        root: str | None = None,
        workspace: tuple[str, ...] = (),
        key: str | None = None,
    ) -> AgentLineage | None:
        tick = next(self.clock)
        observation = Observation(
            host=self.host,
            requester=requester,
            key=key if key is not None else f"{self._prefix}-{tick}",
            facts=facts,
            root=root,
            workspace=workspace,
            at=EPOCH + timedelta(seconds=tick),
        )
        return self.engine.observe(observation.host, observation)

    # Claude-shaped steps: every payload names its root.
    def root(self, root: str) -> AgentLineage | None:
        return self.send(root, RootSeen(root, "startup"), root=root)

    def spawn(self, root: str, parent: str, key: str) -> AgentLineage | None:
        return self.send(parent, SpawnRequested(parent, key), root=root)

    def start(self, root: str, child: str) -> AgentLineage | None:
        return self.send(child, ChildStarted(child=child), root=root)

    def confirm(self, root: str, parent: str, child: str, key: str) -> AgentLineage | None:
        return self.send(
            parent, ChildIdentified(parent, child, "confirmed", spawn_key=key), root=root
        )

    def act(self, root: str, who: str) -> AgentLineage | None:
        return self.send(who, Acted(who), root=root)

    def stop(self, root: str, who: str) -> AgentLineage | None:
        return self.send(who, Stopped(who), root=root)

    def end(self, root: str) -> AgentLineage | None:
        return self.send(root, SessionEnded(root), root=root)

    def child(self, root: str, parent: str, child: str) -> AgentLineage | None:
        """Spawn, start and confirm ``child`` under ``parent`` in one go."""
        key = f"spawn-{child}"
        self.spawn(root, parent, key)
        self.start(root, child)
        return self.confirm(root, parent, child, key)

    # Cursor-shaped steps: payloads never name their root.
    def cursor_root(self, conversation: str, workspace: tuple[str, ...]) -> AgentLineage | None:
        return self.send(conversation, RootSeen(conversation, "sessionStart"), workspace=workspace)

    def cursor_start(
        self, parent: str, key: str, workspace: tuple[str, ...]
    ) -> AgentLineage | None:
        return self.send(
            parent, ChildStarted(spawn_key=key, parent=parent, subagent_id=key), workspace=workspace
        )

    def cursor_act(self, conversation: str, workspace: tuple[str, ...]) -> AgentLineage | None:
        return self.send(conversation, Acted(conversation), workspace=workspace)


def keys(peers: tuple[object, ...]) -> list[str]:
    """The ids a tree lists, in order."""
    return [p.conversation for p in peers]  # type: ignore[attr-defined]
