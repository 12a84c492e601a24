"""What the systems got wrong together: the analysis section of a shared task's overview paper,
computed from the runs' per-item labels.

Every SemEval overview paper asks the same questions of its runs, and organisers answer them
with scripts of their own; here they are answered once, for the CLI (``python -m scoring GOLD
PRED PRED ... --analysis``) and for the site's analysis page, by :func:`analyse`:

- **The majority vote** of the runs, the ensemble of the teams: each item gets the label most
  runs gave it, a tie going to the label that comes first in the label order. It is scored like
  any run (:func:`scoring.engine.suite.score_matrix`: every metric, raw and calibrated, each the
  double nearest to its exact value), so it sits on a board beside the teams, never ranked.
- **The oracle** ("any team right"): an item counts as right when at least one run labelled it
  right. Its accuracy is the share of such items; its recall of a class the share of the class's
  items that some run got right, and its macro recall their mean (a class without gold items
  counts 0, as the suite's macro recall counts it). To score it under every metric, the oracle
  labels an item that no run got right with the majority vote's label (then wrong, as every
  run's): its confusion matrix is the vote's with every item some run got right moved to the
  diagonal.
- **Agreement**: Cohen's kappa between every two runs' labels,
  κ = (N·a − Σ_k n_k m_k) / (N² − Σ_k n_k m_k) with a the items both runs label alike and n_k,
  m_k how often each gives label k: exact integers, one rounding. κ is 1 on the diagonal; κ of a
  run that gives every item one label is 0 with any run that varies, and undefined (``None``)
  with a run that gives every item the same label (chance then explains all the agreement).
  The runs are grouped by a hierarchical clustering of 1 − κ (:func:`average_linkage`), whose
  leaf order a heatmap follows.
- **The hardest items**: every item that no run labelled right, and at least
  :data:`HARDEST_AT_LEAST` of them in all (those fewest runs got right, ties in the gold file's
  order): its id, gold label, how many runs got it right and each run's label.

**Probability files** are read as their arg-max label, a tie going to the label that comes first
in the label order (:func:`hard_labels`); their scores stay those of their soft matrices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from scoring.engine.confusion import hard_confusion
from scoring.engine.metrics import Value
from scoring.engine.suite import Report, score_matrix

HARDEST_AT_LEAST = 20
"""The hardest items listed are every item no run got right, and at least this many in all."""
LINKAGE = "average"
"""The clustering's rule (UPGMA): two groups are as far apart as the mean of 1 − κ over their pairs."""
BLOCK_ITEMS = 1 << 16
"""Items whose agreements are counted at a time: each block's sums are exact in single precision."""


def hard_labels(predicted: np.ndarray) -> np.ndarray:
    """A run's labels as class codes: codes as they are; probability rows (items × classes) as
    their arg-max, a tie going to the first label in the label order (``numpy.argmax`` keeps
    the first maximum)."""
    predicted = np.asarray(predicted)
    if predicted.ndim == 2:
        return np.argmax(predicted, axis=1).astype(np.min_scalar_type(max(predicted.shape[1] - 1, 0)))
    return predicted


def kappa_parts(codes: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa of every two rows of ``codes`` (runs × items) as exact integers: numerators
    N·a − Σ_k n_k m_k and denominators N² − Σ_k n_k m_k (object arrays of Python ints, runs × runs).

    The agreements a are counted as matrix products of each class's indicator matrix, a block of
    :data:`BLOCK_ITEMS` items at a time in single precision (every sum an integer below 2^24,
    so exact), and added up as integers."""
    n_runs, n_items = codes.shape
    agree = np.zeros((n_runs, n_runs), dtype=np.int64)
    for start in range(0, n_items, BLOCK_ITEMS):
        block = codes[:, start : start + BLOCK_ITEMS]
        for k in range(n_classes):
            indicator = (block == k).astype(np.float32)
            agree += (indicator @ indicator.T).astype(np.int64)
    counts = np.stack([np.count_nonzero(codes == k, axis=1) for k in range(n_classes)], axis=1)
    counts = counts.astype(object)  # Python ints: N² may pass 2^63 on a long enough test set
    chance = counts @ counts.T
    return n_items * agree.astype(object) - chance, n_items * n_items - chance


def kappa_values(codes: np.ndarray, n_classes: int) -> list[list[Value]]:
    """Cohen's kappa between every two rows of ``codes`` (runs × items), each the double nearest
    to its exact value (one integer division), ``None`` where undefined (a zero denominator: two
    runs that give every item one same label)."""
    numerators, denominators = kappa_parts(codes, n_classes)
    return [
        [None if den == 0 else num / den for num, den in zip(row_num, row_den, strict=True)]
        for row_num, row_den in zip(numerators.tolist(), denominators.tolist(), strict=True)
    ]


@dataclass(frozen=True)
class Merge:
    """One step of the clustering: two groups of runs (positions among the clustered runs) joined
    at their mean kappa."""

    left: tuple[int, ...]
    right: tuple[int, ...]
    kappa: float
    """The mean of κ over every pair of a run of ``left`` and a run of ``right`` (an undefined
    κ counted as 1), the double nearest to its exact value."""


@dataclass(frozen=True)
class Clustering:
    order: tuple[int, ...]
    """The runs in the dendrogram's leaf order: each group's runs together, its left part first."""
    merges: tuple[Merge, ...]


def average_linkage(kappa: Sequence[Sequence[Value]]) -> Clustering:
    """The agglomerative clustering of the runs with distance 1 − κ and average linkage (UPGMA),
    in exact arithmetic: at each step the two groups with the highest mean κ over their pairs
    join. An undefined κ counts as 1: both runs give every item the same label. Ties go to the
    pair whose first group holds the earliest run, then whose second does; a joined group's
    left part is the one holding the earlier run.

    Exact, because the groups of a heatmap must not depend on rounding: the κ values (doubles)
    are read as the fractions they are, scaled to integers over one power of two, so every sum
    is an integer and every comparison of two means a comparison of two products."""
    n = len(kappa)
    exact = [[Fraction(1 if value is None else value) for value in row] for row in kappa]
    scale = max((value.denominator for row in exact for value in row), default=1)
    sums = {(i, j): int(exact[i][j] * scale) for i in range(n) for j in range(n) if i != j}
    groups: dict[int, tuple[int, ...]] = {i: (i,) for i in range(n)}
    parts: dict[int, tuple[int, int]] = {}
    merges = []
    next_id = n
    while len(groups) > 1:
        active = sorted(groups, key=lambda group: groups[group][0])
        best: tuple[int, int] | None = None
        best_sum, best_size = 0, 1
        for position, first in enumerate(active):
            for second in active[position + 1 :]:
                total, size = sums[first, second], len(groups[first]) * len(groups[second])
                if best is None or total * best_size > best_sum * size:
                    best, best_sum, best_size = (first, second), total, size
        assert best is not None
        first, second = best
        merged = tuple(sorted(groups[first] + groups[second]))
        merges.append(Merge(groups[first], groups[second], float(Fraction(best_sum, best_size * scale))))
        for other in active:
            if other not in best:
                sums[next_id, other] = sums[other, next_id] = sums[first, other] + sums[second, other]
        parts[next_id] = (first, second)
        del groups[first], groups[second]
        groups[next_id] = merged
        next_id += 1
    return Clustering(order=_leaves(parts, next(iter(groups), None), n), merges=tuple(merges))


def _leaves(parts: Mapping[int, tuple[int, int]], root: int | None, n: int) -> tuple[int, ...]:
    """The dendrogram's leaves from ``root``, each group's left part first."""
    order: list[int] = []
    stack = [] if root is None else [root]
    while stack:
        node = stack.pop()
        if node < n:
            order.append(node)
        else:
            left, right = parts[node]
            stack += [right, left]
    return tuple(order)


@dataclass(frozen=True)
class Agreement:
    """Kappa between the chosen runs and their clustering."""

    runs: tuple[int, ...]
    """The runs compared (positions among the analysed runs), in the order given."""
    kappa: list[list[Value]]
    """κ between ``runs[i]`` and ``runs[j]``, ``None`` where undefined."""
    clustering: Clustering
    """Positions into ``runs``."""


@dataclass(frozen=True)
class Analysis:
    """The analysis of runs against one gold file (see the module docstring)."""

    labels: tuple[str, ...]
    gold: np.ndarray
    right: np.ndarray
    """Per item, in the gold file's order: how many runs labelled it right."""
    vote_ties: int
    """Items on which two or more labels got the most votes (the first of them won)."""
    majority_vote: Report
    oracle: Report
    agreement: Agreement
    hardest: np.ndarray
    """The hardest items' positions in the gold file, hardest first."""
    hardest_codes: np.ndarray
    """Each run's label of each hardest item (runs × hardest items)."""
    n_runs: int

    @property
    def n_items(self) -> int:
        return len(self.gold)

    @cached_property
    def gold_counts(self) -> list[int]:
        return np.bincount(self.gold, minlength=len(self.labels)).tolist()

    @cached_property
    def unsolved(self) -> list[int]:
        """Per gold label: the items no run got right."""
        return np.bincount(self.gold[self.right == 0], minlength=len(self.labels)).tolist()

    def as_json(self, *, runs: Sequence[str], ids: Sequence[str]) -> dict:
        """The ``analysis`` object of the CLI's JSON (contract, see :mod:`scoring.__main__`):
        ``runs`` names the analysed runs, ``ids`` the gold file's items."""
        labels = self.labels
        clustered = [runs[run] for run in self.agreement.runs]
        clustering = self.agreement.clustering
        return {
            "teams": self.n_runs,
            "majority_vote": {"ties": self.vote_ties, **self.majority_vote.as_json()},
            "oracle": {
                "accuracy": self.oracle.metrics["accuracy"],
                "macro_recall": self.oracle.metrics["macro_recall"],
                **self.oracle.as_json(),
            },
            "unsolved": dict(zip(labels, self.unsolved, strict=True)),
            "agreement": {
                "teams": clustered,
                "kappa": self.agreement.kappa,
                "clustering": {
                    "method": LINKAGE,
                    "order": [clustered[run] for run in clustering.order],
                    "merges": [
                        {
                            "left": [clustered[run] for run in merge.left],
                            "right": [clustered[run] for run in merge.right],
                            "kappa": merge.kappa,
                        }
                        for merge in clustering.merges
                    ],
                },
            },
            "hardest": [
                {
                    "id": str(ids[item]),
                    "gold": labels[self.gold[item]],
                    "right": int(self.right[item]),
                    "labels": {run: labels[code] for run, code in zip(runs, item_codes, strict=True)},
                }
                for item, item_codes in zip(self.hardest.tolist(), self.hardest_codes.T.tolist(), strict=True)
            ],
        }


def majority_vote(codes: np.ndarray, n_classes: int) -> tuple[np.ndarray, int]:
    """Each item's most frequent label among the rows of ``codes`` (runs × items), a tie going to
    the first label in the label order; and how many items had such a tie."""
    votes = np.stack([np.count_nonzero(codes == k, axis=0) for k in range(n_classes)])
    winners = np.argmax(votes, axis=0)
    ties = int(np.count_nonzero(np.count_nonzero(votes == votes.max(axis=0), axis=0) > 1))
    return winners.astype(np.min_scalar_type(max(n_classes - 1, 0))), ties


def hardest_items(right: np.ndarray, *, at_least: int = HARDEST_AT_LEAST) -> np.ndarray:
    """The positions of every item no run got right, and of at least ``at_least`` items in all:
    fewest runs right first, ties in the gold file's order."""
    order = np.argsort(right, kind="stable")
    return order[: max(int(np.count_nonzero(right == 0)), min(at_least, len(right)))]


def analyse(
    gold: np.ndarray,
    codes: np.ndarray,
    *,
    labels: Sequence[str],
    ordinal: bool = False,
    agreement_runs: Sequence[int] | None = None,
) -> Analysis:
    """The analysis of the runs whose labels are the rows of ``codes`` (runs × items, class codes
    in the gold file's order; :func:`hard_labels` of a probability file) against the ``gold``
    codes. ``agreement_runs``: the runs whose kappa and clustering are computed (positions
    among the rows; default every run), since kappa grows with the square of their number;
    ``ordinal``: the labels are an ordered scale (the reports hold the ordinal errors)."""
    gold = np.asarray(gold)
    codes = np.asarray(codes)
    n_classes, labels = len(labels), tuple(labels)
    if codes.ndim != 2 or codes.shape[1] != len(gold) or not len(codes):
        raise ValueError("an analysis needs one row of codes per run, each with a code per gold item")
    right = np.count_nonzero(codes == gold[np.newaxis, :], axis=0)
    vote, ties = majority_vote(codes, n_classes)
    oracle = np.where(right > 0, gold, vote)
    chosen = tuple(range(len(codes))) if agreement_runs is None else tuple(agreement_runs)
    kappa = kappa_values(codes[list(chosen)], n_classes)
    hardest = hardest_items(right)
    return Analysis(
        labels=labels,
        gold=gold,
        right=right,
        vote_ties=ties,
        majority_vote=score_matrix(hard_confusion(vote, gold, n_classes), labels=labels, ordinal=ordinal),
        oracle=score_matrix(hard_confusion(oracle, gold, n_classes), labels=labels, ordinal=ordinal),
        agreement=Agreement(runs=chosen, kappa=kappa, clustering=average_linkage(kappa)),
        hardest=hardest,
        hardest_codes=codes[:, hardest],
        n_runs=len(codes),
    )
