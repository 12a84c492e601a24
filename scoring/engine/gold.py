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
from scoring.engine.outputs import OutputsFile

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


def _columns(gold: LabelFile | OutputsFile) -> tuple[np.ndarray, list[tuple[str | None, tuple[str, ...]]]]:
    """The gold's codes as items × label columns, and each column's output (``None``: a task of
    one label column) and labels."""
    if isinstance(gold, OutputsFile):
        return gold.codes, [(output.name, output.labels) for output in gold.outputs]
    return gold.codes[:, np.newaxis], [(None, gold.labels)]


def _named(output: str | None, label: str) -> str:
    return label if output is None else f"{output}={label}"


def class_counts(gold: LabelFile | OutputsFile) -> dict[str, int]:
    """Items per label (``output=label`` for a task of several outputs)."""
    codes, columns = _columns(gold)
    return {
        _named(output, label): int(count)
        for column, (output, labels) in enumerate(columns)
        for label, count in zip(labels, np.bincount(codes[:, column], minlength=len(labels)), strict=True)
    }


def _first_sorted(ids: pa.Array) -> tuple[str, ...]:
    """The first :data:`EXAMPLES` of ``ids`` in sorted order."""
    order = pc.sort_indices(ids)[:EXAMPLES]
    return tuple(ids.take(order).to_pylist())


def compare_gold(old: LabelFile | OutputsFile | None, new: LabelFile | OutputsFile) -> GoldChange:
    """How ``new`` differs from ``old`` (both read with the same labels or outputs; ``None``: no
    gold file yet, so every id is added). Ids are matched as exact strings by Arrow's hash
    kernels, in time linear in the ids (a file of a hundred thousand ids compares in
    milliseconds); the examples are the first ids in sorted order, an item of several outputs
    showing the outputs that changed."""
    new_codes, columns = _columns(new)
    if old is None:
        old_ids, old_codes = pa.array([], type=new.id_array.type), new_codes[:0]
    else:
        old_ids, old_codes = old.id_array.combine_chunks(), _columns(old)[0]
    new_ids = new.id_array.combine_chunks()
    row_in_new = pc.index_in(old_ids, value_set=new_ids)  # null: removed
    row_in_old = pc.index_in(new_ids, value_set=old_ids)  # null: added
    kept = pc.is_valid(row_in_new)
    old_rows = np.flatnonzero(kept.to_numpy(zero_copy_only=False))
    new_rows = row_in_new.filter(kept).to_numpy().astype(np.intp)
    differs = old_codes[old_rows] != new_codes[new_rows]
    changed = differs.any(axis=1)
    old_changed, new_changed, which = old_rows[changed], new_rows[changed], differs[changed]
    changed_ids = old_ids.take(pa.array(old_changed))

    def text(codes: np.ndarray, row: int, k: int) -> str:
        return ", ".join(
            _named(output, labels[codes[row, column]])
            for column, (output, labels) in enumerate(columns)
            if which[k, column]
        )

    relabelled = tuple(
        (changed_ids[k].as_py(), text(old_codes, old_changed[k], k), text(new_codes, new_changed[k], k))
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
        counts_old=class_counts(old) if old is not None else dict.fromkeys(class_counts(new), 0),
        counts_new=class_counts(new),
    )
