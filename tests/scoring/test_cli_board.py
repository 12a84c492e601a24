"""The standalone scorer as a board: ``python -m scoring GOLD PRED PRED ... [--format text|json|latex]``.

What this proves:

- on the SemEval-2017 demo's files (gold and eight prediction files built from the confusion
  matrices of ``leaderboard/demo_table8.py``), the board reproduces paper 000's Table 8: every
  printed cell of the LaTeX table equals the paper's, and the ranks order the teams as the
  printed values do (the official metric, macro recall, puts B and A first); and Figure 2's
  identities hold: rho(kappa_c, macro_recall) = rho(accuracy_c, macro_recall) = 1;
- the JSON is the contract: exactly its keys, every ranking metric in ``ranks`` raw and
  calibrated, competition ranks with a constructed tie (1, 2, 2, 4), ``null`` for an undefined
  value and an undefined rho, a square Spearman matrix in the heatmap's order, and each report
  the very object the single-file scorer prints;
- the text and LaTeX outputs; and the errors: a bad prediction file among several (exit 2,
  the file and the line named, every bad file named, nothing on stdout), duplicate stems,
  unknown ``--metrics``, options that only apply to one file;
- ``--prevalence`` on a board (paper 000, Eq. 5 and 26-27): the JSON keeps every key of the
  board unchanged and adds ``prevalence_what_if``; ``uniform`` is the calibrated board (on the
  demo, kappa at equal shares ranks the teams as macro recall does, as Figure 2 says), ``gold``
  is today's board; the text marks the teams that move; bad targets are refused naming the class.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leaderboard.demo_table8 import GOLD_COUNTS, LABELS, MATRICES, TABLE8, TABLE8_COLUMNS
from scoring.__main__ import main
from scoring.engine.board import DUPLICATE_TEAM
from scoring.engine.registry import ranking_metrics
from tests.scoring.test_cli import CONTRACT_METRICS

REPO = Path(__file__).resolve().parents[2]

RANKING_METRICS = CONTRACT_METRICS - {"macro_f1_gap"}
"""The ranking metrics of the suite: every metric of the JSON contract (written out, not read
from the registry) but the diagnostic Δ."""

# Table 8's columns as column ids of the board (r1..r3: the recall of each class).
TABLE8_IDS = {
    "macR": "macro_recall",
    "GmacR": "gmean_recall",
    "HmacR": "hmean_recall",
    "macF1": "macro_f1",
    "macF1c": "macro_f1_c",
    "kappa": "kappa",
    "mcc": "mcc",
    "r1": "recall[negative]",
    "r2": "recall[neutral]",
    "r3": "recall[positive]",
}

SMALL_GOLD = "a b c a b c a a"
SMALL_TEAMS = {
    "best": "a b c a b c a a",  # perfect
    "twin1": "a b c a a c b a",  # two errors ...
    "twin2": "a b c a a c b a",  # ... the same two: a tie under every metric
    "always_a": "a a a a a a a a",  # one predicted class: MCC undefined
    "wrong": "b c a b c a b b",  # every item wrong
}


def labels_csv(ids: list[str], codes: np.ndarray) -> str:
    return "id,label\n" + "".join(f"{item},{LABELS[code]}\n" for item, code in zip(ids, codes, strict=True))


def build_demo(directory: Path) -> tuple[str, list[str]]:
    """The demo's gold file and one prediction file per team (``A.csv`` ... ``H.csv``) whose
    confusion matrix (rows predicted, columns gold) is the team's matrix of Table 8."""
    rng = np.random.default_rng(2017)
    gold = np.repeat(np.arange(len(LABELS)), GOLD_COUNTS)
    rng.shuffle(gold)
    ids = [f"tweet-{i:05d}" for i in range(1, len(gold) + 1)]
    (directory / "gold.csv").write_text(labels_csv(ids, gold))
    paths = []
    for team, matrix in MATRICES.items():
        predicted = np.empty_like(gold)
        for j in range(len(LABELS)):
            items = np.flatnonzero(gold == j)
            predicted[items] = rng.permutation(np.repeat(np.arange(len(LABELS)), [row[j] for row in matrix]))
        path = directory / f"{team}.csv"
        path.write_text(labels_csv(ids, predicted))
        paths.append(str(path))
    return str(directory / "gold.csv"), paths


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    return build_demo(tmp_path_factory.mktemp("demo"))


def write_labels(directory: Path, name: str, labels: str) -> str:
    path = directory / name
    rows = "".join(f"{i},{label}\n" for i, label in enumerate(labels.split(), start=1))
    path.write_text("id,label\n" + rows)
    return str(path)


@pytest.fixture
def small(tmp_path: Path) -> tuple[str, list[str]]:
    gold = write_labels(tmp_path, "gold.csv", SMALL_GOLD)
    return gold, [write_labels(tmp_path, f"{team}.csv", labels) for team, labels in SMALL_TEAMS.items()]


def strict_json(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the scorer's JSON")

    return json.loads(text, parse_constant=refuse)


def run_main(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def board_json(capsys: pytest.CaptureFixture, gold: str, predictions: list[str], *more: str) -> dict:
    status, out, err = run_main(capsys, gold, *predictions, "--format", "json", *more)
    assert status == 0, err
    return strict_json(out)


def latex_rows(text: str) -> dict[str, list[str]]:
    """The body rows of a LaTeX table: team → cells as printed (``\\textbf{..}`` kept)."""
    body = text.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    rows = {}
    for line in body.strip().splitlines():
        team, *cells = (cell.strip() for cell in line.removesuffix("\\\\").split(" & "))
        rows[team] = cells
    return rows


def unbold(cell: str) -> str:
    return re.sub(r"\\textbf\{(.*)\}", r"\1", cell)


# --- the demo: Table 8 and Figure 2 ------------------------------------------------------------


def test_demo_files_have_table8s_matrices(demo, capsys):
    gold, predictions = demo
    board = board_json(capsys, gold, predictions)
    assert board["teams"] == list(MATRICES)
    assert board["n_items"] == sum(GOLD_COUNTS)
    assert board["labels"] == list(LABELS)
    for team, matrix in MATRICES.items():
        assert board["reports"][team]["confusion_matrix"] == [list(row) for row in matrix]


def test_demo_board_ranks_the_teams_as_table8_does(demo, capsys):
    """Under every column of Table 8, a team printed higher is ranked strictly better (teams
    printed equal may be told apart by the exact values), and macro recall, the task's official
    metric, puts B and A first (paper 000, Appendix G: "the two winning systems ... A, B")."""
    gold, predictions = demo
    board = board_json(capsys, gold, predictions)
    for index, column in enumerate(TABLE8_COLUMNS):
        column_id = TABLE8_IDS[column]
        section, key = ("calibrated", column_id[:-2]) if column_id.endswith("_c") else ("raw", column_id)
        ranks = board["ranks"][section][key]
        for first in MATRICES:
            for second in MATRICES:
                if TABLE8[first][index] > TABLE8[second][index]:
                    assert ranks[first] < ranks[second], (column, first, second)
    assert board["ranks"]["raw"]["macro_recall"] == {"B": 1, "A": 2, "C": 3, "D": 4, "E": 5, "F": 6, "G": 7, "H": 8}


def test_demo_figure2_identities(demo, capsys):
    """Calibrated kappa and calibrated accuracy rank the teams exactly as macro recall does;
    raw kappa does not (paper 000, Figure 2 and Appendix G)."""
    gold, predictions = demo
    board = board_json(capsys, gold, predictions)
    columns, rho = board["spearman"]["columns"], board["spearman"]["rho"]

    def correlation(first: str, second: str) -> float | None:
        return rho[columns.index(first)][columns.index(second)]

    assert correlation("kappa_c", "macro_recall") == pytest.approx(1.0, abs=1e-12)
    assert correlation("accuracy_c", "macro_recall") == pytest.approx(1.0, abs=1e-12)
    assert correlation("macro_recall", "kappa_c") == correlation("kappa_c", "macro_recall")
    assert correlation("kappa", "macro_recall") < 0.99
    assert board["ranks"]["calibrated"]["kappa"] == board["ranks"]["raw"]["macro_recall"]
    assert board["ranks"]["calibrated"]["accuracy"] == board["ranks"]["raw"]["macro_recall"]
    assert all(correlation("recall[neutral]", other) <= 0.14 for other in ("macro_recall", "kappa_c", "mcc"))


def test_demo_latex_prints_table8(demo, capsys):
    """Every printed cell of Table 8, in its column order, with the best of each column bold."""
    gold, predictions = demo
    status, out, err = run_main(capsys, gold, *predictions, "--format", "latex")
    assert status == 0, err
    rows = latex_rows(out)
    assert list(rows) == list(MATRICES)
    header = out.split("\\toprule\n", 1)[1].split("\n", 1)[0]
    assert header.split(" & ")[0] == "Team"
    assert len(header.split(" & ")) == 1 + len(TABLE8_COLUMNS)
    for team, printed in TABLE8.items():
        assert [float(unbold(cell)) for cell in rows[team]] == list(printed), team
    board = board_json(capsys, gold, predictions)
    for index, column in enumerate(TABLE8_COLUMNS):
        column_id = TABLE8_IDS[column]
        section, key = ("calibrated", column_id[:-2]) if column_id.endswith("_c") else ("raw", column_id)
        best = {team for team, rank in board["ranks"][section][key].items() if rank == 1}
        bold = {team for team, cells in rows.items() if cells[index].startswith("\\textbf{")}
        assert bold == best, column


def test_demo_text_board(demo, capsys):
    gold, predictions = demo
    status, out, _ = run_main(capsys, gold, *predictions)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "8 teams, 12284 items, 3 classes: negative, neutral, positive"
    macro_recall = next(line for line in lines if line.startswith("macro_recall "))
    assert "0.6813 (1)" in macro_recall and "0.6809 (2)" in macro_recall
    assert "Spearman's rho" in out
    rho_row = next(line for line in lines if re.match(r"\s*\d+ kappa_c ", line))
    header = next(line for line in lines if re.match(r"\s+1\s+2\s+3", line))
    column = header.split().index(str(5))  # the fifth heatmap column is macro_recall
    assert rho_row.split()[2 + column] == "1.00"


# --- the JSON contract -------------------------------------------------------------------------


def test_board_json_contract(small, capsys):
    gold, predictions = small
    board = board_json(capsys, gold, predictions)
    teams = list(SMALL_TEAMS)
    assert set(board) == {"labels", "n_items", "teams", "reports", "ranks", "spearman"}
    assert board["labels"] == ["a", "b", "c"]
    assert board["n_items"] == 8
    assert board["teams"] == teams
    assert list(board["reports"]) == teams
    assert set(board["ranks"]) == {"raw", "calibrated"}
    per_class = {f"recall[{label}]" for label in "abc"}
    for section in ("raw", "calibrated"):
        assert set(board["ranks"][section]) == RANKING_METRICS | per_class
        for ranks in board["ranks"][section].values():
            assert list(ranks) == teams
            assert all(rank is None or (isinstance(rank, int) and 1 <= rank <= len(teams)) for rank in ranks.values())
    assert {metric.key for metric in ranking_metrics()} == RANKING_METRICS
    columns = board["spearman"]["columns"]
    assert set(board["spearman"]) == {"columns", "rho"}
    expected = [
        column_id
        for base in [*(m.key for m in ranking_metrics()), *sorted(per_class)]
        for column_id in (base, base + "_c")
    ]
    assert columns == expected
    assert columns[:4] == ["accuracy", "accuracy_c", "macro_precision", "macro_precision_c"]
    rho = board["spearman"]["rho"]
    assert len(rho) == len(columns) and all(len(row) == len(columns) for row in rho)
    assert all(rho[i][j] == rho[j][i] for i in range(len(columns)) for j in range(len(columns)))
    assert all(value is None or -1.0 <= value <= 1.0 for row in rho for value in row)


def test_ties_share_competition_ranks(small, capsys):
    gold, predictions = small
    board = board_json(capsys, gold, predictions)
    assert board["ranks"]["raw"]["accuracy"] == {"best": 1, "twin1": 2, "twin2": 2, "always_a": 4, "wrong": 5}
    assert board["ranks"]["raw"]["kappa"] == {"best": 1, "twin1": 2, "twin2": 2, "always_a": 4, "wrong": 5}
    assert board["ranks"]["calibrated"]["macro_f1"]["twin1"] == board["ranks"]["calibrated"]["macro_f1"]["twin2"]


def test_undefined_values_have_null_ranks_and_rho(small, capsys):
    gold, predictions = small
    board = board_json(capsys, gold, predictions)
    # A team that predicts one class has no MCC: no rank, and the others still rank 1, 2, 2, 4.
    assert board["reports"]["always_a"]["metrics"]["mcc"] is None
    assert board["ranks"]["raw"]["mcc"] == {"best": 1, "twin1": 2, "twin2": 2, "always_a": None, "wrong": 4}
    # Discriminant power needs every cell non-zero: undefined for every team here.
    assert set(board["ranks"]["raw"]["macro_dp"].values()) == {None}
    columns, rho = board["spearman"]["columns"], board["spearman"]["rho"]
    dp = columns.index("macro_dp")
    assert rho[dp] == [None] * len(columns)
    assert [row[dp] for row in rho] == [None] * len(columns)
    assert rho[columns.index("accuracy")][columns.index("accuracy")] == 1.0


def test_each_report_is_the_single_file_report(small, capsys):
    gold, predictions = small
    board = board_json(capsys, gold, predictions)
    for team, path in zip(SMALL_TEAMS, predictions, strict=True):
        status, out, _ = run_main(capsys, gold, path, "--format", "json")
        assert status == 0
        assert board["reports"][team] == strict_json(out)


def test_labels_apply_to_the_board(small, capsys):
    gold, predictions = small
    board = board_json(capsys, gold, predictions, "--labels", "c,b,a")
    assert board["labels"] == ["c", "b", "a"]
    assert board["reports"]["best"]["labels"] == ["c", "b", "a"]
    assert list(board["ranks"]["raw"])[-3:] == ["recall[c]", "recall[b]", "recall[a]"]


def test_board_in_a_subprocess(small):
    gold, predictions = small
    result = subprocess.run(
        [sys.executable, "-m", "scoring", gold, *predictions, "--format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert strict_json(result.stdout)["teams"] == list(SMALL_TEAMS)


# --- text and LaTeX ----------------------------------------------------------------------------


def test_text_board_and_rho_tables(small, capsys):
    gold, predictions = small
    status, out, _ = run_main(capsys, gold, *predictions)
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "5 teams, 8 items, 3 classes: a, b, c"
    header = next(line for line in lines if line.startswith("column "))
    assert header.split() == ["column", "symbol", *SMALL_TEAMS]
    accuracy = next(line for line in lines if line.startswith("accuracy "))
    assert accuracy.split()[2:] == ["1.0000", "(1)", "0.7500", "(2)", "0.7500", "(2)", "0.5000", "(4)", "0.0000", "(5)"]
    mcc = next(line for line in lines if line.startswith("mcc "))
    assert "undefined (–)" in mcc
    assert any(line.startswith("Prevalence-calibrated scores and ranks") for line in lines)
    dp_row = next(line for line in lines if re.match(r"\s*\d+ macro_dp ", line))
    assert set(dp_row.split()[2:]) == {"undefined"}


def test_metrics_narrow_the_text_board(small, capsys):
    gold, predictions = small
    status, out, _ = run_main(capsys, gold, *predictions, "--metrics", "kappa,kappa_c")
    assert status == 0
    rows = [line.split()[0] for line in out.splitlines() if re.match(r"(kappa|accuracy|mcc)", line)]
    assert rows == ["kappa", "kappa_c"]
    assert re.search(r"^\s*1 kappa\s+1\.00\s+1\.00$", out, flags=re.M)


def test_latex_of_a_board(small, capsys):
    gold, predictions = small
    status, out, _ = run_main(capsys, gold, *predictions, "--format", "latex", "--metrics", "accuracy,mcc,recall[c]")
    assert status == 0
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert out.count(rule) == 1
    assert "\\begin{tabular}{lrrr}" in out
    rows = latex_rows(out)
    assert list(rows) == [team.replace("_", "\\_") for team in SMALL_TEAMS]
    assert rows["best"] == ["\\textbf{100.0}", "\\textbf{100.0}", "\\textbf{100.0}"]
    assert rows["twin1"] == rows["twin2"] == ["75.0", "60.0", "\\textbf{100.0}"]  # ties all bold; MCC = 0.375 / 0.625
    assert rows["always\\_a"][1] == "\\emph{undefined}"
    assert rows["wrong"][0] == "0.0"
    assert rows["wrong"][1].startswith("$-$")
    assert "\\caption[" in out and "Acc $=$ $\\frac{" in out


def test_latex_escapes_team_names(tmp_path, capsys):
    gold = write_labels(tmp_path, "gold.csv", SMALL_GOLD)
    first = write_labels(tmp_path, "R&D_team #1 {50%}.csv", SMALL_TEAMS["best"])
    second = write_labels(tmp_path, "~^\\.csv", SMALL_TEAMS["twin1"])
    status, out, _ = run_main(capsys, gold, first, second, "--format", "latex")
    assert status == 0
    assert list(latex_rows(out)) == [
        "R\\&D\\_team \\#1 \\{50\\%\\}",
        "\\textasciitilde{}\\textasciicircum{}\\textbackslash{}",
    ]


def test_one_file_as_latex_is_a_one_row_table(small, capsys):
    gold, predictions = small
    status, out, _ = run_main(capsys, gold, predictions[1], "--format", "latex")
    assert status == 0
    assert list(latex_rows(out)) == ["twin1"]


# --- errors ------------------------------------------------------------------------------------


def test_a_bad_file_among_several_names_the_file_and_the_line(small, tmp_path, capsys):
    gold, predictions = small
    bad = write_labels(tmp_path, "bad.csv", "a b maybe a b c a a")
    status, out, err = run_main(capsys, gold, predictions[0], bad, predictions[1], "--format", "json")
    assert status == 2
    assert out == ""
    assert f"{bad}, line 4" in err and "maybe" in err


def test_every_bad_file_is_named(small, tmp_path, capsys):
    gold, predictions = small
    bad = write_labels(tmp_path, "bad.csv", "a b maybe a b c a a")
    short = write_labels(tmp_path, "short.csv", "a b c")
    missing = str(tmp_path / "missing.csv")
    status, out, err = run_main(capsys, gold, bad, predictions[0], short, missing)
    assert status == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith(f"error: {bad}, line 4")
    assert lines[1].startswith(f"error: {short}")
    assert lines[2] == f"error: cannot read {missing}: No such file or directory"


def test_duplicate_stems_are_refused_naming_both_files(small, tmp_path, capsys):
    gold, predictions = small
    other = tmp_path / "other"
    other.mkdir()
    again = write_labels(other, "best.tsv", SMALL_TEAMS["best"])
    status, out, err = run_main(capsys, gold, predictions[0], predictions[1], again)
    assert status == 2
    assert out == ""
    assert err.strip() == "error: " + DUPLICATE_TEAM.format(first=predictions[0], second=again, team="best")


def test_a_bad_gold_file_stops_the_board(small, tmp_path, capsys):
    _, predictions = small
    gold = tmp_path / "bad-gold.csv"
    gold.write_text("id,label\n1,a\n1,b\n")
    status, out, err = run_main(capsys, str(gold), *predictions)
    assert status == 2
    assert out == ""
    assert f"{gold}, line 3" in err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--metrics", "accuracy,no_such_metric"], "--metrics: unknown column 'no_such_metric'"),
        (["--format", "json", "--metrics", "accuracy"], "--metrics chooses the columns"),
        (["--weights", "1,1,1"], "--weights applies to a single prediction file"),
        (
            ["--prevalence", "1,1", "--format", "json"],
            "--prevalence: the target needs one share per class (3: a, b, c)",
        ),
        (["--prevalence", "1,0,1"], "--prevalence: the share of class 'b' is 0: every class needs a share above 0"),
        (["--prevalence", "1,x,1"], "--prevalence: the share 'x' of class 'b' is not a number"),
        (["--prevalence", "1e-300000,1,1"], "--prevalence: the share '1e-300000' of class 'a' is not a plain number"),
        (["--prevalence", "uniform", "--format", "latex"], "--prevalence re-ranks a text or JSON board"),
        (["--prevalence", "uniform", "--metrics", "kappa_c"], "--prevalence re-estimates raw columns"),
    ],
)
def test_board_options_that_do_not_apply_are_refused(small, capsys, options, message):
    gold, predictions = small
    status, out, err = run_main(capsys, gold, *predictions, *options)
    assert status == 2
    assert out == ""
    assert message in err


def test_metrics_needs_a_board_or_latex(small, capsys):
    gold, predictions = small
    status, _, err = run_main(capsys, gold, predictions[0], "--metrics", "accuracy")
    assert status == 2
    assert "--metrics applies to a board" in err


# --- what if the prevalence changes -------------------------------------------------------------


def test_a_what_if_adds_one_key_and_changes_no_other(small, capsys):
    gold, predictions = small
    board = board_json(capsys, gold, predictions)
    with_what_if = board_json(capsys, gold, predictions, "--prevalence", "0.2,0.3,0.5")
    what_if = with_what_if.pop("prevalence_what_if")
    assert with_what_if == board
    assert set(what_if) == {"target", "columns", "moved", "per_class"}
    assert what_if["target"] == {"a": 0.2, "b": 0.3, "c": 0.5}
    assert list(what_if["columns"]) == list(board["ranks"]["raw"]) == list(what_if["moved"])
    for column_id, teams in what_if["columns"].items():
        assert list(teams) == list(SMALL_TEAMS)
        for team, cell in teams.items():
            assert set(cell) == {"value", "rank", "rank_today"}
            assert cell["rank_today"] == board["ranks"]["raw"][column_id][team]
        moved = {move["team"]: (move["from"], move["to"]) for move in what_if["moved"][column_id]}
        assert moved == {
            team: (cell["rank_today"], cell["rank"])
            for team, cell in teams.items()
            if cell["rank"] != cell["rank_today"]
        }
    assert list(what_if["per_class"]) == list(SMALL_TEAMS)
    assert what_if["per_class"]["twin1"]["c"]["support"] == 0.5


def test_uniform_is_the_calibrated_board_and_gold_is_today(small, capsys):
    gold, predictions = small
    uniform = board_json(capsys, gold, predictions, "--prevalence", "uniform")
    today = board_json(capsys, gold, predictions, "--prevalence", "gold")
    for team in SMALL_TEAMS:
        report = uniform["reports"][team]
        for key in RANKING_METRICS:
            assert uniform["prevalence_what_if"]["columns"][key][team]["value"] == report["calibrated"][key]
            assert today["prevalence_what_if"]["columns"][key][team]["value"] == report["metrics"][key]
    for column_id in uniform["ranks"]["raw"]:
        ranks = {team: cell["rank"] for team, cell in uniform["prevalence_what_if"]["columns"][column_id].items()}
        assert ranks == uniform["ranks"]["calibrated"][column_id]
        assert today["prevalence_what_if"]["moved"][column_id] == []
    assert today["prevalence_what_if"]["target"] == {"a": 0.5, "b": 0.25, "c": 0.25}


def test_demo_kappa_at_equal_shares_ranks_as_macro_recall(demo, capsys):
    """Figure 2's identity seen from the what-if: kappa at equal shares is calibrated kappa, and it
    moves the teams to macro recall's order."""
    gold, predictions = demo
    board = board_json(capsys, gold, predictions, "--prevalence", "1/3,1/3,1/3")
    what_if = board["prevalence_what_if"]
    kappa = {team: cell["rank"] for team, cell in what_if["columns"]["kappa"].items()}
    assert kappa == board["ranks"]["raw"]["macro_recall"] == board["ranks"]["calibrated"]["kappa"]
    assert what_if["moved"]["kappa"] != []


def test_text_what_if_marks_the_teams_that_move(small, capsys):
    """Where 98 in 100 items are a, always predicting a is second best; the twins stay tied."""
    gold, predictions = small
    status, out, err = run_main(capsys, gold, *predictions, "--prevalence", "0.98,0.01,0.01", "--metrics", "accuracy")
    assert status == 0, err
    what_if = out.split("What if the classes had the shares a 0.9800, b 0.0100, c 0.0100", 1)[1]
    at_target, moves = what_if.split("Ranks today → at the target (* a team that moves)\n", 1)
    accuracy = next(line for line in at_target.splitlines() if line.startswith("accuracy "))
    assert accuracy.split()[2:] == ["1.0000", "(1)", "0.7500", "(3)", "0.7500", "(3)", "0.9800", "(2)", "0.0000", "(5)"]
    header, _, row = moves.splitlines()[:3]
    assert header.split() == ["column", "symbol", *SMALL_TEAMS]
    assert re.split(r"\s{2,}", row) == ["accuracy", "Acc", "1", "2 → 3 *", "2 → 3 *", "4 → 2 *", "5"]
