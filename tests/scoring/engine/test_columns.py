"""Board columns: which columns a task has, how each reads its value, and that ids are looked up,
never parsed, so labels such as ``x]``, ``a[b]`` or ``_c`` work like any other.
"""

from __future__ import annotations

import pickle
from fractions import Fraction

import numpy as np
import pytest

from scoring.engine import registry
from scoring.engine.columns import (
    PAPER_SET_KEYS,
    Column,
    column_by_id,
    paired_columns,
    ranking_columns,
    score_fields,
)
from scoring.engine.suite import score_matrix

M = np.array([[5, 1, 0], [2, 6, 1], [3, 3, 9]])
LABELS = ("neg", "neu", "pos")
ODD_LABELS = ("x]", "a[b]", "_c")


def test_a_board_has_every_ranking_metric_then_each_class_recall() -> None:
    columns = ranking_columns(LABELS, calibrated=False)
    suite = [metric.key for metric in registry.ranking_metrics()]
    assert [c.key for c in columns[: len(suite)]] == suite
    assert all(c.label is None for c in columns[: len(suite)])
    assert [(c.key, c.label) for c in columns[len(suite) :]] == [("recall", label) for label in LABELS]
    assert not any(c.calibrated for c in columns)
    both = ranking_columns(LABELS, calibrated=None)
    assert both == columns + [c.counterpart() for c in columns]


def test_per_class_columns_read_their_class_values_raw_and_calibrated() -> None:
    report = score_matrix(M, labels=LABELS)
    columns = ranking_columns(LABELS, calibrated=None, class_measures=("recall", "f1"))
    by_id = {c.id: c for c in columns}
    # recall of "neu" = m[1, 1] / prevalence(1) = 6 / 10; F1 of "pos" = 2*9 / (bias 15 + prevalence 10).
    assert by_id["recall[neu]"].value(report) == pytest.approx(Fraction(6, 10), rel=1e-15)
    assert by_id["f1[pos]"].value(report) == pytest.approx(Fraction(18, 25), rel=1e-15)
    # Calibration scales every gold column to the same mass; class recall does not change (B.4).
    assert by_id["recall[neu]_c"].value(report) == pytest.approx(Fraction(6, 10), rel=1e-15)
    assert by_id["macro_recall"].value(report) == pytest.approx(
        (Fraction(5, 10) + Fraction(6, 10) + Fraction(9, 10)) / 3
    )
    assert by_id["recall[neu]"].metric is registry.class_measure("recall")
    assert by_id["recall[neu]"].name == "Recall of class 'neu'"
    assert by_id["recall[neu]_c"].symbol == "R(neu)_c"


@pytest.mark.parametrize("label", ODD_LABELS)
def test_any_label_reads_its_own_value(label: str) -> None:
    labels = (label, "other", "third")
    report = score_matrix(M, labels=labels)
    columns = ranking_columns(labels, calibrated=None)
    recall = column_by_id(columns, f"recall[{label}]")
    assert recall == Column("recall", label)
    assert recall.value(report) == pytest.approx(0.5)
    assert column_by_id(columns, f"recall[{label}]_c") == Column("recall", label, calibrated=True)
    assert column_by_id(columns, f"recall[{label}]_c").value(report) == pytest.approx(0.5)
    assert len({c.id for c in columns}) == len(columns)


def test_paired_columns_put_each_metric_next_to_its_calibrated_version() -> None:
    paper = paired_columns(LABELS, paper_set=True)
    raw = paper[::2]
    assert [c.key for c in raw] == [*PAPER_SET_KEYS, "recall", "recall", "recall"]
    assert paper[1::2] == [c.counterpart() for c in raw]
    assert len(paired_columns(LABELS)) == 2 * len(ranking_columns(LABELS))


def test_columns_are_plain_data() -> None:
    column = Column("recall", "x]", calibrated=True)
    assert pickle.loads(pickle.dumps(column)) == column
    assert score_fields([column, Column("kappa")]) == ("calibrated", "calibrated_per_class", "metrics", "per_class")


def test_unscored_rows_and_undefined_values_read_none() -> None:
    assert Column("kappa").value(None) is None
    report = score_matrix(np.array([[2, 0], [1, 0]]), labels=("a", "b"))  # no gold b: no calibration
    assert Column("macro_recall", calibrated=True).value(report) is None
    assert Column("recall", "a", calibrated=True).value(report) is None
