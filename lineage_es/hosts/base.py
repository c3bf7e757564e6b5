"""What every host adapter shares: the adapter interface, payload limits, idempotency keys
and the readers of a payload's typed fields."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

import orjson

from lineage_es.errors import PayloadError

try:  # the builtin BLAKE2: importing hashlib loads OpenSSL, some 3 ms of every hook process
    from _blake2 import blake2b
except ImportError:  # pragma: no cover (a Python built without it)
    from hashlib import blake2b
from lineage_es.facts import Claim, Host, Observation

#: Payloads deeper than this are refused: no real hook payload nests this far.
MAX_DEPTH = 64

#: Payloads larger than this (as JSON) are refused. A quarter of the journal's 32 MiB line
#: bound: one event can repeat a payload's strings (a child's id is both its conversation and
#: its subagent id), and every event must stay exportable.
MAX_PAYLOAD_BYTES = 8 * 1024 * 1024

#: How a payload is encoded for its key: sorted keys, so that key order never changes it.
_KEY_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


class HookFile:
    """Where a host reads its hook config, and in what shape (``lineage install-hooks``).

    The config is ``<folder>/<name>`` inside a project, and ``<folder>/<name>`` under the
    user's home folder (or under ``$<folder_env>`` when that is set) for the user.

    A plain class rather than a dataclass: every adapter builds one when its module is
    imported, on the hook's path, where making a dataclass costs more than the rest of this
    module.
    """

    __slots__ = ("folder", "folder_env", "grouped", "install_note", "name")

    def __init__(
        self,
        folder: str,
        name: str,
        *,
        folder_env: str | None,
        grouped: bool,
        install_note: str | None = None,
    ) -> None:
        self.folder = folder
        self.name = name
        #: The environment variable that moves the user's config folder, if the host has one.
        self.folder_env = folder_env
        #: Claude Code and Codex: each event holds matcher groups of command handlers (with
        #: a timeout). Otherwise (Cursor): each event holds bare ``{"command": ...}`` entries
        #: and the file carries ``"version": 1``.
        self.grouped = grouped
        #: What ``lineage install-hooks`` tells the user after writing new hooks, when the
        #: host needs more of them before it runs those hooks (Codex: trust them in /hooks).
        self.install_note = install_note

    def __repr__(self) -> str:
        return (
            f"HookFile({self.folder!r}, {self.name!r}, folder_env={self.folder_env!r}, "
            f"grouped={self.grouped!r})"
        )


#: The identifications an MCP tool call's ``_meta`` can call for (:class:`CallerRule`).
CallerKind = Literal["tool_use", "thread", "window", "refused"]


class CallerRule:
    """How one host names the caller of an MCP tool call: what its adapter's
    :meth:`HostAdapter.caller_rule` reads from the call's ``_meta``.

    ``kind`` says which identification applies:

    - ``"tool_use"``: ``_meta[meta_field]`` repeats ``subject``, the id of the tool call a
      ``hook`` hook journaled with its caller: the caller is whoever journaled it.
    - ``"thread"``: ``_meta`` names a thread of the adapter's host: the caller is that thread,
      as the engine resolves the ``_meta``.
    - ``"window"``: ``_meta`` names nobody; a ``hook`` hook journaled a window around each
      call for its tool and arguments: the caller is the one conversation with a matching
      window open.
    - ``"refused"``: ``_meta`` names the caller in a form that cannot be read; ``subject``
      says why.

    ``resolution`` is how an answer says its caller was identified (``claude:toolUseId``).
    A plain class rather than a dataclass, as :class:`HookFile`: this module is on the hook's
    path, which never makes a rule.
    """

    __slots__ = ("hook", "kind", "meta_field", "resolution", "subject")

    def __init__(
        self,
        kind: CallerKind,
        resolution: str = "",
        *,
        subject: str = "",
        meta_field: str = "",
        hook: str = "",
    ) -> None:
        self.kind = kind
        self.resolution = resolution
        self.subject = subject
        self.meta_field = meta_field
        self.hook = hook

    def _fields(self) -> tuple[str, str, str, str, str]:
        return (self.kind, self.resolution, self.subject, self.meta_field, self.hook)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CallerRule) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return (
            f"CallerRule({self.kind!r}, {self.resolution!r}, subject={self.subject!r}, "
            f"meta_field={self.meta_field!r}, hook={self.hook!r})"
        )


class HostAdapter(Protocol):
    """Turns one host's payloads into host-neutral observations, and says which hook events
    it reads (what ``lineage install-hooks`` subscribes to), how to tell its payloads and how
    its MCP tool calls name their caller."""

    host: Host

    #: Whether this host's MCP tool calls name their caller in ``_meta`` (Codex alone does).
    mcp_meta: bool

    #: The hook events this adapter reads, in the order they are installed.
    hook_events: tuple[str, ...]

    #: Those of :attr:`hook_events` that carry a tool-name matcher.
    tool_events: frozenset[str]

    #: The matcher ``lineage install-hooks`` writes for each of :attr:`tool_events`: the
    #: tools whose calls this adapter reads something from.
    tool_matchers: Mapping[str, str]

    #: Where the host reads its hook config, and in what shape.
    hook_file: HookFile

    #: The payload fields a ``hook.log`` line about a payload that failed names, in order:
    #: which event it was and whose (see :func:`lineage_es.hosts.log_fields`).
    log_fields: tuple[str, ...]

    #: The hook events this host must run our hook for, so that ``lineage mcp`` can tell who
    #: calls it (empty when its calls name their caller in ``_meta``).
    mcp_caller_hooks: tuple[str, ...]

    #: How a message names what an MCP tool call's ``_meta`` must carry to name a thread
    #: (empty for a host without :attr:`mcp_meta`).
    meta_thread_fields: str

    #: How a message names what this host's MCP tool calls name their caller by in ``_meta``
    #: (empty when they name nobody there): what a ``_meta`` that names no caller lacks.
    caller_meta: str

    #: The host's name in a message (``Claude Code``).
    display_name: str

    #: When a payload's host is told from its fields, adapters are asked in this order,
    #: lowest first: the more a host's envelope is its own, the earlier (Codex borrowed
    #: Claude Code's envelope, so its own marks are looked for before Claude's adapter,
    #: which takes what is left, is asked).
    detection_rank: int

    def recognises(self, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` looks like this host's hook payload."""
        ...

    def own_fields(self, payload: Mapping[str, Any]) -> tuple[str, ...]:
        """The fields of ``payload`` that only this host sends (empty when it has none): what
        says, beyond doubt, that a payload is this host's."""
        ...

    def observe(self, payload: Mapping[str, Any], *, at: datetime | None = None) -> Observation:
        """What the payload means; raises :class:`PayloadError` when it cannot be understood."""
        ...

    def claim(self, meta: Mapping[str, Any]) -> Claim | None:
        """What an MCP tool call's ``_meta`` states about its caller, if anything."""
        ...

    def meta_names_thread(self, meta: Mapping[str, Any]) -> bool:
        """Whether an MCP tool call's ``_meta`` names any conversation of this host at all."""
        ...

    def caller_rule(self, meta: Mapping[str, Any]) -> CallerRule | None:
        """How this host names the caller of an MCP tool call with ``meta`` as its ``_meta``;
        ``None`` when its rule does not apply to ``meta`` (another host's may)."""
        ...

    def caller_meta_problem(self, meta: Mapping[str, Any]) -> str | None:
        """Why ``meta``, the ``_meta`` of a recorded MCP tool call of this host, can name no
        caller (it lacks or mistypes what this host names its caller by); ``None`` when it
        can, or when this host names its callers some other way."""
        ...


def canonical_arguments(value: Any) -> str:
    """A tool call's arguments as one canonical JSON text (sorted keys), so that a hook's
    record of a call and the call an MCP server receives compare equal: absent, ``null``,
    ``""`` and ``{}`` are all ``{}``; a JSON string (Cursor's ``tool_input``) is read first,
    and one that is not JSON is kept as the JSON string it is."""
    if isinstance(value, str):
        if not value.strip():
            return "{}"
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return orjson.dumps(value).decode()
    if value is None:
        return "{}"
    try:
        return orjson.dumps(value, option=_KEY_OPTIONS).decode()
    except TypeError as exc:
        raise PayloadError(f"tool arguments are not plain JSON data: {exc}") from None


def payload_key(payload: Mapping[str, Any], ignore: Iterable[str] = ()) -> str:
    """A digest of ``payload`` without the keys in ``ignore`` (receipt timestamps)."""
    skip = set(ignore)
    body = {k: v for k, v in payload.items() if k not in skip} if skip else dict(payload)
    try:
        raw = orjson.dumps(body, option=_KEY_OPTIONS)
    except TypeError as exc:
        raise PayloadError(f"payload is not plain JSON data: {exc}") from None
    return _digest(raw)


def checked_key(payload: Mapping[str, Any]) -> str:
    """The :func:`payload_key` of a hook payload, once :func:`check_depth` has passed it: the
    check's own encoding is the one hashed, so an adapter encodes each payload once."""
    body = payload if type(payload) is dict else dict(payload)  # what payload_key encodes
    encoded = _encode_within_bounds(body, MAX_DEPTH, MAX_PAYLOAD_BYTES)
    return payload_key(body) if encoded is None else _digest(encoded)


def _digest(encoded: bytes) -> str:
    return blake2b(encoded, digest_size=16).hexdigest()


def recurs(payload: Mapping[str, Any], once: Iterable[str]) -> bool:
    """Whether a hook payload may truly come again (:attr:`Observation.recurs`). It carries
    no time, so one that names no tool call (a session's end after a resume) can recur byte
    for byte; one naming any of the ``once`` fields (a tool call, the subagent it started)
    happens once, so delivered again, whenever, it is a duplicate."""
    return not any(isinstance(payload.get(name), str) for name in once)


def require_str(payload: Mapping[str, Any], key: str, host: Host) -> str:
    """The non-empty string field ``key``, or a :class:`PayloadError` naming it."""
    value = payload.get(key)
    if not isinstance(value, str) or not value:
        if key not in payload:
            raise PayloadError(f"missing required field {key!r}", host=host)
        raise PayloadError(f"field {key!r} must be a non-empty string", host=host)
    return value


def optional_str(payload: Mapping[str, Any], key: str, host: Host) -> str | None:
    """The string field ``key`` when present and non-empty; a type error otherwise."""
    return _optional_str_named(payload, key, key, host)


def optional_object(payload: Mapping[str, Any], key: str, host: Host) -> Mapping[str, Any]:
    """The object field ``key`` (empty when absent); a type error otherwise."""
    value = payload.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise PayloadError(f"field {key!r} must be an object", host=host)
    return value


def nested_str(mapping: Mapping[str, Any], key: str, parent: str, host: Host) -> str | None:
    """The string field ``parent.key`` when present and non-empty; a type error otherwise."""
    return _optional_str_named(mapping, key, f"{parent}.{key}", host)


def _optional_str_named(mapping: Mapping[str, Any], key: str, name: str, host: Host) -> str | None:
    """The string ``mapping[key]`` when present and non-empty; a type error calling the
    field ``name`` otherwise."""
    value = mapping.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise PayloadError(f"field '{name}' must be a string", host=host)
    return value


def check_depth(value: Any, limit: int = MAX_DEPTH, max_bytes: int = MAX_PAYLOAD_BYTES) -> None:
    """Refuse absurdly deep or large payloads before any adapter walks them: nested past
    ``limit`` levels or, as JSON, past ``max_bytes`` (a walk stops at the first level too deep
    or once its strings alone pass the bound)."""
    _encode_within_bounds(value, limit, max_bytes)


def _encode_within_bounds(value: Any, limit: int, max_bytes: int) -> bytes | None:
    """:func:`check_depth`, returning the encoding it measured ``value`` by (sorted keys: the
    one :func:`payload_key` hashes), or ``None`` when ``value`` is not plain JSON.

    The common case is decided in C: an encoding that fits ``max_bytes`` and holds fewer
    opening brackets (counted inside strings too, so never too few) than ``limit`` levels.
    Anything else takes the exact walk."""
    try:
        encoded: bytes | None = orjson.dumps(value, option=_KEY_OPTIONS)
    except TypeError:  # not plain JSON (payload_key names the reason), or past orjson's depth
        encoded = None
    if (
        encoded is not None
        and len(encoded) <= max_bytes
        and encoded.count(b"{") + encoded.count(b"[") <= limit
    ):
        return encoded
    stack: list[tuple[Any, int]] = [(value, 0)]
    size = 0
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise PayloadError(f"payload nests deeper than {limit} levels")
        if isinstance(item, str):
            size += len(item)
        elif isinstance(item, dict):
            size += sum(len(k) for k in item if isinstance(k, str))
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        if size > max_bytes:
            raise PayloadError(_too_large(max_bytes))
    if encoded is not None and len(encoded) > max_bytes:
        raise PayloadError(_too_large(max_bytes))
    return encoded


def parse_payload(
    raw: bytes, max_bytes: int = MAX_PAYLOAD_BYTES, *, check: bool = True
) -> dict[str, Any]:
    """A hook payload from its raw JSON (stdin, a socket, a recorded line): refused unread
    past ``max_bytes``, and refused when it is not a JSON object or nests too deep (orjson
    itself stops at 1,024 levels, so parsing never recurses without bound).

    ``check=False`` leaves depth and size as JSON to the adapter the payload is for, whose
    ``observe`` checks them anyway, with the encoding it makes the key from: the hook's path,
    where checking here too would encode every payload twice."""
    if len(raw) > max_bytes:
        raise PayloadError(_too_large(max_bytes))
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise PayloadError(f"payload is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise PayloadError(f"payload must be a JSON object, not {type(value).__name__}")
    if check:
        check_depth(value, max_bytes=max_bytes)
    return value


def _too_large(max_bytes: int) -> str:
    return f"payload is larger than {max_bytes} bytes ({max_bytes / (1024 * 1024):g} MiB)"


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 time (``Z`` allowed) as an aware UTC datetime; ``None`` when absent or bad,
    a time whose UTC falls outside the years 1 to 9999 included (``9999-12-31T23:00-05:00``):
    no datetime holds it."""
    if not isinstance(value, str) or not value:
        return None
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        parsed = datetime.fromisoformat(text)
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
