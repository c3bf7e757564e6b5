"""Talking to ``lineage serve`` in tests: plain requests, and reading its event stream."""

from __future__ import annotations

import http.client
import socket
from typing import Any

import orjson

from lineage_es.serve import LineageServer


def get(
    server: LineageServer, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """A GET of ``path``: the status, the headers (lower-case names) and the body."""
    address, port = server.server_address[:2]
    connection = http.client.HTTPConnection(str(address), port, timeout=10)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


def get_json(server: LineageServer, path: str) -> tuple[int, Any]:
    """A GET of ``path`` answered in JSON: the status and the data."""
    status, _, body = get(server, path)
    return status, orjson.loads(body)


class EventStream:
    """An open ``/events`` stream, read one Server-Sent Event at a time."""

    def __init__(self, server: LineageServer, path: str = "/events", **headers: str) -> None:
        address, port = server.server_address[:2]
        self.socket = socket.create_connection((str(address), port), timeout=15)
        lines = [f"GET {path} HTTP/1.1", "Host: 127.0.0.1", "Accept: text/event-stream"]
        lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
        self.socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.buffer = b""
        head = self._read_until(b"\r\n\r\n")
        self.status = int(head.split(b" ", 2)[1])

    def _read_until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            data = self.socket.recv(65536)
            if not data:
                raise EOFError("the stream ended")
            self.buffer += data
        part, self.buffer = self.buffer.split(marker, 1)
        return part

    def next_event(self) -> tuple[str, int, Any]:
        """The next event (comments and ``retry`` lines skipped): its kind, id and data."""
        while True:
            block = self._read_until(b"\n\n")
            # chunked transfer encoding: drop the chunk-size lines around the event
            fields: dict[str, str] = {}
            for line in block.decode().splitlines():
                name, sep, value = line.partition(": ")
                if sep and name in ("event", "id", "data"):
                    fields[name] = value
            if "event" in fields:
                return fields["event"], int(fields["id"]), orjson.loads(fields["data"])

    def close(self) -> None:
        self.socket.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
