"""What replacing a gold file changes: ids added and removed, labels changed, class counts.

Every prediction file was checked to list exactly the gold file's ids, so a new gold file with
another id set makes every existing submission fail to score; one with the same ids re-scores
them all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.engine.io import LabelFile

EXAMPLES = 5
"""How many ids each list of the comparison shows."""


@dataclass(frozen=True)
class GoldChange:
    n_old: int
    n_new: int
    added: int
    removed: int
    relabelled: int
    examples_added: tuple[str, ...]
    examples_removed: tuple[str, ...]
    examples_relabelled: tuple[tuple[str, str, str], ...]
    """(id, old label, new label)"""
    counts_old: dict[str, int]
    counts_new: dict[str, int]

    @property
    def same_ids(self) -> bool:
        return self.added == 0 and self.removed == 0

    @property
    def unchanged(self) -> bool:
        return self.same_ids and self.relabelled == 0


def class_counts(gold: LabelFile) -> dict[str, int]:
    counts = np.bincount(gold.codes, minlength=len(gold.labels))
    return {label: int(count) for label, count in zip(gold.labels, counts, strict=True)}


def compare_gold(old: LabelFile, new: LabelFile) -> GoldChange:
    """How ``new`` differs from ``old`` (both read with the same labels)."""
    old_ids, new_ids = np.asarray(old.ids, dtype=object), np.asarray(new.ids, dtype=object)
    added = np.setdiff1d(new_ids, old_ids)
    removed = np.setdiff1d(old_ids, new_ids)
    common, in_old, in_new = np.intersect1d(old_ids, new_ids, return_indices=True)
    changed = old.codes[in_old] != new.codes[in_new]
    relabelled = [
        (str(item), old.labels[a], new.labels[b])
        for item, a, b in zip(common[changed], old.codes[in_old][changed], new.codes[in_new][changed], strict=True)
    ]
    return GoldChange(
        n_old=len(old_ids),
        n_new=len(new_ids),
        added=len(added),
        removed=len(removed),
        relabelled=int(changed.sum()),
        examples_added=tuple(str(item) for item in added[:EXAMPLES]),
        examples_removed=tuple(str(item) for item in removed[:EXAMPLES]),
        examples_relabelled=tuple(relabelled[:EXAMPLES]),
        counts_old=class_counts(old),
        counts_new=class_counts(new),
    )
