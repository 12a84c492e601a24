"""``python -m scoring GOLD PRED PRED ... --analysis``: what the runs got wrong together.

Every number of the ``analysis`` object is compared with an independent computation written here
in plain Python, a ratio as a ``Fraction`` rounded once: the majority vote (label by label, a tie
to the first label) and every metric of its matrix, raw and calibrated, from the exact oracle of
``tests/scoring/oracle.py``; the oracle's accuracy, macro recall and full report; the items no
run got right per gold label; Cohen's kappa between every two runs from its definition
(p_o − p_e)/(1 − p_e); the clustering by a naive average linkage over the kappas as fractions;
the hardest items with every run's label; and where each row would rank among the teams.

The boards hold 2 to 50 files, with ties in the vote, a file identical to the gold, two
identical files (kappa 1), a file that gives every item one label (kappa 0 with every file that
varies) and a second such file of the same label (kappa undefined, ``null``), and a
probability file with tied rows (read as the first label of the tie).
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.cluster.hierarchy import linkage

from tests.scoring.analysis_oracle import expected_analysis
from tests.scoring.test_cli_board import board_json, run_main

LABELS = ["neg", "neu", "pos"]
N_ITEMS = 60


def write(directory: Path, name: str, labels: list[str]) -> str:
    path = directory / f"{name}.csv"
    path.write_text("id,label\n" + "".join(f"item-{i},{label}\n" for i, label in enumerate(labels)))
    return str(path)


def write_probabilities(directory: Path, name: str, rows: list[list[Fraction]]) -> str:
    path = directory / f"{name}.csv"
    lines = "".join(f"item-{i}," + ",".join(f"{float(p):.2f}" for p in row) + "\n" for i, row in enumerate(rows))
    path.write_text("id," + ",".join(LABELS) + "\n" + lines)
    return str(path)


def probability_rows(rng: np.random.Generator) -> list[list[Fraction]]:
    """Rows of hundredths summing to 1; every third row has two labels tied at the top."""
    rows = []
    for i in range(N_ITEMS):
        if i % 3 == 0:
            first, second = sorted(rng.choice(3, size=2, replace=False).tolist())
            row = [Fraction(0)] * 3
            row[first] = row[second] = Fraction(40, 100)
            row[3 - first - second] = Fraction(20, 100)
        else:
            cuts = sorted(rng.choice(np.arange(1, 100), size=2, replace=False).tolist())
            row = [Fraction(cuts[0], 100), Fraction(cuts[1] - cuts[0], 100), Fraction(100 - cuts[1], 100)]
        rows.append(row)
    return rows


def arg_max(row: list[Fraction]) -> str:
    """The first label whose probability is the row's highest."""
    return LABELS[row.index(max(row))]


def build_board(directory: Path, n_files: int, seed: int) -> tuple[str, list[str], list[str], dict[str, list[str]]]:
    """A gold file and ``n_files`` prediction files; returns the gold path, the prediction paths,
    the gold labels and each team's labels as the analysis reads them (arg-max for probabilities)."""
    rng = np.random.default_rng(seed)
    gold = [LABELS[code] for code in rng.integers(0, 3, N_ITEMS)]

    def noisy(share_right: float) -> list[str]:
        return [g if rng.random() < share_right else LABELS[rng.integers(0, 3)] for g in gold]

    twin = noisy(0.6)
    special: list[tuple[str, list[str] | list[list[Fraction]]]] = [
        ("gold-copy", list(gold)),
        ("twin", twin),
        ("twin-again", list(twin)),
        ("always-neu", ["neu"] * N_ITEMS),
        ("also-always-neu", ["neu"] * N_ITEMS),
        ("soft", probability_rows(rng)),
    ]
    chosen = special[: max(0, n_files - 2)] if n_files < 8 else special
    files = [*chosen, *((f"team{k:02d}", noisy(rng.uniform(0.2, 0.9))) for k in range(n_files - len(chosen)))]
    paths, labels = [], {}
    for name, content in files:
        if name == "soft":
            paths.append(write_probabilities(directory, name, content))
            labels[name] = [arg_max(row) for row in content]
        else:
            paths.append(write(directory, name, content))
            labels[name] = content
    return write(directory, "gold", gold), paths, gold, labels


def would_rank(board: dict, report: dict, section: str) -> dict[str, int | None]:
    """1 + the teams strictly better under each suite metric of ``section`` (``metrics`` or
    ``calibrated``), from the reports' own values (every ranking metric here is higher-is-better)."""
    found = {}
    for key in board["ranks"]["raw"]:
        if not key.startswith("recall["):  # a class's calibrated recall is in no report object
            mine = report[section][key]
            theirs = [board["reports"][team][section][key] for team in board["teams"]]
            found[key] = None if mine is None else 1 + sum(1 for v in theirs if v is not None and v > mine)
    return found


# --- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_files", "seed"), [(2, 1), (3, 2), (4, 3), (7, 4), (8, 5), (12, 6), (25, 7), (50, 8)])
def test_analysis_equals_an_independent_computation(tmp_path, capsys, n_files, seed):
    gold_path, paths, gold, runs = build_board(tmp_path, n_files, seed)
    board = board_json(capsys, gold_path, paths, "--labels", ",".join(LABELS), "--analysis")
    analysis = board["analysis"]
    keys = list(board["reports"][board["teams"][0]]["metrics"])
    expected = expected_analysis(gold, runs, keys, LABELS)
    assert board["teams"] == list(runs)
    assert analysis["teams"] == n_files

    majority = analysis["majority_vote"]
    assert majority["ties"] == expected["ties"]
    assert majority["confusion_matrix"] == [[int(x) for x in row] for row in expected["majority_matrix"]]
    assert (majority["metrics"], majority["calibrated"]) == expected["majority"]

    found = analysis["oracle"]
    assert found["accuracy"] == expected["oracle_accuracy"] == found["metrics"]["accuracy"]
    assert found["macro_recall"] == expected["oracle_macro_recall"] == found["metrics"]["macro_recall"]
    assert (found["metrics"], found["calibrated"]) == expected["oracle"]
    assert analysis["unsolved"] == expected["unsolved"]

    assert analysis["agreement"]["teams"] == list(runs)
    assert analysis["agreement"]["kappa"] == expected["kappa"]
    assert analysis["agreement"]["clustering"]["method"] == "average"
    assert analysis["agreement"]["clustering"]["order"] == expected["order"]
    assert analysis["agreement"]["clustering"]["merges"] == expected["merges"]
    assert analysis["hardest"] == expected["hardest"]

    for section, values in (("raw", "metrics"), ("calibrated", "calibrated")):
        for row in (majority, found):
            wanted = would_rank(board, row, values)
            assert {key: rank for key, rank in row["would_rank"][section].items() if key in wanted} == wanted


def test_the_special_files(tmp_path, capsys):
    gold_path, paths, _gold, _runs = build_board(tmp_path, 12, 11)
    analysis = board_json(capsys, gold_path, paths, "--labels", ",".join(LABELS), "--analysis")["analysis"]
    names = analysis["agreement"]["teams"]
    table = {
        a: dict(zip(names, row, strict=True)) for a, row in zip(names, analysis["agreement"]["kappa"], strict=True)
    }
    assert table["twin"]["twin-again"] == 1.0
    assert table["gold-copy"]["gold-copy"] == 1.0
    assert table["always-neu"]["also-always-neu"] is None
    assert table["always-neu"]["always-neu"] is None
    assert all(table["always-neu"][other] == 0.0 for other in names if "always" not in other)
    # The gold's copy is right everywhere: the oracle too, no item unsolved, the hardest are
    # the 20 fewest files got right, each right at least once.
    assert analysis["oracle"]["accuracy"] == 1.0
    assert set(analysis["unsolved"].values()) == {0}
    assert len(analysis["hardest"]) == 20
    assert all(item["right"] >= 1 for item in analysis["hardest"])
    # The soft file's tied rows read as the first label of the tie.
    soft_rows = [line.split(",") for line in (tmp_path / "soft.csv").read_text().splitlines()[1:]]
    by_id = {item["id"]: item["labels"]["soft"] for item in analysis["hardest"]}
    for fields in soft_rows:
        values = [float(v) for v in fields[1:]]
        if fields[0] in by_id:
            assert by_id[fields[0]] == LABELS[values.index(max(values))]
    # The twins join first, at kappa 1 (with the constant files' undefined kappa counted as 1).
    first_merges = analysis["agreement"]["clustering"]["merges"][:2]
    assert {tuple(m["left"] + m["right"]) for m in first_merges} >= {("twin", "twin-again")}


def test_ties_in_the_vote_go_to_the_first_label(tmp_path, capsys):
    gold = write(tmp_path, "gold", ["pos", "pos", "neg", "neu"])
    one = write(tmp_path, "one", ["pos", "neu", "neu", "pos"])
    two = write(tmp_path, "two", ["neu", "pos", "pos", "neg"])
    analysis = board_json(capsys, gold, [one, two], "--labels", ",".join(LABELS), "--analysis")["analysis"]
    # Every item is a tie of two labels: the vote takes the first in the label order, neu, neu,
    # neu and neg, against the gold pos, pos, neg and neu.
    assert analysis["majority_vote"]["ties"] == 4
    matrix = analysis["majority_vote"]["confusion_matrix"]  # rows predicted neg, neu, pos; columns gold
    assert matrix == [[0, 1, 0], [1, 0, 2], [0, 0, 0]]


def test_clustering_agrees_with_scipy_where_no_two_means_tie(tmp_path, capsys):
    gold_path, paths, _, _runs = build_board(tmp_path, 9, 21)
    keep = [p for p in paths if Path(p).stem.startswith("team")]
    analysis = board_json(capsys, gold_path, keep, "--labels", ",".join(LABELS), "--analysis")["analysis"]
    names = analysis["agreement"]["teams"]
    table = np.array(analysis["agreement"]["kappa"], dtype=float)
    condensed = [1 - table[i, j] for i, j in itertools.combinations(range(len(names)), 2)]
    ours = [frozenset(m["left"] + m["right"]) for m in analysis["agreement"]["clustering"]["merges"]]
    groups = {i: frozenset([names[i]]) for i in range(len(names))}
    theirs = []
    for step, (a, b, _, _) in enumerate(linkage(condensed, method="average")):
        groups[len(names) + step] = groups[int(a)] | groups[int(b)]
        theirs.append(groups[len(names) + step])
    assert ours == theirs


def test_text_and_latex(tmp_path, capsys):
    gold_path, paths, _, _runs = build_board(tmp_path, 8, 31)
    status, out, err = run_main(capsys, gold_path, *paths, "--labels", ",".join(LABELS), "--analysis")
    assert status == 0, err
    assert "What the 8 runs got wrong together" in out
    assert "Cohen's kappa between the runs" in out
    assert "The hardest items" in out
    status, out, err = run_main(
        capsys, gold_path, *paths, "--labels", ",".join(LABELS), "--analysis", "--format", "latex"
    )
    assert status == 0, err
    lines = out.splitlines()
    vote_line = next(i for i, line in enumerate(lines) if line.startswith("Majority vote of the teams &"))
    assert lines[vote_line - 1] == r"\midrule"
    assert lines[vote_line + 1].startswith("Oracle (any team right) &")
    assert r"\textbf" not in lines[vote_line] + lines[vote_line + 1]
    assert "Below the last rule, never ranked" in out
    status, out, _ = run_main(capsys, gold_path, *paths, "--labels", ",".join(LABELS), "--format", "latex")
    assert "Majority vote" not in out


def test_analysis_needs_a_board(tmp_path, capsys):
    gold = write(tmp_path, "gold", ["neg", "pos"])
    one = write(tmp_path, "one", ["neg", "neg"])
    for more in ((), ("--format", "json"), ("--format", "latex")):
        status, out, err = run_main(capsys, gold, one, "--analysis", *more)
        assert status == 2 and not out
        assert "--analysis compares the runs of a board" in err
