"""Fixtures of the web page's tests: a store built from the corpus recordings, ``lineage
serve`` over it, and a headless Chromium page (Debian's, driven by Playwright) that fails
its test on any console error."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright

from lineage_es.cli.main import main
from lineage_es.engine.engine import open_engine
from lineage_es.serve import LineageServer, url_of
from tests.support.paths import CORPUS
from tests.support.serving import serving
from tests.support.web_browser import chromium_path

#: Corpus recordings of all three hosts, with subagents, stops and resumes among them.
RECORDINGS = (
    "claude/irrlicht_subagent-spawn-parallel_v2.1.119",
    "claude/irrlicht_3-2-background-killed_v2.1.156",
    "claude/spotter_explore-and-acompact_v2.1.39",
    "claude/irrlicht_1-5-session-clear_v2.1.142",
    "codex/irrlicht_subagent-parent-link-headers_v0.144.4",
    "codex/irrlicht_fork-conversation_v0.130.0",
    "cursor/rosetta_run4-task-subagent_v3.9.16",
    "cursor/fusengine_task-subagent-resume_v3.18.9",
)


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite store holding the :data:`RECORDINGS`, journaled by ``lineage ingest``."""
    if not CORPUS.is_dir():
        pytest.skip(f"corpus folder {CORPUS} is absent (set LINEAGE_CORPUS to point at it)")
    url = f"sqlite:///{tmp_path_factory.mktemp('web') / 'journal.sqlite'}"
    files = sorted(
        str(f)
        for case in RECORDINGS
        for f in (CORPUS / case).rglob("*")
        if f.suffix in (".jsonl", ".ndjson")
    )
    result = CliRunner().invoke(main, ["ingest", "--store", url, *files])
    assert result.exit_code in (0, 1), result.output  # 1: a line it named and skipped
    with open_engine(url) as engine:
        assert engine.forest(), "the corpus recordings journaled no agent"
    return url


@pytest.fixture
def web_server(corpus_store: str) -> Iterator[LineageServer]:
    """``lineage serve`` over :func:`corpus_store`, polling the journal often."""
    with open_engine(corpus_store) as engine, serving(engine, poll_interval=0.1) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium: Debian's package, never a downloaded browser."""
    executable = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def console_errors() -> list[str]:
    """Errors the page logs or throws (a test that wants none asserts so)."""
    return []


@pytest.fixture
def page(browser: Browser, web_server: LineageServer, console_errors: list[str]) -> Iterator[Page]:
    """The forest page, loaded and listening for changes."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(15_000)

    def note(message: ConsoleMessage) -> None:
        if message.type == "error":
            console_errors.append(message.text)

    opened.on("console", note)
    opened.on("pageerror", lambda error: console_errors.append(str(error)))
    opened.goto(url_of(web_server) + "/")
    opened.wait_for_selector("#forest > li")
    opened.wait_for_selector("#connection.live")
    try:
        yield opened
    finally:
        context.close()


@pytest.fixture
def screenshot_folder(tmp_path: Path) -> Path:
    """Where the screenshot is kept: ``$LINEAGE_SCREENSHOTS`` when set (``docs`` refreshes the
    README's picture), else the test's own folder, so that a test run changes no file of the
    repository."""
    chosen = os.environ.get("LINEAGE_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
