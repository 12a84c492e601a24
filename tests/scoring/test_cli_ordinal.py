"""The scorer on an ordinal task: ``python -m scoring GOLD PRED ... --ordinal --labels -2,-1,0,1,2``.

What this proves: ``--ordinal`` adds ``macro_mae`` and ``mae`` to a report's ``metrics`` and
``calibrated`` (and nothing else changes), with the values of SemEval-2017 Task 4C computed by
hand; on a board they are ranked under ``ranks`` like every column, rank 1 the lowest error,
with their calibrated columns and their rows of the rho heatmap (rho of two errors that agree
is +1, and of an error with a score that agrees with it too); the LaTeX table bolds the lowest
error and says so; the text prints them; and ``--ordinal`` without ``--labels`` is refused,
since the gold file's own order sorts names, not a scale.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scoring.__main__ import ORDINAL_NEEDS_LABELS
from tests.scoring.test_cli import CONTRACT_METRICS, run_main, strict_json, write

SCALE = "-2,-1,0,1,2"
GOLD = ["-2", "-2", "-1", "0", "0", "0", "1", "2"]
TEAMS = {
    # Distances 1, 0 | 2 | 0, 1, 0 | 1 | 2: MAE^M = (1/5)(1/2 + 2 + 1/3 + 1 + 2) = 7/6, MAE^µ = 7/8.
    "near": ["-1", "-2", "1", "0", "-1", "0", "2", "0"],
    # Every item right but the two of class -2, each four steps off: MAE^M = 4/5, MAE^µ = 1.
    "far": ["2", "2", "-1", "0", "0", "0", "1", "2"],
    # Always 0: MAE^M = (2 + 1 + 0 + 1 + 2)/5 = 6/5, MAE^µ = (2 + 2 + 1 + 1 + 2)/8 = 1.
    "middle": ["0"] * 8,
}


def labels_file(tmp_path: Path, name: str, labels: list[str]) -> str:
    return write(tmp_path, name, "id,label\n" + "".join(f"{i},{label}\n" for i, label in enumerate(labels, start=1)))


@pytest.fixture
def scale(tmp_path: Path) -> tuple[str, list[str]]:
    gold = labels_file(tmp_path, "gold.csv", GOLD)
    return gold, [labels_file(tmp_path, f"{team}.csv", labels) for team, labels in TEAMS.items()]


def test_one_file_reports_the_two_errors_raw_and_calibrated(scale, capsys) -> None:
    gold, (near, *_) = scale
    status, out, err = run_main(capsys, gold, near, "--format", "json", "--ordinal", "--labels", SCALE)
    assert status == 0, err
    report = strict_json(out)
    assert set(report["metrics"]) == set(report["calibrated"]) == CONTRACT_METRICS | {"macro_mae", "mae"}
    assert report["metrics"]["macro_mae"] == 7 / 6
    assert report["metrics"]["mae"] == 7 / 8
    assert report["calibrated"]["macro_mae"] == report["calibrated"]["mae"] == 7 / 6
    status, out, _ = run_main(capsys, gold, near, "--format", "json", "--labels", SCALE)
    nominal = strict_json(out)
    assert set(nominal["metrics"]) == CONTRACT_METRICS
    assert {key: report["metrics"][key] for key in CONTRACT_METRICS} == nominal["metrics"]


def test_the_text_report_prints_the_errors(scale, capsys) -> None:
    gold, (near, *_) = scale
    status, out, _ = run_main(capsys, gold, near, "--ordinal", "--labels", SCALE)
    assert status == 0
    assert re.search(r"\nMacro-averaged mean absolute error +macro_mae +1\.1667 +1\.1667\n", out)
    assert re.search(r"\nMean absolute error +mae +0\.8750 +1\.1667\n", out)


def test_a_board_ranks_the_lowest_error_first(scale, capsys) -> None:
    gold, predictions = scale
    status, out, err = run_main(capsys, gold, *predictions, "--format", "json", "--ordinal", "--labels", SCALE)
    assert status == 0, err
    board = strict_json(out)
    assert [board["reports"][team]["metrics"]["macro_mae"] for team in TEAMS] == [7 / 6, 4 / 5, 6 / 5]
    assert board["ranks"]["raw"]["macro_mae"] == {"near": 2, "far": 1, "middle": 3}
    assert board["ranks"]["raw"]["mae"] == {"near": 1, "far": 2, "middle": 2}
    assert board["ranks"]["calibrated"]["mae"] == board["ranks"]["raw"]["macro_mae"]
    columns = board["spearman"]["columns"]
    rho = {(a, b): board["spearman"]["rho"][i][j] for i, a in enumerate(columns) for j, b in enumerate(columns)}
    assert rho["macro_mae", "macro_mae_c"] == rho["mae_c", "macro_mae"] == 1.0
    # Macro recall (7/30, 4/5, 1/5) and MAE^M agree on who is better: rho is +1, not -1.
    assert board["ranks"]["raw"]["macro_recall"] == {"near": 2, "far": 1, "middle": 3}
    assert rho["macro_recall", "macro_mae"] == 1.0
    assert rho["accuracy", "mae"] == -0.5  # accuracy (3/8, 3/4, 3/8) ranks far first, and mae near


def test_latex_bolds_the_lowest_error(scale, capsys) -> None:
    gold, predictions = scale
    status, out, _ = run_main(
        capsys, gold, *predictions, "--format", "latex", "--ordinal", "--labels", SCALE, "--metrics", "macro_mae,mae"
    )
    assert status == 0
    assert "near & 1.17 & \\textbf{0.88} \\\\" in out
    assert "far & \\textbf{0.80} & 1.00 \\\\" in out
    assert "MAE\\ensuremath{^{M}}, MAE\\ensuremath{\\mu}: lower is better" in out
    assert "$|i-j|$: how many steps of the ordinal scale" in out


def test_ordinal_needs_the_order_of_the_scale(scale, capsys) -> None:
    gold, predictions = scale
    status, out, err = run_main(capsys, gold, *predictions, "--ordinal")
    assert status == 2
    assert out == ""
    assert ORDINAL_NEEDS_LABELS in err
