"""The shape of the code: dependencies run one way, config → leaderboard → scoring.engine.

What this proves: the engine and the standalone scorer import without Django (in a fresh
interpreter, ``django`` never enters ``sys.modules``) and no file under ``scoring/`` mentions
it; no module of ours imports one of ours inside a function; and the import graph between our
modules has no cycle, counting that importing ``a.b.c`` runs the ``__init__`` of ``a`` and
``a.b`` first.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "leaderboard", "scoring")
CHECKED = (*PACKAGES, "tests")
"""Where no function imports one of our modules: the product and its tests."""


def our_modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    modules = {}
    for package in packages:
        for path in sorted((REPO / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imported_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


def is_ours(name: str) -> bool:
    return name.split(".")[0] in (*PACKAGES, "tests", "tools")


def test_engine_and_cli_import_without_django() -> None:
    engine = sorted(name for name in our_modules() if name.startswith("scoring"))
    code = (
        "import importlib, sys\n"
        f"for name in {engine!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "print(len(loaded), loaded[:5])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []", result.stdout
    assert "scoring.__main__" in engine and "scoring.engine.columns" in engine


def test_no_file_under_scoring_mentions_django() -> None:
    mentions = [
        f"{path.relative_to(REPO)}:{number}"
        for path in (REPO / "scoring").rglob("*")
        if path.is_file() and path.suffix == ".py"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if "django" in line.lower()
    ]
    assert mentions == []


def test_no_function_imports_one_of_our_modules() -> None:
    local = []
    for name, path in our_modules(CHECKED).items():
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                for node in ast.walk(function):
                    if any(is_ours(imported) for imported in imported_names(node)):
                        local.append(f"{name}.{function.name} (line {node.lineno})")
    assert local == []


def with_packages(name: str) -> list[str]:
    """``name`` and the packages Python imports first to import it: ``a.b.c`` runs ``a`` and
    ``a.b`` (their ``__init__``) before ``a.b.c``, so an import of it depends on them too."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def import_graph() -> dict[str, set[str]]:
    modules = our_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            for imported in imported_names(node):
                for target in with_packages(imported):
                    if target in modules and target != name:
                        graph[name].add(target)
    return graph


def cycles_of(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle a depth-first walk of ``graph`` meets (empty for an acyclic graph)."""
    state: dict[str, str] = {}
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                cycles.append([*path[path.index(target) :], target] if target in path else [node, target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = "done"

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return cycles


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles_of({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert with_packages("leaderboard.services.scoring") == [
        "leaderboard",
        "leaderboard.services",
        "leaderboard.services.scoring",
    ]
    assert cycles_of(import_graph()) == []


def test_a_package_that_re_exports_its_modules_is_seen_in_a_cycle() -> None:
    """The cycle the graph once hid: a module imports a sibling, whose package's ``__init__``
    imports every module of the package, the first one included."""
    graph = {
        "pkg": {"pkg.a", "pkg.b"},
        "pkg.a": {"pkg", "pkg.b"},  # what import_graph records for `from pkg.b import f` in pkg.a
        "pkg.b": {"pkg"},
    }
    assert cycles_of(graph) != []


@pytest.mark.parametrize(
    ("lower", "upper"), [("scoring", "leaderboard"), ("scoring", "config"), ("leaderboard", "config")]
)
def test_dependencies_run_one_way(lower: str, upper: str) -> None:
    backwards = sorted(
        f"{name} → {target}"
        for name, targets in import_graph().items()
        if name.split(".")[0] == lower
        for target in targets
        if target.split(".")[0] == upper
    )
    assert backwards == []
