"""Probability columns: every value a probability, every row summing to 1 within the tolerance
as written, the rows' sums kept to divide them by; read a batch of rows at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from functools import partial

import numpy as np
import pyarrow as pa

from scoring.engine import arrays
from scoring.engine.files.header import Header
from scoring.engine.files.messages import FIRST_DATA_LINE, NOT_A_PROBABILITY, PROBABILITIES_DONT_SUM, InputFileError
from scoring.engine.files.rows import field_text, first_index, is_text, pandas_module

PROBABILITY_TOLERANCE = 1e-3
"""How far a row of probabilities may sum from 1 (outputs printed with few decimals)."""


EXACT_TOLERANCE = Fraction(str(PROBABILITY_TOLERANCE))
"""The tolerance as the task page writes it (0.001), compared with the numbers as written."""


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """A probability column as floats: Arrow's numbers as they are; strings (read by pandas)
    converted as pandas converts them, NaN where a field is not a number."""
    if not is_text(column):
        return arrays.values(column)
    numbers = pandas_module().to_numeric(column.to_numpy(zero_copy_only=False), errors="coerce")
    return numbers.astype(np.float64, copy=False)


def _number_columns(columns: list[pa.ChunkedArray], indexes: Sequence[int]) -> tuple[pa.ChunkedArray, ...]:
    """The probability columns as Arrow numbers (those pandas read as strings converted)."""
    return tuple(
        pa.chunked_array([pa.array(_numbers(columns[index]))]) if is_text(columns[index]) else columns[index]
        for index in indexes
    )


def batches(columns: Sequence[pa.ChunkedArray]) -> Iterator[tuple[int, list[np.ndarray]]]:
    """The probability columns a batch of rows at a time (Arrow's own chunks, as the reader made
    them), as numpy views, each batch with the row of its first line. Column by column: no copy
    of a value, and no row-major block to assemble."""
    table = pa.Table.from_arrays(list(columns), names=[str(k) for k in range(len(columns))])
    start = 0
    for batch in table.to_batches():
        yield start, [arrays.values(batch.column(k)) for k in range(batch.num_columns)]
        start += batch.num_rows


def _row_sums(views: Sequence[np.ndarray]) -> np.ndarray:
    """Each row's sum, adding the label columns in task order (one rule, so that every use of
    a row's sum divides by the same number)."""
    totals = views[0].astype(np.float64, copy=True)
    for view in views[1:]:
        totals += view
    return totals


def _sums_off(sums: np.ndarray, width: int, texts: Callable[[int], list[str]]) -> np.ndarray:
    """Where a row's probabilities, as written, sum further from 1 than the tolerance.

    The rule applies to the numbers as written: 0.2,0.2,0.599 (0.999) is within 0.001 of 1, as
    is 0.2,0.3,0.501 (1.001), though in doubles |0.999 - 1| is 0.0010000000000000009. A row's
    sum in doubles is within ``width``·2^-51 of the sum of its decimals (each number within
    half an ulp of its text, each addition rounded once), so only a row whose double sum lies
    that close to the boundary is decided on its text, in exact fractions."""
    margin = width * 2.0**-51
    distance = np.abs(sums - 1.0)
    off = distance > PROBABILITY_TOLERANCE + margin
    unclear = np.flatnonzero(np.abs(distance - PROBABILITY_TOLERANCE) <= margin)
    for row in unclear:
        exact = sum((Fraction(text.strip()) for text in texts(int(row))), Fraction(0))
        off[row] = abs(exact - 1) > EXACT_TOLERANCE
    return off


def _row_texts(
    columns: list[pa.ChunkedArray], indexes: Sequence[int], row: int, *, header: Header, first: int
) -> list[str]:
    """The probabilities of row ``first + row`` as written."""
    return [field_text(columns, index, header=header, row=first + row) for index in indexes]


def _first_bad_value(views: Sequence[np.ndarray]) -> tuple[int, int] | None:
    """The first row of a batch holding a value that is not a probability (NaN, infinite, below
    0 or above 1) and the first such column in it; ``None`` when all are probabilities."""
    if all(view.min() >= 0 and view.max() <= 1 for view in views if len(view)):  # NaN fails both
        return None
    bad = np.stack([~np.isfinite(view) | (view < 0) | (view > 1) for view in views], axis=1)
    row = first_index(bad.any(axis=1))
    return row, first_index(bad[row])


def check_probabilities(
    columns: list[pa.ChunkedArray], indexes: Sequence[int], *, header: Header, labels: Sequence[str], name: str
) -> tuple[tuple[pa.ChunkedArray, ...], np.ndarray]:
    """The probability columns (one per label, task order) and the rows' sums, once every value
    is a probability and every row sums to 1 within the tolerance.

    One pass over the columns, a batch of rows at a time. A value that is not a probability is
    reported first, wherever it is, then the first row whose sum is off.
    """
    numbers = _number_columns(columns, indexes)
    totals = np.empty(len(numbers[0]))
    first_off: int | None = None
    for start, views in batches(numbers):
        bad = _first_bad_value(views)
        if bad is not None:
            row, column = start + bad[0], bad[1]
            raise InputFileError(
                NOT_A_PROBABILITY,
                file=name,
                line=row + FIRST_DATA_LINE,
                column=labels[column],
                value=field_text(columns, indexes[column], header=header, row=row),
            )
        sums = totals[start : start + len(views[0])]
        sums[:] = _row_sums(views)
        if first_off is None:
            texts = partial(_row_texts, columns, indexes, header=header, first=start)
            off = _sums_off(sums, len(views), texts)
            if off.any():
                first_off = start + first_index(off)
    if first_off is not None:
        raise InputFileError(
            PROBABILITIES_DONT_SUM,
            file=name,
            line=first_off + FIRST_DATA_LINE,
            total=float(totals[first_off]),
            tolerance=PROBABILITY_TOLERANCE,
        )
    return numbers, totals
