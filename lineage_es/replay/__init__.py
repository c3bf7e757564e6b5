"""Replay a recorded stream through a fresh engine and check what it answers, row by row.

The library behind ``lineage-replay`` and the pytest plugin: :func:`run_replay` ingests a
recording (hook payloads, the project's recording form, a Claude transcript or a Codex rollout)
and compares every answer with an expected file; :func:`update_expected` writes that file from
what the engine observes. Bad input is an :class:`~lineage_es.errors.InputError` naming the
file, the line and the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from lineage_es.errors import InputError, LineageError, PayloadError
from lineage_es.facts import Observation
from lineage_es.hosts.detect import FORM_HOST, Form
from lineage_es.model import AgentLineage, LineageTree, Member
from lineage_es.replay.ci import running_in_ci
from lineage_es.replay.expected import (
    Expected,
    Mismatch,
    Step,
    compare_lineage,
    compare_relations,
    compare_view,
    load_expected,
    parse_yaml,
    validate,
)
from lineage_es.replay.expected_writer import dump_expected, updated_document
from lineage_es.replay.inputs import (
    McpRow,
    ObservationRow,
    PayloadRow,
    Row,
    detect_form,
    family_relations,
    mcp_caller,
    read_rows,
    scan_lines,
)

RowKind = Literal["hook", "mcp", "transcript"]


class Engine(Protocol):
    """What the replay needs of an engine (``lineage_es.open_engine``)."""

    def observe(
        self,
        host: str,
        payload: Mapping[str, Any] | Observation,
        /,
        *,
        at: datetime | None = None,
        answer: bool = True,
    ) -> AgentLineage | None: ...

    def resolve(self, host: str, meta: Mapping[str, Any], /) -> AgentLineage | None: ...

    def tree_for(self, conversation: str, host: str | None = None, /) -> LineageTree | None: ...

    def agents(self, as_: str, host: str | None = None, /) -> tuple[Member, ...]: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class RowAnswer:
    """What the engine answered for one row: the requester's lineage, or ``None`` when the row
    has no requester (the adapter ignores it)."""

    row: int
    kind: RowKind
    host: str | None
    lineage: AgentLineage | None


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step of the expected file (or ``final``) and every expectation that failed in it."""

    label: str
    line: int | None
    rows: tuple[int, ...]
    mismatches: tuple[Mismatch, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.mismatches


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A finished replay: how many rows it ingested, their answers and, with an expected
    file, every step's result. With an expected file only the rows it asserts are answered
    (an answer no step reads is never built)."""

    transcript: Path
    form: Form
    rows: int
    answers: tuple[RowAnswer, ...]
    expected: Path | None = None
    steps: tuple[StepResult, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether every expectation held (vacuously true without an expected file)."""
        return all(step.ok for step in self.steps)

    @property
    def failed(self) -> tuple[StepResult, ...]:
        return tuple(step for step in self.steps if not step.ok)


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """What ``--update`` wrote, from which recording."""

    expected: Path
    steps: int
    rows: int
    transcript: Path | None = None


@dataclass
class _Observed:
    """Everything a replay saw: each row's own answer, and the views asked for."""

    form: Form
    answers: dict[int, RowAnswer] = field(default_factory=dict)
    own_rows: set[int] = field(default_factory=set)
    #: Rows ingested so far (a transcript row may carry several observations).
    ingested: int = 0
    views: dict[int, dict[str, LineageTree | None]] = field(default_factory=dict)
    final_views: dict[str, LineageTree | None] | None = None
    #: Each asserted row's requester's relation to every agent of its family (list_agents).
    relations: dict[int, dict[str, str] | None] = field(default_factory=dict)
    last_row: int = 0

    def lineages(self) -> dict[int, AgentLineage | None]:
        return {row: answer.lineage for row, answer in self.answers.items()}


def run_replay(
    transcript: str | Path,
    *,
    expected: str | Path | Expected | None = None,
    host: str | None = None,
    store: str = "memory://",
) -> ReplayResult:
    """Replay ``transcript`` into the engine at ``store`` and check it against ``expected``.

    Without an expected file it only records each row's answer (to explore a recording).
    Raises :class:`InputError` for an unusable recording or expected file; a recording is
    replayed up to its first unusable row and no further.
    """
    path = Path(transcript)
    spec = (
        expected if isinstance(expected, Expected) or expected is None else load_expected(expected)
    )
    chosen = _choose_host(host, spec)
    observed = _replay_into_engine(path, chosen, store, spec)
    answers = tuple(observed.answers.values())
    if spec is None:
        return ReplayResult(path, observed.form, observed.ingested, answers)
    _refuse_steps_without_row(path, spec, spec.steps, observed)
    return ReplayResult(
        path,
        observed.form,
        observed.ingested,
        answers,
        expected=spec.path,
        steps=_step_results(spec, observed),
    )


def update_expected(
    transcript: str | Path,
    expected: str | Path,
    *,
    host: str | None = None,
    store: str = "memory://",
    environ: Mapping[str, str] = os.environ,
) -> UpdateResult:
    """Write ``expected`` from what the engine observes replaying ``transcript``.

    Refused when ``CI`` is set (to anything but empty, ``0`` or ``false``): a CI never
    rewrites its own expectations. An existing expected file must be valid (its hand-written
    views are kept), so a broken one is never clobbered.
    """
    target = Path(expected)
    if running_in_ci(environ):
        raise InputError(
            "--update refuses to run when the environment variable CI is set: a CI never "
            "rewrites its own expectations (run it locally, review the diff, commit the file)",
            path=str(target),
        )
    path = Path(transcript)
    existing = load_expected(target) if target.exists() else None
    chosen = _choose_host(host, existing)
    observed = _replay_into_engine(path, chosen, store, existing, every_row=True)
    if existing is not None:
        # Only the existing file's views are kept (its steps are written anew), so only their
        # rows must be rows of the recording.
        kept = [step for step in existing.steps if step.views]
        _refuse_steps_without_row(path, existing, kept, observed)
    written_host = None if observed.form in FORM_HOST else chosen
    document = updated_document(
        observed.lineages(),
        observed.views,
        observed.final_views,
        host=written_host,
        existing=existing,
    )
    text = dump_expected(document, path.name)
    data, lines = parse_yaml(text, target)
    validate(data, lines, target)
    if data != document:
        raise AssertionError("the expected file written would not read back the same")
    scratch = target.with_name(f".{target.name}.tmp")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, target)
    return UpdateResult(target, len(document["steps"]), len(observed.answers), transcript=path)


def _choose_host(given: str | None, spec: Expected | None) -> str | None:
    """``--host``, else the expected file's ``host:``; the two must agree when both are given."""
    if spec is None or spec.host is None:
        return given
    if given is not None and given != spec.host:
        raise InputError(
            f"--host {given} disagrees with the expected file's host: {spec.host}",
            path=str(spec.path),
            line=spec.lines.get(("host",)),
        )
    return spec.host


def _replay_into_engine(
    path: Path, host: str | None, store: str, spec: Expected | None, *, every_row: bool = False
) -> _Observed:
    """Ingest every row, keeping each row's answer and the views ``spec`` asks for."""
    from lineage_es import open_engine

    form = detect_form(path)
    _refuse_contradicted_host(path, form, host, spec)
    view_host = host or FORM_HOST.get(form)
    probes: dict[int, set[str]] = {}
    # The requester's relations are listed (every agent of its host, each related to it)
    # only at the rows a step compares them: they cost more than the rest of a row.
    related: set[int] = set()
    for step in spec.steps if spec is not None else ():
        for row in step.rows if step.views or "relations" in step.checks else ():
            probes.setdefault(row, set()).update(step.views)
            if "relations" in step.checks:
                related.add(row)
    pending = sorted(probes)
    # Checking an expected file needs only the answers of the rows it asserts (``--update``
    # needs every row's, to find where the requester changed).
    asserted = (
        None if spec is None or every_row else {row for step in spec.steps for row in step.rows}
    )
    observed = _Observed(form=form)
    # The last row whose own observation is ingested. A step is checked right after its row:
    # observations a transcript reader merges in after it (a Claude subagent file's rows, by
    # time) belong to the time before the next row, so they neither answer the row nor are
    # seen by its views.
    done = 0
    engine: Engine = open_engine(store)
    try:
        for item in _naming_progress_on_error(read_rows(path, host=host), observed):
            own = not isinstance(item, ObservationRow) or item.own
            merged = item.row == done and not own
            # Every row asked for whose moment has passed is viewed before this one goes in.
            moment = item.row + 1 if merged else item.row
            while pending and pending[0] < moment:
                row = pending.pop(0)
                _probe(engine, observed, row, probes[row], view_host, row in related)
            if item.row > observed.last_row:
                observed.ingested += 1
            if merged or (asserted is not None and item.row not in asserted):
                _ingest_row(engine, item, path, observed.ingested - 1, answer=False)
                observed.last_row = max(observed.last_row, item.row)
                continue
            answer = _ingest_row(engine, item, path, observed.ingested - 1)
            # A row is answered by its own sender when it has one; an observation made for the
            # row ahead of its own (a cleared session's end) only answers a row that has none.
            earlier = observed.answers.get(item.row)
            settled = item.row in observed.own_rows
            if (
                earlier is None
                or (own and answer.lineage is not None and not settled)
                or (not settled and earlier.lineage is None and answer.lineage is not None)
            ):
                observed.answers[item.row] = answer
                if own and answer.lineage is not None:
                    observed.own_rows.add(item.row)
            if own:
                done = item.row
            observed.last_row = max(observed.last_row, item.row)
        for row in pending:
            if row <= observed.last_row:
                _probe(engine, observed, row, probes[row], view_host, row in related)
        if spec is not None and spec.final_views is not None:
            observed.final_views = _trees_of(engine, set(spec.final_views), view_host)
    finally:
        engine.close()
    return observed


def _refuse_contradicted_host(
    path: Path, form: Form, host: str | None, spec: Expected | None
) -> None:
    """Refuse the expected file's ``host:`` when the recording's form names another host (a
    Claude transcript is ``claude``'s, a Codex rollout ``codex``'s): the expected file's line is
    at fault, not the recording."""
    implied = FORM_HOST.get(form)
    if implied is None or host is None or host == implied or spec is None or spec.host != host:
        return
    raise InputError(
        f"host: {host} contradicts the recording {path}: it is a {form}, whose host is {implied}",
        path=str(spec.path),
        line=spec.lines.get(("host",)),
    )


def _refuse_steps_without_row(
    path: Path, spec: Expected, steps: Iterable[Step], observed: _Observed
) -> None:
    """Refuse a step naming a line of the recording that holds no row: one past its end, or
    a blank line (in every form: a blank line is no row, not a row the adapter ignores).

    Only a row the replay answered without an observation, or did not answer, can be blank,
    so the recording is read again (up to the last such row) only when a step names one."""
    named = [(step, row) for step in steps for row in step.rows]
    suspects = {row for _, row in named if _may_hold_no_row(row, observed)}
    if not suspects:
        return
    blank: set[int] = set()
    last = 0  # the last line holding a row (a transcript's trailing blank lines hold none)
    limit = max(suspects)
    for number, line in scan_lines(path):
        if number > limit:
            break
        if line.strip():
            last = number if number <= observed.last_row else last
        elif number in suspects:
            blank.add(number)
    for step, row in named:
        if row in blank:
            reason = f"line {row} of the recording is blank: no row"
        elif row > observed.last_row:
            reason = f"row {row} is past the end of the recording (its last row is {last})"
        else:
            continue
        raise InputError(reason, path=str(spec.path), line=step.line)


def _may_hold_no_row(row: int, observed: _Observed) -> bool:
    """Whether ``row`` may be past the end or blank: the replay did not answer it (a blank line
    of hook payloads or of the recording form is skipped), or answered it without an
    observation (a transcript reader yields a blank line as a row observing nothing)."""
    answer = observed.answers.get(row)
    return row > observed.last_row or answer is None or answer.host is None


def _naming_progress_on_error(rows: Iterator[Row], observed: _Observed) -> Iterator[Row]:
    """The rows, with any unusable one reported with how far the replay got."""
    try:
        yield from rows
    except InputError as exc:
        raise InputError(
            f"{exc.reason} ({_ingested_so_far(observed.ingested)})", path=exc.path, line=exc.line
        ) from None


def _ingested_so_far(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''} ingested before it, nothing from this one"


def _ingest_row(
    engine: Engine, item: Row, path: Path, count: int, *, answer: bool = True
) -> RowAnswer:
    """Ingest one row; its answer (``lineage`` is left ``None`` when not ``answer``)."""
    try:
        if isinstance(item, PayloadRow):
            lineage = engine.observe(item.host, item.payload, at=item.at, answer=answer)
            return RowAnswer(item.row, "hook", item.host, lineage)
        if isinstance(item, McpRow):
            return RowAnswer(item.row, "mcp", item.host, mcp_caller(engine, item))
        assert isinstance(item, ObservationRow)
        if item.observation is None:
            return RowAnswer(item.row, "transcript", None, None)
        observation = item.observation
        lineage = engine.observe(observation.host, observation, answer=answer)
        return RowAnswer(item.row, "transcript", observation.host, lineage)
    except PayloadError as exc:
        raise InputError(
            f"{exc} ({_ingested_so_far(count)})", path=str(path), line=item.row
        ) from None


def _probe(
    engine: Engine,
    observed: _Observed,
    row: int,
    views: set[str],
    host: str | None,
    relations: bool,
) -> None:
    """Keep, as of just after ``row``, the views asked for and, when ``relations`` are
    compared there, its requester's relations."""
    observed.views[row] = _trees_of(engine, views, host)
    if relations:
        answer = observed.answers.get(row)
        observed.relations[row] = family_relations(engine, answer.lineage if answer else None)


def _trees_of(
    engine: Engine, conversations: set[str], host: str | None
) -> dict[str, LineageTree | None]:
    try:
        return {c: engine.tree_for(c, host) for c in sorted(conversations)}
    except LineageError as exc:
        raise InputError(f"cannot answer a view: {exc}; name the host with `host:`") from None


def _step_results(spec: Expected, observed: _Observed) -> tuple[StepResult, ...]:
    """Every step's result; its rows are rows of the recording (:func:`_refuse_steps_without_row`
    refused any other)."""
    results: list[StepResult] = []
    for step in spec.steps:
        mismatches: list[Mismatch] = []
        for row in step.rows:
            answer = observed.answers.get(row)
            lineage = answer.lineage if answer is not None else None
            mismatches.extend(compare_lineage(spec, step, row, lineage))
            mismatches.extend(compare_relations(spec, step, row, observed.relations.get(row)))
            for conversation, want in step.views.items():
                tree = observed.views[row][conversation]
                mismatches.extend(
                    compare_view(spec, row, ("steps", step.index), conversation, want, tree)
                )
        results.append(StepResult(step.label, step.line, step.rows, tuple(mismatches)))
    if spec.final_views is not None and observed.final_views is not None:
        mismatches = []
        for conversation, want in spec.final_views.items():
            tree = observed.final_views[conversation]
            mismatches.extend(compare_view(spec, None, ("final",), conversation, want, tree))
        results.append(StepResult("final", spec.final_line, (), tuple(mismatches)))
    return tuple(results)


__all__ = [
    "Engine",
    "Expected",
    "Mismatch",
    "ReplayResult",
    "RowAnswer",
    "StepResult",
    "UpdateResult",
    "load_expected",
    "read_rows",
    "run_replay",
    "update_expected",
]
