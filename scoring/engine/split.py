"""A public/private split of a test set: which items a phase scores in public while it runs.

A phase may keep part of its gold private (the practice Kaggle made familiar, and a defence
against probing the gold through the scores shown during the phase). The split is a function
of the number of items, the private share and a seed, nothing else: fixed, reproducible, and
recorded with the phase. ``round(n · percent / 100)`` items are private, chosen by
``numpy.random.default_rng(seed).permutation(n)``; the rest are public. Each part is scored as
a test set of its own: its confusion matrix holds only its items (rows predicted, columns
gold), and every metric, raw and calibrated, is computed from that matrix.
"""

from __future__ import annotations

import numpy as np

from scoring.engine.items import items_confusion

PARTS = ("public", "private")
"""The two parts of a split test set, as stored and as named in URLs and JSON."""


def private_mask(n_items: int, *, percent: int, seed: int) -> np.ndarray:
    """``True`` for the items of the private part (in the gold file's order)."""
    if not 0 <= percent <= 100:
        raise ValueError(f"the private share is a percentage, not {percent}")
    mask = np.zeros(n_items, dtype=bool)
    mask[np.random.default_rng(seed).permutation(n_items)[: round(n_items * percent / 100)]] = True
    return mask


def part_masks(n_items: int, *, percent: int, seed: int) -> dict[str, np.ndarray]:
    """Each part's items: ``{"public": mask, "private": mask}``."""
    private = private_mask(n_items, percent=percent, seed=seed)
    return {"public": ~private, "private": private}


def part_matrices(
    gold_codes: np.ndarray, predicted: np.ndarray, n_classes: int, *, percent: int, seed: int
) -> dict[str, np.ndarray]:
    """The confusion matrix of each part, from per-item predictions aligned to the gold
    (class codes, or probability rows for a soft submission)."""
    masks = part_masks(len(gold_codes), percent=percent, seed=seed)
    return {part: items_confusion(gold_codes[mask], predicted[mask], n_classes) for part, mask in masks.items()}
