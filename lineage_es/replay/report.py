"""Reports of a replay: text for people, JSON for tools, JUnit XML for CI dashboards.

Ids are always printed quoted and escaped (a Cursor id can hold a newline), never raw.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any, Literal

from lineage_es.model import AgentLineage, to_json
from lineage_es.replay import ReplayResult, RowAnswer, StepResult, UpdateResult
from lineage_es.replay.expected import Mismatch, render_value

Format = Literal["text", "json", "junit"]
FORMATS: tuple[Format, ...] = ("text", "json", "junit")


def render(result: ReplayResult, fmt: Format) -> str:
    """``result`` in the chosen format."""
    if fmt == "json":
        return render_json(result)
    if fmt == "junit":
        return render_junit(result)
    return render_text(result)


# -- text --------------------------------------------------------------------------------------


def render_text(result: ReplayResult) -> str:
    """Without an expected file, every row's answer; with one, each failing step's diff and a
    one-line summary."""
    if result.expected is None:
        lines = [_row_text(answer) for answer in result.answers]
        return "\n".join(
            [*lines, f"{_counted(len(result.answers), 'row')} replayed from {result.transcript}"]
        )
    blocks = [_step_text(result, step) for step in result.failed]
    held = len(result.steps) - len(result.failed)
    summary = (
        f"{'ok' if result.ok else 'FAILED'}: {held} of {_counted(len(result.steps), 'step')} held "
        f"({result.transcript} against {result.expected})"
    )
    return "\n\n".join([*blocks, summary])


def _step_text(result: ReplayResult, step: StepResult) -> str:
    where = f" ({result.expected}:{step.line})" if step.line else ""
    lines = [f"FAIL {step.label}{where}"]
    for mismatch in step.mismatches:
        lines.append(_mismatch_text(result, mismatch))
    return "\n".join(lines)


def _mismatch_text(result: ReplayResult, mismatch: Mismatch) -> str:
    row = f"row {mismatch.row}" if mismatch.row is not None else "after the last row"
    where = f" (expected at {result.expected}:{mismatch.line})" if mismatch.line else ""
    head = f"  {row}, {mismatch.perspective}: {mismatch.path}{where}"
    if mismatch.diff:
        return "\n".join([head, *(f"    {line}" for line in mismatch.diff)])
    return "\n".join(
        [
            head,
            f"    expected: {render_value(mismatch.expected)}",
            f"    observed: {render_value(mismatch.observed)}",
        ]
    )


def _row_text(answer: RowAnswer) -> str:
    head = f"row {answer.row} ({answer.kind})"
    lineage = answer.lineage
    if lineage is None:
        return f"{head}: no requester"
    parts = [
        f"{head} {answer.host or lineage.host or '?'} {_quoted_id(lineage.conversation)}:",
        f"root {_quoted_id(lineage.root)}",
        f"parent {_quoted_id(lineage.parent)}",
        f"depth {lineage.depth}",
        lineage.resolution,
    ]
    if lineage.subagent is not None:
        parts.append(f"subagent {render_value(to_json(lineage.subagent))}")
    return " ".join(parts) + "\n    " + _tree_text(lineage)


def _tree_text(lineage: AgentLineage) -> str:
    if lineage.tree is None:
        return "tree: none"
    lists = (
        f"{key} [{', '.join(_quoted_id(p.conversation) for p in getattr(lineage.tree, key))}]"
        for key in ("siblings", "children", "roots")
    )
    return "tree: " + "  ".join(lists)


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _quoted_id(value: str | None) -> str:
    return "none" if value is None else json.dumps(value, ensure_ascii=False)


# -- JSON --------------------------------------------------------------------------------------


def render_json(result: ReplayResult) -> str:
    """The result as one JSON document: each step and its mismatches; without an expected file,
    each row's answer instead."""
    document: dict[str, Any] = {
        "transcript": str(result.transcript),
        "form": result.form,
        "expected": None if result.expected is None else str(result.expected),
        "ok": result.ok,
    }
    if result.expected is None:
        document["rows"] = [
            {"row": a.row, "kind": a.kind, "host": a.host, "lineage": to_json(a.lineage)}
            for a in result.answers
        ]
    else:
        document["steps"] = [_step_json(step) for step in result.steps]
    return json.dumps(document, ensure_ascii=False, indent=2)


def _step_json(step: StepResult) -> dict[str, Any]:
    return {
        "label": step.label,
        "line": step.line,
        "rows": list(step.rows),
        "ok": step.ok,
        "mismatches": [
            {
                "row": m.row,
                "perspective": m.perspective,
                "path": m.path,
                "expected": m.expected,
                "observed": m.observed,
                "line": m.line,
                "diff": list(m.diff),
            }
            for m in step.mismatches
        ],
    }


# -- JUnit -------------------------------------------------------------------------------------


def render_junit(result: ReplayResult) -> str:
    """JUnit XML: one test case per step of the expected file, each failure with its diff."""
    suite = _junit_suite(
        str(result.transcript), tests=len(result.steps), failures=len(result.failed)
    )
    for step in result.steps:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=result.transcript.name,
            name=step.label,
            file=str(result.expected),
            line=str(step.line or 0),
        )
        if not step.ok:
            failure = ET.SubElement(
                case, "failure", message=f"{_counted(len(step.mismatches), 'expectation')} failed"
            )
            failure.text = "\n".join(_mismatch_text(result, m) for m in step.mismatches)
    return _junit_xml(suite)


def render_error(message: str, fmt: Format, transcript: str = "") -> str:
    """An unusable input in the chosen format, so a CI report still says what went wrong."""
    if fmt == "json":
        return json.dumps({"transcript": transcript, "ok": False, "error": message}, indent=2)
    if fmt == "junit":
        suite = _junit_suite(transcript, tests=1, errors=1)
        case = ET.SubElement(suite, "testcase", classname=transcript, name="replay")
        error = ET.SubElement(case, "error", message="unusable input")
        error.text = message
        return _junit_xml(suite)
    return f"lineage-replay: error: {message}"


def render_update(update: UpdateResult, fmt: Format) -> str:
    """What ``--update`` wrote."""
    if fmt == "json":
        return json.dumps(
            {"updated": str(update.expected), "steps": update.steps, "rows": update.rows},
            indent=2,
        )
    steps, rows = _counted(update.steps, "step"), _counted(update.rows, "row")
    summary = f"wrote {update.expected}: {steps} from {rows}"
    if fmt == "junit":
        transcript = "" if update.transcript is None else str(update.transcript)
        suite = _junit_suite(transcript, tests=1)
        case = ET.SubElement(
            suite,
            "testcase",
            classname=update.transcript.name if update.transcript is not None else "",
            name=f"update {update.expected}",
            file=str(update.expected),
        )
        ET.SubElement(case, "system-out").text = summary
        return _junit_xml(suite)
    return summary


def _junit_suite(name: str, *, tests: int, failures: int = 0, errors: int = 0) -> ET.Element:
    return ET.Element(
        "testsuite",
        name=f"lineage-replay {name}",
        tests=str(tests),
        failures=str(failures),
        errors=str(errors),
    )


def _junit_xml(suite: ET.Element) -> str:
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
