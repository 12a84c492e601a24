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

**A task with several outputs** (:func:`scoring.engine.outputs_analysis.analyse_outputs`; each
item has a label for every output, :mod:`scoring.engine.outputs`): the same questions, output by
output where a label is meant, item by item where a run is.

- The majority vote is taken output by output (a tie going to the first label of that output's
  order); ``vote_ties`` counts the item-output *cells* tied. The stacked votes are a run of the
  task, scored by :func:`scoring.engine.outputs.score_outputs` (each suite metric's mean over the
  outputs, raw and calibrated, and the metrics read from the items).
- The oracle too: an item-output cell is right when some run got that output of that item right;
  the oracle run is the vote with every such cell set to the gold, scored by ``score_outputs``.
  Its exact match counts an item whose every output some run got right, not necessarily the same
  run; the **exact-match oracle** (:attr:`Analysis.exact_match_one_run`) counts the items that
  one run got entirely right: the share of the items, an exact fraction rounded once.
- An item is right for a run when every output is (``right``: the runs that got it entirely
  right); the hardest items are those fewest runs got entirely right (every item no run got
  entirely right, and at least :data:`HARDEST_AT_LEAST` in all). The items no run got right are
  counted per output and gold label: those no run got right on that output.
- κ between two runs is the mean over the outputs of each output's κ: the exact fractions
  summed, divided by the number of outputs, rounded once; undefined when one output's κ is (both
  runs give every item one same label on that output; so a run that does with itself).
- An item's labels, in the text, the CSV and the site's pages (:func:`scoring.engine.
  outputs_analysis.labels_text`): of a multi-label task, the labels present ("anger, joy", or
  "none"); otherwise each output's label ("hate: 1, target: 0").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from scoring.engine.confusion import hard_confusion
from scoring.engine.metrics import Value
from scoring.engine.suite import Report, score_matrix

if TYPE_CHECKING:
    from scoring.engine.outputs import OutputsReport
    from scoring.engine.schemes import Output

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


def kappa_values(codes: np.ndarray, sizes: Sequence[int]) -> list[list[Value]]:
    """Cohen's kappa between every two runs of ``codes`` (runs × items × outputs, ``sizes`` the
    number of labels of each output): the mean over the outputs of each output's kappa, each
    the double nearest to its exact value (of one output, one integer division), ``None`` where
    one output's is undefined (a zero denominator: two runs that give every item one same label
    on it)."""
    parts = [tuple(part.tolist() for part in kappa_parts(codes[:, :, index], size)) for index, size in enumerate(sizes)]
    n = len(codes)
    table: list[list[Value]] = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):  # symmetric: the same integers both ways
            pairs = [(numerators[i][j], denominators[i][j]) for numerators, denominators in parts]
            if all(den != 0 for _, den in pairs):
                total = sum((Fraction(num, den) for num, den in pairs), Fraction(0))
                table[i][j] = table[j][i] = float(total / len(pairs))
    return table


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


RUNS_NEEDED = "an analysis needs one row of codes per run, each with a code per gold item"


@dataclass(frozen=True)
class Analysis:
    """The analysis of runs against one gold file (see the module docstring)."""

    labels: tuple[str, ...]
    """The labels of a task of one label column (of several outputs: none, each output has its own)."""
    gold: np.ndarray
    """Class codes in the gold file's order: per item, or items × outputs."""
    right: np.ndarray
    """Per item, in the gold file's order: how many runs labelled it right (every output of it)."""
    vote_ties: int
    """Items (of several outputs, item-output cells) on which two or more labels got the most
    votes (the first of them won)."""
    majority_vote: Report | OutputsReport
    oracle: Report | OutputsReport
    agreement: Agreement
    hardest: np.ndarray
    """The hardest items' positions in the gold file, hardest first."""
    hardest_codes: np.ndarray
    """Each run's label of each hardest item (runs × hardest items, × outputs)."""
    n_runs: int
    solved: np.ndarray
    """Per item and label column (items × outputs): whether some run got it right."""
    output_ties: tuple[int, ...]
    """Per label column (each output): the items its vote tied."""
    outputs: tuple[Output, ...] = ()
    """A task with several outputs: its outputs."""

    @property
    def n_items(self) -> int:
        return len(self.gold)

    @property
    def label_sets(self) -> tuple[tuple[str, ...], ...]:
        """Each label column's labels: each output's, or the one column's."""
        return tuple(output.labels for output in self.outputs) or (self.labels,)

    def _per_label(self, items: np.ndarray) -> list:
        """Per gold label, the items where ``items`` (items × label columns) holds; of several
        outputs, a list per output."""
        gold = self.gold.reshape(self.n_items, -1)
        counts = [
            np.bincount(gold[items[:, index], index], minlength=len(labels)).tolist()
            for index, labels in enumerate(self.label_sets)
        ]
        return counts if self.outputs else counts[0]

    @cached_property
    def gold_counts(self) -> list:
        """Per gold label (of several outputs, per output and gold label): its items."""
        return self._per_label(np.ones((self.n_items, len(self.label_sets)), dtype=bool))

    @cached_property
    def unsolved(self) -> list:
        """Per gold label (of several outputs, per output and gold label): the items no run got
        right (on that output)."""
        return self._per_label(~self.solved)

    @cached_property
    def exact_match_one_run(self) -> Value:
        """The exact-match oracle: the share of the items that one run got entirely right."""
        return int(np.count_nonzero(self.right)) / self.n_items if self.n_items else None

    def hardest_votes(self) -> list:
        """Per hardest item, how many runs gave each label (of several outputs, per output)."""
        codes = self.hardest_codes.reshape(self.n_runs, len(self.hardest), -1)
        counts = [
            np.stack([np.count_nonzero(codes[:, :, index] == code, axis=0) for code in range(len(labels))], axis=1)
            for index, labels in enumerate(self.label_sets)
        ]
        if not self.outputs:
            return counts[0].tolist()
        return [list(item) for item in zip(*(count.tolist() for count in counts), strict=True)]

    def as_json(self, *, runs: Sequence[str], ids: Sequence[str]) -> dict:
        """The ``analysis`` object of the CLI's JSON (contract, see :mod:`scoring.__main__`):
        ``runs`` names the analysed runs, ``ids`` the gold file's items."""
        clustered = [runs[run] for run in self.agreement.runs]
        clustering = self.agreement.clustering
        vote_ties, exact_match = {}, {}
        if self.outputs:
            names = [output.name for output in self.outputs]
            vote_ties = {"ties_per_output": dict(zip(names, self.output_ties, strict=True))}
            exact_match = {"exact_match_one_run": self.exact_match_one_run}

        def labels(codes: int | list[int]) -> str | dict[str, str]:
            return labels_json(codes, labels=self.labels, outputs=self.outputs)

        return {
            "teams": self.n_runs,
            "majority_vote": {"ties": self.vote_ties, **vote_ties, **self.majority_vote.as_json()},
            "oracle": {
                "accuracy": self.oracle.metrics["accuracy"],
                "macro_recall": self.oracle.metrics["macro_recall"],
                **exact_match,
                **self.oracle.as_json(),
            },
            "unsolved": per_label_json(self.unsolved, labels=self.labels, outputs=self.outputs),
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
                    "gold": labels(self.gold[item].tolist()),
                    "right": int(self.right[item]),
                    "labels": {run: labels(codes) for run, codes in zip(runs, item_codes, strict=True)},
                }
                for item, item_codes in zip(
                    self.hardest.tolist(), np.swapaxes(self.hardest_codes, 0, 1).tolist(), strict=True
                )
            ],
        }


def unsolved_rows(
    *, labels: Sequence[str], outputs: Sequence[Output], gold_counts: Sequence, unsolved: Sequence
) -> list[tuple[str, int, int]]:
    """The table of the items no run got right: a row per gold label (of several outputs, per
    output and gold label, named "output: label"), its items and those no run got right."""
    if not outputs:
        return list(zip(labels, gold_counts, unsolved, strict=True))
    return [
        (f"{output.name}: {label}", items, none)
        for output, counts, nones in zip(outputs, gold_counts, unsolved, strict=True)
        for label, items, none in zip(output.labels, counts, nones, strict=True)
    ]


def labels_json(codes: int | Sequence[int], *, labels: Sequence[str], outputs: Sequence[Output]) -> str | dict:
    """An item's label as JSON gives it: of several outputs, each output's label by output."""
    if not outputs:
        return labels[codes]
    return {output.name: output.labels[code] for output, code in zip(outputs, codes, strict=True)}


def per_label_json(values: Sequence, *, labels: Sequence[str], outputs: Sequence[Output]) -> dict:
    """Values per label (of several outputs, per output and label: items unsolved, votes) as
    JSON gives them, by label (by output, then label)."""
    if not outputs:
        return dict(zip(labels, values, strict=True))
    return {
        output.name: dict(zip(output.labels, counts, strict=True))
        for output, counts in zip(outputs, values, strict=True)
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


@dataclass(frozen=True)
class Combined:
    """What the runs give together, label column by label column (items × outputs; one label
    column is one output), before anything is scored."""

    right: np.ndarray
    """Per item: the runs that got every output of it right."""
    solved: np.ndarray
    """Per item and output: whether some run got it right."""
    vote: np.ndarray
    oracle: np.ndarray
    """The vote with every cell some run got right set to the gold."""
    ties: tuple[int, ...]
    """Per output: the items its vote tied."""
    agreement: Agreement
    hardest: np.ndarray

    def analysis(
        self, score: Callable[[np.ndarray], Report | OutputsReport], *, gold: np.ndarray, codes: np.ndarray, **fields
    ) -> Analysis:
        """The :class:`Analysis`, ``score`` turning the vote and the oracle (items × outputs)
        into reports."""
        return Analysis(
            gold=gold,
            right=self.right,
            vote_ties=sum(self.ties),
            majority_vote=score(self.vote),
            oracle=score(self.oracle),
            agreement=self.agreement,
            hardest=self.hardest,
            hardest_codes=codes[:, self.hardest],
            n_runs=len(codes),
            solved=self.solved,
            output_ties=self.ties,
            **fields,
        )


def combine(
    gold: np.ndarray, codes: np.ndarray, *, sizes: Sequence[int], agreement_runs: Sequence[int] | None
) -> Combined:
    """The runs of ``codes`` (runs × items × outputs) against ``gold`` (items × outputs), each
    output of ``sizes[output]`` labels: the rules of the module docstring."""
    if codes.ndim != 3 or codes.shape[1:] != gold.shape or not len(codes) or gold.shape[1] != len(sizes):
        raise ValueError(RUNS_NEEDED)
    all_right = np.ones(codes.shape[:2], dtype=bool)
    solved = np.empty(gold.shape, dtype=bool)
    votes, ties = [], []
    for index, size in enumerate(sizes):
        right = codes[:, :, index] == gold[np.newaxis, :, index]
        all_right &= right
        solved[:, index] = right.any(axis=0)
        vote, tied = majority_vote(codes[:, :, index], size)
        votes.append(vote)
        ties.append(tied)
    vote = np.stack(votes, axis=1)
    right = np.count_nonzero(all_right, axis=0)
    chosen = tuple(range(len(codes))) if agreement_runs is None else tuple(agreement_runs)
    kappa = kappa_values(codes[list(chosen)], sizes)
    return Combined(
        right=right,
        solved=solved,
        vote=vote,
        oracle=np.where(solved, gold, vote),
        ties=tuple(ties),
        agreement=Agreement(runs=chosen, kappa=kappa, clustering=average_linkage(kappa)),
        hardest=hardest_items(right),
    )


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
    labels = tuple(labels)
    if codes.ndim != 2:
        raise ValueError(RUNS_NEEDED)
    found = combine(gold[:, np.newaxis], codes[:, :, np.newaxis], sizes=[len(labels)], agreement_runs=agreement_runs)

    def scored(predicted: np.ndarray) -> Report:
        return score_matrix(hard_confusion(predicted[:, 0], gold, len(labels)), labels=labels, ordinal=ordinal)

    return found.analysis(scored, gold=gold, codes=codes, labels=labels)
