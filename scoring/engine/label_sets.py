"""The metrics of a task with several labels an item that are read from its items rather than
from one confusion matrix: the share of items with every output right and of item-output cells
wrong, and, when every output is a 0/1 label, the label-set metrics of multi-label tasks.

A run of such a task gives, for each of its ``n`` items, a prediction per output. Each output is
scored under the whole suite on its own (:mod:`scoring.engine.outputs`); what this module adds
depends on the items as a whole. With P the set of labels predicted present for an item and G the
set present in the gold:

- exact match = (items whose every output is right) / n, Hamming loss = (item-output cells
  wrong) / (n · outputs), lower is better;
- micro precision, recall and F1: the counts of present labels pooled over the labels
  (TP = |P ∩ G| summed over items, FP = |P \\ G|, FN = |G \\ P|): TP / (TP + FP), TP / (TP + FN),
  2 TP / (2 TP + FP + FN), each 0 when its denominator is 0, as the per-class measures
  (@measures-table, Table 1, micro-averaged);
- macro precision, recall and F1: each label's precision, recall and F1 (0/0 = 0), averaged
  over the labels;
- Jaccard index (SemEval-2018 Task 1 E-c's ranking score): the mean over items of
  |P ∩ G| / |P ∪ G|, and samples F1: the mean over items of 2 |P ∩ G| / (|P| + |G|); both are 1
  for an item with no label predicted and none in the gold.

Every value is a fraction of integers (:class:`ItemCounts`), rounded once to the nearest
double. None has a prevalence-calibrated twin: calibration rescales each gold class of one
output's confusion matrix (@opitz-overview, Eq. 6), and these read items across the outputs,
where no such matrix exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

PRESENT = 1
"""The code of a label's ``1`` (present) in a 0/1 output: its labels are ``("0", "1")``."""


def _ratio_or_zero(numerator: int, denominator: int) -> Fraction:
    return Fraction(numerator, denominator) if denominator else Fraction(0)


@dataclass(frozen=True)
class ItemCounts:
    """What the item-level metrics of one run are computed from: exact integers."""

    n_items: int
    n_outputs: int
    all_right: int
    """Items whose every output is right."""
    wrong_cells: int
    """Item-output cells whose prediction is wrong."""
    true_positives: tuple[int, ...] | None = None
    """Per label (every output a 0/1 label; else ``None``): items where it is present in both."""
    false_positives: tuple[int, ...] | None = None
    false_negatives: tuple[int, ...] | None = None
    overlaps: tuple[tuple[int, int, int], ...] | None = None
    """(|P ∩ G|, |P ∪ G|, items) for each pair of sizes that occurs, in order."""

    @property
    def labels(self) -> bool:
        """Whether every output is a 0/1 label (the label-set metrics exist)."""
        return self.true_positives is not None

    @classmethod
    def of(cls, gold: np.ndarray, predicted: np.ndarray, *, labels: bool) -> ItemCounts:
        """Counts of ``predicted`` against ``gold``, both items × outputs class codes; ``labels``:
        every output's codes are 0 (absent) and 1 (present)."""
        right = predicted == gold
        counts = cls(
            n_items=len(gold),
            n_outputs=gold.shape[1],
            all_right=int(np.count_nonzero(right.all(axis=1))),
            wrong_cells=int(right.size - np.count_nonzero(right)),
        )
        if not labels:
            return counts
        p, g = predicted == PRESENT, gold == PRESENT
        both = p & g
        intersection = both.sum(axis=1)
        union = (p | g).sum(axis=1)
        width = gold.shape[1] + 1
        pairs, items = np.unique(intersection * width + union, return_counts=True)
        return cls(
            n_items=counts.n_items,
            n_outputs=counts.n_outputs,
            all_right=counts.all_right,
            wrong_cells=counts.wrong_cells,
            true_positives=tuple(int(x) for x in both.sum(axis=0)),
            false_positives=tuple(int(x) for x in (p & ~g).sum(axis=0)),
            false_negatives=tuple(int(x) for x in (~p & g).sum(axis=0)),
            overlaps=tuple(
                (int(pair) // width, int(pair) % width, int(n)) for pair, n in zip(pairs, items, strict=True)
            ),
        )


def exact_match(counts: ItemCounts) -> Fraction:
    """(items whose every output is right) / n."""
    return Fraction(counts.all_right, counts.n_items)


def hamming_loss(counts: ItemCounts) -> Fraction:
    """(item-output cells wrong) / (n · outputs)."""
    return Fraction(counts.wrong_cells, counts.n_items * counts.n_outputs)


def label_micro_precision(counts: ItemCounts) -> Fraction:
    """ΣTP / (ΣTP + ΣFP) over the labels; 0 when no label is predicted present."""
    tp = sum(counts.true_positives)
    return _ratio_or_zero(tp, tp + sum(counts.false_positives))


def label_micro_recall(counts: ItemCounts) -> Fraction:
    """ΣTP / (ΣTP + ΣFN) over the labels; 0 when no label is present in the gold."""
    tp = sum(counts.true_positives)
    return _ratio_or_zero(tp, tp + sum(counts.false_negatives))


def label_micro_f1(counts: ItemCounts) -> Fraction:
    """2ΣTP / (2ΣTP + ΣFP + ΣFN): the harmonic mean of micro precision and recall where both
    are defined; 0 when no label is predicted or present."""
    tp = sum(counts.true_positives)
    return _ratio_or_zero(2 * tp, 2 * tp + sum(counts.false_positives) + sum(counts.false_negatives))


def _per_label(counts: ItemCounts) -> zip:
    return zip(counts.true_positives, counts.false_positives, counts.false_negatives, strict=True)


def label_macro_precision(counts: ItemCounts) -> Fraction:
    """The mean over the labels of TP / (TP + FP), 0/0 = 0."""
    return sum((_ratio_or_zero(tp, tp + fp) for tp, fp, _ in _per_label(counts)), Fraction(0)) / counts.n_outputs


def label_macro_recall(counts: ItemCounts) -> Fraction:
    """The mean over the labels of TP / (TP + FN), 0/0 = 0."""
    return sum((_ratio_or_zero(tp, tp + fn) for tp, _, fn in _per_label(counts)), Fraction(0)) / counts.n_outputs


def label_macro_f1(counts: ItemCounts) -> Fraction:
    """The mean over the labels of 2TP / (2TP + FP + FN), 0/0 = 0 (each label's F1)."""
    total = sum((_ratio_or_zero(2 * tp, 2 * tp + fp + fn) for tp, fp, fn in _per_label(counts)), Fraction(0))
    return total / counts.n_outputs


def jaccard(counts: ItemCounts) -> Fraction:
    """The mean over items of |P ∩ G| / |P ∪ G|, 1 for an item with both sets empty."""
    total = sum(
        (items * (Fraction(both, either) if either else Fraction(1)) for both, either, items in counts.overlaps),
        Fraction(0),
    )
    return total / counts.n_items


def samples_f1(counts: ItemCounts) -> Fraction:
    """The mean over items of 2 |P ∩ G| / (|P| + |G|) (|P| + |G| = |P ∪ G| + |P ∩ G|), 1 for an
    item with both sets empty."""
    total = sum(
        (
            items * (Fraction(2 * both, either + both) if either else Fraction(1))
            for both, either, items in counts.overlaps
        ),
        Fraction(0),
    )
    return total / counts.n_items
