"""The LaTeX table (``scoring.engine.latex``), in the style of paper 000's Table 8.

What this proves: any team name or label is escaped into text that prints as written and
cannot break the table (every TeX special, the brackets and star that a row's ``\\\\`` would
read, ``--`` ligatures, control characters); values print as percentages with one decimal,
rounded from the stored double exactly and never as ``-0.0``, unbounded metrics as plain
numbers; the best value of each column is bold by the tie rule of the ranking module (exact
values: ties all bold, a difference below the printed digits not a tie); undefined values
print as "undefined"; the caption names every column's formula from the registry; and, where
pdfLaTeX is installed, a table of hostile names compiles.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import latex
from scoring.engine.columns import Column, table8_columns
from scoring.engine.latex import CALIBRATION_NOTE, latex_escape, latex_table, number_text
from scoring.engine.registry import BY_KEY

HOSTILE_NAMES = [
    "R&D 100% #1",
    "a_b {c} ~d ^e",
    "back\\slash $money$",
    "*starred",
    "[bracketed]",
    "a--b---c",
    "line\nbreak\ttab\x07bell",
    "x<y>z|w",
    "Zoë Ångström",
    "κ-team",
]


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("&", r"\&"),
        ("%", r"\%"),
        ("$", r"\$"),
        ("#", r"\#"),
        ("_", r"\_"),
        ("{", r"\{"),
        ("}", r"\}"),
        ("~", r"\textasciitilde{}"),
        ("^", r"\textasciicircum{}"),
        ("\\", r"\textbackslash{}"),
        ("<>|", r"\textless{}\textgreater{}\textbar{}"),
        ("[x]", "{[}x{]}"),
        ("a--b", "a-{}-b"),
        ("a---b", "a-{}-{}-b"),
        ("a\nb\x00c", "a b c"),
        ("κ", r"\ensuremath{\kappa}"),
        ("plain text, Zoë", "plain text, Zoë"),
        ("\\&", r"\textbackslash{}\&"),
    ],
)
def test_escape(text: str, escaped: str) -> None:
    assert latex_escape(text) == escaped


@pytest.mark.parametrize(
    ("value", "percent", "text"),
    [
        (0.6812, True, "68.1"),
        (0.6805, True, "68.0"),  # the double below 0.6805: exact rounding, whatever 100 * 0.6805 gives
        (0.00049, True, "0.0"),
        (-0.0004, True, "0.0"),  # never -0.0
        (-0.25, True, "$-$25.0"),
        (1.0, True, "100.0"),
        (1.34581, False, "1.35"),
        (-2.5, False, "$-$2.50"),
        (None, True, None),
        (float("nan"), True, None),
    ],
)
def test_numbers(value, percent: bool, text: str | None) -> None:
    assert number_text(value, percent=percent) == text


def rows_of(table: str) -> list[list[str]]:
    body = table.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    return [line.removesuffix(" \\\\").split(" & ") for line in body.strip().splitlines()]


def test_booktabs_table_with_bold_best_and_ties() -> None:
    columns = [Column("macro_recall"), Column("kappa", calibrated=True), Column("recall", "pos")]
    values = {
        "macro_recall": [0.5, 0.75, 0.75],
        "kappa_c": [0.9, 0.1, -0.2],
        "recall[pos]": [None, 0.25, 0.125],
    }
    table = latex_table(teams=["one", "two", "three"], columns=columns, values=values)
    lines = table.splitlines()
    assert lines[lines.index("\\toprule") + 1] == "Team & macR & \\ensuremath{\\kappa}$_c$ & R(pos) \\\\"
    assert "\\begin{tabular}{lrrr}" in lines
    assert lines.index("\\toprule") < lines.index("\\midrule") < lines.index("\\bottomrule")
    assert rows_of(table) == [
        ["one", "50.0", "\\textbf{90.0}", "\\emph{undefined}"],
        ["two", "\\textbf{75.0}", "10.0", "\\textbf{25.0}"],
        ["three", "\\textbf{75.0}", "$-$20.0", "12.5"],
    ]


def test_bold_follows_the_exact_values_not_the_printed_digits() -> None:
    """0.1 + 0.2 and 0.3 both print 30.0, but they are different doubles: only the larger is
    best, as it ranks first on the board (the tie rule of the ranking module)."""
    assert 0.1 + 0.2 > 0.3
    table = latex_table(teams=["sum", "literal"], columns=[Column("accuracy")], values={"accuracy": [0.1 + 0.2, 0.3]})
    assert rows_of(table) == [["sum", "\\textbf{30.0}"], ["literal", "30.0"]]


def test_an_all_undefined_column_has_no_bold() -> None:
    table = latex_table(teams=["a", "b"], columns=[Column("mcc")], values={"mcc": [None, None]})
    assert rows_of(table) == [["a", "\\emph{undefined}"], ["b", "\\emph{undefined}"]]


def test_unbounded_metrics_are_not_percentages() -> None:
    columns = [Column("macro_dp"), Column("accuracy")]
    table = latex_table(teams=["a"], columns=columns, values={"macro_dp": [1.34581], "accuracy": [0.5]})
    assert rows_of(table) == [["a", "\\textbf{1.35}", "\\textbf{50.0}"]]
    assert "except MDP: not shares, two decimals" in table


def test_caption_names_each_formula_once_and_the_calibration() -> None:
    columns = [Column("kappa"), Column("kappa", calibrated=True), Column("macro_f1"), Column("recall", "x")]
    values = {column.id: [0.5] for column in columns}
    table = latex_table(teams=["t"], columns=columns, values=values, title="Task_1 & more")
    caption = table.split("\\caption", 1)[1]
    assert caption.count(BY_KEY["kappa"].formula_latex) == 1
    assert BY_KEY["macro_f1"].formula_latex in caption
    assert "R(class): recall of the class" in caption
    assert CALIBRATION_NOTE in caption
    assert "$P_i$, $R_i$" in caption and "\\mathbf{p}$, $\\mathbf{b}$" in caption
    assert caption.startswith("[Teams of Task\\_1 \\& more ranked by 4 metrics]{Teams of Task\\_1 \\& more")
    assert "ties all bold" in caption


def test_rows_cannot_be_read_as_arguments_of_the_previous_rows_line_break() -> None:
    table = latex_table(teams=["first", "*star", "[opt]"], columns=[Column("accuracy")], values={"accuracy": [1, 0, 0]})
    assert [row[0] for row in rows_of(table)] == ["first", "{}*star", "{[}opt{]}"]


def test_values_must_match_the_teams() -> None:
    with pytest.raises(ValueError, match="1 values of 'accuracy' for 2 teams"):
        latex_table(teams=["a", "b"], columns=[Column("accuracy")], values={"accuracy": [0.5]})


def test_table8_columns() -> None:
    assert [column.id for column in table8_columns(["negative", "neutral", "positive"])] == [
        "macro_recall",
        "gmean_recall",
        "hmean_recall",
        "macro_f1",
        "macro_f1_c",
        "kappa",
        "mcc",
        "recall[negative]",
        "recall[neutral]",
        "recall[positive]",
    ]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_hostile_names_compile(tmp_path: Path) -> None:
    labels = ["a&b", "x_y", "[z]"]
    columns = [*table8_columns(labels), Column("macro_dp"), Column("mcc", calibrated=True)]
    values = {column.id: [0.5 - 0.1 * i for i in range(len(HOSTILE_NAMES))] for column in columns}
    table = latex_table(teams=HOSTILE_NAMES, columns=columns, values=values, title="Task #1: {50%} & ~more_")
    (tmp_path / "table.tex").write_text(table)
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n\\listoftables\n"
        "\\input{table.tex}\n\\end{document}\n"
    )
    result = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Missing character" not in (tmp_path / "doc.log").read_text(errors="replace")


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6), st.booleans())
def test_a_printed_value_is_the_decimal_rounding_of_the_stored_double(value, percent):
    """Half to even on the double's exact value, as ``decimal`` rounds it; never a minus zero."""
    assert latex.number_text(value, percent=percent) == decimal_text(value, percent)


def decimal_text(value: float, percent: bool) -> str:
    """The double's exact value rounded half to even by ``decimal``, as a table prints it."""
    digits = latex.PERCENT_DIGITS if percent else latex.PLAIN_DIGITS
    exact = Decimal(value).scaleb(2 if percent else 0)
    rounded = exact.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_EVEN)
    expected = f"{abs(rounded) if rounded == 0 else rounded:f}"
    return r"$-$" + expected[1:] if expected.startswith("-") else expected


@given(st.integers(-(10**13), 10**13), st.booleans(), st.integers(-3, 3))
def test_a_value_within_ulps_of_a_half_unit_rounds_as_its_exact_value(units, percent, ulps):
    """The doubles nearest a half of the last printed digit, and far beyond a board's values:
    where the product in doubles cannot tell the side, the exact value decides."""
    digits = latex.PERCENT_DIGITS if percent else latex.PLAIN_DIGITS
    value = (units + 0.5) / 10 ** (digits + (2 if percent else 0))
    for _ in range(abs(ulps)):
        value = math.nextafter(value, math.copysign(math.inf, ulps))
    assert latex.number_text(value, percent=percent) == decimal_text(value, percent)


def test_exact_halves_round_to_even():
    assert [latex.number_text(x, percent=True) for x in (0.00125, 0.00375, -0.00125)] == ["0.1", "0.4", "$-$0.1"]
    assert [latex.number_text(x, percent=False) for x in (0.125, 0.375, -0.0001, 2)] == ["0.12", "0.38", "0.00", "2.00"]


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.floats(allow_nan=False, allow_infinity=False, min_value=-1e13, max_value=1e13),
            st.integers(-1000, 1000).map(lambda units: (units + 0.5) / 1000),
        ),
        max_size=30,
    ),
    st.booleans(),
)
def test_a_column_printed_at_once_reads_as_each_value_printed_alone(values, percent):
    """A board's column is printed as one array, each cell as :func:`number_text` prints it:
    undefined, negative, huge and half-unit values included."""
    assert latex.number_texts(values, percent=percent) == [number_text(value, percent=percent) for value in values]
