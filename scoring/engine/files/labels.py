"""Labels read as task labels: their natural order, and their codes 0..n-1."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from scoring.engine.files.messages import FIRST_DATA_LINE, UNKNOWN_LABEL, UNKNOWN_OUTPUT_LABEL, InputFileError
from scoring.engine.files.rows import first_index, per_label

_DIGITS = re.compile(r"([0-9]+)")


def natural_key(label: str) -> tuple[tuple[str | int, ...], str]:
    """Sort key for labels read from a file: runs of digits compare by their value, so
    ``class2`` comes before ``class10``; labels equal but for leading zeros (``c01``, ``c1``)
    then compare as text. Parts alternate text and number, so two keys always compare."""
    parts = _DIGITS.split(label)
    return tuple(int(part) if odd else part for odd, part in zip(itertools.cycle((False, True)), parts)), label


def distinct_labels(values: pa.ChunkedArray) -> tuple[str, ...]:
    """The labels a column holds, in natural order (:func:`natural_key`)."""
    return tuple(sorted({label for chunk in values.chunks for label in chunk.dictionary.to_pylist()}, key=natural_key))


def encode_labels(
    values: pa.ChunkedArray, *, labels: Sequence[str], name: str, column: str | None = None
) -> np.ndarray:
    """Codes 0..n-1 of a column of labels in task order; an error on the first unknown label,
    naming the ``column`` (an output's) where a file has several."""
    code_of = {label: code for code, label in enumerate(labels)}
    codes = per_label(values, lambda label: code_of.get(label, -1), dtype=np.int32)
    unknown = codes < 0
    if unknown.any():
        row = first_index(unknown)
        where = {"line": row + FIRST_DATA_LINE, "label": values[row].as_py(), "labels": ", ".join(labels)}
        if column is None:
            raise InputFileError(UNKNOWN_LABEL, file=name, **where)
        raise InputFileError(UNKNOWN_OUTPUT_LABEL, file=name, column=column, **where)
    return codes
