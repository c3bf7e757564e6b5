"""Read YAML text into plain data and the line of each key path, fast for large files.

The expected file's messages name lines, and large generated files must still load quickly:
libyaml's parser events are built straight into data, keeping only the shallow lines and
working out a deeper one on first use. Anything out of the ordinary (tags, merge keys, keys
that are not unique strings, invalid YAML) is read the exact way instead: the full node tree,
with every key's line and every error named by its line.

Both ways refuse, naming the line, what no expected file needs and a hostile one would use to
exhaust time or memory (:mod:`.yaml_bounds`): deep nesting, aliases that add too many nodes (a
"billion laughs"), numbers too large to use. They count as they build, so a refused document
costs no more than the bound.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from lineage_es.errors import InputError
from lineage_es.replay.yaml_bounds import (
    MAX_DEPTH,
    MAX_INTEGER,
    NodeBudget,
    Refused,
    alias_allowance,
    alias_refusal,
    depth_refusal,
    number_problem,
)

#: A key path inside a document: mapping keys and list indices from the top.
KeyPath = tuple[str | int, ...]

if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml parses large expected files ten times faster, with the same marks
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeLoader):
    """A safe loader that keeps times as text: ``started_at: 2000-01-01T00:00:00Z`` is a string
    to compare, not a datetime to misread."""

    yaml_implicit_resolvers = {  # noqa: RUF012 (PyYAML's own class-level table)
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def parse_yaml(text: str, path: Path) -> tuple[Any, Mapping[KeyPath, int]]:
    """The YAML document in ``text`` as plain data, and the 1-based line of every key path.

    The lines of the top-level keys and of each step are known at once; any other is worked
    out when first asked for (by re-reading ``text``).
    """
    try:
        fast = _parse_events(text, _EAGER_DEPTH)
    except Refused as exc:
        raise InputError(exc.reason, path=str(path), line=exc.line) from None
    if fast is not None:
        data, known = fast
        return data, LazyLines(known, _EAGER_DEPTH, text, path)
    return _parse_nodes(text, path)


class LazyLines(Mapping[KeyPath, int]):
    """The line of every key path of a document, of which only those at most ``depth`` deep are
    kept from the start; the first look-up of a deeper one reads the document again for all."""

    __slots__ = ("_depth", "_digest", "_full", "_known", "_path", "_text")

    def __init__(self, known: dict[KeyPath, int], depth: int, text: str, path: Path) -> None:
        self._known = known
        self._depth = depth
        self._text: str | None = text
        self._digest = b""
        self._path = path
        self._full: dict[KeyPath, int] | None = None

    def detach(self) -> None:
        """Drop the text, keeping its digest: the file at ``path`` is read again when a deeper
        line is asked for, and only the lines already known are used if it has changed."""
        if self._text is not None and self._full is None:
            self._digest = _digest(self._text)
            self._text = None

    def _all_lines(self) -> dict[KeyPath, int]:
        if self._full is None:
            text = self._text if self._text is not None else self._text_if_unchanged()
            if text is None:
                self._full = dict(self._known)
            else:
                fast = _parse_events(text, None)
                self._full = fast[1] if fast is not None else _parse_nodes(text, self._path)[1]
            self._known = self._full
            self._text = None
        return self._full

    def _text_if_unchanged(self) -> str | None:
        """The file's text read again, or ``None`` when it cannot be read or is no longer the
        text whose digest was kept."""
        try:
            text = self._path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return text if _digest(text) == self._digest else None

    def _line_known_without_reading(self, key: object) -> bool:
        """Whether ``key``'s line (or its absence) is known without reading the document."""
        return self._full is not None or (isinstance(key, tuple) and len(key) <= self._depth)

    def __getitem__(self, key: KeyPath) -> int:
        try:
            return self._known[key]
        except KeyError:
            if self._line_known_without_reading(key):
                raise
        return self._all_lines()[key]

    def __contains__(self, key: object) -> bool:
        if key in self._known:
            return True
        return not self._line_known_without_reading(key) and key in self._all_lines()

    def __iter__(self) -> Iterator[KeyPath]:
        return iter(self._all_lines())

    def __len__(self) -> int:
        return len(self._all_lines())


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=32).digest()


#: The key paths whose lines :func:`parse_yaml` keeps from the start: ``host``, ``final``,
#: ``steps``, and each step (``("steps", i)``).
_EAGER_DEPTH = 2

_STR_TAG = "tag:yaml.org,2002:str"
#: Plain scalars whose value is cached: immutable, and equal only to themselves.
_CACHED_TAGS = frozenset(
    {_STR_TAG, "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"}
)
_PLAIN_TAGS = _CACHED_TAGS | {"tag:yaml.org,2002:float"}


class _NeedsNodePath(Exception):
    """The document needs the exact path (:func:`_parse_nodes`)."""


def _parse_events(text: str, depth: int | None) -> tuple[Any, dict[KeyPath, int]] | None:
    """``text`` as plain data built straight from the parser's events, and the lines of the key
    paths at most ``depth`` deep (all of them for ``None``); ``None`` when the document has
    anything :func:`_parse_nodes` must judge: a tag, a key that is not a unique plain string
    (merge keys included), an anchor on a key or an alias as one, an alias inside its own
    anchor, more or less than one document, invalid YAML.

    For every other document the data and the lines are exactly those of :func:`_parse_nodes`:
    scalars are resolved and constructed by the same loader, only without a node tree, and an
    alias is built afresh from the events of its anchor (with their lines), as from its node.
    """
    loader = _Loader(text)
    if loader.yaml_path_resolvers:  # tags that depend on the path: only the composer knows
        return None
    resolve: Callable[[type[Node], str, tuple[bool, bool]], str] = loader.resolve
    constructors: Mapping[str | None, Callable[..., Any]] = loader.yaml_constructors
    alias_event = yaml.AliasEvent
    scalar_event = yaml.ScalarEvent
    plain: dict[str, Any] = {}
    strings: dict[str, str] = {}
    lines: dict[KeyPath, int] = {}
    limit = -1 if depth is None else depth
    #: The events of each anchored node, to build an alias from (``None`` while still open).
    anchors: dict[str, list[Any] | None] = {}
    replaying = 0
    level = 0
    added = 0
    allowance = alias_allowance(text)
    node_starts = (scalar_event, yaml.MappingStartEvent, yaml.SequenceStartEvent)
    written_alias_line = 0

    def scalar(event: Any) -> Any:
        value = event.value
        implicit = event.implicit
        if not implicit[0]:  # quoted: always a string (the resolver's default tag)
            return strings.setdefault(value, value)
        if implicit[1]:
            raise _NeedsNodePath
        try:
            return plain[value]
        except KeyError:
            pass
        tag = resolve(yaml.ScalarNode, value, implicit)
        if tag not in _PLAIN_TAGS:
            raise _NeedsNodePath
        if tag == _STR_TAG:
            obj: Any = strings.setdefault(value, value)
        else:
            try:
                obj = constructors[tag](loader, yaml.ScalarNode(tag, value))
            except ValueError:  # an integer past Python's int-to-text limit
                obj = math.inf if tag == "tag:yaml.org,2002:float" else MAX_INTEGER + 1
            problem = number_problem(obj, value)
            if problem is not None:
                raise Refused(event.start_mark.line + 1, problem)
        if tag in _CACHED_TAGS:
            plain[value] = obj
        return obj

    def start_line(event: Any) -> int:
        """The line of the node an event starts (an alias: its anchor's node)."""
        kind = type(event)
        if kind is alias_event:
            log = anchors.get(event.anchor)
            if log is None:
                raise _NeedsNodePath
            event = log[0]
        line: int = event.start_mark.line + 1
        return line

    def counted(events: Iterator[Any], line: int) -> Callable[[], Any]:
        """The next event of an anchor being replayed, each node it starts counted against
        the aliases' allowance (refused at ``line``, that of the alias written in the text,
        once past it)."""

        def pull() -> Any:
            nonlocal added
            item = next(events)
            if isinstance(item, node_starts):
                added += 1
                if added > allowance:
                    raise alias_refusal(line, allowance)
            return item

        return pull

    def node(event: Any, at: KeyPath | None, pull: Callable[[], Any]) -> Any:
        nonlocal replaying, written_alias_line
        kind = type(event)
        if kind is alias_event:
            log = anchors.get(event.anchor)
            if log is None:  # undefined, or an alias inside its own anchor
                raise _NeedsNodePath
            if not replaying:  # an alias in the text: refusals name its line
                written_alias_line = event.start_mark.line + 1
            replaying += 1
            replay = counted(iter(log), written_alias_line)
            value = node(replay(), at, replay)
            replaying -= 1
            return value
        if event.tag is not None:
            raise _NeedsNodePath
        if event.anchor is None or replaying:
            if kind is scalar_event:
                return scalar(event)
            return body(event, kind, at, pull)
        name = event.anchor
        if name in anchors:
            raise _NeedsNodePath
        anchors[name] = None
        log = [event]

        def record() -> Any:
            item = pull()
            log.append(item)
            return item

        value = body(event, kind, at, record)
        anchors[name] = log
        return value

    def body(event: Any, kind: type, at: KeyPath | None, pull: Callable[[], Any]) -> Any:
        nonlocal level
        if kind is scalar_event:
            return scalar(event)
        level += 1  # one less on each return below; a refusal ends the whole read
        if level > MAX_DEPTH:
            raise depth_refusal(written_alias_line if replaying else event.start_mark.line + 1)
        deeper = at is not None and len(at) + 1 != limit
        if kind is yaml.MappingStartEvent:
            out: dict[str, Any] = {}
            while True:
                item = pull()
                item_kind = type(item)
                if item_kind is yaml.MappingEndEvent:
                    level -= 1
                    return out
                if item_kind is not scalar_event or item.anchor is not None or item.tag is not None:
                    raise _NeedsNodePath
                key = scalar(item)
                if type(key) is not str or key in out:
                    raise _NeedsNodePath
                if at is None:
                    value = pull()
                    if type(value) is scalar_event and value.anchor is None and value.tag is None:
                        out[key] = scalar(value)
                    else:
                        out[key] = node(value, None, pull)
                else:
                    where = (*at, key)
                    lines[where] = item.start_mark.line + 1
                    out[key] = node(pull(), where if deeper else None, pull)
        if kind is not yaml.SequenceStartEvent:
            raise _NeedsNodePath
        items: list[Any] = []
        while True:
            item = pull()
            if type(item) is yaml.SequenceEndEvent:
                level -= 1
                return items
            if at is None:
                if type(item) is scalar_event and item.anchor is None and item.tag is None:
                    items.append(scalar(item))
                else:
                    items.append(node(item, None, pull))
            else:
                where = (*at, len(items))
                lines[where] = start_line(item)
                items.append(node(item, where if deeper else None, pull))

    next_event: Callable[[], Any] = loader.get_event
    try:
        if type(next_event()) is not yaml.StreamStartEvent:
            return None
        if type(next_event()) is not yaml.DocumentStartEvent:
            return None  # empty
        event = next_event()
        lines[()] = start_line(event)
        data = node(event, () if limit else None, next_event)
        if type(next_event()) is not yaml.DocumentEndEvent:
            return None
        if type(next_event()) is not yaml.StreamEndEvent:
            return None  # another document
    except Refused:
        raise
    except Exception:  # invalid YAML, or anything unusual: the exact path judges it
        return None
    finally:
        loader.dispose()
    return data, lines


def _parse_nodes(text: str, path: Path) -> tuple[Any, dict[KeyPath, int]]:
    """:func:`parse_yaml` the exact way: the node tree, with every error named by its line."""
    loader = _Loader(text)
    try:
        written = _written_nodes(text)
        node = loader.get_single_node()
        if node is None:
            raise InputError("the expected file is empty", path=str(path), line=1)
        lines: dict[KeyPath, int] = {}
        budget = NodeBudget(written, alias_allowance(text))
        data = _build_value(loader, node, (), lines, path, set(), budget)
    except Refused as exc:
        raise InputError(exc.reason, path=str(path), line=exc.line) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        raise InputError(f"not valid YAML: {reason}", path=str(path), line=line) from None
    except yaml.reader.ReaderError as exc:  # a character YAML forbids: no mark, a position
        line = text.count("\n", 0, exc.position) + 1
        reason = str(exc).split("\n")[0]
        raise InputError(f"not valid YAML: {reason}", path=str(path), line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {exc}", path=str(path)) from None
    finally:
        loader.dispose()
    return data, lines


def _written_nodes(text: str) -> int:
    """How many nodes ``text`` writes (aliases not expanded), refusing, before the composer
    builds anything, nesting deeper than :data:`MAX_DEPTH` (the composer recurses once per
    level) and aliases past the allowance at the alias that passes it (the sizes of anchors
    are counted, never expanded). Invalid YAML stops the count: the composer names the error."""
    loader = _Loader(text)
    next_event: Callable[[], Any] = loader.get_event
    allowance = alias_allowance(text)
    written = added = 0
    #: Each open mapping or list: its anchor, and the nodes counted when it started.
    open_nodes: list[tuple[str | None, int]] = []
    sizes: dict[str, int] = {}  # the expanded size of each anchor, once closed
    try:
        while (event := next_event()) is not None:
            kind = type(event)
            if kind is yaml.AliasEvent:
                added += sizes.get(event.anchor, 0)  # unknown or open: the composer judges
                if added > allowance:
                    raise alias_refusal(event.start_mark.line + 1, allowance)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                if len(open_nodes) >= MAX_DEPTH:
                    raise depth_refusal(event.start_mark.line + 1)
                open_nodes.append((event.anchor, written + added))
                written += 1
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                anchor, start = open_nodes.pop()
                if anchor is not None:
                    sizes[anchor] = written + added - start
            elif kind is yaml.ScalarEvent:
                written += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
    except yaml.YAMLError:
        pass
    finally:
        loader.dispose()
    return written


def _construct(loader: _Loader, node: Node) -> Any:
    """A scalar (or a tagged collection) as the loader builds it, refusing a number too large
    to use at its line."""
    line = node.start_mark.line + 1
    try:
        value = loader.construct_object(node, deep=True)
    except ValueError:  # an integer past Python's int-to-text limit
        raise Refused(line, number_problem(MAX_INTEGER + 1, str(node.value)) or "") from None
    problem = number_problem(value, node.value) if isinstance(node.value, str) else None
    if problem is not None:
        raise Refused(line, problem)
    return value


def _build_value(
    loader: _Loader,
    node: Node,
    at: KeyPath,
    lines: dict[KeyPath, int],
    path: Path,
    seen: set[int],
    budget: NodeBudget,
) -> Any:
    lines.setdefault(at, node.start_mark.line + 1)
    if id(node) in seen:
        raise InputError("an alias refers to itself", path=str(path), line=lines[at])
    budget.left -= 1
    if budget.left < 0:
        raise alias_refusal(node.start_mark.line + 1, budget.allowance)
    if len(seen) >= MAX_DEPTH:  # deeper through aliases than the text itself goes
        raise depth_refusal(node.start_mark.line + 1)
    if isinstance(node, MappingNode):
        loader.flatten_mapping(node)
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _construct(loader, key_node)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise InputError(
                    f"key {key!r} must be a string: quote it", path=str(path), line=line
                )
            if key in out:
                raise InputError(f"duplicate key {key!r}", path=str(path), line=line)
            lines[(*at, key)] = line
            inner = seen | {id(node)}
            out[key] = _build_value(loader, value_node, (*at, key), lines, path, inner, budget)
        return out
    if isinstance(node, SequenceNode):
        inner = seen | {id(node)}
        return [
            _build_value(loader, item, (*at, i), lines, path, inner, budget)
            for i, item in enumerate(node.value)
        ]
    return _construct(loader, node)


def nearest_line(lines: Mapping[KeyPath, int], at: KeyPath) -> int:
    """The line of key path ``at``, or of its nearest enclosing key (line 1 for none)."""
    while at and at not in lines:
        at = at[:-1]
    return lines.get(at, 1)


__all__ = ["KeyPath", "LazyLines", "nearest_line", "parse_yaml"]
