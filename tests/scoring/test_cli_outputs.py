"""The standalone scorer on a task with several labels an item: ``python -m scoring GOLD PRED ...
--multi-label``.

What this proves:

- one file's JSON is the contract: ``outputs`` (each the single-label report object of its column,
  the very object ``python -m scoring`` prints for that column alone), ``metrics`` (every suite
  metric's mean and the item metrics) and ``calibrated``; text names each output;
- a board's JSON: its outputs, each team's report, the ranks of every column (the item metrics
  raw only), a square rho matrix; text and LaTeX; ``--labels OUTPUT=a,b,c``;
- ``--analysis``: every number of the board's ``analysis`` object equals the plain-Python
  computation of ``tests/scoring/analysis_oracle.py`` (the vote and the oracle output by output,
  every metric of each, the exact-match oracle, kappa as the exact mean of each output's), with
  the rank each row would take; as text and LaTeX; refused with one file;
- the errors: a bad file among several (exit 2, every bad file named with its line and column),
  options a task with several outputs does not take, a ``--labels`` without an output,
  ``--labels`` twice without ``--multi-label``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from scoring.__main__ import main
from scoring.engine.registry import ITEM_METRICS, get, ranking_metrics, suite_metrics
from scoring.engine.schemes import LABEL_VALUES, Output
from tests.scoring.analysis_oracle import expected_outputs_analysis, outputs_report_values

NAMES = ["hate", "target", "aggressive"]


def write(path, names: list[str], rows: np.ndarray) -> str:
    lines = [",".join(["id", *names]), *(",".join([f"t{i}", *map(str, row)]) for i, row in enumerate(rows))]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(5)
    gold = rng.integers(0, 2, (60, 3))
    runs = {name: np.where(rng.random((60, 3)) < share, gold, 1 - gold) for name, share in (("A", 0.9), ("B", 0.7))}
    return (
        write(tmp_path / "gold.csv", NAMES, gold),
        {name: write(tmp_path / f"{name}.csv", NAMES[::-1], rows[:, ::-1]) for name, rows in runs.items()},
        tmp_path,
    )


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_one_file_s_json_is_the_contract(files, capsys, tmp_path):
    gold, runs, _ = files
    status, out, _ = run(capsys, gold, runs["A"], "--multi-label", "--format", "json")
    assert status == 0
    report = json.loads(out)
    assert set(report) == {"n_items", "outputs", "metrics", "calibrated"} and report["n_items"] == 60
    assert list(report["outputs"]) == NAMES
    assert set(report["metrics"]) == {m.key for m in suite_metrics()} | {m.key for m in ITEM_METRICS}
    assert set(report["calibrated"]) == {m.key for m in suite_metrics()}
    # Each output's object is the single-label scorer's on that column alone.
    rows = np.loadtxt(gold, delimiter=",", skiprows=1, usecols=(1, 2, 3), dtype=int)
    predicted = np.loadtxt(runs["A"], delimiter=",", skiprows=1, usecols=(3, 2, 1), dtype=int)
    column_gold = write(tmp_path / "hate-gold.csv", ["label"], rows[:, :1])
    column_run = write(tmp_path / "hate-run.csv", ["label"], predicted[:, :1])
    status, alone, _ = run(capsys, column_gold, column_run, "--format", "json")
    assert status == 0 and report["outputs"]["hate"] == json.loads(alone)


def test_one_file_as_text_names_each_output(files, capsys):
    gold, runs, _ = files
    status, out, _ = run(capsys, gold, runs["B"], "--multi-label")
    assert status == 0
    assert "60 items, 3 outputs: hate (0, 1), target (0, 1), aggressive (0, 1)" in out
    assert "jaccard" in out and all(f"Output {name!r}" in out for name in NAMES)


def test_a_board_ranks_every_column_and_correlates_them(files, capsys):
    gold, runs, _ = files
    status, out, _ = run(capsys, gold, runs["A"], runs["B"], "--multi-label", "--format", "json")
    assert status == 0
    board = json.loads(out)
    assert board["outputs"] == [{"name": name, "labels": ["0", "1"]} for name in NAMES]
    assert board["teams"] == ["A", "B"] and set(board["reports"]) == {"A", "B"}
    ranking = {m.key for m in ranking_metrics()}
    assert set(board["ranks"]["raw"]) == ranking | {m.key for m in ITEM_METRICS}
    assert set(board["ranks"]["calibrated"]) == ranking
    assert board["ranks"]["raw"]["macro_f1"] == {"A": 1, "B": 2} and board["ranks"]["raw"]["hamming_loss"]["A"] == 1
    columns = board["spearman"]["columns"]
    assert len(board["spearman"]["rho"]) == len(columns) and "jaccard" in columns and "jaccard_c" not in columns

    status, text, _ = run(capsys, gold, runs["A"], runs["B"], "--multi-label", "--metrics", "macro_f1,jaccard")
    assert status == 0 and "2 teams, 60 items, 3 outputs" in text and "jaccard" in text
    status, latex, _ = run(capsys, gold, runs["A"], runs["B"], "--multi-label", "--format", "latex")
    assert status == 0 and "\\begin{tabular}" in latex


def test_labels_are_given_per_output(files, capsys):
    gold, runs, _ = files
    status, out, _ = run(capsys, gold, runs["A"], "--multi-label", "--labels", "hate=1,0", "--format", "json")
    assert status == 0
    report = json.loads(out)
    assert report["outputs"]["hate"]["labels"] == ["1", "0"] and "jaccard" not in report["metrics"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--prevalence", "0.5,0.5"], "--prevalence does not apply with --multi-label"),
        (["--bootstrap", "0"], "--bootstrap needs a positive number of replicates"),
        (["--labels", "0,1"], "OUTPUT=a,b,c, got '0,1'"),
    ],
)
def test_options_it_does_not_take_are_refused(files, capsys, argv, message):
    gold, runs, _ = files
    status, out, err = run(capsys, gold, runs["A"], runs["B"], "--multi-label", "--format", "json", *argv)
    assert status == 2 and out == "" and message in err


def test_a_board_s_bootstrap_observes_its_values_and_writes_its_replicates(files, capsys, tmp_path):
    """--bootstrap on a board of several outputs: intervals of every column (the calibrated section
    those with a twin), a team's value on the full test set inside its interval or an undefined
    one, each replicate's values written, the same seed the same numbers."""
    gold, runs, _ = files
    argv = [gold, runs["A"], runs["B"], "--multi-label", "--format", "json", "--bootstrap", "50", "--seed", "4"]
    status, out, _ = run(capsys, *argv, "--bootstrap-replicates", str(tmp_path / "reps.csv"))
    board = json.loads(out)
    assert status == 0 and board["bootstrap"]["replicates"] == 50
    assert set(board["intervals"]["raw"]) == set(board["ranks"]["raw"])
    assert set(board["intervals"]["calibrated"]) == set(board["ranks"]["calibrated"])
    for column, teams in board["intervals"]["raw"].items():
        for team, found in teams.items():
            value = board["reports"][team]["metrics"][column]
            assert found["score"] is None or found["score"][0] <= value <= found["score"][1], (column, team)
    lines = (tmp_path / "reps.csv").read_text().splitlines()
    assert len(lines) == 1 + 50 * 2 * len(board["intervals"]["raw"]) + 50 * 2 * len(board["intervals"]["calibrated"])
    assert run(capsys, *argv)[1] == out
    status, _, err = run(capsys, gold, runs["A"], "--multi-label", "--bootstrap", "10")
    assert status == 2 and "two or more prediction files" in err


def test_every_bad_file_of_a_board_is_named_with_its_line_and_column(files, capsys):
    gold, runs, tmp_path = files
    bad = tmp_path / "C.csv"
    bad.write_text("id,hate,target,aggressive\nt0,0,2,1\n")
    missing = tmp_path / "D.csv"
    missing.write_text("id,hate,target\nt0,0,1\n")
    status, out, err = run(capsys, gold, runs["A"], str(bad), str(missing), "--multi-label")
    assert status == 2 and out == ""
    assert f"{bad}, line 2: unknown label '2' in the column 'target'; expected one of 0, 1" in err
    assert f"{missing}, line 1: the header has no 'aggressive' column" in err


def test_labels_twice_need_several_outputs(files, capsys):
    gold, runs, _ = files
    status, _, err = run(capsys, gold, runs["A"], "--labels", "0,1", "--labels", "1,0")
    assert status == 2 and "--multi-label" in err


@pytest.fixture
def five_runs(tmp_path):
    """A gold file and five runs (one a copy of the gold, one with no label present)."""
    rng = np.random.default_rng(8)
    gold = rng.integers(0, 2, (50, 3))
    runs = {
        name: np.where(rng.random(gold.shape) < share, gold, 1 - gold)
        for name, share in zip("ABC", (0.8, 0.6, 0.5), strict=True)
    }
    runs |= {"D": gold.copy(), "E": np.zeros_like(gold)}
    paths = [write(tmp_path / f"{name}.csv", NAMES[::-1], rows[:, ::-1]) for name, rows in runs.items()]
    return write(tmp_path / "gold.csv", NAMES, gold), paths, gold, runs


def test_a_board_s_analysis_equals_an_independent_computation(five_runs, capsys):
    gold_path, paths, gold, runs = five_runs
    status, out, err = run(capsys, gold_path, *paths, "--multi-label", "--analysis", "--format", "json")
    assert status == 0, err
    board = json.loads(out)
    analysis = board["analysis"]
    outputs = [Output(name, LABEL_VALUES) for name in NAMES]
    expected = expected_outputs_analysis(gold.tolist(), {name: rows.tolist() for name, rows in runs.items()}, outputs)
    assert analysis["teams"] == 5
    vote, oracle = analysis["majority_vote"], analysis["oracle"]
    assert vote["ties_per_output"] == dict(zip(NAMES, expected["ties_per_output"], strict=True))
    assert vote["ties"] == sum(expected["ties_per_output"])
    for found, rows in ((vote, "majority_rows"), (oracle, "oracle_rows")):
        assert (found["metrics"], found["calibrated"]) == outputs_report_values(gold.tolist(), expected[rows], outputs)
        assert set(found["outputs"]) == set(NAMES)
        for section in ("raw", "calibrated"):
            ranks = found["would_rank"][section]
            assert set(ranks) == set(board["ranks"][section])
            values = "metrics" if section == "raw" else "calibrated"
            for key, rank in ranks.items():  # 1 + the teams strictly better, by the metric's direction
                mine = found[values][key]
                sign = 1 if get(key).direction.higher_is_better else -1
                theirs = [board["reports"][team][values][key] for team in runs]
                better = [v for v in theirs if v is not None and mine is not None and sign * v > sign * mine]
                assert rank == (None if mine is None else 1 + len(better)), (section, key)
    assert oracle["exact_match_one_run"] == expected["exact_match_one_run"] == 1.0  # D is the gold
    assert oracle["accuracy"] == oracle["metrics"]["accuracy"]
    assert analysis["unsolved"] == {
        name: dict(zip(LABEL_VALUES, counts, strict=True))
        for name, counts in zip(NAMES, expected["unsolved"], strict=True)
    }
    agreement = analysis["agreement"]
    assert agreement["teams"] == list(runs) and agreement["kappa"] == expected["kappa"]
    assert agreement["kappa"][4][4] is None  # E gives every item one label on every output
    assert agreement["clustering"]["order"] == expected["order"]
    assert agreement["clustering"]["merges"] == expected["merges"]
    assert [item["id"] for item in analysis["hardest"]] == [f"t{i}" for i in expected["hardest"]]
    for item, position in zip(analysis["hardest"], expected["hardest"], strict=True):
        assert item["right"] == expected["right"][position]
        assert item["gold"] == dict(zip(NAMES, map(str, gold[position]), strict=True))
        assert item["labels"] == {
            team: dict(zip(NAMES, map(str, rows[position]), strict=True)) for team, rows in runs.items()
        }


def test_a_board_s_analysis_as_text_and_latex(five_runs, capsys):
    gold_path, paths, gold, _ = five_runs
    status, out, err = run(capsys, gold_path, *paths, "--multi-label", "--analysis")
    assert status == 0, err
    assert "What the 5 runs got wrong together" in out and "item-output cells tied: hate" in out
    assert "Exact-match oracle, the items one run got entirely right: 1.0000" in out
    assert "hate: 0" in out and "target: 1" in out  # the items no run got right, per output and gold label
    first = next(i for i in range(len(gold)) if gold[i].any())
    assert ", ".join(name for name, code in zip(NAMES, gold[first], strict=True) if code) in out
    status, out, err = run(capsys, gold_path, *paths, "--multi-label", "--analysis", "--format", "latex")
    assert status == 0, err
    lines = out.splitlines()
    vote_line = next(i for i, line in enumerate(lines) if line.startswith("Majority vote of the teams &"))
    assert lines[vote_line - 1] == r"\midrule" and lines[vote_line + 1].startswith("Oracle (any team right) &")
    for more in ((), ("--format", "json")):
        status, out, err = run(capsys, gold_path, paths[0], "--multi-label", "--analysis", *more)
        assert status == 2 and not out and "--analysis compares the runs of a board" in err
