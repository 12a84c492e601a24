"""The standalone scorer on a task with several labels an item: ``python -m scoring GOLD PRED ...
--multi-label``.

What this proves:

- one file's JSON is the contract: ``outputs`` (each the single-label report object of its column,
  the very object ``python -m scoring`` prints for that column alone), ``metrics`` (every suite
  metric's mean and the item metrics) and ``calibrated``; text names each output;
- a board's JSON: its outputs, each team's report, the ranks of every column (the item metrics
  raw only), a square rho matrix; text and LaTeX; ``--labels OUTPUT=a,b,c``;
- the errors: a bad file among several (exit 2, every bad file named with its line and column),
  options a task with several outputs does not take, a ``--labels`` without an output,
  ``--labels`` twice without ``--multi-label``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from scoring.__main__ import main
from scoring.engine.registry import ITEM_METRICS, ranking_metrics, suite_metrics

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
        (["--bootstrap", "10"], "--bootstrap does not apply with --multi-label"),
        (["--labels", "0,1"], "OUTPUT=a,b,c, got '0,1'"),
    ],
)
def test_options_it_does_not_take_are_refused(files, capsys, argv, message):
    gold, runs, _ = files
    status, out, err = run(capsys, gold, runs["A"], runs["B"], "--multi-label", "--format", "json", *argv)
    assert status == 2 and out == "" and message in err


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
