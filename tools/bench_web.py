"""Benchmark the forest page of ``lineage serve`` in a real browser (headless Chromium).

Builds two SQLite journals: a large forest (``--roots`` roots of ``--agents`` agents each,
1,000 x 50 by default) and a small one (``--small-roots`` roots of the same size). For each,
it serves the page, loads it in Debian's chromium (through Playwright) and reads, with the
browser's Performance API (``performance.now()`` in the page):

- the first render: fetching ``/forest`` and drawing it, against the floor of fetching and
  parsing the same JSON in the same page (the data's own cost);
- live updates: ``--updates`` times, a new agent journaled under one root by another engine
  (as a hook would); the page's cost of applying the pushed change (redrawing that root),
  and the wall time from the write's return to the page showing it (which includes the
  server's poll interval, ``--poll`` seconds).

The update's cost must not grow with the forest: the large forest's is reported as a ratio
to the small one's, measured in the same run.

Usage: python tools/bench_web.py [--roots 1000] [--agents 50] [--small-roots 10]
       [--updates 20] [--poll 0.1]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lineage_es.engine.engine import open_engine
from lineage_es.facts import ChildIdentified, Fact, Observation, RootSeen
from lineage_es.serve import make_server, serve_in_thread, url_of

FLOOR_JS = """async () => {
  const t0 = performance.now();
  const response = await fetch('/forest', {headers: {Accept: 'application/json'}});
  await response.json();
  return performance.now() - t0;
}"""


def _observation(requester: str, root: str, facts: tuple[Fact, ...], key: str) -> Observation:
    return Observation(host="claude", requester=requester, key=key, facts=facts, root=root)


def build(store: str, roots: int, agents: int) -> list[str]:
    """Journal ``roots`` roots of ``agents`` agents each (a root, then children of the root
    and grandchildren); the roots' ids are returned."""
    names = [f"5f1c2e4a-0000-4000-8000-{r:012x}" for r in range(roots)]
    made: list[Observation] = []
    for r, root in enumerate(names):
        made.append(_observation(root, root, (RootSeen(root, "startup"),), f"k-{r}-root"))
        for n in range(agents - 1):
            child = f"a{r:08x}{n:08x}"
            parent = root if n < 5 else f"a{r:08x}{n % 5:08x}"
            made.append(
                _observation(child, root, (ChildIdentified(parent, child, "native"),), f"k-{r}-{n}")
            )
    with open_engine(store) as engine:
        engine.observe_many(made)
    return names


def measure(store: str, roots: list[str], updates: int, poll: float, page: Page) -> dict[str, Any]:
    """Serve ``store``, load the page, then write ``updates`` agents; the page's figures."""
    with open_engine(store) as engine:
        server = make_server(engine, "127.0.0.1", 0, poll_interval=poll)
        serve_in_thread(server)
        try:
            page.goto(url_of(server) + "/")
            page.wait_for_selector("#connection.live", timeout=600_000)
            first = page.evaluate("window.__lineage.stats.firstRender")
            floor = statistics.median(page.evaluate(FLOOR_JS) for _ in range(3))
            latencies = []
            with open_engine(store) as writer:
                for i in range(updates):
                    root = roots[(i * 7919) % len(roots)]
                    child = f"u{i:015x}"
                    wrote = time.perf_counter()
                    writer.observe(
                        "claude",
                        _observation(
                            child, root, (ChildIdentified(root, child, "native"),), f"k-u-{i}"
                        ),
                    )
                    page.wait_for_function(
                        f"window.__lineage.stats.updates.length >= {i + 1}", timeout=60_000
                    )
                    latencies.append(time.perf_counter() - wrote)
            applied = page.evaluate("window.__lineage.stats.updates")
        finally:
            server.shutdown()
            server.server_close()
    return {"first": first, "floor": floor, "applied": applied, "latencies": latencies}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--roots", type=int, default=1000)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--small-roots", type=int, default=10)
    parser.add_argument("--updates", type=int, default=20)
    parser.add_argument("--poll", type=float, default=0.1)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium)
        results = {}
        for label, count in (("small", args.small_roots), ("large", args.roots)):
            store = f"sqlite:///{Path(tmp) / f'{label}.sqlite'}"
            started = time.perf_counter()
            roots = build(store, count, args.agents)
            built = time.perf_counter() - started
            print(f"{label}: {count} roots x {args.agents} agents journaled in {built:.1f} s")
            context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
            results[label] = measure(store, roots, args.updates, args.poll, context.new_page())
            context.close()
        browser.close()
    small, large = results["small"], results["large"]
    for label, r in results.items():
        first = r["first"]
        print(
            f"{label}: first render {first['fetchAndDraw']:.0f} ms "
            f"(draw {first['draw']:.0f} ms) = {first['fetchAndDraw'] / r['floor']:.2f}x the floor "
            f"(fetch and parse /forest: {r['floor']:.0f} ms)"
        )
        print(
            f"{label}: update applied in {statistics.median(r['applied']):.2f} ms median, "
            f"{max(r['applied']):.2f} ms max; write to page "
            f"{statistics.median(r['latencies']) * 1000:.0f} ms median (poll {args.poll} s)"
        )
    ratio = statistics.median(large["applied"]) / statistics.median(small["applied"])
    print(
        f"update cost, {args.roots} roots against {args.small_roots}: {ratio:.2f}x "
        "(goal: about 1x, not growing with the forest)"
    )


if __name__ == "__main__":
    main()
