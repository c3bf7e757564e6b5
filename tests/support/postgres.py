"""Where the tests' PostgreSQL server is, and whether it answers."""

from __future__ import annotations

import os

PG_URL = os.environ.get("LINEAGE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def postgres_reachable() -> bool:
    import psycopg

    try:
        psycopg.connect(PG_URL, connect_timeout=3).close()
    except psycopg.Error:
        return False
    return True
