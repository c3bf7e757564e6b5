"""The browser side of the web page's tests: finding Debian's chromium, and reading the
forest the page drew back out of its DOM, in the form ``lineage tree --format json`` has."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

#: Reads the drawn forest from the page: every root's ``<li>`` and, below it, its children,
#: from the data the page writes on each node.
READ_DRAWN_FOREST = """() => {
  const read = (li) => {
    const d = li.dataset;
    const node = {conversation: d.conversation, host: d.host, depth: Number(d.depth),
      status: d.status, resolution: d.resolution, started_at: d.startedAt,
      subagent: d.subagentId === undefined ? null
        : {id: d.subagentId, type: d.subagentType === undefined ? null : d.subagentType}};
    if (d.ambiguous) node.ambiguous = true;
    node.last_seen = d.lastSeen === undefined ? null : d.lastSeen;
    node.children = [...li.querySelectorAll(':scope > ul > li')].map(read);
    return node;
  };
  return [...document.querySelectorAll('#forest > li')].map(read);
}"""


def chromium_path() -> str:
    """Debian's chromium; the test is skipped when it is absent (never under CI, where it
    must be installed: .ci/run installs it)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed: apt-get install chromium (Debian's package)")
    return found


def in_order(roots: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The forest with roots and children sorted by host and id: the page draws roots
    newest activity first and ambiguous children apart, the CLI oldest first."""
    out = []
    for node in sorted(roots, key=lambda n: (n["host"], n["conversation"])):
        out.append({**node, "children": in_order(node["children"])})
    return out
