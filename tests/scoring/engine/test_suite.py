"""The full suite of one matrix (suite.py) and the file-to-report entry point (scorer.py).

What this proves: a report holds every registered metric raw and calibrated, the calibrated
values being the same functions applied to the calibrated matrix; undefined calibration leaves
every calibrated value ``None``; per-class tables carry support and predicted counts as ints
for count matrices; the weighted averages of paper 004 reduce to the suite's macro metrics and
to accuracy as they should; and ``score_files`` builds the hard or soft matrix from files.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.engine import metrics as m
from scoring.engine.calibration import calibrate
from scoring.engine.registry import METRICS, get
from scoring.engine.scorer import score_files
from scoring.engine.suite import plain_number, score_matrix, weighted_averages

MATRIX = np.array([[5, 1, 0], [2, 6, 1], [3, 3, 9]])
LABELS = ("a", "b", "c")


def test_report_holds_every_metric_raw_and_calibrated() -> None:
    report = score_matrix(MATRIX, labels=LABELS)
    assert list(report.metrics) == list(report.calibrated) == [metric.key for metric in METRICS]
    calibrated = calibrate(MATRIX)
    for metric in METRICS:
        assert report.metrics[metric.key] == metric(MATRIX)
        assert report.calibrated[metric.key] == metric(calibrated)
    assert report.n_items == 30


def test_json_has_plain_numbers_and_the_matrix_in_contract_orientation() -> None:
    data = score_matrix(MATRIX, labels=LABELS).as_json()
    assert data["confusion_matrix"] == MATRIX.tolist()
    assert all(type(x) is int for row in data["confusion_matrix"] for x in row)
    assert data["per_class"]["c"]["support"] == 10 and data["per_class"]["c"]["predicted"] == 15
    assert data["per_class"]["a"]["recall"] == pytest.approx(0.5)


def test_undefined_calibration_makes_every_calibrated_value_none() -> None:
    report = score_matrix(np.array([[2, 0], [1, 0]]), labels=("a", "b"))
    assert report.calibrated_matrix is None
    assert set(report.calibrated.values()) == {None}
    assert all(value is None for row in report.calibrated_per_class.values() for value in row.values())


def test_labels_must_match_the_matrix() -> None:
    with pytest.raises(ValueError, match="labels"):
        score_matrix(MATRIX, labels=("a", "b"))


def test_plain_number() -> None:
    assert type(plain_number(3.0)) is int
    assert plain_number(0.25) == 0.25


def test_weighted_averages_with_uniform_and_prevalence_weights() -> None:
    uniform = weighted_averages(MATRIX, m.uniform_weights(MATRIX))
    for measure in ("precision", "recall", "f1"):
        assert uniform["micro"][measure] == pytest.approx(m.accuracy(MATRIX))
        assert uniform["macro"][measure] == pytest.approx(get(f"macro_{measure}")(MATRIX))
    for measure in ("mcc", "bacc", "dp"):
        assert uniform["macro"][measure] == pytest.approx(get(f"macro_{measure}")(MATRIX))
        assert uniform["micro"][measure] == pytest.approx(get(f"micro_{measure}")(MATRIX))
    by_prevalence = weighted_averages(MATRIX, m.prevalence_weights(MATRIX))
    for measure in ("precision", "recall", "f1"):
        assert by_prevalence["macro"][measure] == pytest.approx(get(f"weighted_{measure}")(MATRIX))


def test_score_files_hard_and_soft() -> None:
    gold = b"id,label\n1,a\n2,b\n3,b\n"
    hard = score_files(gold, b"id,label\n3,a\n2,b\n1,a\n")
    assert hard.matrix.tolist() == [[1, 1], [0, 1]]
    soft = score_files(gold, b"id,a,b\n1,0.5,0.5\n2,0.25,0.75\n3,0,1\n")
    assert soft.matrix.tolist() == [[0.5, 0.25], [0.5, 1.75]]
    assert soft.n_items == 3
    fixed = score_files(gold, b"id,label\n1,a\n2,b\n3,b\n", labels=["b", "a", "c"])
    assert fixed.labels == ("b", "a", "c")
    assert fixed.matrix.tolist() == [[2, 0, 0], [0, 1, 0], [0, 0, 0]]
