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

Each formula is written once over :class:`ItemCounts` in an arithmetic of
:mod:`scoring.engine.metrics` (``counts.xp``): exact integers and rationals, from which a run's
value is rounded once to the nearest double, or pairs of doubles with error bounds over a stack of
bootstrap replicates (:mod:`scoring.engine.output_replicates`), rounded the same way. None has a
prevalence-calibrated twin: calibration rescales each gold class of one output's confusion matrix
(@opitz-overview, Eq. 6), and these read items across the outputs, where no such matrix exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import reduce
from operator import add

import numpy as np

from scoring.engine.exact import EXACT, Q
from scoring.engine.twofold import Approx

PRESENT = 1
"""The code of a label's ``1`` (present) in a 0/1 output: its labels are ``("0", "1")``."""


@dataclass(frozen=True)
class ItemCounts:
    """What the item-level metrics of one run are computed from, in the arithmetic ``xp``: Python
    integers and exact rationals (one run), or :class:`~scoring.engine.twofold.Approx` arrays (a
    stack of weighted counts: bootstrap replicates)."""

    n_items: int
    n_outputs: int
    all_right: object
    """Items whose every output is right."""
    wrong_cells: object
    """Item-output cells whose prediction is wrong."""
    true_positives: np.ndarray | Approx | None = None
    """Per label, on the first axis (every output a 0/1 label; else ``None``): items where it is
    present in both."""
    false_positives: np.ndarray | Approx | None = None
    false_negatives: np.ndarray | Approx | None = None
    overlap: object = None
    """The sum over items of |P ∩ G| / |P ∪ G| (1 for an item with both sets empty)."""
    agreement: object = None
    """The sum over items of 2 |P ∩ G| / (|P| + |G|) (1 for an item with both sets empty)."""
    xp: object = EXACT

    @property
    def labels(self) -> bool:
        """Whether every output is a 0/1 label (the label-set metrics exist)."""
        return self.true_positives is not None

    @classmethod
    def of(cls, gold: np.ndarray, predicted: np.ndarray, *, labels: bool) -> ItemCounts:
        """Exact counts of ``predicted`` against ``gold``, both items × outputs class codes;
        ``labels``: every output's codes are 0 (absent) and 1 (present)."""
        right = predicted == gold
        counts = {
            "n_items": len(gold),
            "n_outputs": gold.shape[1],
            "all_right": int(np.count_nonzero(right.all(axis=1))),
            "wrong_cells": int(right.size - np.count_nonzero(right)),
        }
        if not labels:
            return cls(**counts)
        p, g = predicted == PRESENT, gold == PRESENT
        both = p & g
        sums = {}
        for name, (numerators, denominators) in item_ratios(both.sum(axis=1), (p | g).sum(axis=1)).items():
            pairs, items = np.unique(np.stack([numerators, denominators]), axis=1, return_counts=True)
            sums[name] = reduce(
                add, (Q(int(num) * int(n), int(den)) for (num, den), n in zip(pairs.T, items, strict=True)), Q(0)
            )
        return cls(
            **counts,
            true_positives=EXACT.integers(both.sum(axis=0)),
            false_positives=EXACT.integers((p & ~g).sum(axis=0)),
            false_negatives=EXACT.integers((~p & g).sum(axis=0)),
            **sums,
        )


def item_ratios(both: np.ndarray, either: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each item's terms of :attr:`ItemCounts.overlap` and :attr:`ItemCounts.agreement` as
    (numerators, denominators), every denominator at least 1: from |P ∩ G| (``both``) and
    |P ∪ G| (``either``) of each item."""
    empty = either == 0
    return {
        "overlap": (np.where(empty, 1, both), np.where(empty, 1, either)),
        "agreement": (np.where(empty, 1, 2 * both), np.where(empty, 1, either + both)),
    }


def exact_value(formula: Callable[[ItemCounts], object], counts: ItemCounts) -> float:
    """A formula's value of exact counts, the double nearest to it."""
    return formula(counts).rounded()


def exact_match(c: ItemCounts):
    """(items whose every output is right) / n."""
    return c.xp.ratio_or_zero(c.all_right, c.n_items)


def hamming_loss(c: ItemCounts):
    """(item-output cells wrong) / (n · outputs)."""
    return c.xp.ratio_or_zero(c.wrong_cells, c.n_items * c.n_outputs)


def label_micro_precision(c: ItemCounts):
    """ΣTP / (ΣTP + ΣFP) over the labels; 0 when no label is predicted present."""
    tp = c.true_positives.sum(axis=0)
    return c.xp.ratio_or_zero(tp, tp + c.false_positives.sum(axis=0))


def label_micro_recall(c: ItemCounts):
    """ΣTP / (ΣTP + ΣFN) over the labels; 0 when no label is present in the gold."""
    tp = c.true_positives.sum(axis=0)
    return c.xp.ratio_or_zero(tp, tp + c.false_negatives.sum(axis=0))


def label_micro_f1(c: ItemCounts):
    """2ΣTP / (2ΣTP + ΣFP + ΣFN): the harmonic mean of micro precision and recall where both
    are defined; 0 when no label is predicted or present."""
    tp = c.true_positives.sum(axis=0)
    return c.xp.ratio_or_zero(2 * tp, 2 * tp + c.false_positives.sum(axis=0) + c.false_negatives.sum(axis=0))


def label_macro_precision(c: ItemCounts):
    """The mean over the labels of TP / (TP + FP), 0/0 = 0."""
    tp = c.true_positives
    return c.xp.ratio_or_zero(tp, tp + c.false_positives).sum(axis=0) / c.n_outputs


def label_macro_recall(c: ItemCounts):
    """The mean over the labels of TP / (TP + FN), 0/0 = 0."""
    tp = c.true_positives
    return c.xp.ratio_or_zero(tp, tp + c.false_negatives).sum(axis=0) / c.n_outputs


def label_macro_f1(c: ItemCounts):
    """The mean over the labels of 2TP / (2TP + FP + FN), 0/0 = 0 (each label's F1)."""
    tp = c.true_positives
    return c.xp.ratio_or_zero(2 * tp, 2 * tp + c.false_positives + c.false_negatives).sum(axis=0) / c.n_outputs


def jaccard(c: ItemCounts):
    """The mean over items of |P ∩ G| / |P ∪ G|, 1 for an item with both sets empty."""
    return c.xp.ratio_or_zero(c.overlap, c.n_items)


def samples_f1(c: ItemCounts):
    """The mean over items of 2 |P ∩ G| / (|P| + |G|) (|P| + |G| = |P ∪ G| + |P ∩ G|), 1 for an
    item with both sets empty."""
    return c.xp.ratio_or_zero(c.agreement, c.n_items)
