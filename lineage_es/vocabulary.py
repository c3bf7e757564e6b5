"""The journal's closed sets of words: hosts, resolutions, delete reasons, and the replay's
logical epoch.

Kept apart from :mod:`lineage_es.facts` (whose fact classes only writers build) so that a
process that only reads, answering from the view, knows these words without building them.
:mod:`lineage_es.facts` re-exports every name here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal, get_args

#: Row ``n`` of a recording without times of its own happens at this instant plus ``n``
#: seconds (the replay's logical clock, so that start order is row order).
LOGICAL_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


Host = Literal["claude", "codex", "cursor"]
#: Every host, in the order :data:`Host` names them: the one list of hosts (a host adapter in
#: :mod:`lineage_es.hosts` for each, the CLI's choices, install-hooks, the replay's schema).
HOSTS: tuple[Host, ...] = get_args(Host)

Resolution = Literal["native", "registry", "confirmed", "transcript", "inferred"]
RESOLUTIONS: tuple[Resolution, ...] = get_args(Resolution)

#: How strongly a resolution places an edge; a weaker placement never overrides a stronger one.
RESOLUTION_STRENGTH: dict[str, int] = {
    "inferred": 0,
    "registry": 1,
    "confirmed": 2,
    "transcript": 3,
    "native": 3,
}

DeleteReason = Literal["user", "parent-teardown", "revoked", "gc"]
DELETE_REASONS: tuple[DeleteReason, ...] = get_args(DeleteReason)
