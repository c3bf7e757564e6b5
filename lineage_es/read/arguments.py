"""The argument checks every public read shares, the engine's and a :class:`TreeReader`'s.

They live under ``read/`` so that both can import them: the engine imports the read side,
never the other way round.
"""

from __future__ import annotations

from lineage_es.errors import InvalidArgument


def require_id(value: object, what: str, *, optional: bool = False) -> None:
    """Refuse an id no store can look up alike: not a str (each driver fails its own way),
    or holding NUL (PostgreSQL text cannot hold it; the others would answer unknown).
    ``None`` passes when ``optional``. ``what`` names the argument in the message."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidArgument(f"{what} cannot hold a NUL character")


def require_ids(*ids: tuple[object, str]) -> None:
    """:func:`require_id` for each ``(value, what)`` pair; one named ``"host"`` may be None."""
    for value, what in ids:
        require_id(value, what, optional=what == "host")
