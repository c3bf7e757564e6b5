"""Ids given as a unique prefix, as in git: ``lineage show 5f1c`` for ``5f1c2e4a-…``.

Conversation ids are long (a UUID, a 17-character agent id) and a person types the first few
characters. :func:`resolve_prefix` turns what was typed into the one conversation id it
names: an id the view knows exactly is always taken as it is; otherwise the conversations
whose id starts with it are looked up (:func:`ids_starting_with`), and exactly one must
match. Fewer than :data:`MIN_PREFIX` characters are refused as a prefix (as git asks for 4),
and anything that is no id a person could type (control characters) is not looked up.

The lookup reads the view's ``lineage_nodes`` table through its index on ``conversation``,
as a range ``conversation >= p AND conversation < p'`` (:func:`_prefix_condition`): on
SQLite (its BINARY collation orders by code point, so the range holds exactly the ids that
start with ``p``) and on PostgreSQL under a C collation; under another collation PostgreSQL
is asked ``LIKE 'p%'`` alone (exact, but not through the index). An in-memory view is
scanned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lineage_es.errors import LineageError
from lineage_es.read.sqlview import PostgresView, SQLiteView, SqlView
from lineage_es.read.view import ViewStore

#: The fewest characters looked up as a prefix (git's own minimum).
MIN_PREFIX = 4

#: How many matching ids an ambiguous prefix's error names before "and N more".
SHOWN_MATCHES = 10


class AmbiguousPrefix(LineageError):
    """A prefix that starts more than one conversation id: which ones, so the person can
    type more of the one they mean."""

    def __init__(self, prefix: str, matches: Sequence[str], total: int) -> None:
        self.prefix = prefix
        self.matches = tuple(matches)
        self.total = total
        shown = ", ".join(_printable(m) for m in self.matches)
        more = f", and {total - len(self.matches)} more" if total > len(self.matches) else ""
        super().__init__(
            f"{_printable(prefix)} is the start of {total} conversation ids: {shown}{more}; "
            "give more of the one you mean"
        )


class PrefixTooShort(LineageError):
    """An id shorter than :data:`MIN_PREFIX` characters that is no id the view knows, but
    starts some: too short to be taken for one of them."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        super().__init__(
            f"unknown conversation {prefix!r}; as the start of an id, give at least "
            f"{MIN_PREFIX} characters"
        )


def _printable(value: str) -> str:
    """``value`` with control characters escaped (as every id the CLI prints)."""
    return value if value.isprintable() else value.encode("unicode_escape").decode("ascii")


def resolve_prefix(view: ViewStore, text: str, host: str | None = None) -> str:
    """The conversation id ``text`` names in ``view`` (of ``host``, when given): ``text``
    itself when the view knows it exactly, or when nothing starts with it (the caller's
    question then says the id is unknown); else the one id it is the start of. Raises
    :class:`AmbiguousPrefix` when it starts several, and :class:`PrefixTooShort` when it
    is shorter than :data:`MIN_PREFIX` and starts some."""
    if not text.isprintable() or any(host is None or row.host == host for row in view.find(text)):
        return text
    matches, total = ids_starting_with(view, text, host, limit=SHOWN_MATCHES)
    if total and len(text) < MIN_PREFIX:
        raise PrefixTooShort(text)
    if total == 1:
        return matches[0]
    if total > 1:
        raise AmbiguousPrefix(text, matches, total)
    return text


def ids_starting_with(
    view: ViewStore, prefix: str, host: str | None = None, *, limit: int = SHOWN_MATCHES
) -> tuple[list[str], int]:
    """The first ``limit`` conversation ids (in code-point order) of ``host`` (any host when
    ``None``) that start with ``prefix``, and how many there are in all."""
    if isinstance(view, SqlView):
        return _sql_ids(view, prefix, host, limit)
    found = sorted(
        {
            row.conversation
            for row in view.all_rows()
            if row.conversation is not None
            and row.conversation.startswith(prefix)
            and (host is None or row.host == host)
        }
    )
    return found[:limit], len(found)


def _sql_ids(view: SqlView, prefix: str, host: str | None, limit: int) -> tuple[list[str], int]:
    """:func:`ids_starting_with` on a SQL view: through the index on ``conversation``."""
    where, params = _prefix_condition(view, prefix)
    if host is not None:
        where += " AND host = ?"
        params.append(host)
    rows = view._query(  # the view's own connection and lock
        f"SELECT DISTINCT conversation FROM lineage_nodes WHERE {where} "
        f"ORDER BY conversation LIMIT {int(limit) + 1}",
        params,
    )
    # the order of the database's collation is not necessarily code-point order
    found = sorted(str(r[0]) for r in rows if str(r[0]).startswith(prefix))
    if len(found) <= limit:
        return found, len(found)
    counted = view._query(
        f"SELECT COUNT(DISTINCT conversation) FROM lineage_nodes WHERE {where}", params
    )
    return found[:limit], int(counted[0][0])


#: Collations that order text by code point, as a range over a prefix needs.
CODE_POINT_COLLATIONS = frozenset({"C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic"})


def _prefix_condition(view: SqlView, prefix: str) -> tuple[str, list[Any]]:
    """The SQL condition (``?`` placeholders) that picks rows whose conversation starts with
    ``prefix``, in the form the view's database finds through its index on ``conversation``:
    a range between ``prefix`` and :func:`_after_prefix`, which holds exactly those rows
    where the column orders by code point (SQLite's BINARY; PostgreSQL's C collations).
    Elsewhere (PostgreSQL under a language's collation, which may sort ``a-b`` after ``a.``)
    ``LIKE`` alone says it: exact, but read row by row."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    like = "conversation LIKE ? ESCAPE '\\'"
    if isinstance(view, SQLiteView):
        return "conversation >= ? AND conversation < ?", [prefix, _after_prefix(prefix)]
    if isinstance(view, PostgresView) and _orders_by_code_point(view):
        return f"conversation >= ? AND conversation < ? AND {like}", [
            prefix,
            _after_prefix(prefix),
            escaped + "%",
        ]
    return like, [escaped + "%"]


def _orders_by_code_point(view: PostgresView) -> bool:
    """Whether the PostgreSQL database's own collation (the column's) orders by code point."""
    found = view._query("SELECT datcollate FROM pg_database WHERE datname = current_database()")
    return bool(found) and str(found[0][0]) in CODE_POINT_COLLATIONS


def _after_prefix(prefix: str) -> str:
    """The least string greater than every string that starts with ``prefix``, in code-point
    order: its last character that can be raised, raised by one (U+10FFFF cannot be)."""
    chars = list(prefix)
    while chars and chars[-1] == chr(0x10FFFF):
        chars.pop()
    if not chars:
        return chr(0x10FFFF) * (len(prefix) + 1)
    chars[-1] = chr(ord(chars[-1]) + 1)
    return "".join(chars)
