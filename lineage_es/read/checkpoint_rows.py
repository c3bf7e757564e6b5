"""A checkpoint's rows, stored grouped by root and read one root at a time.

Most questions of a past moment read one root (each root is one aggregate): its rows, the
nodes listed under a conversation, and the root rows. So a checkpoint's blob holds each
root's rows apart (a zlib-compressed JSON list of value lists each), after a small index:
the roots and where their rows are, the rows that are roots or wait for their conversation
(``roots`` and ``pending`` answer from those alone), every ``nid`` it holds, and which root
lists each conversation (in buckets by a hash of it: a lookup decodes one small bucket).
:class:`CheckpointView` decodes a root's rows the first time they are asked for, and every
row only for ``all_rows``.

A chain of blobs makes one view: the latest full checkpoint's, then the deltas after it, a
later version of a row (same ``nid``) standing for the earlier ones. A row never changes
roots (its ``nid`` is the position of the event that made it in its root), so a root's rows
are its rows in each blob of the chain, merged.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from itertools import accumulate
from typing import Any

import orjson

from lineage_es.read.view import NodeRow, ReadsOneByOne

#: What a blob of this layout starts with (a blob of another is refused, not misread).
MAGIC = b"LC2\x00"
#: After the magic: the lengths of the index, the nids and the keys sections.
_HEADER = struct.Struct("<III")
#: zlib's level for every section: decompression costs the same at any level.
LEVEL = 6
#: About how many keys share one bucket of a blob's conversation index.
BUCKET = 1024

#: A row's fields in the order a blob lists them (its class's own order).
_ROW_FIELDS = tuple(f.name for f in fields(NodeRow))


def _values(row: NodeRow) -> list[Any]:
    return [getattr(row, f) for f in _ROW_FIELDS]


def _row(values: list[Any]) -> NodeRow:
    row = NodeRow(*values)
    row.workspace = tuple(row.workspace)  # a JSON list
    return row


def _pack(value: Any) -> bytes:
    return zlib.compress(orjson.dumps(value), LEVEL)


def _unpack(blob: bytes | memoryview) -> Any:
    return orjson.loads(zlib.decompress(blob))


def _bucket(key: str, buckets: int) -> int:
    return zlib.crc32(key.encode()) % buckets


def encode_rows(rows: Iterable[NodeRow], *, full: bool) -> bytes:
    """One checkpoint's rows, as a blob: all of them (``full``), or a stretch's changes. Only
    a delta lists its nids: a full checkpoint starts its chain, with nothing before it that
    a version of its own would stand for."""
    by_root: dict[str, list[NodeRow]] = {}
    for row in sorted(rows, key=lambda r: r.nid):
        by_root.setdefault(row.root_id, []).append(row)
    roots = list(by_root)
    body: list[bytes] = []
    keys: dict[str, list[int]] = {}  # more than one root: a moved node's key
    heads: list[list[Any]] = []
    unbound: list[list[Any]] = []
    nids: list[int] = []
    for index, root_id in enumerate(roots):
        for row in by_root[root_id]:
            nids.append(row.nid)
            listed = keys.setdefault(row.key, [])
            if index not in listed:
                listed.append(index)
            if row.is_root:
                heads.append(_values(row))
            if row.conversation is None:
                unbound.append(_values(row))
        body.append(_pack([_values(row) for row in by_root[root_id]]))
    ends = list(accumulate(map(len, body)))
    buckets: list[dict[str, Any]] = [{} for _ in range(max(1, len(keys) // BUCKET))]
    for key, indexes in keys.items():
        buckets[_bucket(key, len(buckets))][key] = indexes[0] if len(indexes) == 1 else indexes
    packed_buckets = [_pack(bucket) for bucket in buckets]
    bucket_ends = list(accumulate(map(len, packed_buckets)))
    meta = _pack(
        {"roots": roots, "ends": ends, "heads": heads, "unbound": unbound, "buckets": bucket_ends}
    )
    packed_nids, packed_keys = b"" if full else _pack(nids), b"".join(packed_buckets)
    header = MAGIC + _HEADER.pack(len(meta), len(packed_nids), len(packed_keys))
    return b"".join([header, meta, packed_nids, packed_keys, *body])


class _Blob:
    """One blob of a chain, its sections decoded as they are first needed."""

    def __init__(self, blob: bytes) -> None:
        if not blob.startswith(MAGIC):
            raise ValueError("a time-travel checkpoint of another layout")
        self._blob = memoryview(blob)
        start = len(MAGIC) + _HEADER.size
        meta_len, nids_len, keys_len = _HEADER.unpack_from(blob, len(MAGIC))
        meta = _unpack(self._blob[start : start + meta_len])
        self._names: list[str] = meta["roots"]
        self.roots: dict[str, int] = {root_id: i for i, root_id in enumerate(self._names)}
        self._ends: list[int] = meta["ends"]
        self.heads: list[list[Any]] = meta["heads"]
        self.unbound: list[list[Any]] = meta["unbound"]
        self._nids_at = (start + meta_len, start + meta_len + nids_len)
        self._keys_at = (self._nids_at[1], self._nids_at[1] + keys_len)
        self._body = self._keys_at[1]
        self._buckets: list[int] = meta["buckets"]
        self._nids: frozenset[int] | None = None
        self._keys: dict[int, dict[str, int | list[int]]] = {}

    def nids(self) -> frozenset[int]:
        if self._nids is None:
            first, last = self._nids_at
            self._nids = frozenset(_unpack(self._blob[first:last]) if last > first else ())
        return self._nids

    def roots_of(self, key: str) -> list[str]:
        """The roots whose rows in this blob list ``key``."""
        number = _bucket(key, len(self._buckets))
        bucket = self._keys.get(number)
        if bucket is None:
            start = self._keys_at[0]
            first = start + (self._buckets[number - 1] if number else 0)
            bucket = self._keys[number] = _unpack(self._blob[first : start + self._buckets[number]])
        found = bucket.get(key)
        if found is None:
            return []
        return [self._names[i] for i in (found if isinstance(found, list) else (found,))]

    def segment(self, root_id: str) -> list[list[Any]]:
        """The values of ``root_id``'s rows in this blob (none when it has none)."""
        index = self.roots.get(root_id)
        if index is None:
            return []
        first = self._body + (self._ends[index - 1] if index else 0)
        return list(_unpack(self._blob[first : self._body + self._ends[index]]))


class CheckpointView(ReadsOneByOne):
    """The view at a checkpoint, read only, from its chain of blobs (a full checkpoint's,
    then the deltas up to it): each root's rows are decoded when first asked for, then kept
    (nothing changes them)."""

    def __init__(self, blobs: Sequence[bytes], position: int) -> None:
        self._position = position
        self._chain = [_Blob(blob) for blob in blobs]
        self._by_root: dict[str, list[NodeRow]] = {}
        self._heads: list[NodeRow] | None = None
        self._unbound: list[NodeRow] | None = None

    def position(self) -> int:
        return self._position

    def roots_version(self) -> int:
        return self._position

    def root_version(self, root_id: str) -> int:
        return self._position if any(root_id in b.roots for b in self._chain) else 0

    def root_rows(self, root_id: str) -> list[NodeRow]:
        rows = self._by_root.get(root_id)
        if rows is None:
            latest: dict[int, list[Any]] = {}
            for blob in self._chain:
                for values in blob.segment(root_id):
                    latest[values[0]] = values
            rows = [_row(latest[nid]) for nid in sorted(latest)]
            self._by_root[root_id] = rows
        return list(rows)

    def find(self, conversation: str) -> list[NodeRow]:
        roots = {root_id for blob in self._chain for root_id in blob.roots_of(conversation)}
        found = [row for r in roots for row in self.root_rows(r) if row.key == conversation]
        return sorted(found, key=nid_of)

    def roots(self, host: str | None, *, live_only: bool) -> list[NodeRow]:
        if self._heads is None:
            self._heads = self._latest(lambda blob: blob.heads)
        return [
            row
            for row in self._heads
            if (host is None or row.host == host)
            and (row.status == "live" if live_only else row.status != "deleted")
        ]

    def all_rows(self) -> list[NodeRow]:
        roots = {root_id for blob in self._chain for root_id in blob.roots}
        return sorted((row for r in roots for row in self.root_rows(r)), key=nid_of)

    def pending(self, host: str) -> list[NodeRow]:
        if self._unbound is None:
            self._unbound = self._latest(lambda blob: blob.unbound)
        return [row for row in self._unbound if row.status == "live" and row.host == host]

    def _latest(self, listed: Callable[[_Blob], list[list[Any]]]) -> list[NodeRow]:
        """The rows some blob of the chain lists in ``listed(blob)`` (its root rows, or those
        waiting for their conversation) whose latest version is that one: a later blob that
        holds the row at all holds its version since."""
        latest: dict[int, list[Any]] = {}
        for blob in self._chain:
            if latest and blob is not self._chain[0]:
                for nid in latest.keys() & blob.nids():
                    del latest[nid]
            for values in listed(blob):
                latest[values[0]] = values
        return [_row(latest[nid]) for nid in sorted(latest)]


def nid_of(row: NodeRow) -> int:
    return row.nid
