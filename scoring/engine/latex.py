"""A board as a LaTeX table in the style of paper 000's Table 8, for an overview paper.

One row per team, one column per chosen metric, booktabs rules (``\\toprule``, ``\\midrule``,
``\\bottomrule``; the document needs ``\\usepackage{booktabs}``), values as percentages with one
decimal, the best value of each column in bold, and a caption that names the formula of every
column. The CLI (``python -m scoring GOLD PRED PRED ... --format latex``) and the site's
download (``/tasks/<slug>/leaderboard.tex``) both call :func:`latex_table`.

Choices, and why:

- **Bold is decided on the stored values, not on the printed digits.** A value is bold when
  its competition rank is 1 (:func:`scoring.engine.ranking.competition_rank_matrix`): the one tie
  rule of the board, its exports and its rank correlations ("equal is equal", exact), and
  its one rule of direction, so the bold value of an error (the MAE of an ordinal task) or of
  a mean rank is the lowest, and the caption says which columns are lower-is-better. Ties
  are all bold. Two cells can therefore print the same percentage with only one of them
  bold: that team is strictly better below the printed precision, and ranked so on the
  board. (Paper 000's Table 8 bolds some printed ties and not others.)
- **Rounding** is of the stored double, exactly (integer arithmetic, half to even), so a value prints
  the same whatever float noise ``100 * value`` would add; a value that rounds to zero never
  prints as ``-0.0``.
- **Not every metric is a share.** A metric whose registry range is unbounded (discriminant
  power, in natural-log units; an ordinal task's MAE, in steps of its scale) prints with two
  decimals and is not multiplied by 100; the caption says so.
- **Undefined** values print as *undefined* (never NaN) and are never bold.
- **Escaping**: team names, labels and titles are text: ``& % $ # _ { } ~ ^ \\`` are escaped,
  ``< > |`` and the brackets (which could read as an argument of the row's ``\\\\``) are
  written so that every font encoding prints them, ``--`` stays two hyphens, and control
  characters (a line break in a file name) become spaces. The output is UTF-8: Latin letters
  compile with pdfLaTeX, other scripts need XeLaTeX or LuaLaTeX.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

import numpy as np

from scoring.engine.aggregate import Aggregate
from scoring.engine.columns import Column
from scoring.engine.formatting import UNDEFINED, as_number
from scoring.engine.metrics import Value
from scoring.engine.ranking import as_array, competition_rank_matrix

PERCENT_DIGITS = 1
PLAIN_DIGITS = 2
"""Decimals of a value that is not a share (an unbounded metric such as discriminant power)."""

CALIBRATION_NOTE = (
    r"$X_c$: metric $X$ on the prevalence-calibrated matrix, each gold column scaled to the same mass "
    r"(Opitz, Eq.~6)."
)

NOTATION: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"\\mathbf\{[pb]\}"),
        r"$c$: accuracy; $\mathbf{p}$, $\mathbf{b}$: the classes' shares among the gold labels "
        "(prevalence) and among the predictions (bias).",
    ),
    (re.compile(r"(?<![A-Za-z])[PR]_"), "$P_i$, $R_i$: precision and recall of class $i$."),
    (re.compile(r"TP|FP|FN|TN"), "TP, FP, FN, TN: the one-vs-rest counts of a class."),
    (
        re.compile(re.escape("|i-j|")),
        r"$|i-j|$: how many steps of the ordinal scale (the classes at positions $0, 1, \dots$ in label order) "
        r"separate classes $i$ and $j$; $C$: the gold classes that have items.",
    ),
)
"""A symbol that the chosen formulas use (a pattern), and the sentence that defines it."""

_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "[": "{[}",
    "]": "{]}",
    # The symbols and formulas of the registry: math, so that pdfLaTeX prints them.
    "κ": r"\ensuremath{\kappa}",
    "ᴹ": r"\ensuremath{^{M}}",
    "Δ": r"\ensuremath{\Delta}",
    "µ": r"\ensuremath{\mu}",
    "μ": r"\ensuremath{\mu}",
    "ρ": r"\ensuremath{\rho}",
    "Σ": r"\ensuremath{\Sigma}",
    "π": r"\ensuremath{\pi}",
    "ω": r"\ensuremath{\omega}",
    "·": r"\ensuremath{\cdot}",
    "−": r"\ensuremath{-}",
    "√": r"\ensuremath{\surd}",
}
_SPECIAL = re.compile("|".join(re.escape(character) for character in _SPECIALS))


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text that prints it as written (see the module docstring)."""
    if not text.isprintable():  # control characters (Cc) are never printable
        text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    text = _SPECIAL.sub(lambda match: _SPECIALS[match.group()], text)
    return re.sub("-(?=-)", "-{}", text)


def is_share(column: Column) -> bool:
    """Whether the column's values are shares (bounded, printed as percentages)."""
    return None not in column.metric.value_range


def number_text(value: Value, *, percent: bool) -> str | None:
    """A value as printed in the table (``68.1``, ``$-$3.2``), or ``None`` when undefined: the
    stored double's exact value, in units of the last printed digit, rounded half to even with
    integers."""
    number = as_number(value)
    if number is None:
        return None
    digits = PERCENT_DIGITS if percent else PLAIN_DIGITS
    numerator, denominator = number.as_integer_ratio()
    units, rest = divmod(abs(numerator) * 10 ** (digits + (2 if percent else 0)), denominator)
    if 2 * rest > denominator or (2 * rest == denominator and units % 2):
        units += 1
    whole, fraction = divmod(units, 10**digits)
    text = f"{whole}.{fraction:0{digits}d}"
    return r"$-$" + text if numerator < 0 and units else text


def number_texts(values: Sequence[float | None], *, percent: bool) -> list[str | None]:
    """:func:`number_text` of each of ``values`` (numbers, ``None`` where undefined), a board's
    column at once: tens of thousands of cells at thousands of teams. The product of a value by
    the scale in doubles is within 2**-53 of the exact one: where it is not within 0.0001 of a
    half unit (nearly always), its magnitude rounds as the exact value's does. The others and the
    undefined values go through :func:`number_text`."""
    digits = PERCENT_DIGITS if percent else PLAIN_DIGITS
    scaled = as_array(values) * 10 ** (digits + (2 if percent else 0))
    magnitude = np.abs(scaled)
    units = np.rint(magnitude)  # rounded as the exact value's magnitude is: its sign apart
    plain = (units < 1e11) & (np.abs(magnitude - units) < 0.4999)  # False for NaN too
    whole, fraction = (np.where(plain, part, 0).astype(np.int64).tolist() for part in np.divmod(units, 10**digits))
    signs = np.where((scaled < 0) & (units > 0), r"$-$", "").tolist()
    fractions = _FRACTIONS[digits]  # a fraction's digits looked up: formatting each took 3.5 times as long
    texts: list[str | None] = [f"{sign}{w}.{fractions[f]}" for sign, w, f in zip(signs, whole, fraction, strict=True)]
    for row in np.flatnonzero(~plain).tolist():
        texts[row] = number_text(values[row], percent=percent)
    return texts


_FRACTIONS = {digits: [f"{n:0{digits}d}" for n in range(10**digits)] for digits in {PERCENT_DIGITS, PLAIN_DIGITS}}
"""The printed digits of each fraction of a unit, by how many digits are printed."""


def cell_text(text: str | None, *, best: bool) -> str:
    """A cell of a value's text (:func:`number_texts`): bold when ``best``, a word when undefined."""
    if text is None:
        return rf"\emph{{{UNDEFINED}}}"
    return rf"\textbf{{{text}}}" if best else text


def column_header(column: Column) -> str:
    """The column's symbol in LaTeX: ``macR``, ``\\ensuremath{\\kappa}$_c$``, ``R(neutral)``."""
    symbol = latex_escape(column.metric.symbol)
    if column.label is not None:
        symbol += f"({latex_escape(column.label)})"
    return symbol + ("$_c$" if column.calibrated else "")


def formula_of(column: Column) -> str:
    """The metric's formula for the caption: the registry's LaTeX, else its text."""
    metric = column.metric
    if metric.formula_latex:
        return f"${metric.formula_latex}$"
    return latex_escape(metric.formula_text)


def formula_entry(column: Column) -> str:
    """``macR $= ...$`` for a suite metric; ``R(class): recall of the class, ...`` per class."""
    metric = column.metric
    if column.label is None:
        return f"{latex_escape(metric.symbol)} $=$ {formula_of(column)}"
    symbol = latex_escape(metric.symbol)
    return f"{symbol}(class): {latex_escape(metric.name.lower())} of the class, {formula_of(column)}"


def aggregate_entry(aggregate: Aggregate) -> str:
    """``MR $= ...$ over the $k = 3$ columns macR, ...: ...``: an overall ranking's method and columns."""
    chosen = ", ".join(column_header(column) for column in aggregate.columns)
    count = len(aggregate.columns)
    description = aggregate.metric.description
    return (
        f"{column_header(aggregate)} $= {aggregate.metric.formula_latex}$ over the $k = {count}$ "
        f"column{'s' if count != 1 else ''} {chosen}: {latex_escape(description[0].lower() + description[1:])} "
        "A team undefined under one of them has none."
    )


def ranked_by(columns: Sequence[Column | Aggregate]) -> str:
    """``7 metrics``, or ``2 metrics and 1 overall ranking``."""
    overall = sum(isinstance(column, Aggregate) for column in columns)
    metrics = len(columns) - overall
    text = f"{metrics} metric{'s' if metrics != 1 else ''}"
    return text + (f" and {overall} overall ranking{'s' if overall != 1 else ''}" if overall else "")


ENSEMBLES_NOTE = (
    "Below the last rule, never ranked: the majority vote of the teams (each item labelled as most teams labelled "
    "it, a tie to the first label) and the oracle (an item right when any team got it right)."
)


def caption(columns: Sequence[Column | Aggregate], *, title: str | None, ensembles: bool = False) -> str:
    """What the table shows, how to read it, and the formula of every column; ``ensembles``:
    the table ends with the teams' majority vote and oracle."""
    of = f" of {latex_escape(title)}" if title else ""
    metrics = [column for column in columns if not isinstance(column, Aggregate)]
    overall = [column for column in columns if isinstance(column, Aggregate)]
    plain = [column_header(c) for c in columns if not is_share(c)]
    units = "values in percent with one decimal"
    if plain:
        units += f" (except {', '.join(plain)}: not shares, two decimals)"
    formulas = list(dict.fromkeys(formula_entry(column) for column in metrics))
    lower = list(dict.fromkeys(column_header(c) for c in columns if not c.direction.higher_is_better))
    best = "the best value of each column in bold"
    if lower:
        best += f" (the lowest of {', '.join(lower)}: lower is better)"
    parts = [
        f"Teams{of} ranked by {ranked_by(columns)}: {units}; {best}, ties all bold (decided on the exact values, "
        "not on the printed digits).",
    ]
    if formulas:
        parts.append(
            "On the confusion matrix $m$ ($m_{ij}$: items predicted $i$ whose gold label is $j$; $n$ classes): "
            + "; ".join(formulas)
            + "."
        )
    parts += [sentence for symbol, sentence in NOTATION if any(symbol.search(formula) for formula in formulas)]
    parts += [aggregate_entry(aggregate) for aggregate in overall]
    if any(column.calibrated for column in metrics) or any(c.calibrated for a in overall for c in a.columns):
        parts.append(CALIBRATION_NOTE)
    if ensembles:
        parts.append(ENSEMBLES_NOTE)
    return " ".join(parts)


def latex_table(
    *,
    teams: Sequence[str],
    columns: Sequence[Column | Aggregate],
    values: Mapping[str, Sequence[Value]],
    title: str | None = None,
    unranked: Sequence[tuple[str, Mapping[str, Value]]] = (),
    ensembles: Sequence[tuple[str, Mapping[str, Value]]] = (),
) -> str:
    """A booktabs table: a row per team (in the given order), a column per ``columns`` (board
    columns, and overall rankings, :class:`~scoring.engine.aggregate.Aggregate`).

    ``values`` maps each column's id to the teams' values in ``teams`` order (``None`` where
    undefined). The best value of each column is bold, ties all bold (competition rank 1 by the
    column's direction). ``unranked`` rows (a name and its values by column id: contrastive
    runs) follow the teams below a rule, never bold and ranked with nobody; ``ensembles`` (the
    teams' majority vote and oracle, :mod:`scoring.engine.analysis`) follow below a rule of their
    own, alike, and the caption says what they are.
    """
    cells: list[list[str]] = []  # a list per column: 210,000 cells at 10,000 teams
    for column in columns:
        column_values = as_array(values[column.id])  # NaN where undefined
        if len(column_values) != len(teams):
            raise ValueError(f"{len(column_values)} values of {column.id!r} for {len(teams)} teams")
        best = competition_rank_matrix(column_values[:, np.newaxis], [column.direction])[:, 0] == 1
        texts = number_texts(column_values, percent=is_share(column))
        for row in np.flatnonzero(best | np.isnan(column_values)).tolist():  # the few cells not plain numbers
            texts[row] = cell_text(texts[row], best=bool(best[row]))
        cells.append(texts)
    by_team = zip(*cells, strict=True) if cells else [()] * len(teams)
    rows = [_row(latex_escape(team), row) for team, row in zip(teams, by_team, strict=True)]
    for group in (unranked, ensembles):
        if group:
            rows.append(r"\midrule")
        for name, found in group:
            shown = [
                cell_text(number_text(found.get(column.id), percent=is_share(column)), best=False) for column in columns
            ]
            rows.append(_row(latex_escape(name), shown))
    header = " & ".join(["Team", *(column_header(column) for column in columns)]) + r" \\"
    lines = [
        r"% Needs \usepackage{booktabs} in the preamble.",
        r"\begin{table}",
        r"\centering",
        r"\begin{tabular}{l" + "r" * len(columns) + "}",
        r"\toprule",
        header,
        r"\midrule",
        *rows,
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption[Teams{' of ' + latex_escape(title) if title else ''} ranked by {ranked_by(columns)}]"
        f"{{{caption(columns, title=title, ensembles=bool(ensembles))}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _row(name: str, cells: Sequence[str]) -> str:
    # A row must not start with "*" or "[": the previous row's \\ would read it as its own.
    return " & ".join(["{}" + name if name.startswith("*") else name, *cells]) + r" \\"
