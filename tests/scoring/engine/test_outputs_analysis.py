"""What the runs of a task with several outputs got wrong together
(:func:`scoring.engine.outputs_analysis.analyse_outputs`), against the plain-Python computation of
``tests/scoring/analysis_oracle.py``: the vote and the oracle of every output cell by cell (ties to
the first label of the output) and every metric of each, raw and calibrated, from exact means
and item counts; the exact-match oracle; the items no run got right per output and gold label;
kappa as the exact mean of each output's, undefined where one output's is; the clustering; the
hardest items by the runs that got them entirely right. On a multi-label task and on one whose
outputs have labels of their own, with a run equal to the gold, two identical runs and a run
that gives every item one label set.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from scoring.engine.analysis import kappa_parts
from scoring.engine.outputs_analysis import analyse_outputs, labels_text
from scoring.engine.schemes import LABEL_VALUES, Output
from tests.scoring.analysis_oracle import expected_outputs_analysis, outputs_report_values

EMOTIONS = tuple(Output(name, LABEL_VALUES) for name in ("anger", "joy", "fear", "trust"))
MIXED = (Output("hate", LABEL_VALUES), Output("stance", ("against", "none", "favour")), Output("target", ("g", "i")))


def runs_of(outputs: tuple[Output, ...], seed: int, n_items: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Gold codes (items × outputs) and the codes of six runs: four noisy ones (an even number of
    runs, so votes tie), a copy of the gold and one that gives every item its first labels."""
    rng = np.random.default_rng(seed)
    sizes = [len(output.labels) for output in outputs]
    gold = np.stack([rng.integers(0, size, n_items) for size in sizes], axis=1)

    def noisy(share: float) -> np.ndarray:
        other = np.stack([rng.integers(0, size, n_items) for size in sizes], axis=1)
        return np.where(rng.random(gold.shape) < share, gold, other)

    first = noisy(0.5)
    runs = [first, first.copy(), noisy(0.6), noisy(0.3), gold.copy(), np.zeros_like(gold)]
    return gold, np.stack(runs)


def matrix_of(predicted: list[list[int]], gold: list[list[int]], output: int, size: int) -> list[list[int]]:
    """An output's confusion matrix counted item by item (rows predicted, columns gold)."""
    m = [[0] * size for _ in range(size)]
    for p, g in zip(predicted, gold, strict=True):
        m[p[output]][g[output]] += 1
    return m


@pytest.mark.parametrize("outputs", [EMOTIONS, MIXED], ids=["multi-label", "mixed"])
@pytest.mark.parametrize("seed", range(4))
def test_every_number_equals_an_independent_computation(outputs, seed):
    gold, codes = runs_of(outputs, seed)
    names = [f"run{k}" for k in range(len(codes))]
    expected = expected_outputs_analysis(gold.tolist(), dict(zip(names, codes.tolist(), strict=True)), list(outputs))
    found = analyse_outputs(gold, codes, outputs=outputs)

    assert list(found.output_ties) == expected["ties_per_output"] and found.vote_ties == sum(found.output_ties)
    assert found.vote_ties > 0
    for report, rows in ((found.majority_vote, "majority_rows"), (found.oracle, "oracle_rows")):
        for index, output in enumerate(outputs):
            wanted = matrix_of(expected[rows], gold.tolist(), index, len(output.labels))
            assert report.reports[output.name].matrix.tolist() == wanted
        assert (report.metrics, report.calibrated) == outputs_report_values(gold.tolist(), expected[rows], outputs)
    assert found.right.tolist() == expected["right"]
    assert found.exact_match_one_run == expected["exact_match_one_run"]
    # Each output some run got right counts for the oracle, whichever run got it.
    assert found.oracle.metrics["exact_match"] >= found.exact_match_one_run
    assert found.gold_counts == expected["gold_counts"] and found.unsolved == expected["unsolved"]
    assert found.agreement.kappa == expected["kappa"]
    document = found.as_json(runs=names, ids=[f"item-{i}" for i in range(len(gold))])
    assert document["agreement"]["clustering"]["order"] == expected["order"]
    assert document["agreement"]["clustering"]["merges"] == expected["merges"]
    assert found.hardest.tolist() == expected["hardest"] and found.hardest_votes() == expected["hardest_votes"]
    first = document["hardest"][0]
    item = expected["hardest"][0]
    assert first["gold"] == {output.name: output.labels[code] for output, code in zip(outputs, gold[item], strict=True)}
    assert first["labels"]["run5"] == {output.name: output.labels[0] for output in outputs}
    assert document["unsolved"] == {
        output.name: dict(zip(output.labels, counts, strict=True))
        for output, counts in zip(outputs, expected["unsolved"], strict=True)
    }
    assert document["oracle"]["exact_match_one_run"] == expected["exact_match_one_run"]
    assert document["majority_vote"]["ties_per_output"] == dict(
        zip([output.name for output in outputs], expected["ties_per_output"], strict=True)
    )


def test_kappa_is_the_exact_mean_of_each_output_s_rounded_once():
    """The mean of the outputs' rounded kappas is another double on some of these pairs: the
    analysis's is the exact mean's."""
    differs = 0
    for seed in range(8):
        gold, codes = runs_of(MIXED, seed)
        kappa = analyse_outputs(gold, codes, outputs=MIXED).agreement.kappa
        parts = [kappa_parts(codes[:, :, o], len(output.labels)) for o, output in enumerate(MIXED)]
        for i, j in itertools.combinations(range(len(codes)), 2):
            pairs = [(int(num[i][j]), int(den[i][j])) for num, den in parts]
            if any(den == 0 for _, den in pairs):
                assert kappa[i][j] is None
                continue
            exact = sum((Fraction(num, den) for num, den in pairs), Fraction(0)) / len(pairs)
            assert kappa[i][j] == exact.numerator / exact.denominator
            differs += kappa[i][j] != sum(num / den for num, den in pairs) / len(pairs)
    assert differs > 0


def test_kappa_is_undefined_where_one_output_s_is_and_one_run_entirely_right_is_the_exact_match_oracle():
    gold = np.array([[0, 1], [1, 0], [1, 1], [0, 0]])
    codes = np.array(
        [
            [[0, 0], [1, 0], [1, 0], [0, 0]],  # the same label on the second output everywhere
            [[1, 0], [0, 0], [1, 0], [1, 0]],  # so too
            [[0, 1], [1, 1], [0, 1], [0, 0]],
        ]
    )
    found = analyse_outputs(gold, codes, outputs=EMOTIONS[:2])
    assert found.agreement.kappa[0][1] is None and found.agreement.kappa[0][0] is None
    assert found.agreement.kappa[2][2] == 1.0
    # Items 0, 1 and 3 are entirely right in run 0 or run 2; item 2 only output by output.
    assert found.right.tolist() == [1, 1, 0, 2] and found.exact_match_one_run == 0.75
    assert found.oracle.metrics["exact_match"] == 1.0 and found.unsolved == [[0, 0], [0, 0]]
    assert found.hardest.tolist() == [2, 0, 1, 3]


def test_an_item_s_labels_as_text():
    assert labels_text([1, 0, 1, 0], outputs=EMOTIONS) == "anger, fear"
    assert labels_text([0, 0, 0, 0], outputs=EMOTIONS) == "none"
    assert labels_text([1, 2, 0], outputs=MIXED) == "hate: 1, stance: favour, target: g"
    assert labels_text(2, labels=["neg", "neu", "pos"]) == "pos"


def test_an_analysis_needs_a_code_per_run_item_and_output():
    gold = np.zeros((3, 2), dtype=int)
    for codes in (np.zeros((2, 3), dtype=int), np.zeros((2, 3, 3), dtype=int), np.zeros((0, 3, 2), dtype=int)):
        with pytest.raises(ValueError, match="one row of codes per run"):
            analyse_outputs(gold, codes, outputs=EMOTIONS[:2])
