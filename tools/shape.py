"""Measure the shape the code base promises, and fail when it breaks.

For a source tree (by default this repository) it checks that:

- no module of the package (``lineage_es``) is over 500 lines;
- no class in the package is over 400 lines (``end_lineno - lineno + 1`` of its ``ast`` node);
- no import cycle joins the package's modules, counting imports made inside functions and
  under ``TYPE_CHECKING`` (grimp's graph, the one import-linter checks, includes both); each
  cycle is reported as a chain of modules;
- no module under ``tests/`` imports another module under ``tests/``: not through
  ``tests.…``, not through a relative import, not through a bare name that the test runner's
  path insertion would find beside it (``conftest``, ``helpers``), not through
  ``importlib.import_module`` with a literal name. Tests share data through fixtures, and code
  (payload builders, file writers) through the support package ``tests/support/``, which is
  no test module: importing it is the one import under ``tests/`` allowed.

It prints a report with the numbers and exits 1 listing each violation (0 when there is none).
Usage::

    python tools/shape.py                       # this checkout
    python tools/shape.py --root /tmp/before    # another checkout of the same project
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grimp

MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 400
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ModuleSize:
    path: str
    lines: int


@dataclass(frozen=True)
class ClassSize:
    path: str
    line: int
    name: str
    lines: int


@dataclass(frozen=True)
class CrossTestImport:
    path: str
    line: int
    module: str
    names: tuple[str, ...]

    def __str__(self) -> str:
        taken = f" ({', '.join(self.names)})" if self.names else ""
        return f"{self.path}:{self.line} imports {self.module}{taken}"


@dataclass(frozen=True)
class Shape:
    """What was measured in one tree, and which of it breaks the limits."""

    root: Path
    package: str
    modules: list[ModuleSize]
    classes: list[ClassSize]
    cycles: list[tuple[str, ...]]
    test_modules: int
    test_imports: list[CrossTestImport]

    def violations(self) -> list[str]:
        found = [
            f"module over {MAX_MODULE_LINES} lines: {module.path} ({module.lines})"
            for module in self.modules
            if module.lines > MAX_MODULE_LINES
        ]
        found += [
            f"class over {MAX_CLASS_LINES} lines: {cls.path}:{cls.line} {cls.name} ({cls.lines})"
            for cls in self.classes
            if cls.lines > MAX_CLASS_LINES
        ]
        found += ["import cycle: " + " -> ".join((*cycle, cycle[0])) for cycle in self.cycles]
        found += [f"test module imports a test module: {hit}" for hit in self.test_imports]
        return found


def python_files(directory: Path) -> list[Path]:
    return sorted(path for path in directory.rglob("*.py") if "__pycache__" not in path.parts)


def relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def module_sizes(root: Path, package: str) -> list[ModuleSize]:
    return [
        ModuleSize(relative(path, root), len(path.read_text(encoding="utf-8").splitlines()))
        for path in python_files(root / package)
    ]


def class_sizes(root: Path, package: str) -> list[ClassSize]:
    """Every class of the package, nested ones under their dotted qualified name."""
    sizes: list[ClassSize] = []

    def visit(node: ast.AST, path: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                end = child.end_lineno if child.end_lineno is not None else child.lineno
                sizes.append(ClassSize(path, child.lineno, name, end - child.lineno + 1))
                visit(child, path, name + ".")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, path, f"{prefix}{child.name}.<locals>.")
            else:
                visit(child, path, prefix)

    for path in python_files(root / package):
        visit(parse(path), relative(path, root), "")
    return sizes


def import_graph(root: Path, package: str) -> grimp.ImportGraph:
    """grimp's graph of ``package`` as it lies under ``root``, not as it is installed.

    grimp finds the package through the import system, so ``root`` goes first on ``sys.path``
    for the time of the build (the editable install's finder comes after the path finder).
    """
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        spec = importlib.util.find_spec(package)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
        if origin is None or not origin.is_relative_to(root.resolve()):
            raise SystemExit(f"shape: {package} is not importable from {root} (found {origin})")
        return grimp.build_graph(package, cache_dir=None)
    finally:
        sys.path.remove(str(root))


def import_cycles(graph: grimp.ImportGraph) -> list[tuple[str, ...]]:
    """The shortest cycle through each import that lies on a cycle, one entry per cycle.

    Every import inside a strongly connected group lies on some cycle, so these cycles cover
    every import there is to untangle, without listing the exponentially many longer ones.
    Each cycle starts at its smallest module name, so a cycle found from two imports is one.
    """
    cycles: set[tuple[str, ...]] = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported == importer:
                continue
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycle = (importer, *back[:-1])
                start = cycle.index(min(cycle))
                cycles.add(cycle[start:] + cycle[:start])
    return sorted(cycles, key=lambda cycle: (len(cycle), cycle))


def cycle_groups(cycles: Sequence[tuple[str, ...]]) -> list[set[str]]:
    """Modules joined by cycles, merged into their strongly connected groups."""
    groups: list[set[str]] = []
    for cycle in cycles:
        members = set(cycle)
        for group in [group for group in groups if group & members]:
            members |= group
            groups.remove(group)
        groups.append(members)
    return groups


def dotted_name(path: Path, root: Path) -> tuple[list[str], bool]:
    """A file's module name as parts, and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        return parts[:-1], True
    return parts, False


def local_names(path: Path, tests: Path) -> set[str]:
    """Top-level names that a bare import in ``path`` could find under ``tests``.

    pytest's default import mode puts a test file's directory (or the first one up without an
    ``__init__.py``) on ``sys.path``, so ``import helpers`` can reach a neighbour; ``conftest``
    is always one of them.
    """
    names = {"conftest"}
    directory = path.parent
    while directory.is_relative_to(tests):
        for entry in directory.iterdir():
            if entry.suffix == ".py":
                names.add(entry.stem)
            elif (entry / "__init__.py").is_file():
                names.add(entry.name)
        if directory == tests:
            break
        directory = directory.parent
    names.discard("__init__")
    return names


def imported_modules(
    tree: ast.Module, package: list[str]
) -> Iterator[tuple[int, str, tuple[str, ...], bool]]:
    """Each import statement of a module as (line, module, names taken from it, relative?).

    A relative module is resolved against ``package``. ``importlib.import_module`` and
    ``__import__`` called with a literal string count as imports too.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, (), False
        elif isinstance(node, ast.ImportFrom):
            names = tuple(alias.name for alias in node.names)
            if node.level:
                base = package[: max(len(package) - (node.level - 1), 0)]
                module = ".".join([*base, *([node.module] if node.module else [])])
                yield node.lineno, module, names, True
            else:
                yield node.lineno, node.module or "", names, False
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in {"importlib.import_module", "import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            name = node.args[0].value
            yield node.lineno, name, (), name.startswith(".")


def tests_importing_tests(root: Path, tests: str) -> tuple[int, list[CrossTestImport]]:
    """How many modules lie under ``tests``, and each import statement of one reaching another."""
    tests_dir = root / tests
    files = python_files(tests_dir) if tests_dir.is_dir() else []
    found: list[CrossTestImport] = []
    support = f"{tests}.support"
    for path in files:
        parts, is_package = dotted_name(path, root)
        package = parts if is_package else parts[:-1]
        local = local_names(path, tests_dir)
        for line, module, names, is_relative in imported_modules(parse(path), package):
            top = module.split(".", 1)[0]
            if module == support or module.startswith(support + "."):
                continue  # the support package: shared code, not a test module
            if is_relative or top == tests or top in local:
                found.append(CrossTestImport(relative(path, root), line, module, names))
    return len(files), sorted(found, key=lambda hit: (hit.path, hit.line))


def measure(root: Path, package: str = "lineage_es", tests: str = "tests") -> Shape:
    tests_count, test_imports = tests_importing_tests(root, tests)
    return Shape(
        root=root,
        package=package,
        modules=module_sizes(root, package),
        classes=class_sizes(root, package),
        cycles=import_cycles(import_graph(root, package)),
        test_modules=tests_count,
        test_imports=test_imports,
    )


def report(shape: Shape) -> list[str]:
    modules, classes, cycles = shape.modules, shape.classes, shape.cycles
    largest_module = max(modules, key=lambda module: module.lines)
    lines = [
        f"shape of {shape.package} in {shape.root}",
        f"  modules: {len(modules)}, {sum(module.lines for module in modules)} lines; "
        f"largest {largest_module.path} ({largest_module.lines}); "
        f"over {MAX_MODULE_LINES}: {sum(module.lines > MAX_MODULE_LINES for module in modules)}",
    ]
    if classes:
        largest_class = max(classes, key=lambda cls: cls.lines)
        lines.append(
            f"  classes: {len(classes)}; largest {largest_class.name} in {largest_class.path} "
            f"({largest_class.lines}); "
            f"over {MAX_CLASS_LINES}: {sum(cls.lines > MAX_CLASS_LINES for cls in classes)}"
        )
    else:
        lines.append("  classes: 0")
    groups = cycle_groups(cycles)
    joined = (
        f", joining {sum(len(group) for group in groups)} modules in {len(groups)} groups"
        if groups
        else ""
    )
    lines.append(
        "  import cycles (imports in functions and under TYPE_CHECKING included): "
        f"{len(cycles)}{joined}"
    )
    importers = {hit.path for hit in shape.test_imports}
    lines.append(
        f"  test modules: {shape.test_modules}; imports of a test module: "
        f"{len(shape.test_imports)} statements, in {len(importers)} modules"
    )
    violations = shape.violations()
    lines.append(f"violations: {len(violations)}")
    lines += [f"  {violation}" for violation in violations]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0] if __doc__ else "")
    parser.add_argument("--root", type=Path, default=REPO, help="the checkout to measure")
    parser.add_argument("--package", default="lineage_es", help="the package under --root")
    parser.add_argument("--tests", default="tests", help="the tests directory under --root")
    options = parser.parse_args(argv)
    shape = measure(options.root.resolve(), options.package, options.tests)
    print("\n".join(report(shape)))
    return 1 if shape.violations() else 0


if __name__ == "__main__":
    sys.exit(main())
