"""The data lines as Arrow arrays, one per header field: Arrow's CSV reader for a file without
quotes, pandas' C reader for one with quotes and for the lines Arrow refuses (whose messages
follow pandas' reading); and the checks of empty fields and short lines."""

from __future__ import annotations

import io
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from scoring.engine import arrays
from scoring.engine.files.header import Header, count_fields
from scoring.engine.files.messages import (
    EMPTY_LINE,
    EMPTY_VALUE,
    FIELD_COUNT,
    FIRST_DATA_LINE,
    HEADER_LINE,
    MALFORMED,
    NO_ROWS,
    TOO_MANY_LINES,
    UNREADABLE_HEADER,
    InputFileError,
)
from scoring.engine.files.text import line_text, lines_before

LABELS = pa.dictionary(pa.int32(), pa.string())
"""How a column of labels is read: a few distinct strings, so a code per row and each string once."""


NUMBERS = pa.float64()
"""How a column of probabilities is read by Arrow (pandas reads them as strings)."""


def read_rows(
    header: Header, source: bytes, *, name: str, kinds: dict[int, pa.DataType], max_rows: int | None
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
            raise InputFileError(EMPTY_LINE, file=name, line=FIRST_DATA_LINE + first_index(blank))
    return columns


def _arrow_column(text: np.ndarray, *, labels: bool) -> pa.ChunkedArray:
    column = pa.array(text, type=pa.string())
    return pa.chunked_array([column.dictionary_encode() if labels else column])


def _read_plain(
    header: Header, source: bytes, *, kinds: dict[int, pa.DataType], max_rows: int | None
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
    if max_rows is not None and lines_before(source, len(source)) - HEADER_LINE > max_rows:
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


def pandas_module():
    """pandas, imported when a file needs it (quotes, or a line Arrow refuses): its import takes
    a few tenths of a second the command line need not spend on a plain file."""
    import pandas

    return pandas


_PANDAS_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _read_with_pandas(header: Header, source: bytes, *, name: str, max_rows: int | None) -> list[np.ndarray]:
    """The data lines as pandas' C reader reads them, one array of strings per header field:
    the reader for files with quotes, and the one whose refusals the messages follow."""
    pd = pandas_module()
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


def first_index(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def is_text(column: pa.ChunkedArray) -> bool:
    return pa.types.is_string(column.type)


def _is_labels(column: pa.ChunkedArray) -> bool:
    return pa.types.is_dictionary(column.type)


def _has_empty(column: pa.ChunkedArray) -> bool:
    """Whether a field of the column is empty; numbers never are (Arrow refuses an empty one),
    and labels are when their strings include "" (each string of a chunk's labels occurs in it)."""
    if _is_labels(column):
        return any("" in chunk.dictionary.to_pylist() for chunk in column.chunks)
    return is_text(column) and len(column) > 0 and pc.min(pc.binary_length(column)).as_py() == 0


def _empty(column: pa.ChunkedArray) -> np.ndarray:
    """Where a parsed field is empty. Both readers give every field as a string, "" for the
    missing fields of a short line (pandas) or of a blank one (Arrow), so no null occurs."""
    if _is_labels(column):
        return per_label(column, lambda label: label == "", dtype=bool)
    if not is_text(column):
        return np.zeros(len(column), dtype=bool)
    return arrays.values(pc.equal(pc.binary_length(column), 0))


def per_label(column: pa.ChunkedArray, value: Callable[[str], object], *, dtype: type) -> np.ndarray:
    """``value(label)`` for every row of a column of labels, computed once per distinct label
    of each chunk and spread over its rows by their codes."""
    out = np.empty(len(column), dtype=dtype)
    start = 0
    for chunk in column.chunks:
        values = np.array([value(label) for label in chunk.dictionary.to_pylist()], dtype=dtype)
        out[start : start + len(chunk)] = values[arrays.values(chunk.indices)]
        start += len(chunk)
    return out


def check_values(
    columns: list[pa.ChunkedArray], index: int, *, header: Header, name: str, what: str
) -> pa.ChunkedArray:
    """Column ``index``; an error on its first empty value (or short line)."""
    values = columns[index]
    if _has_empty(values):
        row = first_index(_empty(values))
        line = FIRST_DATA_LINE + row
        found = _fields_on_line(header, row)
        if found is not None and found < len(columns):
            raise InputFileError(FIELD_COUNT, file=name, line=line, expected=len(columns), found=found)
        raise InputFileError(EMPTY_VALUE, file=name, line=line, column=what)
    return values


def _fields_on_line(header: Header, row: int) -> int | None:
    """How many fields the line of data row ``row`` holds (pandas pads short lines with "").

    Only called on the error path; ``None`` when the line cannot be told (a quote left open).
    """
    line = line_text(header.text(), row + 1)
    return None if line is None else count_fields(line, header.separator.encode())


def field_text(columns: list[pa.ChunkedArray], index: int, *, header: Header, row: int) -> str:
    """Field ``index`` of data row ``row`` as written. A number column was read by Arrow, from a
    file without quotes, so the field is the line's text between separators."""
    column = columns[index]
    if is_text(column):
        return column[row].as_py()
    return line_text(header.text(), row + 1).decode("utf-8").split(header.separator)[index]
