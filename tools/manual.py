"""What the manual (``docs/``, ``make docs``) takes from the code, so that it cannot drift from it.

Two jobs, both run by Sphinx on every build (``docs/conf.py``):

- **Generated pages.** A line ``<!-- generated: NAME -->`` in a page of ``docs/`` is replaced
  by the Markdown of :data:`GENERATORS` [NAME]: the command lines' options from their argparse
  parsers, the API from its OpenAPI schema, the metric catalogue from the registry (formulas
  as MathML), the settings read from the environment, and the map of the modules and their
  imports. Nothing generated is committed, so nothing generated can be out of date.
- **References checked.** What the hand-written pages name must exist (:func:`stale_references`):
  a repository path, a module, a setting or error code, a page of the running demo, an option
  of a command line, a ``make`` target. The strict build turns each miss into an error.

It imports the product: import it once Django is set up (``django.setup()``, or under pytest).
"""

from __future__ import annotations

import argparse
import ast
import functools
import math
import re
import sys
from collections.abc import Callable, Iterator

from django.conf import global_settings
from django.core.management import get_commands, load_command_class
from django.core.management.base import BaseCommand
from django.urls import Resolver404, resolve
from latex2mathml.converter import convert

from client import leaderboard_client
from leaderboard import demo_emotions
from leaderboard.api.endpoints import api
from leaderboard.demo_table8 import LABELS as DEMO_LABELS
from leaderboard.management.commands.load_demo import EMOTIONS_SLUG, ROOT_SLUG, SLUG, SUBTASK_B_SLUG
from leaderboard.mathml import formula_mathml
from leaderboard.models import Phase, Task
from leaderboard.samples import format_rules
from scoring import __main__ as scorer
from scoring.engine.references import plain
from scoring.engine.registry import CLASS_MEASURES, ITEM_METRICS, PROPERTY_NAMES, ClassMeasure, Metric, suite_metrics
from scoring.engine.schemes import LABEL_VALUES, Output
from tools.imports import REPO, import_graph, our_modules, parsed

DEMO = "http://127.0.0.1:8000"
"""Where ``make demo`` serves the demo: the manual's links to pages a reader may try."""
DEMO_BOARD = f"/tasks/{SLUG}/phases/evaluation"
MARKER = re.compile(r"^<!-- generated: ([\w-]+) -->$", re.MULTILINE)


# --- text from docstrings -------------------------------------------------------------------


def markdown_of(text: str) -> str:
    """A docstring's reStructuredText roles and literals as Markdown, on one line, safe in a table cell."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    return " ".join(text.split()).replace("|", "\\|")


def first_paragraph(docstring: str | None) -> str:
    return markdown_of(docstring.strip().split("\n\n")[0]) if docstring else ""


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return "\n".join(lines)


# --- command lines ----------------------------------------------------------------------------


def _expanded_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    return formatter._expand_help(action) if action.help else ""


def options_table(parser: argparse.ArgumentParser, *, leave_out: frozenset[str] = frozenset()) -> str:
    """One row per argument: how it is written, its value, its default and what it does."""
    rows = []
    for action in parser._actions:
        if action.dest in leave_out or isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = ", ".join(f"`{option}`" for option in action.option_strings) or f"`{action.dest}`"
        if action.nargs == "+":
            name += " …"
        if action.choices:
            value = " \\| ".join(f"`{choice}`" for choice in action.choices)
        elif action.nargs == 0:
            value = ""
        else:
            value = f"`{action.metavar or action.dest.upper()}`" if action.option_strings else ""
        default = "" if action.default in (None, False, argparse.SUPPRESS) else f"`{action.default}`"
        rows.append([name, value, default, markdown_of(_expanded_help(parser, action))])
    return table(["argument", "value", "default", "what it does"], rows)


def usage(parser: argparse.ArgumentParser) -> str:
    return "```text\n" + parser.format_usage().strip() + "\n```"


def scorer_reference() -> str:
    parser = scorer.parser()
    return "\n\n".join([usage(parser), markdown_of(parser.description or ""), options_table(parser)])


def client_reference() -> str:
    parser = leaderboard_client.parser()
    parts = [usage(parser), markdown_of(parser.description or ""), options_table(parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                parts += [f"### `{name}`", markdown_of(helps.get(name) or ""), usage(sub), options_table(sub)]
    return "\n\n".join(parts)


def product_commands() -> dict[str, BaseCommand]:
    """The management commands of the product (``manage.py NAME``), by name."""
    return {name: load_command_class(app, name) for name, app in sorted(get_commands().items()) if app == "leaderboard"}


@functools.cache
def _common_options() -> frozenset[str]:
    """Django's own options of every command (``--verbosity``, ``--settings``, …)."""
    return frozenset(action.dest for action in BaseCommand().create_parser("manage.py", "x")._actions)


def commands_reference() -> str:
    parts = []
    for name, command in product_commands().items():
        parser = command.create_parser("manage.py", name)
        parts += [
            f"### `{name}`",
            markdown_of(command.help),
            first_paragraph(sys.modules[type(command).__module__].__doc__),
            usage(parser),
            options_table(parser, leave_out=_common_options()),
        ]
    parts.append(
        "Every command also takes Django's own options (`--settings`, `--verbosity`, …): "
        "`python manage.py NAME --help` lists them."
    )
    return "\n\n".join(part for part in parts if part)


# --- the upload format -------------------------------------------------------------------------


def upload_format() -> str:
    """The format section of a task page, for the demo's labels: the first lines of each sample
    submission and the validator's rules, written by the code that writes them on the page."""
    labels = [str(label) for label in DEMO_LABELS]
    rules = format_rules(Phase(task=Task(labels=labels)), show_ids=False)
    return "\n\n".join(
        [
            "A file of hard labels (the first lines of the labels sample):",
            "```text\n" + rules.labels_preview + "\n```",
            "A file of probabilities, one column per label (the first lines of the probabilities sample):",
            "```text\n" + rules.probabilities_preview + "\n```",
            "The rules the validator applies:",
            "\n".join(f"- {markdown_of(rule)}" for rule in rules.rules),
        ]
    )


def upload_format_outputs() -> str:
    """The format section of the demo's multi-label task (its 11 emotions), as its page writes it."""
    outputs = tuple(Output(emotion, LABEL_VALUES) for emotion in demo_emotions.EMOTIONS)
    rules = format_rules(Phase(task=Task(labels=[], outputs=[o.as_json() for o in outputs])), show_ids=False)
    return "\n\n".join(
        [
            "The first lines of its labels sample:",
            "```text\n" + rules.labels_preview + "\n```",
            "The rules the validator applies:",
            "\n".join(f"- {markdown_of(rule)}" for rule in rules.rules),
        ]
    )


# --- the API ----------------------------------------------------------------------------------


@functools.cache
def openapi() -> dict:
    return api.get_openapi_schema(path_prefix="/api")


def schema_type(schema: dict) -> str:
    """A JSON schema's type in a few words: ``string``, ``integer or null``, ``list of ColumnOut``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(schema_type(option) for option in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return "list of " + schema_type(schema.get("items", {}))
    if kind == "object" and "additionalProperties" in schema:
        inner = schema["additionalProperties"]
        return "object" if inner is True else "object of " + schema_type(inner)
    if schema.get("format") == "binary":
        return "file"
    return kind


def _constraints(schema: dict) -> str:
    words = [f"{name} {schema[key]}" for key, name in (("minimum", "≥"), ("maximum", "≤")) if key in schema]
    return ", ".join(words)


def parameters_table(operation: dict) -> str:
    rows = []
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        default = f"`{str(schema['default']).lower()}`" if "default" in schema else ""
        what = markdown_of(parameter.get("description", "")) or ""
        rows.append(
            [
                f"`{parameter['name']}`",
                parameter["in"],
                schema_type(schema) + (f" ({_constraints(schema)})" if _constraints(schema) else ""),
                "yes" if parameter.get("required") else "",
                default,
                what,
            ]
        )
    body = operation.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        schema = content["schema"]
        for name, field in schema.get("properties", {}).items():
            required = "yes" if name in schema.get("required", []) else ""
            default = f"`{field['default']}`" if field.get("default") not in (None, "") else ""
            rows.append(
                [f"`{name}`", media, schema_type(field), required, default, markdown_of(field.get("description", ""))]
            )
    return table(["parameter", "in", "type", "required", "default", "what"], rows) if rows else ""


def responses_table(operation: dict) -> str:
    rows = []
    for status, response in operation["responses"].items():
        content = response.get("content", {})
        kinds = [f"{media}: {schema_type(value.get('schema', {}))}" for media, value in content.items()]
        rows.append([f"`{status}`", response.get("description", ""), "; ".join(kinds)])
    return table(["status", "meaning", "body"], rows)


def api_reference() -> str:
    schema = openapi()
    parts = [markdown_of(schema["info"].get("description", ""))]
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            needs = (
                " Needs a token."
                if operation.get("security") and "Needs a token" not in operation.get("description", "")
                else ""
            )
            parts += [
                f"### {method.upper()} `{path}`",
                f"**{operation.get('summary', '')}.** " + markdown_of(operation.get("description", "")) + needs,
                parameters_table(operation),
                responses_table(operation),
            ]
    parts.append("## Schemas")
    for name, component in schema["components"]["schemas"].items():
        required = set(component.get("required", []))
        rows = [
            [
                f"`{field}`",
                schema_type(spec),
                "" if field in required else "optional",
                markdown_of(spec.get("description", "")),
            ]
            for field, spec in component.get("properties", {}).items()
        ]
        parts += [f"### {name}", table(["field", "type", "", "what"], rows)]
    return "\n\n".join(part for part in parts if part)


# --- the metric catalogue ---------------------------------------------------------------------

CALIBRATION_LATEX = (
    r"\tilde m_{ij} = \frac{m_{ij}}{n \cdot \mathrm{prevalence}(j)},\quad "
    r"\mathrm{prevalence}(j) = \frac{\sum_x m_{xj}}{\sum_{x,y} m_{xy}}"
)


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "not analysed"}[value]


def _range(entry: Metric | ClassMeasure) -> str:
    low, high = entry.value_range
    return f"[{'−∞' if low is None else f'{low:g}'}, {'∞' if high is None else f'{high:g}'}]".replace("-", "−")


def metric_section(entry: Metric | ClassMeasure, *, per_class: bool = False) -> str:
    key = f"{entry.key}[LABEL]" if per_class else entry.key
    twinned = getattr(entry, "scope", "matrix") == "matrix"
    facts = [
        f"Column ids `{key}` (raw) and `{key}_c` (calibrated)"
        if twinned
        else f"Column id `{key}` (no calibrated twin)",
        f"range {_range(entry)}",
        "higher is better" if entry.higher_is_better else "lower is better (an error)",
    ]
    if getattr(entry, "kind", "ranking") == "diagnostic":
        facts.append("shown, never ranked")
    if getattr(entry, "scale", "nominal") == "ordinal":
        facts.append("scored only when the task's labels are an ordered scale")
    if not twinned:
        facts.append(
            "a task with several outputs, every one a 0/1 label"
            if entry.scope == "labels"
            else "a task with several outputs"
        )
    if entry.baseline is not None:
        facts.append(f"chance baseline {entry.baseline.text}")
    rows = [
        [f"{code} {name}", _yes_no(entry.properties[code].holds), _yes_no(entry.properties[code].calibrated)]
        for code, name in PROPERTY_NAMES.items()
    ]
    parts = [
        f"### {entry.name} ({entry.symbol})",
        str(formula_mathml(entry)),
        f"In words: {entry.formula_text}. Source: {plain(entry.source)}.",
        markdown_of(plain(entry.description)),
        "; ".join(facts) + ".",
        table(["property", "raw", "calibrated"], rows),
        f"Properties: {plain(entry.properties_source)}.",
    ]
    if not per_class and entry.kind == "ranking" and entry.scale == "nominal" and twinned:
        parts.append(f"On the demo: <{DEMO}{DEMO_BOARD}/metrics/{entry.key}/>")
    return "\n\n".join(parts)


def metric_catalogue() -> str:
    calibration = convert(CALIBRATION_LATEX, display="block")
    parts = [
        "Every metric below exists twice: **raw**, on the confusion matrix m (rows: predicted class, "
        "columns: gold class), and **calibrated**, the same formula on the prevalence-calibrated matrix, "
        "where each gold column is scaled to the same mass, n being the number of classes and prevalence(j) "
        "the share of class j among the gold labels (Opitz 2024, Eq. 6):",
        calibration,
        "So a calibrated score is the score the system would get if every class were equally frequent "
        "in the test set, with the same per-class behaviour. Properties PI–PV are those of Opitz 2024, "
        "Table 5: " + ", ".join(f"{code} {name}" for code, name in PROPERTY_NAMES.items()) + ".",
        "## Metrics of the suite",
        *(metric_section(metric) for metric in suite_metrics(ordinal=True)),
        "## Per-class measures",
        "Each class against all the others (one-vs-rest); a board has one column per class for recall, "
        "and every submission page a table of all of them.",
        *(metric_section(measure, per_class=True) for measure in CLASS_MEASURES),
        "## Tasks with several labels an item",
        "A task may give each item a label for every one of several *outputs*, each with labels of its own (an "
        "output of 0 and 1 is a label of a multi-label task, 1 present). Each output is scored under the whole "
        "suite above, raw and calibrated, on its own confusion matrix; under each metric's key the task has the "
        "mean over its outputs of that metric, raw and calibrated (the mean of exact values, rounded once; "
        "undefined when one output's is). Beside them, the metrics below read the items across the outputs, "
        "with P an item's labels predicted present and G its labels present in the gold:",
        *(metric_section(metric) for metric in ITEM_METRICS),
    ]
    return "\n\n".join(parts)


# --- settings from the environment ----------------------------------------------------------

SETTINGS_FILES = ("config/settings/base.py", "config/settings/prod.py", "config/gunicorn.py")
READERS = {"get": 1, "env_bool": 1, "env_list": 1}
"""Calls that read an environment variable, whose first argument names it and second is the default."""


def _explanation(tree: ast.Module, lines: list[str], index: int, read: ast.Call) -> str:
    """What the code says about the variable that ``read`` reads in statement ``index``: the
    comment at the end of that line, else the docstring after the statement, else the comment
    lines right above it, else, for a setting of Django's own, that it is one."""
    own_line = lines[read.lineno - 1]
    if "  # " in own_line:
        return markdown_of(own_line.split("  # ", 1)[1])
    statement = tree.body[index]
    following = tree.body[index + 1] if index + 1 < len(tree.body) else None
    if isinstance(following, ast.Expr) and isinstance(getattr(following.value, "value", None), str):
        return first_paragraph(following.value.value)
    above, line = [], statement.lineno - 2
    while line >= 0 and lines[line].lstrip().startswith("#"):
        above.insert(0, lines[line].strip().lstrip("#").strip())
        line -= 1
    if above:
        return markdown_of(" ".join(above))
    targets = [target.id for target in getattr(statement, "targets", []) if isinstance(target, ast.Name)]
    if targets and hasattr(global_settings, targets[0]):
        return f"Django's own setting `{targets[0]}`."
    return ""


def environment_variables() -> Iterator[tuple[str, str, str, str]]:
    """(variable, default as written, file, explanation) for each variable the settings read."""
    for relative in SETTINGS_FILES:
        source = (REPO / relative).read_text()
        tree, lines = ast.parse(source), source.splitlines()
        for index, statement in enumerate(tree.body):
            for node in ast.walk(statement):
                if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                    continue
                callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if callee not in READERS or not str(node.args[0].value).isupper():
                    continue
                default = node.args[1] if len(node.args) > 1 else None
                if isinstance(default, ast.Constant):
                    default = str(default.value)
                elif default is not None:
                    default = ast.get_source_segment(source, default)
                yield node.args[0].value, default or "", relative, _explanation(tree, lines, index, node)


def settings_reference() -> str:
    rows, seen = [], set()
    for name, default, relative, what in environment_variables():
        if (name, relative) in seen:
            continue
        seen.add((name, relative))
        rows.append([f"`{name}`", f"`{default}`" if default else "", f"`{relative}`", what])
    return table(["variable", "default", "read in", "what it sets"], rows)


# --- the modules and their imports --------------------------------------------------------------

LAYERS: tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...] = (
    (
        "entry points",
        (
            ("config", ("config", "leaderboard.startup")),
            ("commands", ("leaderboard.management",)),
            ("scorer CLI", ("scoring.__main__",)),
        ),
    ),
    (
        "requests",
        (
            (
                "views",
                (
                    "leaderboard.views",
                    "leaderboard.urls",
                    "leaderboard.urls_accounts",
                    "leaderboard.admin",
                    "leaderboard.templatetags",
                ),
            ),
            ("api", ("leaderboard.api",)),
            ("forms", ("leaderboard.forms",)),
        ),
    ),
    (
        "pages",
        (("pages", ("leaderboard.pages", "leaderboard.charts", "leaderboard.formatting", "leaderboard.mathml")),),
    ),
    (
        "writes",
        (
            ("services", ("leaderboard.services", "leaderboard.derived")),
            ("bundles", ("leaderboard.bundles", "leaderboard.archives", "leaderboard.zipstream")),
        ),
    ),
    (
        "reads",
        (
            ("selectors", ("leaderboard.selectors", "leaderboard.exports")),
            (
                "results",
                ("leaderboard.results_cache", "leaderboard.stability", "leaderboard.analysis", "leaderboard.samples"),
            ),
        ),
    ),
    ("data and rules", (("models", ("leaderboard",)),)),
    ("engine", (("scoring.engine", ("scoring",)),)),
)
"""The manual's grouping of the modules into layers, top (entry points) to bottom (the engine):
each module belongs to the group with the longest prefix of its name. The imports between
groups are read from the code; one that goes up a layer is drawn red."""


def group_of(module: str) -> str:
    best, length = "", -1
    for _layer, groups in LAYERS:
        for group, prefixes in groups:
            for prefix in prefixes:
                if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                    best, length = group, len(prefix)
    return best


@functools.cache
def group_imports() -> dict[tuple[str, str], int]:
    """How many imports each group makes of each other group."""
    counts: dict[tuple[str, str], int] = {}
    for module, targets in import_graph().items():
        for target in targets:
            pair = (group_of(module), group_of(target))
            if pair[0] != pair[1] and target.count(".") > 0:
                counts[pair] = counts.get(pair, 0) + 1
    return counts


def module_picture() -> str:
    """The groups as boxes in their layers and their imports as arrows, as one inline SVG."""
    width, row, box_h, left = 1000, 96, 44, 130
    position: dict[str, tuple[float, float, float]] = {}
    layer_of: dict[str, int] = {}
    labels = []
    for index, (layer, groups) in enumerate(LAYERS):
        y = 20 + index * row
        slot = (width - left - 20) / len(groups)
        labels.append(f'<text x="10" y="{y + box_h / 2 + 5}" class="layer">{layer}</text>')
        for number, (group, _prefixes) in enumerate(groups):
            box_w = min(220, slot - 30)
            x = left + slot * number + (slot - box_w) / 2
            position[group], layer_of[group] = (x, y, box_w), index
    edges = []
    counts = group_imports()
    for (source, target), count in sorted(counts.items()):
        sx, sy, sw = position[source]
        tx, ty, tw = position[target]
        stroke = 0.8 + 0.7 * math.log2(count)
        upward = layer_of[target] < layer_of[source]
        if layer_of[target] == layer_of[source]:
            start_x, end_x = (sx + sw, tx) if tx > sx else (sx, tx + tw)
            y = sy + box_h / 2
            path = f"M{start_x:.0f},{y:.0f} L{end_x:.0f},{y:.0f}"
        else:
            start_x = sx + sw * (0.2 + 0.6 * (tx + tw / 2) / width)
            end_x = tx + tw * (0.2 + 0.6 * (sx + sw / 2) / width)
            start_y, end_y = (sy + box_h, ty) if not upward else (sy, ty + box_h)
            bend = (end_y - start_y) / 2
            path = (
                f"M{start_x:.0f},{start_y:.0f} C{start_x:.0f},{start_y + bend:.0f} "
                f"{end_x:.0f},{end_y - bend:.0f} {end_x:.0f},{end_y:.0f}"
            )
        kind = "edge up" if upward else "edge"
        edges.append(
            f'<path d="{path}" class="{kind}" stroke-width="{stroke:.1f}" marker-end="url(#arrow)">'
            f"<title>{source} imports {target}: {count}</title></path>"
        )
    boxes = [
        f'<g><rect x="{x:.0f}" y="{y}" width="{w:.0f}" height="{box_h}" rx="6" class="box"/>'
        f'<text x="{x + w / 2:.0f}" y="{y + box_h / 2 + 5}" class="name">{group}</text></g>'
        for group, (x, y, w) in position.items()
    ]
    height = 20 + len(LAYERS) * row
    style = (
        "<style>.layer{font:italic 13px sans-serif;fill:#666}"
        ".name{font:600 14px sans-serif;text-anchor:middle;fill:#1a1a2e}"
        ".box{fill:#eef3fb;stroke:#3b5b92;stroke-width:1.5}.edge{fill:none;stroke:#7a869a;opacity:.7}"
        ".edge.up{stroke:#c62828;opacity:1}</style>"
    )
    marker = (
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" markerHeight="9" '
        'markerUnits="userSpaceOnUse" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#7a869a"/></marker></defs>'
    )
    title = "The product's modules in groups, by layer, and the imports between the groups"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" aria-label="{title}" '
        f'style="max-width:100%;height:auto">{style}{marker}<title>{title}</title>'
        + "".join(labels + edges + boxes)
        + "</svg>"
    )


def module_table() -> str:
    """Each group's modules and the first paragraph of each one's docstring: where each job lives."""
    modules = our_modules()
    parts = []
    for layer, groups in LAYERS:
        for group, _prefixes in groups:
            rows = [
                [f"`{name}`", first_paragraph(ast.get_docstring(parsed(path)))]
                for name, path in modules.items()
                if group_of(name) == group
            ]
            imports = sorted({target for (source, target) in group_imports() if source == group})
            parts += [
                f"## {group}",
                f"Layer: {layer}. Imports from: {', '.join(imports) or 'nothing of ours'}.",
                table(["module", "what it is for"], rows),
            ]
    return "\n\n".join(parts)


def module_map() -> str:
    return module_picture() + "\n\n" + module_table()


GENERATORS: dict[str, Callable[[], str]] = {
    "scorer-cli": scorer_reference,
    "client-cli": client_reference,
    "commands": commands_reference,
    "upload-format": upload_format,
    "upload-format-outputs": upload_format_outputs,
    "api": api_reference,
    "metrics": metric_catalogue,
    "settings": settings_reference,
    "modules": module_map,
}


def fill(text: str) -> str:
    """``text`` with each generated-page marker replaced by what its generator writes now."""

    def generated(match: re.Match) -> str:
        name = match.group(1)
        if name not in GENERATORS:
            raise KeyError(f"no generator {name!r}; known: {', '.join(GENERATORS)}")
        return GENERATORS[name]()

    return MARKER.sub(generated, text)


# --- references that must exist ------------------------------------------------------------------

ROOTS = ("config", "leaderboard", "scoring", "tests", "tools", "benchmarks", "client", "templates", "static", "docs")
PATH = re.compile(r"`((?:" + "|".join(ROOTS) + r")/[^`\s]*)`")
MODULE = re.compile(r"`((?:config|leaderboard|scoring)(?:\.\w+)+)`")
CONSTANT = re.compile(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`")
DEMO_LINK = re.compile(re.escape(DEMO) + r"(/[^\s)>`\"'*…]*)")
COMMAND = re.compile(r"(?:python -m scoring|manage\.py (\w+)|leaderboard_client\.py (\w+)|(?:^|`|\$ )make (\w[\w-]*))")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")
DEMO_SLUGS = {ROOT_SLUG, SLUG, SUBTASK_B_SLUG, EMOTIONS_SLUG}


@functools.cache
def _product_source() -> str:
    paths = [*REPO.glob("config/**/*.py"), *REPO.glob("leaderboard/**/*.py"), *REPO.glob("scoring/**/*.py")]
    paths += [REPO / "client" / "leaderboard_client.py", REPO / "Makefile"]
    return "\n".join(path.read_text() for path in paths)


@functools.cache
def _make_targets() -> frozenset[str]:
    return frozenset(re.findall(r"^([\w-]+):", (REPO / "Makefile").read_text(), re.MULTILINE))


def _options(parser: argparse.ArgumentParser) -> set[str]:
    found = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _options(sub)
    return found


@functools.cache
def _command_options(kind: str, name: str | None) -> frozenset[str] | None:
    """The options of a command line, or None when there is no such command."""
    if kind == "scorer":
        return frozenset(_options(scorer.parser()))
    if kind == "client":
        return frozenset(_options(leaderboard_client.parser()))
    apps = get_commands()
    if name not in apps:
        return None
    return frozenset(_options(load_command_class(apps[name], name).create_parser("manage.py", name)))


def _module_exists(dotted: str) -> bool:
    modules = our_modules()
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in modules:
            source = modules[name].read_text()
            return all(re.search(rf"\b{re.escape(part)}\b", source) for part in parts[end:])
    return False


def _command_problems(line: str) -> Iterator[str]:
    for match in COMMAND.finditer(line):
        command, subcommand, target = match.groups()
        if target is not None:
            if target not in _make_targets():
                yield f"`make {target}`: no such target in the Makefile"
            continue
        kind = "manage" if command else "client" if subcommand else "scorer"
        options = _command_options(kind, command)
        if options is None:
            yield f"`manage.py {command}`: no such command"
            continue
        rest = line[match.end() :]
        following = COMMAND.search(rest)
        for option in OPTION.findall(rest[: following.start()] if following else rest):
            if option not in options:
                yield f"`{match.group(0)}` has no option `{option}`"


def _demo_link_problems(path: str) -> Iterator[str]:
    bare = path.split("?")[0].split("#")[0]
    try:
        resolve(bare)
    except Resolver404:
        yield f"{DEMO}{path}: no page of the product answers this address"
        return
    slug = re.match(r"/tasks/([\w-]+)/", bare)
    if slug and slug.group(1) not in DEMO_SLUGS | {"new", "import"}:
        yield f"{DEMO}{path}: the demo has no task {slug.group(1)!r}"


def stale_references(text: str) -> list[tuple[int, str]]:
    """(line number, problem) for each thing ``text`` names that does not exist."""
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        found = []
        for path in PATH.findall(line):
            if not any(REPO.glob(path.split("::")[0].rstrip(".,;:"))):
                found.append(f"`{path}`: no such file or folder in the repository")
        for dotted in MODULE.findall(line):
            if not _module_exists(dotted):
                found.append(f"`{dotted}`: no such module, or no such name in it")
        for constant in CONSTANT.findall(line):
            if not re.search(rf"\b{constant}\b", _product_source()):
                found.append(f"`{constant}`: named nowhere in the product's code")
        for path in DEMO_LINK.findall(line):
            found += _demo_link_problems(path.rstrip(".,;:"))
        found += _command_problems(line)
        problems += [(number, problem) for problem in found]
    return problems
