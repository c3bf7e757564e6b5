"""pytest plugin: every ``*.expected.yaml`` under the ``lineage_replays`` folders is a test.

``foo.expected.yaml`` is checked against the recording beside it, ``foo.jsonl`` (for a Claude
transcript, the reader also uses the ``foo/subagents/`` folder beside it). A failing item shows
the same diff as ``lineage-replay foo.jsonl --assert foo.expected.yaml``. Configure::

    [tool.pytest.ini_options]
    lineage_replays = ["replays"]
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest._code.code import TerminalRepr, TracebackStyle

INI_OPTION = "lineage_replays"
SUFFIX = ".expected.yaml"


class ReplayFailed(Exception):
    """A replay whose expectations did not hold, or whose input was unusable."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        INI_OPTION,
        type="paths",
        default=[],
        help=f"folders whose *{SUFFIX} files are replayed as tests (lineage-replay --assert)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Collect the replay folders even when ``testpaths`` leaves them out; explicit command-line
    paths still choose exactly what runs."""
    folders = _replay_folders(config)
    for folder in folders:
        if not folder.is_dir():
            message = f"{INI_OPTION}: {folder} is not a folder; no replay there will run"
            config.issue_config_time_warning(pytest.PytestConfigWarning(message), stacklevel=2)
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        return
    chosen = [Path(arg).resolve() for arg in config.args]
    for folder in folders:
        if folder.is_dir() and not any(folder.is_relative_to(arg) for arg in chosen):
            config.args.append(str(folder))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> ReplayFile | None:
    if not file_path.name.endswith(SUFFIX):
        return None
    if any(file_path.resolve().is_relative_to(f) for f in _replay_folders(parent.config)):
        return ReplayFile.from_parent(parent, path=file_path)
    return None


def _replay_folders(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in config.getini(INI_OPTION)]


class ReplayFile(pytest.File):
    """An expected file: one item, named for the recording it checks."""

    def collect(self) -> Iterator[ReplayItem]:
        yield ReplayItem.from_parent(self, name=self.path.name[: -len(SUFFIX)])


class ReplayItem(pytest.Item):
    """Replays ``<name>.jsonl`` and checks it against ``<name>.expected.yaml``."""

    def runtest(self) -> None:
        from lineage_es.errors import InputError
        from lineage_es.replay import run_replay
        from lineage_es.replay.report import render_text

        transcript = self.path.with_name(f"{self.name}.jsonl")
        if not transcript.is_file():
            raise ReplayFailed(f"{self.path}: no recording {transcript.name} beside it")
        try:
            result = run_replay(transcript, expected=self.path)
        except InputError as exc:
            raise ReplayFailed(f"unusable input: {exc}") from None
        if not result.ok:
            raise ReplayFailed(render_text(result))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: TracebackStyle | None = None,
    ) -> str | TerminalRepr:
        if isinstance(excinfo.value, ReplayFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"lineage replay {self.name}"
