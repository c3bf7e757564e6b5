"""Host-neutral facts: what a host adapter says a payload means.

A host adapter is the only code that knows a host's field names. It turns one payload into an
:class:`Observation`: who sent it (the requester), the root the payload names when it names one,
and a short tuple of facts. The engine and the domain understand facts without knowing the host.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias, TypeVar

# The words facts use: defined in lineage_es.vocabulary, which a reader imports without
# building the fact classes below, and named here too for the code that writes facts.
from lineage_es.vocabulary import DELETE_REASONS as DELETE_REASONS  # noqa: PLC0414
from lineage_es.vocabulary import HOSTS as HOSTS  # noqa: PLC0414
from lineage_es.vocabulary import LOGICAL_EPOCH as LOGICAL_EPOCH  # noqa: PLC0414
from lineage_es.vocabulary import RESOLUTION_STRENGTH as RESOLUTION_STRENGTH  # noqa: PLC0414
from lineage_es.vocabulary import RESOLUTIONS as RESOLUTIONS  # noqa: PLC0414
from lineage_es.vocabulary import DeleteReason as DeleteReason  # noqa: PLC0414
from lineage_es.vocabulary import Host as Host  # noqa: PLC0414
from lineage_es.vocabulary import Resolution as Resolution  # noqa: PLC0414

_T = TypeVar("_T")


def _pickled_by_constructor(cls: type[_T]) -> type[_T]:
    """``cls`` pickled as a call of its constructor with its fields' values, in order.

    A frozen dataclass with slots otherwise unpickles through Python code that looks up the
    class's fields for every object; an import's reading processes send thousands of
    observations to the process that journals them, and that lookup was most of the
    receiving end's cost."""

    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if any(not each.init or each.kw_only for each in fields):
        raise TypeError(f"{cls.__name__}: every field must be a positional constructor argument")
    names = tuple(each.name for each in fields)

    def reduce_to_constructor_call(self: Any) -> tuple[type[_T], tuple[Any, ...]]:
        return cls, tuple([getattr(self, name) for name in names])

    cls.__reduce__ = reduce_to_constructor_call  # type: ignore[method-assign]
    return cls


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class RootSeen:
    """A root-only event: ``conversation`` is (or is again) a live root.

    ``source`` is the host's word for why (``startup``, ``resume``, ``clear``, ``compact``,
    ``prompt``...). A root seen again after it stopped is resumed.
    """

    conversation: str
    source: str = ""


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SpawnRequested:
    """``parent`` asked the host to start a child, known so far only by ``spawn_key``.

    A request alone is not a node (a permission hook may still deny it); it is a candidate
    owner for the next child that starts without naming its parent.
    """

    parent: str
    spawn_key: str
    agent_type: str | None = None
    description: str | None = None


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ChildStarted:
    """A child began. Hosts name different parts of it: its conversation (Claude ``agent_id``),
    its spawn key and parent (Cursor ``subagentStart``), or some of those.

    ``subagent_id`` is the id the host gives the subagent itself when that is not its
    conversation (Cursor ``subagent_id``); it defaults to the conversation or the spawn key.
    ``resolution`` says how a child known only by its spawn key was placed, when that is not
    the host's own statement (``native``): a transcript's reading of it (``transcript``).
    """

    child: str | None = None
    spawn_key: str | None = None
    parent: str | None = None
    agent_type: str | None = None
    subagent_id: str | None = None
    description: str | None = None
    resolution: str | None = None


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ChildIdentified:
    """A host fact names the child of a spawn outright: Claude's ``tool_response.agentId``
    (``confirmed``), a transcript's ``toolUseResult.agentId`` or meta sidecar (``transcript``),
    Codex's ``thread_spawn.parent_thread_id`` (``native``).

    ``depth`` is the child's depth when the host states it; a contradiction with the parent's
    known depth drops the edge instead of failing the family.
    """

    parent: str
    child: str
    resolution: Resolution
    spawn_key: str | None = None
    depth: int | None = None
    agent_type: str | None = None
    subagent_id: str | None = None
    description: str | None = None


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Acted:
    """``conversation`` did something (any request). An unknown child conversation is bound
    to its spawn by the engine's rules; a stopped node that acts again is resumed."""

    conversation: str


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Resumed:
    """The host resumed ``conversation`` explicitly (a subagent resume, a root's resume)."""

    conversation: str


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Stopped:
    """A node stopped: named by its conversation, or by its spawn key while pending.

    ``provisional``: the stop says only that a record ended there (an import's stop at a
    file's last row: the file may go on). A later fact showing the node went on takes it back
    from that moment (:meth:`~lineage_es.domain.root.RootLineage.stop`,
    :meth:`~lineage_es.domain.root.RootLineage.resume`); a stop the host stated is never
    provisional.
    """

    conversation: str | None = None
    spawn_key: str | None = None
    provisional: bool = False


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class SessionEnded:
    """A root's session ended: the root stops, and so do its live descendants."""

    conversation: str


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Renamed:
    """A person or runtime gave a node a display name; the last rename wins."""

    conversation: str
    name: str


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Deleted:
    """A node is deleted, and with it its whole subtree."""

    conversation: str
    reason: DeleteReason = "user"


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ToolCalled:
    """``conversation`` began a call of an MCP tool: the fact that lets an MCP server tell
    its caller (HOSTS.md 1.5, 3.5). ``call`` is the host's id for the call when it gives one
    (Claude's ``tool_use_id``, which the call's ``_meta`` repeats); ``arguments`` the call's
    arguments as canonical JSON when the host gives them and no id (Cursor), so that
    concurrent calls of one tool can be told apart."""

    conversation: str
    tool: str
    call: str | None = None
    arguments: str | None = None


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class ToolReturned:
    """The MCP tool call ``conversation`` began with ``tool`` and ``arguments`` (no id) has
    returned: it can no longer be the call an MCP server is answering."""

    conversation: str
    tool: str
    arguments: str | None = None


Fact: TypeAlias = (
    RootSeen
    | SpawnRequested
    | ChildStarted
    | ChildIdentified
    | Acted
    | Resumed
    | Stopped
    | SessionEnded
    | Renamed
    | Deleted
    | ToolCalled
    | ToolReturned
)


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Observation:
    """What one host payload means, host-neutrally.

    - ``requester``: the conversation on whose behalf the payload came; ``None`` for a row the
      adapter ignores (the engine then answers no lineage).
    - ``root``: the root conversation when the payload names it (Claude ``session_id``); ``None``
      when the engine must find it (Cursor).
    - ``workspace``: the workspace roots the payload names, used to scope ``roots`` and
      order-based binding.
    - ``key``: the idempotency key, a digest of the payload without its receipt timestamps;
      the same payload delivered twice has the same key and changes nothing the second time.
    - ``at``: the host's own time for the payload, or ``None`` to let the engine's clock decide.
    - ``recurs``: whether the same payload can truly happen again later (a hook payload, which
      carries no time: a session that ends the same way after a resume is byte-identical to
      its first end); such a key is a duplicate only within its root's current lifetime. A
      row of a transcript or rollout is keyed by where it stands and never recurs: read again
      (a re-import of a whole file), it changes nothing, whatever happened since.
    """

    host: Host
    requester: str | None
    key: str
    facts: tuple[Fact, ...] = ()
    root: str | None = None
    workspace: tuple[str, ...] = ()
    at: datetime | None = None
    recurs: bool = False


@_pickled_by_constructor
@dataclass(frozen=True, slots=True)
class Claim:
    """What a standalone request (an MCP tool call's ``_meta``) states about its caller.

    The engine answers from its registry when it knows ``conversation``; otherwise it answers
    this claim's own chain, with no tree.
    """

    host: Host
    conversation: str
    root: str | None = None
    parent: str | None = None
    depth: int | None = None
