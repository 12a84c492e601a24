"""The errors of ordinal tasks: SemEval-2017 Task 4, subtask C (Rosenthal, Farra & Nakov 2017).

What this proves:

- MAE^M = (1/|C|) Σ_j (1/|Te_j|) Σ_{x ∈ Te_j} |h(x) − y(x)| over the gold classes that have
  items, and MAE^µ = (1/|Te|) Σ |h(x) − y(x)|, with the classes at positions 0, 1, … in label
  order: by hand on a five-point scale (every class present, and one class without items),
  and on random label arrays against an independent numpy computation from the arrays
  (close) and the exact fraction (the same double, correctly rounded);
- a probability row's error is its expected absolute error Σ_i p_i |i − y|, exactly;
- calibration: MAE^M is a mean of per-class means, so its calibrated value is its raw value,
  the same double; MAE^µ calibrated is MAE^M, the same double (every class then has the same
  mass); calibration is undefined, and both calibrated values with it, when a class has no
  gold item, where the raw MAE^M is still defined over the classes that have items;
- the errors read the label order (a renaming changes them), are lower-is-better, and are in
  a report, a board's columns, the bootstrap and the what-if only for a task declared ordinal.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import registry
from scoring.engine.bootstrap import bootstrap
from scoring.engine.canonical import ExactMatrix, StackValues, exact_values
from scoring.engine.columns import Column, paired_columns, ranking_columns
from scoring.engine.confusion import hard_confusion, soft_confusion
from scoring.engine.ranking import LOWER, competition_ranks
from scoring.engine.suite import score_matrix
from scoring.engine.whatif import what_if
from tests.scoring.strategies import PROPERTY, matrix_from_pairs, permute_classes, supported_matrices

MACRO_MAE, MAE = registry.get("macro_mae"), registry.get("mae")
SCALE = ("-2", "-1", "0", "1", "2")


def codes(labels: list[str]) -> list[int]:
    return [SCALE.index(label) for label in labels]


def test_semeval_2017_task_4c_by_hand_on_a_five_point_scale() -> None:
    """Distances 1, 0 | 2 | 0, 1, 0 | 1 | 2: the classes' means are 1/2, 2, 1/3, 1, 2, so
    MAE^M = (1/5)(35/6) = 7/6; the items' mean is 7/8."""
    gold = codes(["-2", "-2", "-1", "0", "0", "0", "1", "2"])
    predicted = codes(["-1", "-2", "1", "0", "-1", "0", "2", "0"])
    matrix = matrix_from_pairs(predicted, gold, 5)
    assert MACRO_MAE(matrix) == 7 / 6
    assert MAE(matrix) == 7 / 8


def test_a_gold_class_without_items_is_left_out_of_the_macro_average() -> None:
    """The same items without the one of gold class 1: MAE^M over the four classes that have
    items is (1/4)(1/2 + 2 + 1/3 + 2) = 29/24, not a mean over five."""
    gold = codes(["-2", "-2", "-1", "0", "0", "0", "2"])
    predicted = codes(["-1", "-2", "1", "0", "-1", "0", "0"])
    matrix = matrix_from_pairs(predicted, gold, 5)
    assert MACRO_MAE(matrix) == 29 / 24
    assert MAE(matrix) == 6 / 7
    report = score_matrix(matrix, labels=SCALE, ordinal=True)
    assert report.metrics["macro_mae"] == 29 / 24
    assert report.calibrated["macro_mae"] is None and report.calibrated["mae"] is None  # no calibration


def test_always_the_middle_of_five_scores_six_fifths_whatever_the_class_sizes() -> None:
    """A constant prediction k is |k - j| off on every item of class j: MAE^M is the mean of
    those distances over the classes, (2 + 1 + 0 + 1 + 2)/5 for the middle, while MAE^µ
    weighs them by class size."""
    sizes = [3, 10, 40, 7, 1]
    matrix = np.zeros((5, 5), dtype=np.int64)
    matrix[2] = sizes
    assert MACRO_MAE(matrix) == 6 / 5
    assert MAE(matrix) == float(Fraction(2 * 3 + 10 + 7 + 2 * 1, sum(sizes)))


def test_no_items_no_error() -> None:
    assert MACRO_MAE(np.zeros((3, 3))) is None
    assert MAE(np.zeros((3, 3))) is None
    assert MACRO_MAE([[4]]) == 0.0


def numpy_errors(gold: np.ndarray, predicted: np.ndarray) -> tuple[float | None, float | None]:
    """MAE^M and MAE^µ straight from the label arrays, in numpy."""
    if len(gold) == 0:
        return None, None
    distance = np.abs(predicted - gold)
    per_class = [distance[gold == j].mean() for j in np.unique(gold)]
    return float(np.mean(per_class)), float(distance.mean())


def exact_errors(gold: list[int], predicted: list[int]) -> tuple[float | None, float | None]:
    """The same, in fractions, rounded once."""
    if not gold:
        return None, None
    classes = sorted(set(gold))
    means = [
        Fraction(sum(abs(p - g) for g, p in zip(gold, predicted, strict=True) if g == j), gold.count(j))
        for j in classes
    ]
    macro = sum(means, Fraction(0)) / len(means)
    micro = Fraction(sum(abs(p - g) for g, p in zip(gold, predicted, strict=True)), len(gold))
    return float(macro), float(micro)


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=1, max_value=7), size=st.integers(min_value=0, max_value=80))
def test_the_engine_is_an_independent_computation_from_the_label_arrays(data, n: int, size: int) -> None:
    gold = data.draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size))
    predicted = data.draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size))
    matrix = hard_confusion(np.array(predicted, dtype=np.int64), np.array(gold, dtype=np.int64), n)
    report = score_matrix(matrix, labels=[str(i) for i in range(n)], ordinal=True)
    found = report.metrics["macro_mae"], report.metrics["mae"]
    assert found == exact_errors(gold, predicted)
    for value, expected in zip(found, numpy_errors(np.array(gold), np.array(predicted)), strict=True):
        assert (value is None and expected is None) or value == pytest.approx(expected, rel=1e-12)


@PROPERTY
@given(data=st.data(), n=st.integers(min_value=2, max_value=5), size=st.integers(min_value=1, max_value=30))
def test_a_probability_row_errs_by_its_expected_distance(data, n: int, size: int) -> None:
    """Rows of quarters (sums exact in doubles): each item of gold y adds Σ_i p_i |i - y|."""
    gold = data.draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size))
    rows = np.zeros((size, n))
    for row in rows:
        for quarter in data.draw(st.lists(st.integers(0, n - 1), min_size=4, max_size=4)):
            row[quarter] += 0.25
    expected = [sum(Fraction(row[i]) * abs(i - y) for i in range(n)) for row, y in zip(rows, gold, strict=True)]
    classes = sorted(set(gold))
    per_class = [sum(e for e, y in zip(expected, gold, strict=True) if y == j) / gold.count(j) for j in classes]
    matrix = soft_confusion(rows, np.array(gold))
    assert MACRO_MAE(matrix) == float(sum(per_class, Fraction(0)) / len(classes))
    assert MAE(matrix) == float(sum(expected, Fraction(0)) / size)


@PROPERTY
@given(st.one_of(supported_matrices(), supported_matrices(floats=True)))
def test_calibrated_macro_mae_is_the_raw_one_and_calibrated_mae_is_macro_mae(matrix: np.ndarray) -> None:
    """Calibration divides gold column j by n·prevalence(j): each class's mean error is
    unchanged, so MAE^M is; and every class then has mass 1/n, so MAE^µ becomes the mean of the
    class means. Equal exact values are the same double."""
    report = score_matrix(matrix, labels=[str(i) for i in range(len(matrix))], ordinal=True)
    assert report.calibrated["macro_mae"] == report.metrics["macro_mae"]
    assert report.calibrated["mae"] == report.metrics["macro_mae"]


def test_the_errors_read_the_label_order() -> None:
    """Gold 0 predicted 2 is two steps off; swap the names of classes 0 and 1 and it is one."""
    matrix = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1]])
    renamed = permute_classes(matrix, [1, 0, 2])
    assert MAE(matrix) == 2 / 4 and MAE(renamed) == 1 / 4
    assert MACRO_MAE(matrix) != MACRO_MAE(renamed)


def test_only_an_ordinal_report_holds_the_errors() -> None:
    matrix = np.array([[3, 1, 0], [1, 2, 2], [0, 0, 1]])
    nominal = score_matrix(matrix, labels=["a", "b", "c"])
    assert "macro_mae" not in nominal.metrics and "mae" not in nominal.calibrated
    assert not nominal.ordinal
    ordinal = score_matrix(matrix, labels=["a", "b", "c"], ordinal=True)
    assert ordinal.ordinal
    assert list(ordinal.metrics)[-2:] == ["macro_mae", "mae"]
    assert ordinal.as_json()["metrics"]["macro_mae"] == 1.25 / 3
    assert ordinal.as_json()["metrics"]["mae"] == 0.4
    assert {key: ordinal.metrics[key] for key in nominal.metrics} == nominal.metrics


def test_an_ordinal_task_s_columns_rank_the_lowest_error_first() -> None:
    labels = ["low", "mid", "high"]
    raw = ranking_columns(labels, ordinal=True)
    ids = [column.id for column in raw]
    assert ids[ids.index("macro_mae") + 1] == "mae" and ids[ids.index("mae") + 1] == "recall[low]"
    assert [c.id for c in ranking_columns(labels)] == [i for i in ids if i not in ("macro_mae", "mae")]
    assert Column("macro_mae").direction is LOWER and Column("mae", calibrated=True).direction is LOWER
    assert "mae_c" in [column.id for column in paired_columns(labels, ordinal=True)]
    assert "mae_c" not in [column.id for column in paired_columns(labels)]


def test_the_bootstrap_and_the_what_if_score_and_rank_the_errors() -> None:
    """Replicate values are the exact route's doubles (the stack route of the bootstrap), and
    each replicate ranks the lowest error first; the what-if re-estimates them, MAE^M staying
    where it is (prevalence invariant) and MAE^µ moving."""
    rng = np.random.default_rng(4)
    gold = rng.integers(0, 4, size=120)
    teams = [np.where(rng.random(120) < share, gold, rng.integers(0, 4, size=120)) for share in (0.8, 0.5, 0.3)]
    columns = [Column("macro_mae"), Column("mae"), Column("mae", calibrated=True)]
    stability = bootstrap(
        gold, teams, labels=list("abcd"), replicates=40, seed=1, columns=columns, heatmap=columns, keep_replicates=True
    )
    matrices = np.array([hard_confusion(team, gold, 4) for team in teams])
    stack = StackValues(matrices)
    assert stack.values(MACRO_MAE.formula, scaled=False).tolist() == [MACRO_MAE(m) for m in matrices]
    assert stack.values(MAE.formula, scaled=True).tolist() == [MACRO_MAE(m) for m in matrices]
    for replicate in range(40):
        for index in range(len(columns)):
            values = stability.replicate_values[replicate, index].tolist()
            ranks = stability.replicate_ranks[replicate, index].tolist()
            assert ranks == competition_ranks(values, LOWER)
    scenario = what_if(dict(zip("xyz", matrices, strict=True)), labels=list("abcd"), target=[1, 2, 3, 4], ordinal=True)
    assert scenario.values(Column("macro_mae")) == [MACRO_MAE(m) for m in matrices]
    scaled = [ExactMatrix.of(m).scaled_to([1, 2, 3, 4]) for m in matrices]
    assert scenario.values(Column("mae")) == [exact_values(MAE.formula, s.quantities) for s in scaled]
    assert scenario.values(Column("mae")) != scenario.values_today(Column("mae"))
    assert scenario.ranks(Column("mae")) == dict(
        zip("xyz", competition_ranks(scenario.values(Column("mae")), LOWER), strict=True)
    )
