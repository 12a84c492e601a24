"""The manual's pages written from the code, and the checks of what its other pages name.

What this proves: the command-line reference lists every option of the scorer, the client and
each of the product's ``manage.py`` commands (and none of Django's own); the API reference every
path, method and schema of the OpenAPI schema; the metric catalogue every metric of the
registry, raw and calibrated, each with its formula as MathML; the settings page every variable
the settings read from the environment; the module map every module, with an import that goes up
a layer drawn red; a generated-page marker is replaced and an unknown one refused; each kind of
reference that names nothing (a path, a module, a setting, a demo address, an option, a command,
a ``make`` target) is reported with its line, and the README and every page of ``docs/`` name
only what exists.
"""

from __future__ import annotations

import argparse
import re

import pytest

from client import leaderboard_client
from scoring import __main__ as scorer
from scoring.engine.registry import CLASS_MEASURES, ITEM_METRICS, suite_metrics
from tools import manual
from tools.imports import REPO, our_modules


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return {
        option
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction)
        for option in action.option_strings
    }


def test_the_scorer_s_reference_lists_every_option() -> None:
    page = manual.scorer_reference()
    assert option_strings(scorer.parser()) <= set(re.findall(r"`(--?[\w-]+)`", page))
    assert "`--bootstrap-replicates`" in page and "`REPLICATES`" in page  # an option and its value's name


def test_the_client_s_reference_lists_every_command_and_option() -> None:
    page = manual.client_reference()
    assert "### `submit`" in page and "### `board`" in page
    assert {"--per-page", "--calibrated", "--wait", "--url", "--token"} <= set(re.findall(r"`(--[\w-]+)`", page))
    assert option_strings(leaderboard_client.parser()) <= set(re.findall(r"`(--?[\w-]+)`", page))


def test_each_product_command_is_listed_with_its_own_options_only() -> None:
    page = manual.commands_reference()
    for name in ("import_task", "export_task", "export_runs", "import_submissions", "load_demo", "rescore_pending"):
        assert f"### `{name}`" in page
    assert "`--first-opens`" in page and "`--dry-run`" in page
    table_rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert not any("`--verbosity`" in row or "`--settings`" in row for row in table_rows)


def test_the_api_reference_covers_the_schema() -> None:
    page = manual.api_reference()
    schema = manual.openapi()
    for path, operations in schema["paths"].items():
        for method in operations:
            assert f"### {method.upper()} `{path}`" in page
    for name in schema["components"]["schemas"]:
        assert f"### {name}" in page
    assert "`per_page`" in page and "≤ 1000" in page  # a parameter and its bound


def test_the_catalogue_holds_every_metric_raw_and_calibrated_with_its_formula() -> None:
    page = manual.metric_catalogue()
    entries = [*suite_metrics(ordinal=True), *CLASS_MEASURES, *ITEM_METRICS]
    for metric in suite_metrics(ordinal=True):
        assert f"`{metric.key}` (raw) and `{metric.key}_c` (calibrated)" in page
        assert f"### {metric.name} ({metric.symbol})" in page
    for measure in CLASS_MEASURES:
        assert f"`{measure.key}[LABEL]` (raw)" in page
    assert page.count("<math ") == len(entries) + 1  # each formula, and calibration's
    assert "lower is better (an error)" in page  # the ordinal errors
    for metric in ITEM_METRICS:  # a task with several outputs: no calibrated twin
        assert f"### {metric.name} ({metric.symbol})" in page
        assert f"Column id `{metric.key}` (no calibrated twin)" in page


def test_the_settings_page_lists_every_variable_the_settings_read() -> None:
    page = manual.settings_reference()
    read = set()
    for relative in manual.SETTINGS_FILES:
        read |= set(re.findall(r'(?:environ\.get|env_bool|env_list)\(\s*"([A-Z_]+)"', (REPO / relative).read_text()))
    assert read and {f"`{name}`" for name in read} <= set(re.findall(r"`[A-Z_]+`", page))
    assert "| `MAX_FILE_ROWS` | `2000000` |" in page  # the default as written


def test_the_module_map_shows_every_module_and_no_import_going_up() -> None:
    page = manual.module_map()
    assert page.startswith("<svg") and "\n\n" not in page.split("</svg>")[0]  # one HTML block
    for name in our_modules():
        assert f"`{name}`" in page
    assert 'class="edge up"' not in page


def test_an_import_that_goes_up_a_layer_is_drawn_red(monkeypatch) -> None:
    monkeypatch.setattr(manual, "group_imports", lambda: {("scoring.engine", "models"): 1})
    assert 'class="edge up"' in manual.module_picture()


def test_a_marker_is_replaced_by_its_page_and_an_unknown_one_refused() -> None:
    filled = manual.fill("before\n<!-- generated: upload-format -->\nafter")
    assert filled.startswith("before\n") and filled.endswith("\nafter") and "id,negative,neutral,positive" in filled
    assert "id,label" in filled and "<!--" not in filled
    with pytest.raises(KeyError, match="no generator 'nothing'"):
        manual.fill("<!-- generated: nothing -->")


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("see `leaderboard/nowhere.py`", "`leaderboard/nowhere.py`: no such file"),
        ("see `tests/leaderboard/test_nothing_*.py`", "no such file"),
        ("see `leaderboard.stability.no_such_name`", "no such module, or no such name"),
        ("see `leaderboard.nowhere`", "no such module"),
        ("set `NO_SUCH_SETTING`", "named nowhere in the product's code"),
        ("open http://127.0.0.1:8000/nowhere/", "no page of the product answers"),
        ("open http://127.0.0.1:8000/tasks/another-task/", "the demo has no task 'another-task'"),
        ("python -m scoring gold.csv run.csv --no-such-option", "`python -m scoring` has no option `--no-such-option`"),
        ("python manage.py import_task b.zip --no-such-option", "has no option `--no-such-option`"),
        ("python manage.py no_such_command", "`manage.py no_such_command`: no such command"),
        ("python leaderboard_client.py board t --no-such-option", "has no option `--no-such-option`"),
        ("run `make no-such-target`", "`make no-such-target`: no such target"),
    ],
)
def test_each_kind_of_stale_reference_is_reported_with_its_line(line: str, problem: str) -> None:
    ((number, found),) = manual.stale_references("a line that is fine\n" + line)
    assert number == 2 and problem in found


def test_references_that_exist_are_not_reported() -> None:
    text = "\n".join(
        [
            "`leaderboard/samples.py`, `tests/leaderboard/test_*.py`, `leaderboard.derived.sweep`",
            "`MAX_UPLOAD_BYTES`, `DAILY_LIMIT`, `GUNICORN_BIND`, `LEADERBOARD_TOKEN`",
            "http://127.0.0.1:8000/tasks/semeval-2017-task-4a/phases/evaluation/metrics/recall[neutral]_c/?x=1",
            "python -m scoring gold.csv runs/*.csv --format json --bootstrap 1000 --seed 1",
            "python manage.py migrate --noinput; python manage.py import_task b.zip --slug x --organiser y",
            "python leaderboard_client.py board t --sort kappa --per-page 50; `make demo`; make a board",
        ]
    )
    assert manual.stale_references(text) == []


@pytest.mark.parametrize(
    "path", ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
)
def test_the_readme_and_every_page_name_only_what_exists(path: str) -> None:
    assert manual.stale_references((REPO / path).read_text()) == []


def test_the_readme_links_into_pages_of_the_manual() -> None:
    readme = (REPO / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert len(links) >= 8 and all((REPO / link).exists() for link in links)
    assert len(readme.splitlines()) <= 200
