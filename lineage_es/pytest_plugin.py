"""pytest plugin: every ``*.expected.yaml`` is a test, checked against the recording beside it.

``foo.expected.yaml`` is checked against the recording beside it, ``foo.jsonl`` (for a Claude
transcript, the reader also uses the ``foo/subagents/`` folder beside it). A failing item shows
the same diff as ``lineage-replay foo.jsonl --assert foo.expected.yaml``.

With no configuration, pytest's own walk finds them: every ``*.expected.yaml`` under the
test paths (``testpaths``, or the paths given) that has its recording beside it is a test; one
without is left out, with a warning naming it and the setting below. To name the folders
instead (and collect them even outside ``testpaths``; an expected file without its
recording is then a failure)::

    [tool.pytest.ini_options]
    lineage_replays = ["replays"]

``pytest --lineage-update`` writes each expected file from what the engine observes instead
of checking it (as ``lineage-replay --update``); refused when the environment variable ``CI``
is set (to anything but empty, ``0`` or ``false``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest._code.code import TerminalRepr, TracebackStyle

from lineage_es.replay.ci import running_in_ci

INI_OPTION = "lineage_replays"
UPDATE_OPTION = "--lineage-update"
SUFFIX = ".expected.yaml"


class ReplayFailed(Exception):
    """A replay whose expectations did not hold, or whose input was unusable."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(
        INI_OPTION,
        type="paths",
        default=[],
        help=(
            f"folders whose *{SUFFIX} files are replayed as tests (lineage-replay --assert); "
            f"default: every *{SUFFIX} under the test paths with its recording beside it"
        ),
    )
    parser.getgroup("lineage").addoption(
        UPDATE_OPTION,
        action="store_true",
        default=False,
        help=(
            f"write each *{SUFFIX} from what the engine observes instead of checking it "
            "(refused when CI is set)"
        ),
    )


def pytest_configure(config: pytest.Config) -> None:
    """Refuse ``--lineage-update`` under CI; collect the replay folders even when
    ``testpaths`` leaves them out; explicit command-line paths still choose exactly what
    runs."""
    if config.getoption(UPDATE_OPTION) and running_in_ci():
        raise pytest.UsageError(
            f"{UPDATE_OPTION} refuses to run when the environment variable CI is set: a CI "
            "never rewrites its own expectations (run it locally, review the diff, commit "
            "the files)"
        )
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
    folders = _replay_folders(parent.config)
    if folders:
        if any(file_path.resolve().is_relative_to(f) for f in folders):
            return ReplayFile.from_parent(parent, path=file_path)
        return None
    if _recording_of(file_path).is_file():
        return ReplayFile.from_parent(parent, path=file_path)
    parent.warn(
        pytest.PytestCollectionWarning(
            f"{file_path}: no recording {_recording_of(file_path).name} beside it, so it is "
            f"not replayed; to replay every *{SUFFIX} of a folder (and fail one without its "
            f'recording), set {INI_OPTION} = ["FOLDER"] in [tool.pytest.ini_options]'
        )
    )
    return None


def _replay_folders(config: pytest.Config) -> list[Path]:
    return [Path(p).resolve() for p in config.getini(INI_OPTION)]


def _recording_of(expected: Path) -> Path:
    """The recording ``expected`` checks: ``foo.jsonl`` beside ``foo.expected.yaml``."""
    return expected.with_name(f"{expected.name[: -len(SUFFIX)]}.jsonl")


class ReplayFile(pytest.File):
    """An expected file: one item, named for the recording it checks."""

    def collect(self) -> Iterator[ReplayItem]:
        yield ReplayItem.from_parent(self, name=self.path.name[: -len(SUFFIX)])


class ReplayItem(pytest.Item):
    """Replays ``<name>.jsonl`` and checks it against ``<name>.expected.yaml`` (with
    ``--lineage-update``, writes the expected file from the replay instead)."""

    def runtest(self) -> None:
        from lineage_es.errors import InputError
        from lineage_es.replay import run_replay, update_expected
        from lineage_es.replay.report import render_text

        transcript = _recording_of(self.path)
        if not transcript.is_file():
            raise ReplayFailed(f"{self.path}: no recording {transcript.name} beside it")
        try:
            if self.config.getoption(UPDATE_OPTION):
                update_expected(transcript, self.path)
                return
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
