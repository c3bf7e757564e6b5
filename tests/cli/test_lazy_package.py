"""``import lineage_es`` (every process's first import, a hook's included) builds no answer
class: the package names them, and loads :mod:`lineage_es.model` when one is first asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

import lineage_es
from lineage_es import model


def loaded_after(code: str) -> set[str]:
    """The modules a new process had imported after running ``code``."""
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(*sys.modules, sep='\\n')"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(done.stdout.split())


def test_importing_the_package_builds_neither_answers_nor_facts() -> None:
    loaded = loaded_after("import lineage_es")
    assert not loaded & {"lineage_es.model", "lineage_es.facts", "dataclasses"}


@pytest.mark.parametrize(
    "name",
    [
        "AgentLineage",
        "Chain",
        "ForestNode",
        "LineageTree",
        "Member",
        "Peer",
        "Provenance",
        "Subagent",
    ],
)
def test_the_package_names_each_answer_class_of_the_model(name: str) -> None:
    assert getattr(lineage_es, name) is getattr(model, name)


def test_every_name_the_package_exports_resolves() -> None:
    missing = [name for name in lineage_es.__all__ if not hasattr(lineage_es, name)]
    assert missing == []
