"""The import graph of the product's own modules, read from their source (never imported).

``tests/test_architecture.py`` holds the graph to the architecture's rules (one way, no cycle);
the manual draws it (``tools/manual.py``). No Django here.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "leaderboard", "scoring")


def our_modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of ``packages`` by its dotted name (a package by its own), migrations left out."""
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
    """What an import statement names: ``from a.b import c`` names ``a.b`` and ``a.b.c``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return []


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def statements(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every statement of ``tree``, nested ones included (in functions, classes, branches,
    handlers): where an import can stand, without visiting the expressions."""
    pending = list(getattr(tree, "body", []))
    while pending:
        statement = pending.pop()
        yield statement
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            pending.extend(getattr(statement, name, ()))


def with_packages(name: str) -> list[str]:
    """``name`` and the packages Python imports first to import it: ``a.b.c`` runs ``a`` and
    ``a.b`` (their ``__init__``) before ``a.b.c``, so an import of it depends on them too."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def import_graph() -> dict[str, set[str]]:
    """Each module of ours and the modules of ours it imports."""
    modules = our_modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in statements(parsed(path)):
            for imported in imported_names(node):
                for target in with_packages(imported):
                    if target in modules and target != name:
                        graph[name].add(target)
    return graph
