"""Reading and validating gold and prediction files, with line-precise errors.

Formats (contract): UTF-8 CSV or TSV (the header line decides: a tab in it means TSV) with a
header. Gold and hard predictions have the columns ``id,label``; probability outputs have
``id`` plus one column per task label. A UTF-8 byte-order mark and CRLF line ends are
accepted. Line numbers in errors are the file's own: its first line is line 1.

How the header is read, so that any label works (``label``, ``ID``, ``x]``, ``two words``):

- The header is the file's first line: a file that starts with a blank line is refused
  (``BLANK_BEFORE_HEADER``, line 1) rather than guessed at; blank lines at the end are
  accepted. The header is one line: a quote opened in it must close on it.
- Header names are compared after stripping the spaces around them; ``id`` and ``label`` in
  any case, task labels as exact strings (case, inner spaces and Unicode as written).
- Widths: a gold file has 2 fields; a prediction file 2 (``id,label``) or 1 + the number of
  labels. The header line is checked on its own, before any data line is parsed. A header two
  or more fields wider than allowed is refused at once by its field count (``FIELD_COUNT`` on
  the header line, counted at C speed without splitting it), whatever it holds; with one field
  too many, that field is named (a duplicate or unexpected column), as it always was.
- A prediction header holds hard labels when it is ``id`` and ``label`` (any case, either
  order), when it has one field, or when it has a ``label`` column and no task label is
  spelled ``label`` in any case; otherwise it holds probabilities. A header of two fields
  ``id,label`` is thus always hard labels, even for a task whose one label is ``label``.
- In a probability header the label columns are found first, by exact name, and the id
  column is the one other field spelled ``id`` in any case: with a label ``ID``, ``id,ID,a``
  reads ``ID`` as the label. When the id column's name is itself a label that the header
  also names (``id,id,b`` for a label ``id``), which column is which is a guess, so the file
  is refused (``AMBIGUOUS_ID_COLUMN``) with the advice to write the id column in another case.

Every problem raises :class:`InputFileError`, whose ``template`` is one of the named message
constants (:mod:`scoring.engine.files.messages`, all of them importable from here; tests
compare against them) and whose text names the file, the line and what was expected. No check
costs more than a pass over the file (none is quadratic, none holds more than the parsed
table): a hostile file is refused in about the time a reader takes to read it, and a hostile
header from its own line, before any reader is called.

The reading is split by job under :mod:`scoring.engine.files`: ``text`` (the bytes, read or
mapped into memory, checked as UTF-8, and their lines), ``header`` (the grammar above), ``rows``
(the data lines: Arrow's CSV reader for a file without quotes, pandas' C reader for one with
quotes and for the lines Arrow refuses, whose messages follow pandas' reading), ``labels``,
``probabilities`` (values and row sums) and ``alignment`` (distinct gold ids, and a prediction
file's ids put in the gold order, through the fast id path where it applies). This module
holds the two readers and what they return.

Labels read from a gold file without a given order are put in natural order
(:func:`natural_key`): ``class2`` before ``class10``.

Probability rows that pass validation (each sums to 1 within ``PROBABILITY_TOLERANCE``) are
divided by their sums, so each item weighs exactly one in the soft confusion matrix (paper 000,
footnote 1): the matrix's total is the number of items and its column sums are the gold counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa

from scoring.engine.confusion import SoftCounts
from scoring.engine.files.alignment import check_coverage, check_unique, gold_positions, in_gold_order
from scoring.engine.files.header import is_hard, label_columns, probability_columns, read_header
from scoring.engine.files.labels import distinct_labels, encode_labels, natural_key
from scoring.engine.files.messages import (
    AMBIGUOUS_ID_COLUMN,
    BLANK_BEFORE_HEADER,
    CODES,
    DUPLICATE_COLUMN,
    DUPLICATE_ID,
    EMPTY_FILE,
    EMPTY_LINE,
    EMPTY_VALUE,
    FIELD_COUNT,
    FIRST_DATA_LINE,
    HEADER_LINE,
    LONGEST_QUOTED,
    MALFORMED,
    MISSING_COLUMN,
    MISSING_HEADER,
    MISSING_IDS,
    NO_ROWS,
    NOT_A_PROBABILITY,
    OPEN_QUOTE_IN_HEADER,
    PROBABILITIES_DONT_SUM,
    TOO_MANY_LINES,
    UNDECODABLE,
    UNEXPECTED_COLUMN,
    UNKNOWN_ID,
    UNKNOWN_LABEL,
    UNKNOWN_OUTPUT_LABEL,
    UNREADABLE_HEADER,
    UTF16,
    InputFileError,
)
from scoring.engine.files.probabilities import PROBABILITY_TOLERANCE, batches, check_probabilities
from scoring.engine.files.rows import LABELS, NUMBERS, check_values, read_rows
from scoring.engine.files.text import MAP_FROM_BYTES, default_name, read_bytes
from scoring.engine.id_codes import CodeIndex, IdCoder
from scoring.engine.ids import key_order

__all__ = [
    "AMBIGUOUS_ID_COLUMN",
    "BLANK_BEFORE_HEADER",
    "CODES",
    "DUPLICATE_COLUMN",
    "DUPLICATE_ID",
    "EMPTY_FILE",
    "EMPTY_LINE",
    "EMPTY_VALUE",
    "FIELD_COUNT",
    "FIRST_DATA_LINE",
    "HEADER_LINE",
    "LONGEST_QUOTED",
    "MALFORMED",
    "MAP_FROM_BYTES",
    "MISSING_COLUMN",
    "MISSING_HEADER",
    "MISSING_IDS",
    "NOT_A_PROBABILITY",
    "NO_ROWS",
    "OPEN_QUOTE_IN_HEADER",
    "PROBABILITIES_DONT_SUM",
    "PROBABILITY_TOLERANCE",
    "TOO_MANY_LINES",
    "UNDECODABLE",
    "UNEXPECTED_COLUMN",
    "UNKNOWN_ID",
    "UNKNOWN_LABEL",
    "UNKNOWN_OUTPUT_LABEL",
    "UNREADABLE_HEADER",
    "UTF16",
    "InputFileError",
    "LabelFile",
    "Predictions",
    "natural_key",
    "read_bytes",
    "read_labels",
    "read_predictions",
]
"""The readers and what callers use with them: the error, every named message, the tolerance."""


@dataclass(frozen=True, eq=False, kw_only=True)
class IdsFile:
    """A gold file's ids, proved distinct, in file order (the first on line 2), and what matching
    a prediction file to them needs.

    The ids stay in one Arrow string array (``id_array``), ten million of them a few bytes
    each; :attr:`ids` makes them Python strings on first use.
    """

    name: str
    id_array: pa.ChunkedArray
    sorted_keys: np.ndarray | None = field(default=None, repr=False)
    """The ids' sorted keys when the uniqueness check sorted them (ids in no order)."""
    id_coder: IdCoder | None = field(default=None, repr=False)
    """An exact integer coding of the ids (:mod:`scoring.engine.id_codes`), where they have one."""
    code_index: CodeIndex | None = field(default=None, repr=False)
    """Where each code is among the ids (with ``id_coder``)."""

    @property
    def n_items(self) -> int:
        return len(self.id_array)

    @cached_property
    def id_order(self) -> np.ndarray:
        """The ids' sorted keys (:func:`scoring.engine.ids.key_order`), which match every
        prediction file that lists the ids in another order; sorted on first use when the ids
        came in order (their uniqueness then needed no sort)."""
        return self.sorted_keys if self.sorted_keys is not None else key_order(self.id_array)

    @cached_property
    def ids(self) -> np.ndarray:
        """The ids as an array of Python strings, in file order."""
        return self.id_array.to_numpy(zero_copy_only=False)


@dataclass(frozen=True, eq=False, kw_only=True)
class LabelFile(IdsFile):
    """A parsed ``id,label`` file: its ids, and their label codes in file order."""

    codes: np.ndarray
    labels: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class Predictions:
    """Predictions for a gold file: hard codes in the gold file's order, or probabilities.

    Probabilities stay in the file's validated columns, as read; :meth:`soft_matrix` counts
    them a block at a time and :attr:`probabilities` builds the matrix in the gold order (rows
    divided by their sums) only when asked: for ten million items and twenty labels that
    matrix is 1.6 GB of new memory, which the scorer's report does not need.
    """

    name: str
    codes: np.ndarray | None = None
    probability_columns: tuple[pa.ChunkedArray, ...] | None = field(default=None, repr=False)
    """A probability file's columns of numbers, one per label in task order, in file order."""
    row_sums: np.ndarray | None = field(default=None, repr=False)
    """Each line's sum of probabilities, by which its probabilities are divided."""
    gold_positions: np.ndarray | None = field(default=None, repr=False)
    """For each line of a probability file, the gold row of its id (``None``: the gold order)."""

    @property
    def is_soft(self) -> bool:
        return self.probability_columns is not None

    @cached_property
    def probabilities(self) -> np.ndarray | None:
        """The probability matrix (items x labels) in the gold order, each row summing to 1."""
        if self.probability_columns is None:
            return None
        matrix = np.empty((len(self.row_sums), len(self.probability_columns)))
        for start, views in batches(self.probability_columns):
            rows = slice(start, start + len(views[0]))
            block = np.stack(views, axis=1)
            block /= self.row_sums[rows, np.newaxis]
            matrix[rows if self.gold_positions is None else self.gold_positions[rows]] = block
        return matrix

    def soft_matrix(self, gold_codes: np.ndarray) -> np.ndarray:
        """The soft confusion matrix against the gold codes (gold order; paper 000, footnote 1),
        counted from the columns a batch of rows at a time: ``m[i, j]`` adds each line's
        probability of label ``i``, divided by the line's sum, where its gold label is ``j``;
        each cell the double nearest to its exact sum (:class:`scoring.engine.confusion.SoftCounts`),
        so the order of the lines does not matter."""
        in_file_order = gold_codes if self.gold_positions is None else gold_codes[self.gold_positions]
        counts = SoftCounts(len(self.probability_columns))
        for start, views in batches(self.probability_columns):
            rows = slice(start, start + len(views[0]))
            sums = self.row_sums[rows]
            counts.add(in_file_order[rows], [view / sums for view in views])
        return counts.matrix()


def read_labels(
    source: bytes | str | Path,
    *,
    labels: Sequence[str] | None = None,
    name: str | None = None,
    max_rows: int | None = None,
) -> LabelFile:
    """Read an ``id,label`` file (gold, or hard predictions checked on their own).

    ``labels`` fixes the label order and set; without it, the file's distinct labels in natural
    order (:func:`natural_key`).
    """
    name = name or default_name(source)
    header, text = read_header(source, name=name, widths=(2,), described="2 (id,label)", max_rows=max_rows)
    id_index, label_index = label_columns(header, name=name)
    columns = read_rows(header, text, name=name, kinds={label_index: LABELS}, max_rows=max_rows)
    del text  # the rows hold what is needed: a large file's bytes are freed here
    # One chunk: gathering ids at random rows (to match a prediction file) is then a plain
    # index per id, not a search for its chunk first.
    ids = pa.chunked_array([check_values(columns, id_index, header=header, name=name, what="id").combine_chunks()])
    values = check_values(columns, label_index, header=header, name=name, what="label")
    del columns  # the ids' many chunks, copied into one
    distinct = check_unique(ids, name=name)
    labels = tuple(labels) if labels is not None else distinct_labels(values)
    codes = encode_labels(values, labels=labels, name=name)
    return LabelFile(
        name=name,
        id_array=ids,
        codes=codes,
        labels=labels,
        sorted_keys=distinct.sorted_keys,
        id_coder=distinct.id_coder,
        code_index=distinct.code_index,
    )


def _prediction_widths(labels: Sequence[str]) -> tuple[tuple[int, ...], str]:
    """The field counts a prediction header may have, and their description for a message."""
    if len(labels) + 1 == 2:
        return (2,), "2 (id,label)"
    return (2, len(labels) + 1), f"2 (id,label) or {len(labels) + 1} (id and one column per label: {', '.join(labels)})"


def read_predictions(
    source: bytes | str | Path, *, gold: LabelFile, name: str | None = None, max_rows: int | None = None
) -> Predictions:
    """Read hard (``id,label``) or soft (``id`` + a column per label) predictions for ``gold``.

    The header decides which (the rule is in the module docstring). The result is in the gold
    file's item order; probability rows are renormalised to sum to 1.
    """
    name = name or default_name(source)
    widths, described = _prediction_widths(gold.labels)
    header, text = read_header(source, name=name, widths=widths, described=described, max_rows=max_rows)
    soft = not is_hard(header.names, gold.labels)
    if soft:
        id_index, label_indexes = probability_columns(header, labels=gold.labels, name=name)
    else:
        id_index, label_index = label_columns(header, name=name)
    kinds = dict.fromkeys(label_indexes, NUMBERS) if soft else {label_index: LABELS}
    columns = read_rows(header, text, name=name, kinds=kinds, max_rows=max_rows)
    del text  # the rows hold what is needed: a large file's bytes are freed here
    ids = check_values(columns, id_index, header=header, name=name, what="id")
    positions = gold_positions(ids, gold=gold, name=name)
    if soft:
        numbers, sums = check_probabilities(columns, label_indexes, header=header, labels=gold.labels, name=name)
        check_coverage(positions, ids, gold=gold, name=name)
        return Predictions(name=name, probability_columns=numbers, row_sums=sums, gold_positions=positions)
    values = check_values(columns, label_index, header=header, name=name, what="label")
    codes = encode_labels(values, labels=gold.labels, name=name)
    check_coverage(positions, ids, gold=gold, name=name)
    return Predictions(name=name, codes=in_gold_order(codes, positions))
