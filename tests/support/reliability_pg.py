"""PostgreSQL helpers for the scale-out tests: find and drop the connections on which given
processes LISTEN, as a network failure or a server restart would drop them."""

from __future__ import annotations

import os
from pathlib import Path

import psycopg

from tests.support.postgres import PG_URL


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def _local_ports(pids: list[int]) -> list[int]:
    """The local TCP ports of the processes' connections (IPv4 and IPv6)."""
    inodes = set().union(*(_socket_inodes(pid) for pid in pids))
    ports: list[int] = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def listening_backends(pids: list[int]) -> list[int]:
    """Server process ids of the connections on which these client processes LISTEN."""
    ports = _local_ports(pids)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE client_port = ANY(%s) AND query ILIKE 'LISTEN %%'",
            (ports,),
        ).fetchall()
    return [int(row[0]) for row in rows]


def drop_listening_connections(pids: list[int]) -> int:
    """Terminate those connections on the server; returns how many were dropped."""
    backends = listening_backends(pids)
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        for backend in backends:
            conn.execute("SELECT pg_terminate_backend(%s)", (backend,))
    return len(backends)
