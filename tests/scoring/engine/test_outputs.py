"""Tasks with several labels an item (scoring.engine.outputs, label_sets, outputs_board).

What this proves:

- every value is the double nearest to its exact value: each suite metric's mean over the outputs
  against the exact oracle of every output (tests/scoring/oracle.py), the item metrics against
  fractions counted here item by item, on runs with items with no gold label, items predicted
  with none, a label never predicted and a label never in the gold;
- scikit-learn, the peer library, gives the same label-set values (its multi-label averages with
  zero_division as the definitions say);
- HatEval B's ranking score (the mean of the three columns' macro F1 over 0 and 1) and its exact
  match ratio, computed independently from the columns, to the last digit of a double;
- a mean of geometric means of recalls (n-th roots of different degrees) is correctly rounded;
- a file is refused with the line and the column: a missing output column, a label not of its
  output, a duplicate id, an output the gold does not have.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import f1_score, hamming_loss, jaccard_score, precision_score, recall_score

from scoring.engine import io
from scoring.engine.confusion import hard_confusion
from scoring.engine.outputs import read_outputs, score_output_files
from scoring.engine.registry import suite_metrics
from scoring.engine.schemes import LABEL_VALUES, Output
from tests.scoring import oracle
from tests.scoring.strategies import PROPERTY


def csv(names: list[str], rows: np.ndarray, order: list[int] | None = None) -> bytes:
    """A file of an id column and one column per output, its lines in ``order``."""
    order = list(range(len(rows))) if order is None else order
    lines = [",".join(["id", *names])] + [",".join([f"item-{i}", *map(str, rows[i])]) for i in order]
    return ("\n".join(lines) + "\n").encode()


LABELS = ["anger", "joy", "fear", "trust"]


def label_runs(seed: int, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Gold and predicted 0/1 labels with every corner: an item with no gold label and one
    predicted with none, a label never predicted (trust), a label never in the gold (fear)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, (n, len(LABELS)))
    predicted = np.where(rng.random((n, len(LABELS))) < 0.7, gold, 1 - gold)
    gold[:, 2] = 0
    predicted[:, 3] = 0
    gold[0], predicted[1] = 0, 0
    return gold, predicted


def exact_item_values(gold: np.ndarray, predicted: np.ndarray) -> dict[str, Fraction]:
    """Every item metric as a fraction, counted item by item, label by label."""
    n, k = gold.shape
    values = {
        "exact_match": Fraction(sum(bool((gold[i] == predicted[i]).all()) for i in range(n)), n),
        "hamming_loss": Fraction(int((gold != predicted).sum()), n * k),
    }
    tp = [sum(int(gold[i, j] and predicted[i, j]) for i in range(n)) for j in range(k)]
    fp = [sum(int(predicted[i, j] and not gold[i, j]) for i in range(n)) for j in range(k)]
    fn = [sum(int(gold[i, j] and not predicted[i, j]) for i in range(n)) for j in range(k)]

    def ratio(a: int, b: int) -> Fraction:
        return Fraction(a, b) if b else Fraction(0)

    values["label_micro_precision"] = ratio(sum(tp), sum(tp) + sum(fp))
    values["label_micro_recall"] = ratio(sum(tp), sum(tp) + sum(fn))
    values["label_micro_f1"] = ratio(2 * sum(tp), 2 * sum(tp) + sum(fp) + sum(fn))
    values["label_macro_precision"] = sum(ratio(tp[j], tp[j] + fp[j]) for j in range(k)) / k
    values["label_macro_recall"] = sum(ratio(tp[j], tp[j] + fn[j]) for j in range(k)) / k
    values["label_macro_f1"] = sum(ratio(2 * tp[j], 2 * tp[j] + fp[j] + fn[j]) for j in range(k)) / k
    jaccard, samples = Fraction(0), Fraction(0)
    for i in range(n):
        p = {j for j in range(k) if predicted[i, j]}
        g = {j for j in range(k) if gold[i, j]}
        jaccard += Fraction(len(p & g), len(p | g)) if p | g else Fraction(1)
        samples += Fraction(2 * len(p & g), len(p) + len(g)) if p | g else Fraction(1)
    values["jaccard"], values["samples_f1"] = jaccard / n, samples / n
    return values


def oracle_means(gold: np.ndarray, predicted: np.ndarray, outputs: list[Output]) -> tuple[dict, dict]:
    """Each suite metric's exact mean over the outputs, raw and calibrated (None if undefined)."""
    raw, calibrated = {}, {}
    matrices = [
        oracle.cells(hard_confusion(predicted[:, j], gold[:, j], len(output.labels)))
        for j, output in enumerate(outputs)
    ]
    for metric in suite_metrics():
        values = [oracle.metric(m, metric.key) for m in matrices]
        raw[metric.key] = None if any(v is None for v in values) else oracle.mean(values)
        scaled = [oracle.calibrated(m) for m in matrices]
        values = [None if m is None else oracle.metric(m, metric.key) for m in scaled]
        calibrated[metric.key] = None if any(v is None for v in values) else oracle.mean(values)
    return raw, calibrated


@pytest.mark.parametrize("seed", range(6))
def test_every_value_is_the_double_nearest_to_its_exact_value(seed):
    gold, predicted = label_runs(seed)
    order = np.random.default_rng(seed).permutation(len(gold)).tolist()  # the prediction lines in another order
    report = score_output_files(csv(LABELS, gold), csv(LABELS[::-1], predicted[:, ::-1], order))
    assert [output.labels for output in report.outputs] == [LABEL_VALUES] * len(LABELS)
    for key, value in exact_item_values(gold, predicted).items():
        assert report.metrics[key] == oracle.nearest_double(value), key
    raw, calibrated = oracle_means(gold, predicted, list(report.outputs))
    for metric in suite_metrics():
        assert report.metrics[metric.key] == oracle.nearest_double(raw[metric.key]), metric.key
        assert report.calibrated[metric.key] == oracle.nearest_double(calibrated[metric.key]), metric.key
    assert report.calibrated["accuracy"] is None  # fear is never in the gold: its calibration is undefined
    assert report.reports["fear"].per_class["1"]["support"] == 0


@PROPERTY
@given(st.data())
def test_the_label_set_metrics_are_scikit_learn_s(data):
    n, k = data.draw(st.integers(1, 12)), data.draw(st.integers(2, 5))  # one column is binary to scikit-learn
    cells = st.lists(st.lists(st.integers(0, 1), min_size=k, max_size=k), min_size=n, max_size=n)
    gold, predicted = np.array(data.draw(cells)), np.array(data.draw(cells))
    names = [f"l{j}" for j in range(k)]
    report = score_output_files(csv(names, gold), csv(names, predicted), labels=dict.fromkeys(names, LABEL_VALUES))
    expected = exact_item_values(gold, predicted)
    peers = {
        "jaccard": jaccard_score(gold, predicted, average="samples", zero_division=1),
        "samples_f1": f1_score(gold, predicted, average="samples", zero_division=1),
        "label_micro_f1": f1_score(gold, predicted, average="micro", zero_division=0),
        "label_macro_f1": f1_score(gold, predicted, average="macro", zero_division=0),
        "label_micro_precision": precision_score(gold, predicted, average="micro", zero_division=0),
        "label_macro_recall": recall_score(gold, predicted, average="macro", zero_division=0),
        "hamming_loss": hamming_loss(gold, predicted),
    }
    for key, peer in peers.items():
        assert report.metrics[key] == oracle.nearest_double(expected[key]) == pytest.approx(peer, abs=1e-12), key


def test_hateval_b_ranking_score_and_exact_match_ratio_to_the_last_digit():
    """HatEval B: three 0/1 columns a tweet (HS, TR, AG), ranked by the mean over the columns of
    each column's macro F1 over 0 and 1, with the exact match ratio beside it."""
    rng = np.random.default_rng(2019)
    gold = rng.integers(0, 2, (3000, 3))
    predicted = np.where(rng.random((3000, 3)) < 0.75, gold, 1 - gold)
    names = ["HS", "TR", "AG"]
    report = score_output_files(csv(names, gold), csv(names, predicted))

    def column_macro_f1(g: np.ndarray, p: np.ndarray) -> Fraction:
        f1 = []
        for value in (0, 1):
            tp = int(((p == value) & (g == value)).sum())
            wrong = int(((p == value) != (g == value)).sum())
            f1.append(Fraction(2 * tp, 2 * tp + wrong) if tp + wrong else Fraction(0))
        return sum(f1) / 2

    score = sum(column_macro_f1(gold[:, j], predicted[:, j]) for j in range(3)) / 3
    emr = Fraction(int((gold == predicted).all(axis=1).sum()), len(gold))
    assert report.metrics["macro_f1"] == score.numerator / score.denominator
    assert report.metrics["exact_match"] == emr.numerator / emr.denominator
    assert "jaccard" in report.metrics  # 0/1 columns are labels: the label-set metrics too


def test_a_mean_of_geometric_means_of_roots_of_different_degrees_is_correctly_rounded():
    gold = np.array([[0, 0], [1, 1], [2, 0], [0, 1], [1, 0], [2, 1], [0, 0], [1, 1]])
    predicted = np.array([[0, 0], [1, 0], [2, 0], [1, 1], [1, 0], [0, 1], [0, 1], [1, 1]])
    report = score_output_files(csv(["three", "two"], gold), csv(["three", "two"], predicted))
    assert [output.labels for output in report.outputs] == [("0", "1", "2"), LABEL_VALUES]
    values = [
        oracle.metric(oracle.cells(hard_confusion(predicted[:, j], gold[:, j], n)), "gmean_recall")
        for j, n in ((0, 3), (1, 2))
    ]
    assert report.metrics["gmean_recall"] == oracle.nearest_double(oracle.mean(values))
    assert "jaccard" not in report.metrics and report.metrics["exact_match"] == 4 / 8


def test_an_output_s_labels_can_be_given_in_their_order():
    gold = np.array([[0, 1], [1, 0], [1, 1]])
    report = score_output_files(csv(["a", "b"], gold), csv(["a", "b"], gold), labels={"a": ["1", "0"]})
    assert report.outputs == (Output("a", ("1", "0")), Output("b", LABEL_VALUES))
    assert report.reports["a"].matrix.tolist() == [[2, 0], [0, 1]]  # "1" first
    assert "jaccard" not in report.metrics  # "a" is not a 0/1 label in that order
    assert report.metrics["accuracy"] == report.metrics["exact_match"] == 1.0 and report.metrics["hamming_loss"] == 0.0


@pytest.mark.parametrize(
    ("gold", "predicted", "template", "line", "params"),
    [
        (b"id,a,b\n1,0,1\n", b"id,a\n1,0\n", io.MISSING_COLUMN, 1, {"column": "b"}),
        (b"id,a,b\n1,0,1\n", b"id,a,c\n1,0,1\n", io.MISSING_COLUMN, 1, {"column": "b"}),
        (
            b"id,a,b\n1,0,1\n2,1,0\n",
            b"id,b,a\n1,1,0\n2,0,2\n",
            io.UNKNOWN_OUTPUT_LABEL,
            3,
            {"column": "a", "label": "2"},
        ),
        (b"id,a,b\n1,0,1\n2,1,0\n", b"id,a,b\n1,0,1\n1,1,0\n", io.DUPLICATE_ID, 3, {"id": "1"}),
        (b"id,a,b\n1,0,1\n2,1,0\n", b"id,a,b\n1,0,1\n", io.MISSING_IDS, None, {"id": "2"}),
        (b"id,a,a\n1,0,1\n", b"id,a\n1,0\n", io.DUPLICATE_COLUMN, 1, {"column": "a"}),
    ],
)
def test_a_bad_file_is_refused_with_its_line_and_column(gold, predicted, template, line, params):
    with pytest.raises(io.InputFileError) as caught:
        score_output_files(gold, predicted, gold_name="gold.csv", predictions_name="run.csv")
    error = caught.value
    assert error.template is template and error.code == io.CODES[template]
    if line is not None:
        assert error.line == line
    assert params.items() <= error.params.items()


def test_a_stored_task_s_outputs_fix_the_gold_file_s_columns():
    outputs = (Output("b", LABEL_VALUES), Output("a", ("x", "y")))
    gold = read_outputs(b"id,a,b\n1,x,1\n2,y,0\n", outputs=outputs)
    assert gold.codes.tolist() == [[1, 0], [0, 1]]
    with pytest.raises(io.InputFileError) as caught:
        read_outputs(b"id,a,b\n1,z,1\n", outputs=outputs)
    assert caught.value.template is io.UNKNOWN_OUTPUT_LABEL and caught.value.params["column"] == "a"
