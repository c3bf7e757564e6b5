"""A host's JSON or TOML config file, edited in place: one entry of a server table set or
removed, everything else kept.

JSON keeps its keys, their order and the indent it was written with (two spaces, a tab, or
one line), and ``\\uXXXX`` escapes when the file was all ASCII with them. TOML goes through
tomlkit, which keeps comments, order and layout; every TOML edit is parsed back and checked
to mean exactly the document asked for (a table added among dotted keys can capture the keys
after it), and a checked failure is refused rather than written.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol, TypeGuard

import tomlkit
from tomlkit.exceptions import ParseError, TOMLKitError
from tomlkit.items import InlineTable
from tomlkit.toml_document import TOMLDocument


class DocumentError(ValueError):
    """The text does not parse, or holds the server table in a shape we cannot edit."""

    def __init__(self, line: int, column: int, reason: str) -> None:
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(f"{line}:{column}: {reason}")


class ConfigDocument(Protocol):
    """One config file's content, with its server table ``table``."""

    def server(self, name: str) -> object | None:
        """The entry ``name`` in the server table, as plain values (None when absent)."""

    def has_table(self) -> bool:
        """Whether the document has the server table at all."""

    def set_server(self, name: str, entry: dict[str, Any]) -> None:
        """Set the entry ``name``, creating the table when there is none."""

    def remove_server(self, name: str, *, drop_empty_table: bool) -> None:
        """Remove the entry ``name``; the table too when that leaves it empty and asked to."""

    def is_empty(self) -> bool:
        """Whether nothing but blank space would be left."""

    def render(self) -> str:
        """The document as text, laid out as it was read."""

    def line_of(self, key: str) -> int:
        """The line that first names ``key`` (1 when none does), for a message."""


def parse_document(text: str | None, *, table: str, toml: bool) -> ConfigDocument:
    """``text`` (None or blank: a new, empty file) as a JSON or TOML config document."""
    if toml:
        return TomlDocument(text or "", table)
    return JsonDocument(text or "", table)


def is_our_server(entry: object) -> TypeGuard[dict[str, Any]]:
    """Whether a configured server entry runs ``lineage_es``'s server (``-m lineage_es mcp``)."""
    if not isinstance(entry, dict):
        return False
    args = entry.get("args")
    return isinstance(args, list) and args[:3] == ["-m", "lineage_es", "mcp"]


def _line_of(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


class JsonDocument:
    """A JSON config: an object whose ``table`` key holds the servers."""

    def __init__(self, text: str, table: str) -> None:
        self.table = table
        self.text = text
        self.data: dict[str, Any] = {}
        if text.strip():
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DocumentError(
                    exc.lineno, exc.colno, f"not valid JSON ({exc.msg}); fix it by hand first"
                ) from None
            if not isinstance(data, dict):
                raise DocumentError(1, 1, f"holds a JSON {type(data).__name__}, not an object")
            self.data = data
        servers = self.data.get(table)
        if servers is not None and not isinstance(servers, dict):
            raise DocumentError(self.line_of(table), 1, f"{table!r} is not an object")

    def server(self, name: str) -> object | None:
        servers = self.data.get(self.table)
        return servers.get(name) if isinstance(servers, dict) else None

    def has_table(self) -> bool:
        return self.table in self.data

    def set_server(self, name: str, entry: dict[str, Any]) -> None:
        self.data.setdefault(self.table, {})[name] = entry

    def remove_server(self, name: str, *, drop_empty_table: bool) -> None:
        servers = self.data.get(self.table)
        if not isinstance(servers, dict):
            return
        servers.pop(name, None)
        if drop_empty_table and not servers:
            del self.data[self.table]

    def is_empty(self) -> bool:
        return not self.data

    def render(self) -> str:
        text = self.text
        indent: str | None = "  "
        separators = (",", ": ")
        if text.strip() and "\n" not in text.strip():
            indent = None  # one line stays one line
            separators = (", ", ": ") if '": ' in text else (",", ":")
        else:
            found = re.search(r"\n([ \t]+)\S", text)
            if found:
                indent = found.group(1)
        escaped = text.isascii() and "\\u" in text
        body = json.dumps(self.data, indent=indent, separators=separators, ensure_ascii=escaped)
        return body + ("\n" if text.endswith("\n") or not text.strip() else "")

    def line_of(self, key: str) -> int:
        return _line_of(self.text, json.dumps(key))


class TomlDocument:
    """A TOML config (Codex's ``config.toml``): the ``[table.<name>]`` tables hold the servers."""

    def __init__(self, text: str, table: str) -> None:
        self.table = table
        self.text = text
        try:
            self.doc: TOMLDocument = tomlkit.parse(text)
        except ParseError as exc:
            reason = str(exc).removesuffix(f" at line {exc.line} col {exc.col}")
            raise DocumentError(
                exc.line, exc.col + 1, f"not valid TOML ({reason}); fix it by hand first"
            ) from None
        servers = self.doc.get(table)
        if servers is not None and not isinstance(servers, dict):
            raise DocumentError(self.line_of(table), 1, f"{table!r} is not a table")

    def server(self, name: str) -> object | None:
        servers = self.doc.get(self.table)
        entry: Any = servers.get(name) if isinstance(servers, dict) else None
        plain: object = entry.unwrap() if hasattr(entry, "unwrap") else entry
        return plain

    def has_table(self) -> bool:
        return self.table in self.doc

    def set_server(self, name: str, entry: dict[str, Any]) -> None:
        wanted = self._meaning()
        wanted.setdefault(self.table, {})[name] = entry
        for edit in (self._set_in_place, self._append_table):
            try:
                text = edit(name, entry)
            except TOMLKitError:
                continue
            if self._means(text, wanted):
                self._become(text)
                return
        raise DocumentError(
            self.line_of(self.table),
            1,
            f"cannot add [{self.table}.{name}] here without changing what the rest of the "
            f"file means; add it by hand:\n{_table_text(self.table, name, entry)}",
        )

    def remove_server(self, name: str, *, drop_empty_table: bool) -> None:
        wanted = self._meaning()
        servers = wanted.get(self.table)
        if not isinstance(servers, dict) or name not in servers:
            return
        del servers[name]
        if drop_empty_table and not servers:
            del wanted[self.table]
        doc = tomlkit.parse(self.text)
        try:
            del doc[self.table][name]
            if drop_empty_table and not doc[self.table]:
                del doc[self.table]
            text = _one_final_newline(tomlkit.dumps(doc), self.text)
        except (TOMLKitError, KeyError):
            text = self.text
        if not self._means(text, wanted):
            raise DocumentError(
                self.line_of(name),
                1,
                f"cannot take [{self.table}.{name}] out without changing what the rest of "
                "the file means; remove it by hand",
            )
        self._become(text)

    def is_empty(self) -> bool:
        return not self.text.strip()

    def render(self) -> str:
        return self.text

    def line_of(self, key: str) -> int:
        return _line_of(self.text, key)

    def _meaning(self) -> dict[str, Any]:
        meaning: dict[str, Any] = self.doc.unwrap()
        return meaning

    def _means(self, text: str, wanted: dict[str, Any]) -> bool:
        try:
            return bool(tomlkit.parse(text).unwrap() == wanted)
        except TOMLKitError:
            return False

    def _become(self, text: str) -> None:
        self.text = text
        self.doc = tomlkit.parse(text)

    def _set_in_place(self, name: str, entry: dict[str, Any]) -> str:
        """tomlkit's own edit: the entry replaced where it is, or added after the table's
        last server (a blank line kept before whatever follows)."""
        doc = tomlkit.parse(self.text)
        servers = doc.get(self.table)
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc.add(self.table, servers)
        if isinstance(servers, InlineTable):
            item: Any = tomlkit.inline_table()
            item.update(entry)
        else:
            item = tomlkit.table()
            item.update(entry)
            item.add(tomlkit.nl())
        servers[name] = item
        return _one_final_newline(tomlkit.dumps(doc), self.text)

    def _append_table(self, name: str, entry: dict[str, Any]) -> str:
        """The table written after everything else (for servers kept as dotted keys)."""
        if self.server(name) is not None:
            raise TOMLKitError("the entry is there already")
        text = self.text if not self.text or self.text.endswith("\n") else self.text + "\n"
        return (text + "\n" if text.strip() else "") + _table_text(self.table, name, entry)


def _table_text(table: str, name: str, entry: dict[str, Any]) -> str:
    """``[table.name]`` holding ``entry``, as TOML text."""
    doc = tomlkit.document()
    outer = tomlkit.table(is_super_table=True)
    inner = tomlkit.table()
    inner.update(entry)
    outer.add(name, inner)
    doc.add(table, outer)
    return tomlkit.dumps(doc)


def _one_final_newline(text: str, original: str) -> str:
    """``text`` ending as the original did: blank lines an edit left at the end go, unless
    the original ended with them too."""
    if original.endswith("\n\n") or not text.endswith("\n"):
        return text
    return text.rstrip("\n") + "\n"
