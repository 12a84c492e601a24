"""Hard and soft confusion matrices (paper 000, Section 2 and footnote 1).

What this proves: the hard matrix counts every (predicted, gold) pair in the contract's
orientation (rows predicted, columns gold) exactly as a one-item-at-a-time count does; the
soft matrix follows footnote 1 on a hand-worked example, equals the hard matrix for one-hot
probability rows, and keeps the gold counts in its column sums; bad codes are rejected. A
probability file read by the engine has its rows renormalised, so the soft matrix of outputs
printed with few decimals (rows summing to 0.999 or 1.001) still holds exactly one item per row.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from scoring.engine import io
from scoring.engine.confusion import hard_confusion, soft_confusion
from scoring.engine.scorer import confusion_of
from tests.scoring.strategies import MAX_N, PROPERTY, matrix_from_pairs


@st.composite
def labelled_items(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int]:
    """(predicted codes, gold codes, n) for up to 60 items."""
    n = draw(st.integers(min_value=1, max_value=MAX_N))
    size = draw(st.integers(min_value=0, max_value=60))
    codes = arrays(np.int64, (size,), elements=st.integers(min_value=0, max_value=n - 1))
    return draw(codes), draw(codes), n


def test_rows_are_predictions_and_columns_gold() -> None:
    matrix = hard_confusion(np.array([1, 1, 0]), np.array([0, 1, 0]), 2)
    assert matrix.tolist() == [[1, 0], [1, 1]]  # m[1, 0]: predicted 1, gold 0


@PROPERTY
@given(labelled_items())
def test_hard_matrix_counts_every_pair(items: tuple[np.ndarray, np.ndarray, int]) -> None:
    predicted, gold, n = items
    matrix = hard_confusion(predicted, gold, n)
    np.testing.assert_array_equal(matrix, matrix_from_pairs(predicted, gold, n))
    assert np.issubdtype(matrix.dtype, np.integer)
    assert matrix.sum() == len(gold)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32])
def test_small_code_types_do_not_overflow(dtype: type) -> None:
    codes = np.full(300, 99, dtype=dtype)
    matrix = hard_confusion(codes, codes, 100)
    assert matrix[99, 99] == 300 and matrix.sum() == 300


@pytest.mark.parametrize(
    ("predicted", "gold", "message"),
    [
        ([0, 2], [0, 1], "0..1"),
        ([0, -1], [0, 1], "0..1"),
        ([0.0, 1.0], [0, 1], "integer"),
        ([[0, 1]], [[0, 1]], "1-d"),
        ([0, 1, 1], [0, 1], "same length"),
    ],
)
def test_bad_codes_are_rejected(predicted: list, gold: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        hard_confusion(np.array(predicted), np.array(gold), 2)


def test_soft_matrix_of_paper_000_footnote_1() -> None:
    """m_ij = sum over items s with gold j of the probability of class i."""
    probabilities = np.array([[0.75, 0.25], [0.25, 0.75], [0.5, 0.5]])
    gold = np.array([0, 1, 1])
    # gold 0: item 1 -> column 0 = (0.75, 0.25); gold 1: items 2 and 3 -> (0.25 + 0.5, 0.75 + 0.5).
    np.testing.assert_array_equal(soft_confusion(probabilities, gold), [[0.75, 0.75], [0.25, 1.25]])


@PROPERTY
@given(labelled_items())
def test_one_hot_probabilities_give_exactly_the_hard_matrix(items: tuple[np.ndarray, np.ndarray, int]) -> None:
    predicted, gold, n = items
    one_hot = np.eye(n)[predicted]
    np.testing.assert_array_equal(soft_confusion(one_hot, gold), hard_confusion(predicted, gold, n))


@PROPERTY
@given(data=st.data(), items=labelled_items())
def test_soft_columns_hold_the_gold_counts(data: st.DataObject, items: tuple[np.ndarray, np.ndarray, int]) -> None:
    _, gold, n = items
    weights = data.draw(arrays(np.float64, (len(gold), n), elements=st.floats(min_value=1e-3, max_value=1.0)))
    probabilities = weights / weights.sum(axis=1, keepdims=True)
    matrix = soft_confusion(probabilities, gold)
    np.testing.assert_allclose(matrix.sum(axis=0), np.bincount(gold, minlength=n), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(matrix.sum(axis=1), probabilities.sum(axis=0), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("probabilities", "gold", "message"),
    [
        ([0.5, 0.5], [0], "2-d"),
        ([[0.5, 0.5]], [0, 1], "same length"),
        ([[0.5, 0.5]], [2], "0..1"),
    ],
)
def test_bad_probability_input_is_rejected(probabilities: list, gold: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        soft_confusion(np.array(probabilities), np.array(gold))


def test_the_soft_matrix_of_a_file_with_rounded_rows_holds_one_item_per_row() -> None:
    """Rows that sum to 0.999 or 1.0005 pass validation and are renormalised before the matrix is
    built (paper 000, footnote 1): the total is the number of items, the columns the gold counts."""
    gold = io.read_labels(b"id,label\n1,a\n2,b\n3,a\n4,b\n")
    predictions = io.read_predictions(b"id,a,b\n1,0.333,0.666\n2,0.5005,0.5\n3,0.9995,0\n4,0.2,0.8\n", gold=gold)
    matrix = confusion_of(gold, predictions)
    assert matrix.sum() == pytest.approx(4, rel=0, abs=1e-12)
    np.testing.assert_allclose(matrix.sum(axis=0), [2, 2], rtol=0, atol=1e-12)
    np.testing.assert_allclose(matrix[:, 0], [0.333 / 0.999 + 1, 0.666 / 0.999], rtol=1e-12)


@PROPERTY
@given(data=st.data(), items=labelled_items())
def test_soft_columns_hold_the_gold_counts_for_rounded_probability_files(
    data: st.DataObject, items: tuple[np.ndarray, np.ndarray, int]
) -> None:
    """Probabilities printed with three decimals sum to 1 only within the reader's tolerance;
    the matrix from the file keeps the gold counts in its columns all the same."""
    _, gold_codes, n = items
    assume(len(gold_codes) > 0)
    labels = [f"c{k}" for k in range(n)]
    weights = data.draw(arrays(np.float64, (len(gold_codes), n), elements=st.floats(min_value=1e-3, max_value=1.0)))
    printed = np.round(weights / weights.sum(axis=1, keepdims=True), 3)
    assume(np.all(np.abs(printed.sum(axis=1) - 1) <= io.PROBABILITY_TOLERANCE))
    ids = [str(k) for k in range(len(gold_codes))]
    gold_text = "id,label\n" + "".join(f"{i},{labels[c]}\n" for i, c in zip(ids, gold_codes, strict=True))
    rows = "".join(f"{i}," + ",".join(f"{p:.3f}" for p in row) + "\n" for i, row in zip(ids, printed, strict=True))
    gold = io.read_labels(gold_text.encode(), labels=labels)
    predictions = io.read_predictions(("id," + ",".join(labels) + "\n" + rows).encode(), gold=gold)
    matrix = confusion_of(gold, predictions)
    np.testing.assert_allclose(matrix.sum(axis=0), np.bincount(gold_codes, minlength=n), rtol=0, atol=1e-9)
    assert matrix.sum() == pytest.approx(len(gold_codes), rel=0, abs=1e-9)
