"""The root aggregate: one ``RootLineage`` per root conversation, holding the rules of the
lineage contract (placement, inference without guessing, confirmation, correction, cascade).

It is pure: no I/O and no clock other than each fact's time, so the same facts always give the
same events. Its state is plain JSON data (:class:`~lineage_es.domain.state.LineageState`), so
snapshots need no custom transcoding. The rules live in mixins, one concern each
(:mod:`~lineage_es.domain.lifetimes`, :mod:`~lineage_es.domain.stops`,
:mod:`~lineage_es.domain.identification`, :mod:`~lineage_es.domain.placement`,
:mod:`~lineage_es.domain.subtree`); this module assembles them, versions the state, and
decides what each fact of an observation does (:meth:`RootLineage.apply_observation`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from eventsourcing.domain import Aggregate

from lineage_es import facts
from lineage_es.domain import call_events, edge_events, events, seen_events
from lineage_es.domain.ids import root_id
from lineage_es.domain.nodes import DELETED, LIVE, STOPPED
from lineage_es.domain.placement import PlacementRules
from lineage_es.domain.subtree import SubtreeRules
from lineage_es.facts import Fact, Observation, Resolution


class RootLineage(PlacementRules, SubtreeRules, Aggregate):
    """One root conversation and every node below it (the state:
    :class:`~lineage_es.domain.state.LineageState`).

    The event classes are the module-level ones of :mod:`lineage_es.domain.events`, carried
    here as attributes (``RootLineage.ChildPlaced``...): eventsourcing registers their explicit
    topics from this class. ``class_version`` versions the snapshot state, with an
    ``upcast_vN_vN+1`` step for each older version.
    """

    TOPIC = "lineage:RootLineage"
    class_version = 5

    Event = events.RootEvent
    Created = events.RootCreated
    RootRedated = events.RootRedated
    Resumed = events.Resumed
    SpawnRequested = events.SpawnRequested
    ChildPlaced = events.ChildPlaced
    ChildRedated = events.ChildRedated
    ChildBound = events.ChildBound
    BindingUndone = events.BindingUndone
    SubtreeMoved = events.SubtreeMoved
    ChildAdopted = events.ChildAdopted
    SeenAdopted = events.SeenAdopted
    EdgeConfirmed = edge_events.EdgeConfirmed
    EdgeCorrected = edge_events.EdgeCorrected
    EdgeRejected = edge_events.EdgeRejected
    Stopped = events.Stopped
    Renamed = events.Renamed
    WorkspaceLearned = events.WorkspaceLearned
    Deleted = events.Deleted
    ToolCallStarted = call_events.ToolCallStarted
    ToolCallEnded = call_events.ToolCallEnded
    Seen = seen_events.Seen

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 snapshot kept every key seen as ``1`` and no lifetime: each of its keys
        counts as seen in the current lifetime until a node stops or resumes."""
        state.setdefault("lifetime", 1)
        state["seen"] = dict.fromkeys(state.get("seen", {}), state["lifetime"])

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A version-2 snapshot kept no start per node (a child's is then unknown: the next
        fact placing it with the same parent re-dates it, and the view keeps the earlier of
        the two times) and no stated parents (its rejections kept nothing of what the fact
        stated)."""
        state.setdefault("stated", {})

    @staticmethod
    def upcast_v3_v4(state: dict[str, Any]) -> None:
        """A version-3 snapshot kept no time for its lifetimes' beginnings: its keys count by
        lifetime alone (a recorded payload delivered again after its lifetime ended is applied
        again)."""
        state["began"] = [None] * int(state.get("lifetime", 1))

    @staticmethod
    def upcast_v4_v5(state: dict[str, Any]) -> None:
        """A version-4 snapshot kept no last time for the facts of its lifetimes: its keys count
        by when the next lifetime began alone (a recorded payload delivered again at that very
        instant is applied again); the lifetimes after it keep theirs."""
        state["latest"] = [None] * int(state.get("lifetime", 1))

    def __init__(
        self, host: str, conversation: str, workspace: list[str], source: str, fact: str
    ) -> None:
        self.host = host
        self.conversation = conversation
        self.workspace = list(workspace)
        self.nodes = {
            conversation: {
                "parent": None,
                "depth": 0,
                "status": LIVE,
                "spawn": None,
                "resolution": "native",
                "ambiguous": False,
            }
        }
        self.stated = {}
        self.pending = {}
        self.spawns = {}
        self.spawn_seq = 0
        self.lifetime = 1
        self.seen = {fact: self.lifetime} if fact else {}
        self.began = [None]  # the first lifetime's beginning is the root's start
        self.latest = [None]

    @classmethod
    def start(
        cls,
        host: str,
        conversation: str,
        *,
        at: datetime,
        workspace: tuple[str, ...] = (),
        source: str = "",
        fact: str = "",
    ) -> RootLineage:
        return cls._create(
            cls.Created,
            id=root_id(host, conversation),
            host=host,
            conversation=conversation,
            workspace=list(workspace),
            source=source,
            fact=fact,
            timestamp=at,
        )

    # -- commands of the root's own --------------------------------------------------------

    def learn_workspace(self, workspace: tuple[str, ...], *, at: datetime, fact: str) -> None:
        """A payload of the root itself names its workspace: learnt when it was unknown (the
        root was first seen without one). A workspace once known is kept: a payload naming
        another one changes nothing, so the roots a root is listed with, and the children
        bound to it by order, never move because a host sent a different one later."""
        if workspace and not self.workspace and self.nodes[self.conversation]["status"] != DELETED:
            self._emit(events.WorkspaceLearned, at, fact, workspace=list(workspace))

    def rename(self, conversation: str, name: str, *, at: datetime, fact: str = "") -> None:
        """Name a node: a conversation, or a pending child by its spawn key (the name stays
        with the node when its conversation becomes known)."""
        found = self._locate(conversation, None)
        if found is not None and found.node["status"] != DELETED:
            self._emit(
                events.Renamed,
                at,
                fact,
                conversation=found.conversation,
                spawn_key=found.spawn_key,
                name=name,
            )

    # -- what each fact does ---------------------------------------------------------------

    def apply_observation(
        self,
        observation: Observation,
        *,
        at: datetime,
        fact: str,
        elsewhere: Callable[[str], bool],
    ) -> None:
        """Apply every fact of ``observation`` (key ``fact``, at ``at``) to this root.
        ``elsewhere(conversation)`` says whether a conversation already belongs to another
        root: a conversation lives in one root only, and only the caller can see the others.

        A root first seen without its workspace learns it from a later payload of its own
        (a host may leave the workspace out of some payloads); a child's payloads teach its
        root nothing (:meth:`learn_workspace`)."""
        if observation.workspace and observation.requester == self.conversation:
            self.learn_workspace(observation.workspace, at=at, fact=fact)
        for each in observation.facts:
            self._apply_fact(each, observation, at, fact, elsewhere)
        self._note_seen(observation, at, fact)

    def _note_seen(self, observation: Observation, at: datetime, key: str) -> None:
        """Journal that the nodes ``observation`` is about were heard of at ``at``, for each
        whose last time is more than :data:`~lineage_es.domain.seen_events.SEEN_INTERVAL`
        before it (an event of this observation naming the node already made it current).
        The nodes are the requester and the conversations that acted; a deleted one is not
        heard of any more."""
        named = [observation.requester]
        named += [
            each.conversation
            for each in observation.facts
            if isinstance(each, facts.Acted | facts.ToolCalled | facts.ToolReturned)
        ]
        times = self.heard_times()
        for conversation in dict.fromkeys(name for name in named if name is not None):
            node = self.nodes.get(conversation)
            if node is None or node["status"] == DELETED:
                continue
            if seen_events.seen_due(times.get(conversation) or node.get("started"), at):
                self._emit(seen_events.Seen, at, key, conversation=conversation, spawn_key=None)

    def _apply_fact(
        self,
        fact: Fact,
        observation: Observation,
        at: datetime,
        key: str,
        elsewhere: Callable[[str], bool],
    ) -> None:
        if isinstance(fact, facts.RootSeen):
            if fact.conversation == self.conversation:
                self.see_root(at=at, fact=key)
        elif isinstance(fact, facts.SpawnRequested):
            self._ensure_placed(fact.parent, observation, at, key, elsewhere)
            self.request_spawn(
                fact.parent,
                fact.spawn_key,
                agent_type=fact.agent_type,
                description=fact.description,
                at=at,
                fact=key,
            )
        elif isinstance(fact, facts.ChildStarted):
            self._start_child(fact, at, key, elsewhere)
        elif isinstance(fact, facts.ChildIdentified):
            if self.knows(fact.child) or not elsewhere(fact.child):
                self.apply_identified(fact, at=at, fact=key)
        elif isinstance(fact, facts.Acted):
            self._ensure_placed(fact.conversation, observation, at, key, elsewhere)
        elif isinstance(fact, facts.Resumed):
            if self._may_resume(fact.conversation):
                self.resume(fact.conversation, at=at, fact=key)
        elif isinstance(fact, facts.Stopped):
            self.stop(
                fact.conversation,
                fact.spawn_key,
                at=at,
                fact=key,
                provisional=fact.provisional,
                reported=observation.requester != fact.conversation,
            )
        elif isinstance(fact, facts.SessionEnded):
            if fact.conversation == self.conversation:
                self.end_session(at=at, fact=key)
            else:
                self.stop(fact.conversation, None, at=at, fact=key)
        elif isinstance(fact, facts.Renamed):
            self.rename(fact.conversation, fact.name, at=at, fact=key)
        elif isinstance(fact, facts.Deleted):
            self.delete(fact.conversation, fact.reason, at=at, fact=key)
        elif isinstance(fact, facts.ToolCalled | facts.ToolReturned):
            self._note_tool_call(fact, at, key)

    def _note_tool_call(
        self, fact: facts.ToolCalled | facts.ToolReturned, at: datetime, key: str
    ) -> None:
        """Journal an MCP tool call's start or return by a node of this root that is not
        deleted (an unknown conversation's call names no caller the tree could answer)."""
        node = self.node(fact.conversation)
        if node is None or node["status"] == DELETED:
            return
        if isinstance(fact, facts.ToolCalled):
            self._emit(
                call_events.ToolCallStarted,
                at,
                key,
                conversation=fact.conversation,
                tool=fact.tool,
                call=fact.call,
                arguments=fact.arguments,
            )
        else:
            self._emit(
                call_events.ToolCallEnded,
                at,
                key,
                conversation=fact.conversation,
                tool=fact.tool,
                arguments=fact.arguments,
            )

    def _start_child(
        self, fact: facts.ChildStarted, at: datetime, key: str, elsewhere: Callable[[str], bool]
    ) -> None:
        """A child started: pending while only its spawn is known; placed under the parent it
        names or its spawn's; by order when neither is known."""
        if fact.child is None:
            if fact.spawn_key is not None and fact.parent is not None:
                self.start_pending(
                    fact.spawn_key,
                    fact.parent,
                    agent_type=fact.agent_type,
                    subagent_id=fact.subagent_id,
                    description=fact.description,
                    at=at,
                    fact=key,
                    resolution=fact.resolution or "native",
                )
            return
        if not self.knows(fact.child) and elsewhere(fact.child):
            return
        parent = fact.parent
        resolution: Resolution = "native"
        if parent is None and fact.spawn_key is not None and fact.spawn_key in self.spawns:
            parent = self.spawns[fact.spawn_key]["parent"]
            resolution = "registry"
        if parent is None:
            if self.knows(fact.child) and not self._may_resume(fact.child):
                return  # started again under a root whose session ended: stays stopped
            self.place_unknown_child(
                fact.child,
                agent_type=fact.agent_type,
                subagent_id=fact.subagent_id,
                description=fact.description,
                at=at,
                fact=key,
            )
            return
        identified = facts.ChildIdentified(
            parent,
            fact.child,
            resolution,
            spawn_key=fact.spawn_key,
            agent_type=fact.agent_type,
            subagent_id=fact.subagent_id,
            description=fact.description,
        )
        self.apply_identified(identified, at=at, fact=key)

    def _ensure_placed(
        self,
        conversation: str,
        observation: Observation,
        at: datetime,
        key: str,
        elsewhere: Callable[[str], bool],
    ) -> None:
        """A conversation acted: resume it if stopped; place it when the payload names its
        root but the registry has not seen it start."""
        if self.knows(conversation):
            if self._may_resume(conversation):
                self.resume(conversation, at=at, fact=key)
        elif observation.root is not None and not elsewhere(conversation):
            self.place_unknown_child(
                conversation, agent_type=None, subagent_id=None, description=None, at=at, fact=key
            )

    def _may_resume(self, conversation: str) -> bool:
        """Whether a fact of ``conversation`` (an act, a start again, a host's resume of it) may
        resume it: the root always (its own act or resume revives it), any other node only while
        its root is live. A root's session end stops its live descendants with it (LINEAGE.md), so
        a descendant's event delivered after it (a background child's late tool call) leaves it
        stopped under its stopped root; once the root is resumed, its descendants act again as
        usual. A root stopped provisionally (an import's stop where its record ended) is left to
        :meth:`resume`, which takes such a stop back when the record goes on."""
        if conversation == self.conversation:
            return True
        node = self.node(self.conversation)
        if node is None or node["status"] == LIVE:
            return True
        return node["status"] == STOPPED and bool(node.get("provisional"))
