"""What replacing a gold file changes: ids added and removed, labels changed, class counts.

Every prediction file was checked to list exactly the gold file's ids, so a new gold file with
another id set makes every existing submission fail to score; one with the same ids re-scores
them all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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


def _first_sorted(ids: pa.Array) -> tuple[str, ...]:
    """The first :data:`EXAMPLES` of ``ids`` in sorted order."""
    order = pc.sort_indices(ids)[:EXAMPLES]
    return tuple(ids.take(order).to_pylist())


def compare_gold(old: LabelFile | None, new: LabelFile) -> GoldChange:
    """How ``new`` differs from ``old`` (both read with the same labels; ``None``: no gold file
    yet, so every id is added). Ids are matched as exact strings by Arrow's hash kernels, in time
    linear in the ids (a file of a hundred thousand ids compares in milliseconds); the examples
    are the first ids in sorted order."""
    if old is None:
        no_ids = pa.chunked_array([pa.array([], type=new.id_array.type)])
        old = LabelFile(
            name="no gold file", id_array=no_ids, codes=np.zeros(0, dtype=new.codes.dtype), labels=new.labels
        )
    old_ids, new_ids = old.id_array.combine_chunks(), new.id_array.combine_chunks()
    row_in_new = pc.index_in(old_ids, value_set=new_ids)  # null: removed
    row_in_old = pc.index_in(new_ids, value_set=old_ids)  # null: added
    kept = pc.is_valid(row_in_new)
    old_rows = np.flatnonzero(kept.to_numpy(zero_copy_only=False))
    new_rows = row_in_new.filter(kept).to_numpy().astype(np.intp)
    changed = old.codes[old_rows] != new.codes[new_rows]
    old_changed, new_changed = old_rows[changed], new_rows[changed]
    changed_ids = old_ids.take(pa.array(old_changed))
    relabelled = tuple(
        (changed_ids[k].as_py(), old.labels[old.codes[old_changed[k]]], new.labels[new.codes[new_changed[k]]])
        for k in pc.sort_indices(changed_ids)[:EXAMPLES].to_pylist()
    )
    return GoldChange(
        n_old=len(old_ids),
        n_new=len(new_ids),
        added=row_in_old.null_count,
        removed=row_in_new.null_count,
        relabelled=int(changed.sum()),
        examples_added=_first_sorted(new_ids.filter(pc.is_null(row_in_old))),
        examples_removed=_first_sorted(old_ids.filter(pc.is_null(row_in_new))),
        examples_relabelled=relabelled,
        counts_old=class_counts(old),
        counts_new=class_counts(new),
    )
