"""Reconstruct confusion matrices consistent with Table 8 of Opitz's metric study.

Table 8 of Opitz, "From Bias and Prevalence to Macro F1, Kappa, and MCC", lists
ten scores (percentages, one decimal) for eight systems of SemEval-2017 Task 4
subtask A (three-way sentiment: negative, neutral, positive).  The paper does not
publish the systems' confusion matrices, so this script searches for integer
3×3 matrices that reproduce *every* printed column to the printed decimal.  They
are plausible stand-ins for demos and tests, not the teams' real outputs.

Conventions
-----------
``m[i][j]`` counts items *predicted* as class ``i`` whose *gold* class is ``j``;
columns therefore sum to the fixed gold counts 3972, 5937 and 2375.  A computed
value ``v`` reproduces a printed number ``x`` when ``|100·v − x| < 0.05``.

Search strategy
---------------
A matrix is fixed by its diagonal ``d`` and, per gold column ``j``, by how the
column's ``E_j = gold_j − d_j`` errors split between the two other rows.

1. Each printed recall pins ``d_j`` to a handful of integers; the product of
   those choices is filtered on macR, GmacR and HmacR (recall-only columns).
2. kappa, MCC and macro F1 depend only on the diagonal and the row sums (the
   "bias").  kappa is monotone in the chance agreement ``p·b``, which is linear
   in the row sums, so for every candidate first row sum the admissible second
   row sums form a short interval that is solved for, not searched.  MCC and
   macro F1 then filter the pairs.
3. With diagonal and row sums fixed, one free integer remains (the split of
   column 0).  Moving along it changes only the calibrated macro F1, the one
   column that depends on individual off-diagonal cells, so it is scanned in
   full for that column alone (the calibrated row sums move linearly).

Among all solutions the one whose values sit closest to the printed centres
(smallest worst-case ``|100·v − x|`` over the ten columns, then smallest sum of
squared deviations) is re-scored from scratch and printed with that margin and the
number of solutions.

Run ``python -m tools.reconstruct_table8`` from the repository root; it prints a ``MATRICES`` literal.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leaderboard.demo_table8 import GOLD_COUNTS, TABLE8, TABLE8_COLUMNS

LABELS: tuple[str, ...] = ("negative", "neutral", "positive")
GOLD: NDArray[np.int64] = np.array(GOLD_COUNTS, dtype=np.int64)
TOTAL: int = int(GOLD.sum())
N_CLASSES: int = len(GOLD)

#: Half a unit of the last printed digit, in percentage points.
TOLERANCE: float = 0.05

COLUMNS: tuple[str, ...] = TABLE8_COLUMNS
MACF1C: int = COLUMNS.index("macF1c")

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


# --------------------------------------------------------------------------
# Metric helpers.  All work on batches: the class axis is the last one and any
# leading axes are candidates, so one call scores millions of matrices.
# --------------------------------------------------------------------------


def safe_ratio(numerator: NDArray, denominator: NDArray) -> FloatArray:
    """Divide elementwise, yielding 0 where the denominator is 0 (the paper's convention)."""
    numerator, denominator = np.broadcast_arrays(
        np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64)
    )
    return np.divide(numerator, denominator, out=np.zeros(numerator.shape), where=denominator != 0)


def recall_means(recalls: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Arithmetic, geometric and harmonic mean of per-class recalls (macR, GmacR, HmacR)."""
    arithmetic = recalls.mean(axis=-1)
    geometric = np.prod(recalls, axis=-1) ** (1.0 / recalls.shape[-1])
    # The harmonic mean is 0 as soon as one recall is 0; safe_ratio gives 1/0 -> 0 there.
    harmonic = safe_ratio(1.0, safe_ratio(1.0, recalls).mean(axis=-1))
    harmonic = np.where((recalls == 0).any(axis=-1), 0.0, harmonic)
    return arithmetic, geometric, harmonic


def macro_f1(*, correct: NDArray, bias: NDArray, prevalence: NDArray) -> FloatArray:
    """Mean per-class F1 from the diagonal and both marginals.

    ``2PR/(P+R)`` with ``P = c/b`` and ``R = c/p`` simplifies to ``2c/(b+p)``,
    which needs no special case for ``c = 0`` and is invariant to scaling, so the
    same helper serves raw counts and the real-valued calibrated matrix.
    """
    return safe_ratio(2.0 * np.asarray(correct, dtype=np.float64), np.add(bias, prevalence)).mean(axis=-1)


def kappa(*, agreement: NDArray, prevalence: NDArray, bias: NDArray) -> FloatArray:
    """Cohen's kappa from the normalised trace and marginals (each summing to 1)."""
    chance = (prevalence * bias).sum(axis=-1)
    return safe_ratio(agreement - chance, 1.0 - chance)


def mcc(*, agreement: NDArray, prevalence: NDArray, bias: NDArray) -> FloatArray:
    """Gorodkin's multi-class MCC from the normalised trace and marginals."""
    chance = (prevalence * bias).sum(axis=-1)
    spread = np.sqrt((1.0 - (bias * bias).sum(axis=-1)) * (1.0 - (prevalence * prevalence).sum(axis=-1)))
    return safe_ratio(agreement - chance, spread)


def calibrate(matrices: NDArray, *, prevalence: NDArray) -> FloatArray:
    """Scale gold column ``j`` by ``1/(n·prevalence_j)`` so every class is equally prevalent.

    ``prevalence`` is passed in rather than read off the columns so that the
    same (linear) map can be applied to a matrix *difference*, whose columns sum to 0.
    """
    return safe_ratio(matrices, np.multiply(prevalence, matrices.shape[-1])[..., None, :])


def table8_scores(matrices: NDArray) -> FloatArray:
    """All ten Table 8 columns, as fractions, for a batch of shape ``(..., n, n)``."""
    matrices = np.asarray(matrices, dtype=np.float64)
    correct = np.diagonal(matrices, axis1=-2, axis2=-1)
    bias = matrices.sum(axis=-1)
    prevalence = matrices.sum(axis=-2)
    total = matrices.sum(axis=(-2, -1))[..., None]
    recalls = safe_ratio(correct, prevalence)
    mac_r, gmac_r, hmac_r = recall_means(recalls)

    calibrated = calibrate(matrices, prevalence=prevalence)
    mac_f1c = macro_f1(
        correct=np.diagonal(calibrated, axis1=-2, axis2=-1),
        bias=calibrated.sum(axis=-1),
        prevalence=calibrated.sum(axis=-2),
    )

    agreement = correct.sum(axis=-1) / total[..., 0]
    p, b = prevalence / total, bias / total
    columns = [
        mac_r,
        gmac_r,
        hmac_r,
        macro_f1(correct=correct, bias=bias, prevalence=prevalence),
        mac_f1c,
        kappa(agreement=agreement, prevalence=p, bias=b),
        mcc(agreement=agreement, prevalence=p, bias=b),
        *np.moveaxis(recalls, -1, 0),
    ]
    return np.stack(columns, axis=-1)


def reproduces(values: NDArray, printed: NDArray | float) -> NDArray[np.bool_]:
    """True where a fraction rounds to the printed percentage (strictly within half a unit)."""
    return np.abs(100.0 * values - printed) < TOLERANCE


# --------------------------------------------------------------------------
# Search
# --------------------------------------------------------------------------


def integer_window(*, total: int, printed: float) -> IntArray:
    """Integers ``k`` with ``k/total`` reproducing ``printed``; a recall pins a diagonal cell to these."""
    low = int(np.floor(total * (printed - TOLERANCE) / 100.0))
    high = int(np.ceil(total * (printed + TOLERANCE) / 100.0))
    candidates = np.arange(low, high + 1, dtype=np.int64)
    return candidates[reproduces(candidates / total, printed)]


def diagonal_candidates(target: dict[str, float]) -> IntArray:
    """Diagonals (shape ``(K, n)``) whose recalls reproduce r1..r3, macR, GmacR and HmacR."""
    windows = [integer_window(total=int(gold), printed=target[f"r{j + 1}"]) for j, gold in enumerate(GOLD)]
    diagonals = np.array(list(itertools.product(*windows)), dtype=np.int64).reshape(-1, N_CLASSES)
    mac_r, gmac_r, hmac_r = recall_means(diagonals / GOLD)
    keep = reproduces(mac_r, target["macR"]) & reproduces(gmac_r, target["GmacR"]) & reproduces(hmac_r, target["HmacR"])
    return diagonals[keep]


def row_sum_candidates(*, diagonal: IntArray, target: dict[str, float]) -> IntArray:
    """Row sums (shape ``(M, n)``) that, with ``diagonal``, reproduce kappa, MCC and macro F1.

    The chance agreement ``p·b = G·r / N²`` is linear in the row sums ``r``;
    eliminating ``r2 = N − r0 − r1`` leaves, for each ``r0``, an interval of
    ``r1`` values on which kappa can reproduce.  The interval is widened by one
    on each side against rounding and then checked exactly.
    """
    errors = GOLD - diagonal
    agreement = diagonal.sum() / TOTAL
    # Row i collects the errors of every other gold column.
    low_rows = diagonal
    high_rows = diagonal + errors.sum() - errors

    # kappa falls as chance agreement rises, so the kappa window maps to a chance window.
    kappa_low = (target["kappa"] - TOLERANCE) / 100.0
    kappa_high = (target["kappa"] + TOLERANCE) / 100.0
    chance_low = (agreement - kappa_high) / (1.0 - kappa_high)
    chance_high = (agreement - kappa_low) / (1.0 - kappa_low)

    # G·r = (G0 − G2)·r0 + (G1 − G2)·r1 + G2·N
    slope_r0 = GOLD[0] - GOLD[2]
    slope_r1 = GOLD[1] - GOLD[2]
    if slope_r1 == 0:
        raise ValueError("gold counts of classes 1 and 2 must differ to solve for the second row sum")
    r0 = np.arange(low_rows[0], high_rows[0] + 1, dtype=np.int64)
    offset = GOLD[2] * TOTAL + slope_r0 * r0
    ends = np.stack([(chance * TOTAL**2 - offset) / slope_r1 for chance in (chance_low, chance_high)], axis=-1)
    r1_first = np.floor(ends.min(axis=-1)).astype(np.int64) - 1
    r1_last = np.ceil(ends.max(axis=-1)).astype(np.int64) + 1
    width = int((r1_last - r1_first).max()) + 1
    r1 = r1_first[:, None] + np.arange(width, dtype=np.int64)[None, :]
    in_window = r1 <= r1_last[:, None]
    rows = np.stack([np.broadcast_to(r0[:, None], r1.shape)[in_window], r1[in_window]], axis=-1)
    rows = np.concatenate([rows, TOTAL - rows.sum(axis=-1, keepdims=True)], axis=-1)
    rows = rows[((rows >= low_rows) & (rows <= high_rows)).all(axis=-1)]

    p = GOLD / TOTAL
    b = rows / TOTAL
    keep = (
        reproduces(kappa(agreement=agreement, prevalence=p, bias=b), target["kappa"])
        & reproduces(mcc(agreement=agreement, prevalence=p, bias=b), target["mcc"])
        & reproduces(macro_f1(correct=diagonal, bias=rows, prevalence=GOLD), target["macF1"])
    )
    return rows[keep]


def free_range(*, diagonal: IntArray, rows: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """Range of the one free cell for each row-sum vector, and the matrix at its low end.

    Write ``x_j`` for the errors of gold column ``j`` predicted as class
    ``j+1`` (mod 3); the rest, ``E_j − x_j``, go to class ``j+2``.  The row
    sums give ``x1 = x0 + r2 − d2 − E0`` and ``x2 = x0 + d1 + E2 − r1``, so only
    ``x0`` is free and every cell stays non-negative for ``x0`` in
    ``[lowest, highest]`` (empty when ``lowest > highest``).  Raising ``x0``
    by one adds ``STEP`` to the matrix.

    Returns ``(lowest, highest, matrices at x0 = lowest)``.
    """
    errors = GOLD - diagonal
    shift1 = rows[:, 2] - diagonal[2] - errors[0]
    shift2 = diagonal[1] + errors[2] - rows[:, 1]
    lowest = np.maximum.reduce([np.zeros_like(shift1), -shift1, -shift2])
    highest = np.minimum.reduce([np.full_like(shift1, errors[0]), errors[1] - shift1, errors[2] - shift2])
    x = np.stack([lowest, lowest + shift1, lowest + shift2], axis=-1)

    matrices = np.zeros((len(rows), N_CLASSES, N_CLASSES), dtype=np.int64)
    for j in range(N_CLASSES):
        matrices[:, j, j] = diagonal[j]
        matrices[:, (j + 1) % N_CLASSES, j] = x[:, j]
        matrices[:, (j + 2) % N_CLASSES, j] = errors[j] - x[:, j]
    return lowest, highest, matrices


def _step_direction() -> IntArray:
    """Change of the matrix when every ``x_j`` (see ``free_range``) grows by one."""
    step = np.zeros((N_CLASSES, N_CLASSES), dtype=np.int64)
    for j in range(N_CLASSES):
        step[(j + 1) % N_CLASSES, j] = 1
        step[(j + 2) % N_CLASSES, j] = -1
    return step


STEP: IntArray = _step_direction()


@dataclass(frozen=True)
class ScanResult:
    """Solutions found along the free cell for a batch of row-sum vectors, and the best of them.

    ``rank`` orders candidates: the worst-case deviation from the printed
    centres first, then the sum of squared deviations.  The second key matters
    because the worst case is often a diagonal-only column (a recall), shared
    exactly by thousands of matrices; without it the first in search order
    would win, which sits at the edge of the free range and so has a zero cell.
    """

    solutions: int
    rank: tuple[float, float]
    matrix: IntArray | None


NO_SOLUTION = ScanResult(0, (np.inf, np.inf), None)


def scan_free_cell(*, first: IntArray, spans: IntArray, printed: FloatArray) -> ScanResult:
    """Count and rank the matrices ``first[k] + s·STEP`` for ``0 ≤ s < spans[k]``.

    Along the free cell only macF1c changes: the diagonal and the row sums, and
    with them every other column, stay put.  So the other nine columns are
    scored once per row-sum vector, and macF1c is evaluated for every step from
    the calibrated row sums, which move linearly with ``s``.  This avoids
    building (and fully scoring) tens of millions of matrices.
    """
    deviations = np.abs(100.0 * table8_scores(first) - printed)
    deviations[:, MACF1C] = 0.0
    partial_margin = deviations.max(axis=-1)
    partial_spread = (deviations**2).sum(axis=-1)

    steps = np.arange(int(spans.max()))
    valid = steps[None, :] < spans[:, None]
    calibrated_first = calibrate(first, prevalence=GOLD)
    calibrated_step = calibrate(STEP, prevalence=GOLD).sum(axis=-1)
    bias = calibrated_first.sum(axis=-1)[:, None, :] + steps[None, :, None] * calibrated_step
    correct = np.diagonal(calibrated_first, axis1=-2, axis2=-1)[:, None, :]
    f1c_deviation = np.abs(100.0 * macro_f1(correct=correct, bias=bias, prevalence=1.0 / N_CLASSES) - printed[MACF1C])

    solved = valid & (f1c_deviation < TOLERANCE)
    if not solved.any():
        return NO_SOLUTION
    margins = np.where(solved, np.maximum(partial_margin[:, None], f1c_deviation), np.inf)
    best_margin = margins.min()
    spreads = np.where(margins == best_margin, partial_spread[:, None] + f1c_deviation**2, np.inf)
    row, step = np.unravel_index(int(np.argmin(spreads)), spreads.shape)
    return ScanResult(int(solved.sum()), (float(best_margin), float(spreads[row, step])), first[row] + step * STEP)


@dataclass(frozen=True)
class TeamResult:
    """Outcome of the search for one team: the chosen matrix, or why there is none."""

    team: str
    solutions: int
    matrix: IntArray | None
    margin: float | None
    failure: str | None


def solve_team(team: str, *, batch_cells: int = 2_000_000) -> TeamResult:
    """Find every matrix reproducing the team's row and pick the one closest to the printed centres.

    Candidates are ranked as described in ``ScanResult``; exact ties go to the
    first in search order (diagonal, then row sums, then the free cell), so the
    choice is deterministic.  ``batch_cells`` bounds the size of the
    arrays scanned at once, to keep memory use modest.
    """
    printed = np.array(TABLE8[team])
    target = dict(zip(COLUMNS, TABLE8[team], strict=True))

    diagonals = diagonal_candidates(target)
    if len(diagonals) == 0:
        return TeamResult(team, 0, None, None, "no diagonal reproduces r1, r2, r3 together with macR, GmacR, HmacR")

    solutions = 0
    best = NO_SOLUTION
    any_rows = any_realisable = False
    for diagonal in diagonals:
        rows = row_sum_candidates(diagonal=diagonal, target=target)
        lowest, highest, first = free_range(diagonal=diagonal, rows=rows)
        realisable = highest >= lowest
        any_rows |= len(rows) > 0
        any_realisable |= bool(realisable.any())
        first, spans = first[realisable], (highest - lowest + 1)[realisable]
        if len(spans) == 0:
            continue
        per_batch = max(1, batch_cells // int(spans.max()))
        for start in range(0, len(spans), per_batch):
            chunk = slice(start, start + per_batch)
            found = scan_free_cell(first=first[chunk], spans=spans[chunk], printed=printed)
            solutions += found.solutions
            if found.rank < best.rank:
                best = found

    if best.matrix is None:
        if not any_rows:
            failure = "no row sums reproduce kappa, mcc and macF1 together for any admissible diagonal"
        elif not any_realisable:
            failure = "the row sums that reproduce kappa, mcc and macF1 need negative cells"
        else:
            failure = "every non-negative matrix reproducing the other nine columns misses macF1c"
        return TeamResult(team, 0, None, None, failure)

    # Independent check of the chosen matrix with the plain (non-incremental) scorer.
    margin = float(np.abs(100.0 * table8_scores(best.matrix) - printed).max())
    if margin >= TOLERANCE or (best.matrix < 0).any() or (best.matrix.sum(axis=0) != GOLD).any():
        raise RuntimeError(f"team {team}: chosen matrix fails verification")
    return TeamResult(team, solutions, best.matrix, margin, None)


def as_literal(matrix: IntArray) -> str:
    """Render a matrix as a nested tuple literal."""
    return "(" + ", ".join("(" + ", ".join(str(int(v)) for v in row) + ")" for row in matrix) + ")"


def main() -> None:
    """Search every team, print a per-team report and a ``MATRICES`` literal."""
    print(f"# m[i][j] = predicted class i, gold class j; class order: {', '.join(LABELS)}")
    results = []
    for team in TABLE8:
        started = time.perf_counter()
        result = solve_team(team)
        elapsed = time.perf_counter() - started
        if result.matrix is None:
            print(f"# {team}: NO SOLUTION: {result.failure} ({elapsed:.1f}s)")
        else:
            print(
                f"# {team}: {result.solutions:,} solutions; chosen worst margin {result.margin:.4f} pp ({elapsed:.1f}s)"
            )
        results.append(result)

    print("MATRICES = {")
    for result in results:
        if result.matrix is not None:
            print(f'    "{result.team}": {as_literal(result.matrix)},')
    print("}")


if __name__ == "__main__":
    main()
