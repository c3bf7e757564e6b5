"""The forest page in a real browser (headless Chromium), on a store of corpus recordings."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import orjson
from click.testing import CliRunner
from playwright.sync_api import Browser, Page, expect

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.serve import url_of
from tests.support.ambiguous_store import ambiguous_store, serving
from tests.support.web_browser import READ_DRAWN_FOREST, in_order


def cli_forest(store: str, *args: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(
        main, ["tree", "--all", "--format", "json", "--store", store, *args]
    )
    assert result.exit_code == 0, result.output
    roots: list[dict[str, object]] = orjson.loads(result.output)["roots"]
    return roots


def test_the_drawn_forest_equals_tree_all_json(page: Page, corpus_store: str) -> None:
    drawn = page.evaluate(READ_DRAWN_FOREST)
    assert in_order(drawn) == in_order(cli_forest(corpus_store))


def test_roots_are_drawn_newest_activity_first(page: Page) -> None:
    newest = page.evaluate(
        """() => [...document.querySelectorAll('#forest > li')].map((li) =>
             Math.max(...[li, ...li.querySelectorAll('li')].map(
               (n) => Date.parse(n.dataset.lastSeen || n.dataset.startedAt))))"""
    )
    assert newest == sorted(newest, reverse=True)


def test_a_hook_run_in_another_process_appears_without_a_reload(
    page: Page, corpus_store: str
) -> None:
    page.evaluate("window.__notReloaded = true")
    session = f"web-{uuid.uuid4()}"
    payload = {"session_id": session, "hook_event_name": "SessionStart", "source": "startup"}
    subprocess.run(
        [sys.executable, "-m", "lineage_es.hook", "claude", "--store", corpus_store],
        input=orjson.dumps(payload),
        check=True,
        timeout=60,
    )
    page.wait_for_selector(f'#forest > li[data-conversation="{session}"]', timeout=10_000)
    assert page.evaluate("window.__notReloaded") is True
    assert page.evaluate("document.querySelector('#forest > li').dataset.conversation") == session


def test_the_slider_shows_an_earlier_forest(page: Page, corpus_store: str) -> None:
    with open_engine(corpus_store) as engine:
        earlier = engine.position() // 3
    page.eval_on_selector(
        "#position-slider",
        "(slider, value) => { slider.value = value; slider.dispatchEvent(new Event('input')); }",
        str(earlier),
    )
    page.wait_for_selector(f'body[data-live="false"][data-position="{earlier}"]')
    drawn = page.evaluate(READ_DRAWN_FOREST)
    assert in_order(drawn) == in_order(cli_forest(corpus_store, "--position", str(earlier)))
    assert len(drawn) < len(cli_forest(corpus_store))


def test_now_returns_from_the_past_to_the_live_forest(page: Page, corpus_store: str) -> None:
    page.eval_on_selector(
        "#position-slider",
        "(slider) => { slider.value = 1; slider.dispatchEvent(new Event('input')); }",
    )
    page.wait_for_selector('body[data-live="false"]')
    page.click("#now")
    page.wait_for_selector('body[data-live="true"]')
    assert in_order(page.evaluate(READ_DRAWN_FOREST)) == in_order(cli_forest(corpus_store))


def test_a_nodes_panel_shows_its_chain_and_family(page: Page) -> None:
    family = page.locator("#forest > li:has(> ul > li)").first
    root = family.get_attribute("data-conversation")
    child = family.locator(":scope > ul > li").first
    conversation = child.get_attribute("data-conversation")
    child.locator(":scope > .row .tag.host").click()
    page.wait_for_selector("#panel-family tbody tr")
    chain = page.locator("#panel-chain a").evaluate_all("(links) => links.map((a) => a.title)")
    relations = dict(
        page.locator("#panel-family tbody tr").evaluate_all(
            "(rows) => rows.map((r) => "
            "[r.cells[0].querySelector('a').title, r.cells[1].textContent])"
        )
    )
    assert chain[0] == conversation and chain[-1] == root
    assert relations[conversation] == "self" and relations[root] in ("parent", "ancestor")


def test_finding_by_id_prefix_hides_the_other_roots(page: Page) -> None:
    target = page.locator("#forest > li").nth(2).get_attribute("data-conversation")
    assert target is not None
    page.fill("#find", target[:10])
    expect(page.locator("#forest > li:not(.hidden)")).to_have_count(1)
    shown = page.locator("#forest > li:not(.hidden)").get_attribute("data-conversation")
    assert shown == target


def test_filtering_by_host_shows_that_hosts_roots_only(page: Page) -> None:
    page.select_option("#host-filter", "codex")
    hosts = page.locator("#forest > li:not(.hidden)").evaluate_all(
        "(items) => items.map((li) => li.dataset.host)"
    )
    assert hosts and set(hosts) == {"codex"}


def test_the_page_logs_no_error(page: Page, console_errors: list[str]) -> None:
    page.locator("#forest .row").first.click()
    page.wait_for_selector("#panel-family tbody tr")
    page.select_option("#status-filter", "live")
    page.click("#collapse-all")
    page.click("#expand-all")
    assert console_errors == []


def test_a_screenshot_is_saved_for_people_to_look_at(
    page: Page, tmp_path: Path, screenshot_folder: Path
) -> None:
    page.locator("#forest > li > ul > li > .row .tag.host").first.click()
    page.wait_for_selector("#panel-family tbody tr")
    shot = tmp_path / "forest.png"
    page.screenshot(path=str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")
    shutil.copyfile(shot, screenshot_folder / "forest.png")


def test_a_child_placed_ambiguous_is_drawn_apart(browser: Browser, tmp_path: Path) -> None:
    store = ambiguous_store(f"sqlite:///{tmp_path / 'ambiguous.sqlite'}")
    with serving(store) as server:
        page = browser.new_page()
        try:
            page.goto(url_of(server) + "/")
            page.wait_for_selector("#forest > li")
            apart = page.locator("#forest ul.children.ambiguous > li").evaluate_all(
                "(items) => items.map((li) => li.dataset.conversation)"
            )
            placed = page.locator("#forest > li > ul.children:not(.ambiguous) > li").evaluate_all(
                "(items) => items.map((li) => li.dataset.conversation)"
            )
        finally:
            page.close()
    assert apart == ["X"] and placed == ["A"]
