"""The shape of the code: dependencies run one way, config → leaderboard → scoring.engine.

What this proves: the engine and the standalone scorer import without Django (in a fresh
interpreter, ``django`` never enters ``sys.modules``) and no file under ``scoring/`` mentions
it; no module of ours imports one of ours inside a function; and the import graph between our
modules has no cycle, counting that importing ``a.b.c`` runs the ``__init__`` of ``a`` and
``a.b`` first.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from tools.imports import PACKAGES, REPO, import_graph, imported_names, our_modules, with_packages

CHECKED = (*PACKAGES, "tests")
"""Where no function imports one of our modules: the product and its tests."""


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


# --- one way to a task's community (DESIGN.md, "Tasks and subtasks") -----------------------------

COMMUNITY_MODELS = ("Team", "Membership", "Participant", "TermsAcceptance", "Announcement", "OrganiserAction")
"""The rows of a task's community: each names its task, which is never a subtask."""
COMMUNITY_FIELDS = ("organisers", "registration", "terms", "terms_version")
"""The community's fields that :class:`~leaderboard.models.Task` holds itself."""
COMMUNITY_RELATIONS = (
    "teams",
    "memberships",
    "participants",
    "terms_acceptances",
    "announcements",
    "organiser_actions",
)
NOT_TASKS = ("plan", "participant", "existing", "registration")
"""Names that hold something else with a field of the same name: an import's plan, a person's
registration (the terms version they accepted)."""
ACCESSOR_HOME = REPO / "leaderboard" / "models.py"
"""Where ``Community`` is: the one place that reads the raw fields and relations."""


def _on_community(node: ast.AST) -> bool:
    """``community`` or ``<anything>.community``."""
    return (isinstance(node, ast.Name) and node.id == "community") or (
        isinstance(node, ast.Attribute) and node.attr == "community"
    )


def _community_manager(call: ast.Call) -> str | None:
    """The community model whose rows a call asks for (``Team.objects.filter(...)...``,
    ``get_object_or_404(Team, ...)``), if any."""
    if call.args and isinstance(call.args[0], ast.Name) and call.args[0].id in COMMUNITY_MODELS:
        return call.args[0].id
    node: ast.AST = call.func
    while isinstance(node, ast.Attribute | ast.Call):
        if isinstance(node, ast.Attribute) and node.attr == "objects" and isinstance(node.value, ast.Name):
            return node.value.id if node.value.id in COMMUNITY_MODELS else None
        node = node.value if isinstance(node, ast.Attribute) else node.func
    return None


def raw_community_uses(source: str) -> list[str]:
    """Where Python code reaches a task's community without its accessor: a field of the
    community read off a task, or a community model's rows asked for by a task that is not
    ``<task>.community.task``. In the order of the source."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in COMMUNITY_FIELDS
            and not _on_community(node.value)
            and not (isinstance(node.value, ast.Name) and node.value.id in NOT_TASKS)
        ):
            found.append((node.lineno, f".{node.attr}"))
        if isinstance(node, ast.Call) and (model := _community_manager(node)):
            for keyword in node.keywords:
                name = keyword.arg or ""
                if (name == "task" or name.startswith(("task_", "task__"))) and not (
                    isinstance(keyword.value, ast.Attribute)
                    and keyword.value.attr == "task"
                    and _on_community(keyword.value.value)
                ):
                    found.append((node.lineno, f"{model} rows by {name}="))
    return [f"line {line}: {what}" for line, what in sorted(found)]


TEMPLATE_USE = re.compile(r"([\w.]+)\.(" + "|".join((*COMMUNITY_FIELDS, *COMMUNITY_RELATIONS)) + r")\b")


def raw_template_uses(text: str) -> list[str]:
    """The same in a template, where a name that does not exist renders as nothing: a field or
    relation of the community read off anything but ``<task>.community`` (or a plan, a registration)."""
    return [
        f"line {text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        for match in TEMPLATE_USE.finditer(text)
        if match.group(1).split(".")[-1] not in ("community", *NOT_TASKS)
    ]


def test_the_checks_of_the_community_find_each_raw_use() -> None:
    assert raw_community_uses("Team.objects.filter(task=task.root, name='x')") == ["line 1: Team rows by task="]
    assert raw_community_uses("Membership.objects.select_related('user').filter(task_id=phase.task_id)") != []
    assert raw_community_uses("Participant.objects.get_or_create(task=task, user=user)") != []
    assert raw_community_uses("get_object_or_404(Team, task=task, pk=pk)") == ["line 1: Team rows by task="]
    assert raw_community_uses("get_object_or_404(task.community.teams, pk=pk)\nisinstance(row, Team)") == []
    assert raw_community_uses("task.root.organisers.add(user)\nx = phase.task.terms_version") == [
        "line 1: .organisers",
        "line 2: .terms_version",
    ]
    assert raw_community_uses("Team.objects.create(task=task.community.task, name=n)") == []
    assert raw_community_uses("Team.objects.select_for_update().get(pk=team.pk)") == []
    assert raw_community_uses("c = task.community\nc.organisers.add(u)\nx = c.terms\ny = plan.terms") != []
    assert raw_community_uses("community = task.community\ncommunity.organisers.add(u)\nplan.terms") == []
    assert raw_template_uses("{{ task.teams.all|length }}\n{% if task.root.terms %}") == [
        "line 1: task.teams",
        "line 2: task.root.terms",
    ]
    shown = "{{ task.community.terms }} {{ plan.teams|length }} {{ registration.terms_version }}"
    assert raw_template_uses(shown) == []


def test_the_community_is_reached_only_through_its_accessor() -> None:
    """``task.teams``-style access would read a subtask's own (empty) community: code outside
    ``Community`` reaches it as ``task.community`` (and the relations back from a task do not
    exist: tests/leaderboard/test_community.py)."""
    found = [
        f"{path.relative_to(REPO)} {use}"
        for path in sorted((REPO / "leaderboard").rglob("*.py"))
        if "migrations" not in path.parts and path != ACCESSOR_HOME
        for use in raw_community_uses(path.read_text())
    ]
    found += [
        f"{path.relative_to(REPO)} {use}"
        for path in sorted((REPO / "templates").rglob("*.html"))
        for use in raw_template_uses(path.read_text())
    ]
    assert found == []
