"""The standalone scorer, ``python -m scoring GOLD PRED [--format json] [--labels a,b,c]``.

What this proves: the JSON output is the contract (the metric keys listed in the issue, raw and
calibrated; per-class measures; the confusion matrix with predictions in rows), with values
that match hand computation and ``null`` -- never NaN or Infinity -- where a value is undefined;
``--labels`` fixes the label order; the text format prints the tables; a bad file exits non-zero
with the file and the line on stderr and nothing on stdout. A few runs go through a real
subprocess; the rest call ``main`` in-process to stay fast.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import scoring.__main__ as entry
from scoring.__main__ import main
from scoring.engine.registry import METRICS

REPO = Path(__file__).resolve().parents[2]

CONTRACT_METRICS = {
    "accuracy",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "macro_f1_of_averages",
    "macro_f1_gap",
    "gmean_recall",
    "hmean_recall",
    "kappa",
    "mcc",
    "weighted_precision",
    "weighted_recall",
    "weighted_f1",
    "macro_mcc",
    "macro_bacc",
    "macro_dp",
    "micro_mcc",
    "micro_bacc",
    "micro_dp",
}
"""The metric keys of the JSON contract, written out (not read from the registry) on purpose."""

PER_CLASS_KEYS = {"precision", "recall", "f1", "mcc", "bacc", "dp", "support", "predicted"}

GOLD = "id,label\n1,neg\n2,neg\n3,neu\n4,pos\n5,pos\n6,pos\n"
PREDICTIONS = "id,label\n6,pos\n5,neu\n4,pos\n3,neu\n2,pos\n1,neg\n"
# Rows predicted, columns gold (neg, neu, pos): items 1 | 3 | 4, 6 on the diagonal;
# item 2 (gold neg) predicted pos, item 5 (gold pos) predicted neu.
MATRIX = [[1, 0, 0], [0, 1, 1], [1, 0, 2]]


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def strict_json(text: str) -> dict:
    """Parse JSON, refusing the NaN/Infinity extensions that Python's json would accept."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the scorer's JSON")

    return json.loads(text, parse_constant=refuse)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scoring", *args], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )


def run_main(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_contract_in_a_subprocess(tmp_path: Path) -> None:
    result = run_cli(write(tmp_path, "gold.csv", GOLD), write(tmp_path, "pred.csv", PREDICTIONS), "--format", "json")
    assert result.returncode == 0, result.stderr
    report = strict_json(result.stdout)
    assert set(report) >= {"n_items", "labels", "confusion_matrix", "metrics", "calibrated", "per_class"}
    assert set(report["metrics"]) == CONTRACT_METRICS
    assert set(report["calibrated"]) == CONTRACT_METRICS
    assert report["n_items"] == 6
    assert report["labels"] == ["neg", "neu", "pos"]
    assert report["confusion_matrix"] == MATRIX
    assert report["metrics"]["accuracy"] == pytest.approx(4 / 6)
    assert report["metrics"]["macro_recall"] == pytest.approx((1 / 2 + 1 + 2 / 3) / 3)
    assert report["calibrated"]["accuracy"] == pytest.approx(report["metrics"]["macro_recall"])
    assert set(report["per_class"]) == {"neg", "neu", "pos"}
    for values in report["per_class"].values():
        assert set(values) == PER_CLASS_KEYS
    pos = report["per_class"]["pos"]
    assert (pos["precision"], pos["recall"], pos["support"], pos["predicted"]) == (pytest.approx(2 / 3), 2 / 3, 3, 3)


def test_bad_file_in_a_subprocess(tmp_path: Path) -> None:
    predictions = write(tmp_path, "pred.csv", "id,label\n1,neg\n2,maybe\n")
    result = run_cli(write(tmp_path, "gold.csv", GOLD), predictions, "--format", "json")
    assert result.returncode != 0
    assert result.stdout == ""
    assert f"{predictions}, line 3" in result.stderr
    assert "maybe" in result.stderr


def test_labels_fix_the_order(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gold, predictions = write(tmp_path, "gold.csv", GOLD), write(tmp_path, "pred.csv", PREDICTIONS)
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--labels", "pos, neg,neu")
    assert status == 0
    report = strict_json(out)
    assert report["labels"] == ["pos", "neg", "neu"]
    order = [2, 0, 1]  # pos, neg, neu in the default (sorted) order
    assert report["confusion_matrix"] == [[MATRIX[i][j] for j in order] for i in order]
    assert list(report["per_class"]) == ["pos", "neg", "neu"]


def test_undefined_values_are_null(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A label nobody uses makes calibration undefined; one predicted class makes MCC and DP
    undefined: all of them must be null, never NaN."""
    gold = write(tmp_path, "gold.csv", GOLD)
    predictions = write(tmp_path, "pred.csv", "id,label\n1,pos\n2,pos\n3,pos\n4,pos\n5,pos\n6,pos\n")
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--labels", "neg,neu,pos,other")
    assert status == 0
    report = strict_json(out)
    assert all(value is None for value in report["calibrated"].values())
    assert report["metrics"]["mcc"] is None
    assert report["metrics"]["macro_dp"] is None
    assert report["metrics"]["accuracy"] == pytest.approx(3 / 6)
    assert report["per_class"]["other"]["support"] == 0
    assert report["per_class"]["other"]["bacc"] is None


def test_soft_predictions(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gold = write(tmp_path, "gold.csv", "id,label\n1,a\n2,b\n")
    predictions = write(tmp_path, "pred.csv", "id,b,a\n1,0.25,0.75\n2,0.5,0.5\n")
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json")
    assert status == 0
    report = strict_json(out)
    assert report["n_items"] == 2
    assert report["confusion_matrix"] == [[0.75, 0.5], [0.25, 0.5]]
    assert report["metrics"]["accuracy"] == pytest.approx((0.75 + 0.5) / 2)


def test_text_format_prints_the_tables(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gold = write(tmp_path, "gold.csv", GOLD)
    predictions = write(tmp_path, "pred.csv", "id,label\n1,pos\n2,pos\n3,pos\n4,pos\n5,pos\n6,pos\n")
    status, out, err = run_main(capsys, gold, predictions)
    assert status == 0 and err == ""
    assert out.startswith("6 items, 3 classes: neg, neu, pos\n")
    assert "Confusion matrix (rows: predicted, columns: gold)" in out
    assert "Prevalence-calibrated matrix" in out
    assert "pred pos" in out and "gold neu" in out
    for metric in METRICS:
        assert metric.name in out and metric.key in out
    mcc_line = next(line for line in out.splitlines() if line.startswith(METRICS_BY_KEY["mcc"].name))
    assert "undefined" in mcc_line
    assert not re.search(r"\b(nan|inf|infinity)\b", out, flags=re.IGNORECASE)


METRICS_BY_KEY = {metric.key: metric for metric in METRICS}


@pytest.mark.parametrize(
    ("gold", "predictions", "where"),
    [
        (GOLD, "id,label\n1,neg\n1,neg\n", "pred.csv, line 3"),
        ("id,label\n1,neg\n2\xff\n", PREDICTIONS, "gold.csv, line 3"),
        (GOLD, "", "pred.csv"),
        (GOLD, "id,label\n1,neg\n", "pred.csv"),  # five gold ids have no prediction
    ],
)
def test_bad_files_exit_with_status_2_and_name_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture, gold: str, predictions: str, where: str
) -> None:
    gold_path = write(tmp_path, "gold.csv", gold.encode("latin-1"))
    status, out, err = run_main(capsys, gold_path, write(tmp_path, "pred.csv", predictions), "--format", "json")
    assert status == 2
    assert out == ""
    assert err.startswith("error: ") and str(tmp_path / where) in err


def test_a_missing_file_exits_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status, out, err = run_main(capsys, str(tmp_path / "nope.csv"), write(tmp_path, "pred.csv", PREDICTIONS))
    assert status == 2 and out == ""
    assert "nope.csv" in err


def test_weights_add_the_weighted_averages_of_paper_004(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gold, predictions = write(tmp_path, "gold.csv", GOLD), write(tmp_path, "pred.csv", PREDICTIONS)
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--weights", "2,1,1")
    assert status == 0
    weighted = strict_json(out)["weighted"]
    assert weighted["weights"] == [2.0, 1.0, 1.0]
    # Per-class recall in MATRIX (columns neg, neu, pos) is 1/2, 1, 2/3; macro-weighted with 2:1:1.
    assert weighted["macro"]["recall"] == pytest.approx((2 * 0.5 + 1 + 2 / 3) / 4)
    # Micro-weighted recall pools TP (1, 1, 2) and FN (1, 0, 1) with the same weights.
    assert weighted["micro"]["recall"] == pytest.approx((2 + 1 + 2) / (2 + 1 + 2 + 2 + 0 + 1))


def test_prevalence_scales_every_metric_to_the_target_shares(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gold, predictions = write(tmp_path, "gold.csv", GOLD), write(tmp_path, "pred.csv", PREDICTIONS)
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--prevalence", "1,1,1")
    assert status == 0
    report = strict_json(out)
    assert report["scaled"]["metrics"] == report["calibrated"]  # equal shares are Eq. 6's calibration
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--prevalence", "0.5,0.25,0.25")
    scaled = strict_json(out)["scaled"]["metrics"]
    assert scaled["accuracy"] == pytest.approx(0.5 * 0.5 + 0.25 * 1 + 0.25 * 2 / 3)
    assert scaled["macro_recall"] == pytest.approx(report["metrics"]["macro_recall"])


# A 4-class file whose gold counts (3, 7, 11, 13) make float scaling miss the exact values.
GOLD_4 = "id,label\n" + "".join(f"{i},{'abcd'[c]}\n" for i, c in enumerate([0] * 3 + [1] * 7 + [2] * 11 + [3] * 13))
PREDICTIONS_4 = "id,label\n" + "".join(
    f"{i},{'abcd'[(c + (i % 3 == 0)) % 4]}\n" for i, c in enumerate([0] * 3 + [1] * 7 + [2] * 11 + [3] * 13)
)


@pytest.mark.parametrize("target", ["1,1,1,1", "1/4,1/4,1/4,1/4", "uniform", "0.25,0.25,0.25,0.25"])
def test_single_file_prevalence_at_equal_shares_is_the_calibrated_suite(tmp_path, capsys, target) -> None:
    """One exact path for one file and for a board: equal shares, however written (``1/3`` as
    ``--help`` offers), give every calibrated value to the last bit."""
    gold, predictions = write(tmp_path, "gold.csv", GOLD_4), write(tmp_path, "pred.csv", PREDICTIONS_4)
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--prevalence", target)
    assert status == 0
    report = strict_json(out)
    assert report["scaled"]["metrics"] == report["calibrated"]


def test_single_file_prevalence_is_the_board_s_what_if(tmp_path, capsys) -> None:
    gold, predictions = write(tmp_path, "gold.csv", GOLD_4), write(tmp_path, "a.csv", PREDICTIONS_4)
    other = write(tmp_path, "b.csv", GOLD_4)
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--prevalence", "1/3,1/6,1/6,1/3")
    assert status == 0
    single = strict_json(out)["scaled"]
    assert single["prevalence"] == [1 / 3, 1 / 6, 1 / 6, 1 / 3]
    status, out, _ = run_main(capsys, gold, predictions, other, "--format", "json", "--prevalence", "1/3,1/6,1/6,1/3")
    columns = strict_json(out)["prevalence_what_if"]["columns"]
    for key, value in single["metrics"].items():
        if key in columns:
            assert columns[key]["a"]["value"] == value, key


@pytest.mark.parametrize("option", [("--weights", "1,x,1"), ("--weights", "1,1"), ("--prevalence", "1,0,1")])
def test_bad_weights_or_shares_exit_with_status_2(tmp_path: Path, capsys: pytest.CaptureFixture, option) -> None:
    gold, predictions = write(tmp_path, "gold.csv", GOLD), write(tmp_path, "pred.csv", PREDICTIONS)
    try:
        status = main([gold, predictions, *option])
    except SystemExit as leaving:
        status = leaving.code
    assert status == 2
    assert option[0] in capsys.readouterr().err


def test_labels_that_start_with_a_minus_are_a_value_not_an_option(tmp_path: Path, capsys) -> None:
    """An ordinal scale's labels (-1, 0, 1): ``--labels -1,0,1`` names them, as written."""
    gold = write(tmp_path, "gold.csv", "id,label\n1,-1\n2,0\n3,1\n4,1\n")
    predictions = write(tmp_path, "pred.csv", "id,label\n1,-1\n2,1\n3,1\n4,0\n")
    for option in (["--labels", "-1,0,1"], ["--labels=-1,0,1"]):
        status, out, err = run_main(capsys, gold, predictions, "--format", "json", *option)
        assert status == 0, err
        assert strict_json(out)["labels"] == ["-1", "0", "1"]
    status, out, _ = run_main(capsys, gold, predictions, "--format", "json", "--labels", "1,0,-1")
    assert strict_json(out)["labels"] == ["1", "0", "-1"]


class Left(Exception):
    """Raised by the stand-in for ``os._exit``: the status the scorer left with."""


@pytest.mark.parametrize(
    ("argv", "status"), [(["gold.csv", "pred.csv", "--format", "json"], 0), (["--format", "xml"], 2)]
)
def test_the_scorer_leaves_through_os_exit_once_its_output_is_flushed(tmp_path, monkeypatch, capsys, argv, status):
    """The entry point leaves through ``os._exit`` with main's status, after its whole output is
    written. (An interpreter that exits normally runs C++'s static destructors, and about 1 run
    in 300 of a one-line file ended with SIGABRT, status 134, "terminate called without an
    active exception": Arrow's reading threads were still winding down.)"""
    write(tmp_path, "gold.csv", "id,label\n1,a\n")
    write(tmp_path, "pred.csv", "id,label\n1,a\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["scoring", *argv])

    def leave(code: int) -> None:
        raise Left(code, capsys.readouterr())

    monkeypatch.setattr(entry.os, "_exit", leave)
    with pytest.raises(Left) as left:
        entry.run()
    code, output = left.value.args
    assert code == status
    if status == 0:
        assert json.loads(output.out)["n_items"] == 1
    else:
        assert "invalid choice" in output.err


def test_exit_statuses_and_output_survive_the_exit_path(tmp_path: Path) -> None:
    good = run_cli(write(tmp_path, "gold.csv", GOLD), write(tmp_path, "pred.csv", PREDICTIONS), "--format", "json")
    assert good.returncode == 0 and strict_json(good.stdout)["n_items"] == 6
    bad = run_cli(write(tmp_path, "gold2.csv", GOLD), write(tmp_path, "bad.csv", "id,label\n1,zzz\n"))
    assert bad.returncode == 2 and bad.stdout == "" and "bad.csv, line 2" in bad.stderr
    usage = run_cli("--format", "xml")
    assert usage.returncode == 2 and "invalid choice" in usage.stderr
