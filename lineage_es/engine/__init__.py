"""The engine: the eventsourcing application, the unit of work, routing, the front door.

``from lineage_es.engine import Engine, open_engine`` reaches the front door
(:mod:`lineage_es.engine.engine`) as it did when the engine was one module; it is imported at
that first use, so importing a module of this package (``unit``, ``guards``) stays as light
as that module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lineage_es.engine.engine import Engine, open_engine


def __getattr__(name: str) -> Any:
    # PEP 562: the front door pulls in eventsourcing and the read side; load it when asked.
    if name in ("Engine", "open_engine"):
        from lineage_es.engine import engine

        return getattr(engine, name)
    raise AttributeError(f"module 'lineage_es.engine' has no attribute {name!r}")


__all__ = ["Engine", "open_engine"]
