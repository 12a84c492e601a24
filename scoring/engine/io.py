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
constants below (tests compare against them) and whose text names the file, the line and what
was expected. Data lines are parsed by Arrow's CSV reader (all cores, strings in contiguous
buffers, no Python object per field) when the file has no quote; a file with quotes, and one
that Arrow refuses, is read by pandas' C reader, whose reading and refusals the messages follow
(without quotes the two read every line alike); a large plain file is mapped into memory
rather than read. Ids that come in the gold file's order are matched by comparing the two
arrays; others through exact integer codes where the ids have them (plain numbers, ids of one
width: :mod:`scoring.engine.id_codes`), else by sorting 64-bit keys of them
(:mod:`scoring.engine.ids`); ten million lines cost about two seconds. No check costs more than
a pass over the file (none is quadratic, none holds more than the parsed table): a hostile
file is refused in about the time a reader takes to read it, and a hostile header from its
own line, before any reader is called.

Labels read from a gold file without a given order are put in natural order
(:func:`natural_key`): ``class2`` before ``class10``.

Probability rows that pass validation (each sums to 1 within ``PROBABILITY_TOLERANCE``) are
divided by their sums, so each item weighs exactly one in the soft confusion matrix (paper 000,
footnote 1): the matrix's total is the number of items and its column sums are the gold counts.
"""

from __future__ import annotations

import io
import itertools
import mmap
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from scoring.engine import arrays
from scoring.engine.confusion import SoftCounts
from scoring.engine.id_codes import CodeIndex, IdCoder, coded
from scoring.engine.ids import all_distinct, first_codes, gold_rows, increasing, key_order

EMPTY_FILE = "the file is empty"
UNDECODABLE = "the bytes at offset {offset} are not UTF-8 text; save the file as UTF-8"
UTF16 = "the file is UTF-16 text; save it as UTF-8"
MISSING_HEADER = "the first line must be the header 'id,label' (or 'id' and one column per label), found {found!r}"
MISSING_COLUMN = "the header has no {column!r} column (found {found})"
UNEXPECTED_COLUMN = "unexpected column {column!r} in the header; expected {expected}"
DUPLICATE_COLUMN = "the header names the column {column!r} twice"
AMBIGUOUS_ID_COLUMN = (
    "the header names {column!r} twice, and {column!r} is a label as well as the id column, so which column "
    "holds the ids is unclear; write the id column as {suggestion!r} (its name may be written in any case)"
)
NO_ROWS = "the file has a header but no data lines"
FIELD_COUNT = "expected {expected} fields, found {found}"
MALFORMED = "the line cannot be parsed as CSV/TSV ({detail})"
EMPTY_VALUE = "the {column} is empty"
EMPTY_LINE = "the line is empty"
BLANK_BEFORE_HEADER = (
    "the file starts with a blank line; the header (id,label, or id and one column per label) must be on line 1"
)
DUPLICATE_ID = "the id {id!r} appears a second time (first on line {first_line})"
UNKNOWN_LABEL = "unknown label {label!r}; expected one of {labels}"
UNKNOWN_ID = "the id {id!r} is not in the gold file"
MISSING_IDS = "{count} gold id(s) have no prediction, the first being {id!r} (gold line {gold_line})"
NOT_A_PROBABILITY = "the {column!r} value {value!r} is not a probability between 0 and 1"
PROBABILITIES_DONT_SUM = "the probabilities sum to {total:.6g}, not 1 (allowed deviation {tolerance:g})"
TOO_MANY_LINES = "the file has more than {limit:,} data lines"

OPEN_QUOTE_IN_HEADER = "a quote opened in the header is not closed on its line"
"""The ``detail`` of ``MALFORMED`` for a header whose quoted name would run on into the data."""
UNREADABLE_HEADER = "the header's fields cannot be told apart"
"""The ``detail`` of ``MALFORMED`` should pandas split the header otherwise than this module."""

PROBABILITY_TOLERANCE = 1e-3
"""How far a row of probabilities may sum from 1 (outputs printed with few decimals)."""

HEADER_LINE = 1
"""The header's line: the first (a file that starts with a blank line is refused)."""
FIRST_DATA_LINE = HEADER_LINE + 1
"""The line of the first data row: data row ``k`` is on line ``FIRST_DATA_LINE + k``."""

LONGEST_QUOTED = 200
"""Longest text quoted whole in a message: a 1 MB field is quoted cut, so that the error about
a huge line is not itself huge (it is shown on a page and kept in the session until then)."""

ID, LABEL = "id", "label"
ID_SPELLINGS = ("id", "ID", "Id", "iD")


def _shortened(value: object) -> object:
    return value[:LONGEST_QUOTED] + "…" if isinstance(value, str) and len(value) > LONGEST_QUOTED else value


class InputFileError(ValueError):
    """A problem in a gold or prediction file: which file, which line, what was expected.

    ``params`` keep the values whole; the message quotes long ones cut.
    """

    def __init__(self, template: str, *, file: str, line: int | None = None, **params: object) -> None:
        self.template = template
        self.file = file
        self.line = line
        self.params = params
        self.message = template.format(**{key: _shortened(value) for key, value in params.items()})
        where = f"{file}, line {line}" if line is not None else file
        super().__init__(f"{where}: {self.message}")


@dataclass(frozen=True, eq=False)
class LabelFile:
    """A parsed ``id,label`` file: ids and label codes in file order, the first on line 2.

    The ids stay in one Arrow string array (``id_array``), ten million of them a few bytes
    each; :attr:`ids` makes them Python strings on first use.
    """

    name: str
    id_array: pa.ChunkedArray
    codes: np.ndarray
    labels: tuple[str, ...]
    sorted_keys: np.ndarray | None = field(default=None, repr=False)
    """The ids' sorted keys when the uniqueness check sorted them (ids in no order)."""
    id_coder: IdCoder | None = field(default=None, repr=False)
    """An exact integer coding of the ids (:mod:`scoring.engine.id_codes`), where they have one."""
    code_index: CodeIndex | None = field(default=None, repr=False)
    """Where each code is among the ids (with ``id_coder``)."""

    @property
    def n_items(self) -> int:
        return len(self.codes)

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
        for start, views in _batches(self.probability_columns):
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
        for start, views in _batches(self.probability_columns):
            rows = slice(start, start + len(views[0]))
            sums = self.row_sums[rows]
            counts.add(in_file_order[rows], [view / sums for view in views])
        return counts.matrix()


def read_bytes(source: bytes | str | Path) -> tuple[bytes, str]:
    """The raw bytes of ``source`` and a name to use in messages."""
    data = source if isinstance(source, bytes) else Path(source).read_bytes()
    return data, _default_name(source)


def _default_name(source: bytes | str | Path) -> str:
    return "<upload>" if isinstance(source, bytes) else str(Path(source))


# --- lines and fields ------------------------------------------------------------------------

_PANDAS_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _quote_patterns(separator: bytes) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """For one separator: a separator and the quoted field after it, and one quoted field with
    the text after its closing quote (which pandas keeps).

    The quantifiers are possessive: ``"a""`` is an open quote (pandas reads ``""`` as one
    quote), never ``"a"`` and a stray ``"``; and no pattern backtracks on a long line. The
    first pattern starts with a literal, so the regular-expression engine skips to each
    candidate at C speed instead of trying every position.
    """
    sep = re.escape(separator)
    quoted = rb'"([^"]*+(?:""[^"]*+)*+)"'
    return re.compile(sep + quoted), re.compile(quoted + rb"([^" + sep + rb"]*+)")


_QUOTES = {separator: _quote_patterns(separator) for separator in (b",", b"\t")}


def _count_fields(line: bytes, separator: bytes) -> int | None:
    """How many fields pandas makes of one line, at C speed whatever its length; ``None`` when a
    quoted field is left open (pandas would run it on into the next line).

    A quote opens a quoted field only at the start of a field, and separators inside one do not
    count. With a separator put before the line, every separator left once the quoted fields
    are taken out starts a field: no unquoted field and no text after a closing quote holds one.
    A separator still followed by a quote starts a quoted field that does not close.
    """
    if b'"' not in line:
        return line.count(separator) + 1
    rest = _QUOTES[separator][0].sub(separator, separator + line)
    return None if separator + b'"' in rest else rest.count(separator)


def _split_fields(line: bytes, separator: bytes) -> list[bytes]:
    """The fields of one line whose quotes all close, as pandas reads them (``""`` in a quoted
    field is one quote; text after the closing quote is kept). One step per field: call it on
    a header known to be narrow."""
    if b'"' not in line:
        return line.split(separator)
    one_quoted = _QUOTES[separator][1]
    fields, position = [], 0
    while True:
        match = one_quoted.match(line, position) if line.startswith(b'"', position) else None
        if match:
            fields.append(match[1].replace(b'""', b'"') + match[2])
            position = match.end()
        else:
            end = line.find(separator, position)
            end = len(line) if end < 0 else end
            fields.append(line[position:end])
            position = end
        if position >= len(line):
            return fields
        position += len(separator)


_LEADING_SPACE = re.compile(rb"[ \t\v\f\r\n]*")


def _header_start(data: bytes) -> int:
    """Where the first line with text begins: after any blank lines (spaces at most)."""
    text = _LEADING_SPACE.match(data).end()
    return max(data.rfind(b"\n", 0, text), data.rfind(b"\r", 0, text)) + 1


def _line_end(data: bytes) -> int:
    """Where the first line ends, found at C speed: at its first LF or CR (pandas ends a line at
    CRLF, LF or a lone CR, as old Mac files do)."""
    newline = data.find(b"\n")
    end = len(data) if newline < 0 else newline
    carriage_return = data.find(b"\r", 0, end)
    return end if carriage_return < 0 else carriage_return


def _lines_before(data: bytes, offset: int) -> int:
    """How many line ends (CRLF, CR or LF) come before ``offset``, counted at C speed."""
    return data.count(b"\n", 0, offset) + data.count(b"\r", 0, offset) - data.count(b"\r\n", 0, offset)


def _line_text(source: bytes, index: int) -> bytes | None:
    """Line ``index`` (from 0) of ``source`` without its line end; ``None`` past the end.

    The line ends are found with numpy, so the millionth line costs no more than the first.
    """
    text = np.frombuffer(source, dtype=np.uint8)
    if b"\r" not in source:  # the usual case: one temporary array of the file's length
        ends = np.flatnonzero(text == ord("\n"))
    else:
        newline, carriage_return = text == ord("\n"), text == ord("\r")
        carriage_return[:-1] &= ~newline[1:]  # a CR followed by LF is part of a CRLF
        ends = np.flatnonzero(newline | carriage_return)
    if index > len(ends):
        return None
    start = int(ends[index - 1]) + 1 if index else 0
    stop = int(ends[index]) if index < len(ends) else len(source)
    line = source[start:stop]
    return line[:-1] if line.endswith(b"\r") else line


# --- the header ------------------------------------------------------------------------------


def _looks_like_utf16(data: bytes) -> bool:
    """UTF-16 without a byte-order mark: the header starts with ASCII ("id"), which UTF-16
    writes as a character and a zero byte, in one order or the other; UTF-8 text has no
    zero bytes."""
    start = data[:4]
    return len(start) == 4 and (start[1] == start[3] == 0) != (start[0] == start[2] == 0)


def _decode_check(data: bytes, name: str) -> bytes:
    if not data or data.isspace():  # stops at the first other byte: no stripped copy of the file
        raise InputFileError(EMPTY_FILE, file=name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_like_utf16(data):
        raise InputFileError(UTF16, file=name, line=HEADER_LINE)
    bom = len(b"\xef\xbb\xbf") if data.startswith(b"\xef\xbb\xbf") else 0
    data = data[bom:]
    try:
        if not data.isascii():  # ASCII, the usual case, is UTF-8: no decoded copy of the file
            data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = _lines_before(data, error.start) + 1
        # The offset is the file's, counted with the byte-order mark the user sees in a hex editor.
        raise InputFileError(UNDECODABLE, file=name, line=line, offset=error.start + bom) from None
    # Blank lines at the very end are an editor's habit, not a missing record.
    if data.endswith(b"\n") and not data.endswith((b"\n\n", b"\n\r\n", b"\r\r\n")):
        return data  # the usual ending: no copy of a large file
    return data.rstrip(b"\r\n") + b"\n"


@dataclass(frozen=True)
class _Header:
    """A file's header line, read on its own before any data line is parsed."""

    names: tuple[str, ...]
    """The header's names, stripped, in file order."""
    separator: str
    body_start: int
    """Where the data lines begin in the file's text: after the header's line end."""
    origin: bytes | str | Path
    """What the file was read from."""

    def text(self) -> bytes:
        """The file's text again, for a message about one line: the text that was parsed is
        not kept, so that a large file's bytes are freed as soon as its rows are read."""
        return _decode_check(read_bytes(self.origin)[0], "")


MAP_FROM_BYTES = 1 << 24
"""Files at least this large are mapped into memory rather than read, when they are plain."""


def _mapped_plain(origin: bytes | str | Path, *, max_rows: int | None) -> mmap.mmap | None:
    """A large file mapped into memory, when it is plain: ASCII, no byte-order mark, text on its
    first line, ending in one line end. Mapped, its bytes are the page cache's own, where
    reading them would copy them (a tenth of a second for 200 MB); any other file is read and
    checked by :func:`_decode_check`, whose messages name what is wrong. (``max_rows`` asks
    for a count of lines, which a read file gives.)"""
    if isinstance(origin, bytes) or max_rows is not None:
        return None
    with open(origin, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size < MAP_FROM_BYTES or size == 0:
            return None
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    plain = (
        not mapped[:1].isspace()
        and not mapped[:3].startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"))
        and not _looks_like_utf16(mapped[:4])
        and mapped[-1:] == b"\n"
        and not mapped[-3:].endswith((b"\n\n", b"\n\r\n", b"\r\r\n"))
        and int(np.frombuffer(mapped, dtype=np.uint8).max()) < 0x80
    )
    if plain:
        return mapped
    mapped.close()
    return None


def _read_header(
    origin: bytes | str | Path, *, name: str, widths: Sequence[int], described: str, max_rows: int | None = None
) -> tuple[_Header, bytes | mmap.mmap]:
    """Check the file's text and read its header; refuse one far wider than ``widths`` (the
    field counts a header of this kind may have, ``described`` for the message) at once.
    Returns the header and the file's text (without a byte-order mark, ending in one line end).
    """
    source = _mapped_plain(origin, max_rows=max_rows) or _decode_check(read_bytes(origin)[0], name)
    if _header_start(source):
        raise InputFileError(BLANK_BEFORE_HEADER, file=name, line=HEADER_LINE)
    line = HEADER_LINE
    end = _line_end(source)
    text = source[:end]
    separator = b"\t" if b"\t" in text else b","
    found = _count_fields(text, separator)
    if found is None:
        raise InputFileError(MALFORMED, file=name, line=line, detail=OPEN_QUOTE_IN_HEADER)
    if found > max(widths) + 1:
        raise InputFileError(FIELD_COUNT, file=name, line=line, expected=described, found=found)
    names = tuple(field.decode("utf-8").strip() for field in _split_fields(text, separator))
    if not any(column.lower() == ID for column in names):
        # Four bytes a character at most: enough for the 200 characters a message quotes.
        found_text = text[: 4 * LONGEST_QUOTED].decode("utf-8", errors="ignore")[:LONGEST_QUOTED]
        raise InputFileError(MISSING_HEADER, file=name, line=line, found=found_text)
    body_start = end + 2 if source[end : end + 2] == b"\r\n" else end + 1
    return _Header(names=names, separator=separator.decode(), body_start=body_start, origin=origin), source


def _column_name(column: str) -> str:
    """A header name of an ``id,label`` file: "id" and "label" in any case."""
    return column.lower() if column.lower() in (ID, LABEL) else column


def _check_columns(columns: Sequence[str], *, expected: Sequence[str], found: str, name: str, line: int) -> None:
    """A repeated name first, then the first expected name missing, then the first unexpected."""
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            raise InputFileError(DUPLICATE_COLUMN, file=name, line=line, column=column)
        seen.add(column)
    for column in expected:
        if column not in seen:
            raise InputFileError(MISSING_COLUMN, file=name, line=line, column=column, found=found)
    for column in columns:
        if column not in expected:
            raise InputFileError(UNEXPECTED_COLUMN, file=name, line=line, column=column, expected=", ".join(expected))


def _label_columns(header: _Header, *, name: str) -> tuple[int, int]:
    """Where the id and the label are in an ``id,label`` header."""
    columns = [_column_name(column) for column in header.names]
    _check_columns(columns, expected=(ID, LABEL), found=", ".join(columns), name=name, line=HEADER_LINE)
    return columns.index(ID), columns.index(LABEL)


def _is_hard(names: Sequence[str], labels: Sequence[str]) -> bool:
    """Whether a prediction header holds hard labels (the rule is in the module docstring)."""
    lowered = [column.lower() for column in names]
    if len(names) == 1 or sorted(lowered) == [ID, LABEL]:
        return True
    return LABEL in lowered and all(label.lower() != LABEL for label in labels)


def _probability_columns(header: _Header, *, labels: Sequence[str], name: str) -> tuple[int, list[int]]:
    """Where the id column and each label's column (in task order) are in a probability header."""
    label_set = set(labels)
    position: dict[str, int] = {}
    keys: list[tuple[str, str]] = []  # what each field is: ("label", label), ("id", "id") or ("other", name)
    for index, column in enumerate(header.names):
        if column in label_set and column not in position:
            position[column] = index
            keys.append(("label", column))
        elif column.lower() == ID:
            keys.append((ID, ID))
        else:
            keys.append(("label" if column in label_set else "other", _column_name(column)))
    shown = [column for _, column in keys]
    line, found = HEADER_LINE, ", ".join(shown)
    seen: set[tuple[str, str]] = set()
    for key in keys:
        if key in seen:
            raise InputFileError(DUPLICATE_COLUMN, file=name, line=line, column=key[1])
        seen.add(key)
    if (ID, ID) not in seen:
        raise InputFileError(MISSING_COLUMN, file=name, line=line, column=ID, found=found)
    id_index = keys.index((ID, ID))
    if header.names[id_index] in position:
        suggestion = next((spelling for spelling in ID_SPELLINGS if spelling not in label_set), ID)
        raise InputFileError(
            AMBIGUOUS_ID_COLUMN, file=name, line=line, column=header.names[id_index], suggestion=suggestion
        )
    expected = (ID, *labels)
    for label in labels:
        if label not in position:
            raise InputFileError(MISSING_COLUMN, file=name, line=line, column=label, found=found)
    for kind, column in keys:
        if kind == "other":
            raise InputFileError(UNEXPECTED_COLUMN, file=name, line=line, column=column, expected=", ".join(expected))
    return id_index, [position[label] for label in labels]


# --- the data lines --------------------------------------------------------------------------


LABELS = pa.dictionary(pa.int32(), pa.string())
"""How a column of labels is read: a few distinct strings, so a code per row and each string once."""
NUMBERS = pa.float64()
"""How a column of probabilities is read by Arrow (pandas reads them as strings)."""


def _read_rows(
    header: _Header, source: bytes, *, name: str, kinds: dict[int, pa.DataType], max_rows: int | None
) -> list[pa.ChunkedArray]:
    """The data lines as one Arrow array per header field, strings unless ``kinds`` says
    otherwise (:data:`LABELS`, :data:`NUMBERS`); row ``k`` is on line ``FIRST_DATA_LINE + k``."""
    columns = _read_plain(header, source, kinds=kinds, max_rows=max_rows)
    if columns is None:
        texts = _read_with_pandas(header, source, name=name, max_rows=max_rows)
        columns = [_arrow_column(text, labels=kinds.get(index) == LABELS) for index, text in enumerate(texts)]
    rows = len(columns[0])
    if max_rows is not None and rows > max_rows:
        raise InputFileError(TOO_MANY_LINES, file=name, line=FIRST_DATA_LINE + max_rows, limit=max_rows)
    if rows == 0:
        raise InputFileError(NO_ROWS, file=name, line=FIRST_DATA_LINE)
    # A blank or short line always leaves the last column empty: check that one column, and
    # look closer only when it finds something.
    if _has_empty(columns[-1]):
        blank = np.logical_and.reduce([_empty(column) for column in columns])
        if blank.any():
            raise InputFileError(EMPTY_LINE, file=name, line=FIRST_DATA_LINE + _first(blank))
    return columns


def _arrow_column(text: np.ndarray, *, labels: bool) -> pa.ChunkedArray:
    column = pa.array(text, type=pa.string())
    return pa.chunked_array([column.dictionary_encode() if labels else column])


def _read_plain(
    header: _Header, source: bytes, *, kinds: dict[int, pa.DataType], max_rows: int | None
) -> list[pa.ChunkedArray] | None:
    """The data lines as Arrow's CSV reader reads them (on all cores, strings into contiguous
    buffers, numbers as it converts them), or ``None`` where its reading could differ from
    pandas': when a quote occurs (pandas' quoting rules are its own), when there is no data
    line or more than ``max_rows``, or when Arrow refuses a line (a short or long one, a field
    that is not a number). Without quotes both read a line the same way, a row per line (a
    blank line is a row of empty fields), and spell numbers alike (``tests/scoring/engine/
    test_io.py`` compares them); pandas then reads what Arrow did not, for its messages.
    """
    body = header.body_start
    if body == len(source) or source.find(b'"', body) >= 0:
        return None
    if max_rows is not None and _lines_before(source, len(source)) - HEADER_LINE > max_rows:
        return None
    fields = [str(index) for index in range(len(header.names))]
    # The system's allocator, trimmed after the parse, hands the parser's buffers back: Arrow's
    # default pool would keep those of the gold file while the prediction file is read.
    pool = pa.system_memory_pool()
    types = {field: kinds.get(index, pa.string()) for index, field in enumerate(fields)}
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(memoryview(source)[body:]),
            read_options=pa_csv.ReadOptions(column_names=fields),
            parse_options=pa_csv.ParseOptions(
                delimiter=header.separator, quote_char=False, double_quote=False, ignore_empty_lines=False
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types=types,
                check_utf8=False,  # the whole file was checked before its header was read
                null_values=[],  # "", "NA", "nan": a string as written, or not a number
                strings_can_be_null=False,
            ),
            memory_pool=pool,
        )
    except pa.ArrowInvalid:
        return None
    finally:
        pool.release_unused()
    return table.columns


def _pandas():
    """pandas, imported when a file needs it (quotes, or a line Arrow refuses): its import takes
    a few tenths of a second the command line need not spend on a plain file."""
    import pandas

    return pandas


def _read_with_pandas(header: _Header, source: bytes, *, name: str, max_rows: int | None) -> list[np.ndarray]:
    """The data lines as pandas' C reader reads them, one array of strings per header field:
    the reader for files with quotes, and the one whose refusals the messages follow."""
    pd = _pandas()
    try:
        # The header is read as a row like any other: pandas' own header handling renames a
        # repeated name ("label.1") and, when the first data line has one field more than the
        # header, silently takes its first field as the index and shifts every column left.
        table = pd.read_csv(
            io.BytesIO(source),
            sep=header.separator,
            header=None,
            dtype=object,  # plain Python strings, as written
            na_filter=False,
            keep_default_na=False,
            skip_blank_lines=False,
            engine="c",
            nrows=None if max_rows is None else max_rows + 2,
        )
    except pd.errors.ParserError as error:
        match = _PANDAS_LINE.search(str(error))
        if match:
            expected, line, found = (int(g) for g in match.groups())
            raise InputFileError(FIELD_COUNT, file=name, line=line, expected=expected, found=found) from None
        raise InputFileError(MALFORMED, file=name, detail=str(error).strip()) from None
    if [str(column).strip() for column in table.iloc[0]] != list(header.names):
        raise InputFileError(MALFORMED, file=name, line=HEADER_LINE, detail=UNREADABLE_HEADER)
    return [table[k].to_numpy(dtype=object)[1:] for k in table.columns]


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _is_text(column: pa.ChunkedArray) -> bool:
    return pa.types.is_string(column.type)


def _is_labels(column: pa.ChunkedArray) -> bool:
    return pa.types.is_dictionary(column.type)


def _has_empty(column: pa.ChunkedArray) -> bool:
    """Whether a field of the column is empty; numbers never are (Arrow refuses an empty one),
    and labels are when their strings include "" (each string of a chunk's labels occurs in it)."""
    if _is_labels(column):
        return any("" in chunk.dictionary.to_pylist() for chunk in column.chunks)
    return _is_text(column) and len(column) > 0 and pc.min(pc.binary_length(column)).as_py() == 0


def _empty(column: pa.ChunkedArray) -> np.ndarray:
    """Where a parsed field is empty. Both readers give every field as a string, "" for the
    missing fields of a short line (pandas) or of a blank one (Arrow), so no null occurs."""
    if _is_labels(column):
        return _per_label(column, lambda label: label == "", dtype=bool)
    if not _is_text(column):
        return np.zeros(len(column), dtype=bool)
    return arrays.values(pc.equal(pc.binary_length(column), 0))


def _per_label(column: pa.ChunkedArray, value: Callable[[str], object], *, dtype: type) -> np.ndarray:
    """``value(label)`` for every row of a column of labels, computed once per distinct label
    of each chunk and spread over its rows by their codes."""
    out = np.empty(len(column), dtype=dtype)
    start = 0
    for chunk in column.chunks:
        values = np.array([value(label) for label in chunk.dictionary.to_pylist()], dtype=dtype)
        out[start : start + len(chunk)] = values[arrays.values(chunk.indices)]
        start += len(chunk)
    return out


def _check_values(
    columns: list[pa.ChunkedArray], index: int, *, header: _Header, name: str, what: str
) -> pa.ChunkedArray:
    """Column ``index``; an error on its first empty value (or short line)."""
    values = columns[index]
    if _has_empty(values):
        row = _first(_empty(values))
        line = FIRST_DATA_LINE + row
        found = _fields_on_line(header, row)
        if found is not None and found < len(columns):
            raise InputFileError(FIELD_COUNT, file=name, line=line, expected=len(columns), found=found)
        raise InputFileError(EMPTY_VALUE, file=name, line=line, column=what)
    return values


def _fields_on_line(header: _Header, row: int) -> int | None:
    """How many fields the line of data row ``row`` holds (pandas pads short lines with "").

    Only called on the error path; ``None`` when the line cannot be told (a quote left open).
    """
    line = _line_text(header.text(), row + 1)
    return None if line is None else _count_fields(line, header.separator.encode())


def _field_text(columns: list[pa.ChunkedArray], index: int, *, header: _Header, row: int) -> str:
    """Field ``index`` of data row ``row`` as written. A number column was read by Arrow, from a
    file without quotes, so the field is the line's text between separators."""
    column = columns[index]
    if _is_text(column):
        return column[row].as_py()
    return _line_text(header.text(), row + 1).decode("utf-8").split(header.separator)[index]


@dataclass(frozen=True)
class _Distinct:
    """What showed that a gold file's ids are distinct, kept to match prediction files."""

    sorted_keys: np.ndarray | None = None
    id_coder: IdCoder | None = None
    code_index: CodeIndex | None = None


def _check_unique(ids: pa.ChunkedArray, *, name: str) -> _Distinct:
    """An error on the first id seen before. Ids with an exact integer code (plain numbers, ids
    of one width) are told by their codes; other ids that come in order are distinct without a
    sort; the rest by their sorted keys (:func:`scoring.engine.ids.key_order`). Only a repeat
    takes Arrow's exact hash."""
    coding = coded(ids)
    index = None if coding is None else CodeIndex.of(coding[1])
    if index is not None and index.distinct:
        return _Distinct(id_coder=coding[0], code_index=index)
    if index is None:
        if increasing(ids):
            return _Distinct()
        order = key_order(ids)
        if all_distinct(ids, order):
            return _Distinct(sorted_keys=order)
    repeat = _first_repeat(first_codes(ids))
    _duplicate_id(ids, row=repeat[0], first=repeat[1], name=name)


def _duplicate_id(ids: pa.ChunkedArray, *, row: int, first: int, name: str) -> None:
    raise InputFileError(
        DUPLICATE_ID, file=name, line=row + FIRST_DATA_LINE, id=ids[row].as_py(), first_line=first + FIRST_DATA_LINE
    )


def _first_repeat(keys: np.ndarray) -> tuple[int, int] | None:
    """The first row whose key an earlier row has, and that earlier row (``None``: no repeat).

    For keys that are integers from 0: a count, and a sort only when something repeats.
    """
    if not len(keys) or np.bincount(keys).max() < 2:
        return None
    order = np.argsort(keys, kind="stable")  # stable: each key's rows stay in file order
    ordered = keys[order]
    repeats = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
    place = repeats[np.argmin(order[repeats])]
    return int(order[place]), int(order[np.searchsorted(ordered, ordered[place])])


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(label: str) -> tuple[tuple[str | int, ...], str]:
    """Sort key for labels read from a file: runs of digits compare by their value, so
    ``class2`` comes before ``class10``; labels equal but for leading zeros (``c01``, ``c1``)
    then compare as text. Parts alternate text and number, so two keys always compare."""
    parts = _DIGITS.split(label)
    return tuple(int(part) if odd else part for odd, part in zip(itertools.cycle((False, True)), parts)), label


def _distinct_labels(values: pa.ChunkedArray) -> tuple[str, ...]:
    """The labels a column holds, in natural order (:func:`natural_key`)."""
    return tuple(sorted({label for chunk in values.chunks for label in chunk.dictionary.to_pylist()}, key=natural_key))


def _encode_labels(values: pa.ChunkedArray, *, labels: Sequence[str], name: str) -> np.ndarray:
    """Codes 0..n-1 of a column of labels in task order; an error on the first unknown label."""
    code_of = {label: code for code, label in enumerate(labels)}
    codes = _per_label(values, lambda label: code_of.get(label, -1), dtype=np.int32)
    unknown = codes < 0
    if unknown.any():
        row = _first(unknown)
        raise InputFileError(
            UNKNOWN_LABEL, file=name, line=row + FIRST_DATA_LINE, label=values[row].as_py(), labels=", ".join(labels)
        )
    return codes


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
    name = name or _default_name(source)
    header, text = _read_header(source, name=name, widths=(2,), described="2 (id,label)", max_rows=max_rows)
    id_index, label_index = _label_columns(header, name=name)
    columns = _read_rows(header, text, name=name, kinds={label_index: LABELS}, max_rows=max_rows)
    del text  # the rows hold what is needed: a large file's bytes are freed here
    # One chunk: gathering ids at random rows (to match a prediction file) is then a plain
    # index per id, not a search for its chunk first.
    ids = pa.chunked_array([_check_values(columns, id_index, header=header, name=name, what="id").combine_chunks()])
    values = _check_values(columns, label_index, header=header, name=name, what="label")
    del columns  # the ids' many chunks, copied into one
    distinct = _check_unique(ids, name=name)
    labels = tuple(labels) if labels is not None else _distinct_labels(values)
    codes = _encode_labels(values, labels=labels, name=name)
    return LabelFile(
        name=name,
        id_array=ids,
        codes=codes,
        labels=labels,
        sorted_keys=distinct.sorted_keys,
        id_coder=distinct.id_coder,
        code_index=distinct.code_index,
    )


def _gold_positions(ids: pa.ChunkedArray, *, gold: LabelFile, name: str) -> np.ndarray | None:
    """Where each id is in the gold file (-1: not there), after an error on the first id that
    repeats an earlier one; ``None`` when the ids are the gold ids in the gold order (the usual
    case, found by comparing the two arrays).

    Ids in another order are matched by their codes when the gold's ids have them
    (:class:`scoring.engine.id_codes.CodeIndex`), else by sorting keys
    (:func:`scoring.engine.ids.gold_rows`); when they are not the gold ids, Arrow's exact hash
    finds where each is, and a repeated id shows as a repeated gold position or, among the ids
    that are not in the gold file, as a repeated code of those alone.
    """
    if ids.equals(gold.id_array):
        return None
    if gold.code_index is not None:
        codes = gold.id_coder.encode(ids)
        rows = None if codes is None else gold.code_index.rows_of(codes)
    else:
        rows = gold_rows(ids, gold_ids=gold.id_array, gold_order=gold.id_order)
    if rows is not None:
        return rows
    found = pc.index_in(ids, value_set=gold.id_array.chunk(0))
    positions = arrays.values(pc.fill_null(found, -1)).astype(np.intp)
    unknown = positions < 0
    keys = positions
    if unknown.any():
        keys = positions.copy()
        keys[unknown] = gold.n_items + first_codes(ids.filter(pa.array(unknown)))
    repeat = _first_repeat(keys)
    if repeat is not None:
        _duplicate_id(ids, row=repeat[0], first=repeat[1], name=name)
    return positions


def _check_coverage(positions: np.ndarray | None, ids: pa.ChunkedArray, *, gold: LabelFile, name: str) -> None:
    """Errors on the first unknown id and on gold ids with no prediction (``positions`` from
    :func:`_gold_positions`; ``None``, the gold ids in order, covers them all)."""
    if positions is None:
        return
    unknown = positions < 0
    if unknown.any():
        row = _first(unknown)
        raise InputFileError(UNKNOWN_ID, file=name, line=row + FIRST_DATA_LINE, id=ids[row].as_py())
    covered = np.zeros(gold.n_items, dtype=bool)
    covered[positions] = True
    if not covered.all():
        gold_row = _first(~covered)
        raise InputFileError(
            MISSING_IDS,
            file=name,
            count=int((~covered).sum()),
            id=gold.id_array[gold_row].as_py(),
            gold_line=gold_row + FIRST_DATA_LINE,
        )


def _numbers(column: pa.ChunkedArray) -> np.ndarray:
    """A probability column as floats: Arrow's numbers as they are; strings (read by pandas)
    converted as pandas converts them, NaN where a field is not a number."""
    if not _is_text(column):
        return arrays.values(column)
    numbers = _pandas().to_numeric(column.to_numpy(zero_copy_only=False), errors="coerce")
    return numbers.astype(np.float64, copy=False)


def _number_columns(columns: list[pa.ChunkedArray], indexes: Sequence[int]) -> tuple[pa.ChunkedArray, ...]:
    """The probability columns as Arrow numbers (those pandas read as strings converted)."""
    return tuple(
        pa.chunked_array([pa.array(_numbers(columns[index]))]) if _is_text(columns[index]) else columns[index]
        for index in indexes
    )


def _batches(columns: Sequence[pa.ChunkedArray]) -> Iterator[tuple[int, list[np.ndarray]]]:
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


EXACT_TOLERANCE = Fraction(str(PROBABILITY_TOLERANCE))
"""The tolerance as the task page writes it (0.001), compared with the numbers as written."""


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
    columns: list[pa.ChunkedArray], indexes: Sequence[int], row: int, *, header: _Header, first: int
) -> list[str]:
    """The probabilities of row ``first + row`` as written."""
    return [_field_text(columns, index, header=header, row=first + row) for index in indexes]


def _first_bad_value(views: Sequence[np.ndarray]) -> tuple[int, int] | None:
    """The first row of a batch holding a value that is not a probability (NaN, infinite, below
    0 or above 1) and the first such column in it; ``None`` when all are probabilities."""
    if all(view.min() >= 0 and view.max() <= 1 for view in views if len(view)):  # NaN fails both
        return None
    bad = np.stack([~np.isfinite(view) | (view < 0) | (view > 1) for view in views], axis=1)
    row = _first(bad.any(axis=1))
    return row, _first(bad[row])


def _check_probabilities(
    columns: list[pa.ChunkedArray], indexes: Sequence[int], *, header: _Header, labels: Sequence[str], name: str
) -> tuple[tuple[pa.ChunkedArray, ...], np.ndarray]:
    """The probability columns (one per label, task order) and the rows' sums, once every value
    is a probability and every row sums to 1 within the tolerance.

    One pass over the columns, a batch of rows at a time. A value that is not a probability is
    reported first, wherever it is, then the first row whose sum is off.
    """
    numbers = _number_columns(columns, indexes)
    totals = np.empty(len(numbers[0]))
    first_off: int | None = None
    for start, views in _batches(numbers):
        bad = _first_bad_value(views)
        if bad is not None:
            row, column = start + bad[0], bad[1]
            raise InputFileError(
                NOT_A_PROBABILITY,
                file=name,
                line=row + FIRST_DATA_LINE,
                column=labels[column],
                value=_field_text(columns, indexes[column], header=header, row=row),
            )
        sums = totals[start : start + len(views[0])]
        sums[:] = _row_sums(views)
        if first_off is None:
            texts = partial(_row_texts, columns, indexes, header=header, first=start)
            off = _sums_off(sums, len(views), texts)
            if off.any():
                first_off = start + _first(off)
    if first_off is not None:
        raise InputFileError(
            PROBABILITIES_DONT_SUM,
            file=name,
            line=first_off + FIRST_DATA_LINE,
            total=float(totals[first_off]),
            tolerance=PROBABILITY_TOLERANCE,
        )
    return numbers, totals


def _prediction_widths(labels: Sequence[str]) -> tuple[tuple[int, ...], str]:
    """The field counts a prediction header may have, and their description for a message."""
    if len(labels) + 1 == 2:
        return (2,), "2 (id,label)"
    return (2, len(labels) + 1), f"2 (id,label) or {len(labels) + 1} (id and one column per label: {', '.join(labels)})"


def _in_gold_order(values: np.ndarray, positions: np.ndarray | None) -> np.ndarray:
    """Rows put where the gold file has their ids (``positions``, checked to cover every gold
    id once): one scatter, no inverse permutation to build first."""
    if positions is None:
        return values
    placed = np.empty_like(values)
    placed[positions] = values
    return placed


def read_predictions(
    source: bytes | str | Path, *, gold: LabelFile, name: str | None = None, max_rows: int | None = None
) -> Predictions:
    """Read hard (``id,label``) or soft (``id`` + a column per label) predictions for ``gold``.

    The header decides which (the rule is in the module docstring). The result is in the gold
    file's item order; probability rows are renormalised to sum to 1.
    """
    name = name or _default_name(source)
    widths, described = _prediction_widths(gold.labels)
    header, text = _read_header(source, name=name, widths=widths, described=described, max_rows=max_rows)
    soft = not _is_hard(header.names, gold.labels)
    if soft:
        id_index, label_indexes = _probability_columns(header, labels=gold.labels, name=name)
    else:
        id_index, label_index = _label_columns(header, name=name)
    kinds = dict.fromkeys(label_indexes, NUMBERS) if soft else {label_index: LABELS}
    columns = _read_rows(header, text, name=name, kinds=kinds, max_rows=max_rows)
    del text  # the rows hold what is needed: a large file's bytes are freed here
    ids = _check_values(columns, id_index, header=header, name=name, what="id")
    positions = _gold_positions(ids, gold=gold, name=name)
    if soft:
        numbers, sums = _check_probabilities(columns, label_indexes, header=header, labels=gold.labels, name=name)
        _check_coverage(positions, ids, gold=gold, name=name)
        return Predictions(name=name, probability_columns=numbers, row_sums=sums, gold_positions=positions)
    values = _check_values(columns, label_index, header=header, name=name, what="label")
    codes = _encode_labels(values, labels=gold.labels, name=name)
    _check_coverage(positions, ids, gold=gold, name=name)
    return Predictions(name=name, codes=_in_gold_order(codes, positions))
