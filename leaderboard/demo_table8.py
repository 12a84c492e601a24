"""Demo data: Table 8 of Opitz's study of SemEval-2017 Task 4 subtask A, with matching confusion matrices.

Opitz, "From Bias and Prevalence to Macro F1, Kappa, and MCC", re-scores eight
systems (anonymised as A–H) of SemEval-2017 Task 4 subtask A, three-way tweet
sentiment classification, under several metrics.  ``TABLE8`` holds that
table's values exactly as printed: percentages rounded to one decimal, in the
column order of ``TABLE8_COLUMNS``:

* ``macR``, ``GmacR``, ``HmacR`` – arithmetic, geometric and harmonic mean of the
  per-class recalls;
* ``macF1`` – mean per-class F1; ``macF1c`` – the same on the
  prevalence-calibrated matrix (each gold column rescaled to total ``1/3``);
* ``kappa`` – Cohen's kappa; ``mcc`` – Gorodkin's multi-class MCC;
* ``r1``, ``r2``, ``r3`` – recall of negative, neutral and positive.

The paper does not publish the systems' confusion matrices.  ``MATRICES`` are
*reconstructions*: integer matrices with the task's gold counts
(``GOLD_COUNTS``) that reproduce every printed column of their team's row to
the printed decimal (``|100·value − printed| < 0.05``).  They are **not** the
teams' real outputs: each row is consistent with millions of matrices, and
these are simply the ones whose scores sit closest to the printed values.
They were found by ``tools/reconstruct_table8.py``, which pins the diagonal
with the recalls, the row sums with kappa, MCC and macro F1, and the remaining
free cell with the calibrated macro F1.

Orientation: ``MATRICES[team][i][j]`` counts tweets *predicted* as
``LABELS[i]`` whose *gold* label is ``LABELS[j]`` (rows are predictions,
columns are gold), so every column ``j`` sums to ``GOLD_COUNTS[j]``.

This module is plain data and deliberately imports nothing from Django.
"""

LABELS: tuple[str, str, str] = ("negative", "neutral", "positive")

#: Gold items per class in the subtask A test set (12284 tweets in all).
GOLD_COUNTS: tuple[int, int, int] = (3972, 5937, 2375)

TABLE8_COLUMNS: tuple[str, ...] = ("macR", "GmacR", "HmacR", "macF1", "macF1c", "kappa", "mcc", "r1", "r2", "r3")

#: Table 8 as printed, in percent, one tuple per team in ``TABLE8_COLUMNS`` order.
TABLE8: dict[str, tuple[float, ...]] = {
    "A": (68.1, 66.8, 65.4, 65.4, 67.7, 46.5, 48.0, 82.9, 51.2, 70.2),
    "B": (68.1, 66.5, 65.0, 66.0, 67.7, 47.3, 49.2, 87.8, 51.4, 65.2),
    "C": (67.6, 66.8, 66.0, 66.0, 67.5, 47.2, 48.1, 81.7, 56.0, 65.2),
    "D": (67.4, 66.5, 65.6, 65.1, 67.1, 46.3, 47.3, 80.3, 54.2, 67.6),
    "E": (66.9, 66.8, 66.8, 66.0, 67.3, 47.0, 47.0, 69.8, 64.0, 66.8),
    "F": (65.9, 65.6, 65.4, 64.5, 66.1, 45.0, 45.4, 73.5, 58.7, 65.6),
    "G": (64.9, 64.2, 63.5, 63.4, 64.9, 43.0, 43.8, 77.4, 53.9, 63.5),
    "H": (64.5, 64.5, 64.5, 63.7, 64.9, 43.6, 43.6, 65.3, 63.6, 64.5),
}

Matrix = tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]

#: Reconstructed confusion matrices (rows = predicted, columns = gold).
MATRICES: dict[str, Matrix] = {
    "A": ((3293, 1957, 346), (649, 3038, 362), (30, 942, 1667)),
    "B": ((3486, 2171, 327), (486, 3052, 499), (0, 714, 1549)),
    "C": ((3245, 1776, 283), (709, 3324, 544), (18, 837, 1548)),
    "D": ((3191, 1727, 298), (692, 3216, 472), (89, 994, 1605)),
    "E": ((2773, 1101, 135), (1103, 3801, 654), (96, 1035, 1586)),
    "F": ((2918, 1751, 45), (685, 3484, 772), (369, 702, 1558)),
    "G": ((3074, 1957, 280), (772, 3199, 587), (126, 781, 1508)),
    "H": ((2594, 1235, 134), (1134, 3777, 709), (244, 925, 1532)),
}
