"""tools/shape.py finds what breaks the promised shape in small synthetic trees: long modules
and classes, import cycles (through imports inside functions and under TYPE_CHECKING too) and
test modules importing test modules; a clean tree passes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from tools import shape

SCRIPT = Path(shape.__file__)


def tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


def package_name() -> str:
    """A fresh name, so the import system has no earlier answer for it."""
    return f"shapepkg_{uuid.uuid4().hex[:12]}"


def run(root: Path, package: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = shape.main(["--root", str(root), "--package", package])
    return code, capsys.readouterr().out


def clean_package(root: Path, package: str) -> None:
    tree(
        root,
        {
            f"{package}/__init__.py": "",
            f"{package}/values.py": "LIMIT = 3\n",
            f"{package}/use.py": f"""\
                from {package}.values import LIMIT


                def twice() -> int:
                    from {package} import values

                    return LIMIT + values.LIMIT
                """,
        },
    )


def test_a_clean_tree_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    package = package_name()
    clean_package(tmp_path, package)
    tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/conftest.py": "import pytest\n",
            "tests/test_use.py": f"import json\n\nfrom {package}.use import twice\n",
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 0
    assert "violations: 0" in out
    assert "modules: 3," in out
    assert "import cycles (imports in functions and under TYPE_CHECKING included): 0" in out
    assert "test modules: 3; imports of a test module: 0 statements" in out


def test_a_cycle_through_a_function_level_import_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = package_name()
    tree(
        tmp_path,
        {
            f"{package}/__init__.py": "",
            f"{package}/a.py": f"from {package} import b\n",
            f"{package}/b.py": f"""\
                def late() -> object:
                    from {package}.a import b

                    return b
                """,
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 1
    assert f"import cycle: {package}.a -> {package}.b -> {package}.a" in out.splitlines()[-1]
    assert "violations: 1" in out


def test_a_cycle_under_type_checking_is_found_as_a_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = package_name()
    tree(
        tmp_path,
        {
            f"{package}/__init__.py": "",
            f"{package}/one.py": f"from {package}.two import TWO\n",
            f"{package}/two.py": f"from {package}.three import THREE\n\nTWO = 2\n",
            f"{package}/three.py": f"""\
                from typing import TYPE_CHECKING

                if TYPE_CHECKING:
                    from {package}.one import ONE
                THREE = 3
                """,
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 1
    chain = " -> ".join(f"{package}.{name}" for name in ("one", "two", "three", "one"))
    assert f"  import cycle: {chain}" in out.splitlines()
    assert "1, joining 3 modules in 1 groups" in out


def test_a_long_class_and_a_long_module_are_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = package_name()
    body = "".join(f"    field_{n} = {n}\n" for n in range(399))
    tree(
        tmp_path,
        {
            f"{package}/__init__.py": "",
            # 1 + 399 lines: at the limit, not over it.
            f"{package}/fits.py": "class Fits:\n" + body,
            # 1 + 400 lines in a class nested in a function, then padding past 500 lines.
            f"{package}/long.py": "def make() -> None:\n    class Long:\n"
            + "".join(f"        field_{n} = {n}\n" for n in range(400))
            + "\n" * 100,
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 1
    assert f"class over 400 lines: {package}/long.py:2 make.<locals>.Long (401)" in out
    assert f"module over 500 lines: {package}/long.py (502)" in out
    assert "Fits" not in out.split("violations:")[1]
    assert f"{package}/fits.py" not in out.split("violations:")[1]


@pytest.mark.parametrize(
    ("source", "line", "module"),
    [
        ("from tests.test_other import VALUE\n", 3, "tests.test_other (VALUE)"),
        ("from tests import test_other\n", 3, "tests (test_other)"),
        ("import tests.test_other\n", 3, "tests.test_other"),
        ("from . import test_other\n", 3, "tests (test_other)"),
        ("from .test_other import VALUE\n", 3, "tests.test_other (VALUE)"),
        ("from tests.conftest import REPO\n", 3, "tests.conftest (REPO)"),
        ("from conftest import REPO\n", 3, "conftest (REPO)"),
        ("import helpers\n", 3, "helpers"),
        ("def late() -> None:\n    from tests.helpers import Feed\n", 4, "tests.helpers (Feed)"),
        ("import importlib\n\nimportlib.import_module('tests.helpers')\n", 5, "tests.helpers"),
    ],
)
def test_a_test_module_importing_another_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, line: int, module: str
) -> None:
    package = package_name()
    clean_package(tmp_path, package)
    tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/conftest.py": "REPO = 1\n",
            "tests/helpers.py": "Feed = 1\n",
            "tests/test_other.py": "VALUE = 1\n",
            "tests/test_importing.py": f"import pytest\n\n{source}",
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 1
    violation = f"tests/test_importing.py:{line} imports {module}"
    assert out.splitlines()[-1] == f"  test module imports a test module: {violation}"
    assert "violations: 1" in out


def test_a_nested_test_package_reaching_a_sibling_helper_is_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = package_name()
    clean_package(tmp_path, package)
    tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/slow/__init__.py": "",
            "tests/slow/streams.py": "STREAM = 1\n",
            "tests/slow/test_crash.py": "from ..slow.streams import STREAM\n",
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 1
    assert "tests/slow/test_crash.py:1 imports tests.slow.streams (STREAM)" in out


def test_a_test_module_may_import_the_support_package(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    package = package_name()
    clean_package(tmp_path, package)
    tree(
        tmp_path,
        {
            "tests/__init__.py": "",
            "tests/support/__init__.py": "",
            "tests/support/feed.py": "Feed = 1\n",
            "tests/slow/__init__.py": "",
            "tests/slow/test_crash.py": (
                "from tests.support.feed import Feed\nfrom tests.support import feed\n"
            ),
        },
    )
    code, out = run(tmp_path, package, capsys)
    assert code == 0, out
    assert "imports a test module" not in out


def test_a_root_without_the_package_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="is not importable from"):
        shape.main(["--root", str(tmp_path), "--package", package_name()])


def test_the_script_exits_1_listing_each_violation(tmp_path: Path) -> None:
    package = package_name()
    tree(
        tmp_path,
        {
            f"{package}/__init__.py": f"def load() -> None:\n    from {package} import part\n",
            f"{package}/part.py": f"import {package}\n",
            "tests/test_a.py": "from tests.test_b import B\n",
            "tests/test_b.py": "B = 1\n",
        },
    )
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(tmp_path), "--package", package],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-3:] == [
        "violations: 2",
        f"  import cycle: {package} -> {package}.part -> {package}",
        "  test module imports a test module: tests/test_a.py:1 imports tests.test_b (B)",
    ]
