"""A split test set's parts scored as the site scores them, against the standalone scorer on
each part's own files, for hard and probability files, in any line order.

What this proves: the site's route (the whole file read once, its items kept in the gold order,
each part's matrix counted from the items: ``scoring.engine.split.part_matrices``, as
``leaderboard/tasks.py`` does) and ``python -m scoring``'s route (``score_files`` on a gold
file and a prediction file holding that part's lines only, shuffled) store the very same
report, to the last bit of every value; and a probability file's matrix does not depend on the
order of its lines (each cell the double nearest to its exact sum, checked with fractions).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from scoring.engine.scorer import score_files, score_files_with_items
from scoring.engine.split import part_masks, part_matrices
from scoring.engine.suite import score_matrix

LABELS = ("neg", "neu", "pos")


def files(n_items: int, seed: int, *, soft: bool) -> tuple[np.ndarray, list[str], list[str]]:
    """Gold codes, the gold file's data lines and a prediction file's data lines (item order)."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 3, n_items)
    gold_lines = [f"doc{i},{LABELS[g]}" for i, g in enumerate(gold)]
    if soft:
        raw = rng.dirichlet(np.ones(3), size=n_items)
        lines = [f"doc{i}," + ",".join(f"{p:.4f}" for p in row) for i, row in enumerate(raw)]
    else:
        lines = [f"doc{i},{LABELS[c]}" for i, c in enumerate(rng.integers(0, 3, n_items))]
    return gold, gold_lines, lines


def text(header: str, lines: list[str]) -> bytes:
    return (header + "\n" + "\n".join(lines) + "\n").encode()


def header(soft: bool) -> str:
    return "id," + ",".join(LABELS) if soft else "id,label"


@pytest.mark.parametrize("soft", [False, True], ids=["hard", "probabilities"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_part_on_the_site_is_the_standalone_scorer_on_its_files(soft: bool, seed: int) -> None:
    _, gold_lines, lines = files(60, seed, soft=soft)
    rng = np.random.default_rng(100 + seed)
    shuffled = [lines[k] for k in rng.permutation(len(lines))]
    scored = score_files_with_items(text("id,label", gold_lines), text(header(soft), shuffled), labels=LABELS)
    site = part_matrices(scored.gold_codes, scored.items, len(LABELS), percent=40, seed=seed)
    for part, mask in part_masks(60, percent=40, seed=seed).items():
        chosen = np.flatnonzero(mask)
        order = rng.permutation(len(chosen))  # the part's file in yet another order
        part_gold = text("id,label", [gold_lines[k] for k in chosen])
        part_predictions = text(header(soft), [lines[chosen[k]] for k in order])
        standalone = score_files(part_gold, part_predictions, labels=LABELS)
        on_site = score_matrix(site[part], labels=LABELS)
        assert on_site.as_json() == standalone.as_json(), part
        assert on_site.calibrated_per_class == standalone.calibrated_per_class


def test_a_probability_file_s_matrix_does_not_depend_on_its_line_order() -> None:
    gold, gold_lines, lines = files(400, 7, soft=True)
    rng = np.random.default_rng(8)
    reports = []
    for _ in range(6):
        order = rng.permutation(len(lines))
        reports.append(score_files(text("id,label", gold_lines), text(header(True), [lines[k] for k in order])))
    for report in reports[1:]:
        assert report.as_json() == reports[0].as_json()
    # Each cell is the double nearest to the exact sum of the lines' probabilities divided by
    # their rows' sums (each such quotient a double, as the scorer computes it).
    exact = [[Fraction(0)] * 3 for _ in range(3)]
    for line, g in zip(lines, gold, strict=True):
        row = [float(x) for x in line.split(",")[1:]]
        total = row[0] + row[1] + row[2]
        for i in range(3):
            exact[i][g] += Fraction(row[i] / total)
    expected = [[cell.numerator / cell.denominator for cell in row] for row in exact]
    assert reports[0].matrix.tolist() == expected
