"""Reading and validating gold and prediction files, with line-precise errors.

Formats (contract): UTF-8 CSV or TSV (the header line decides: a tab in it means TSV) with a
header. Gold and hard predictions have the columns ``id,label``; probability outputs have
``id`` plus one column per task label. A UTF-8 byte-order mark and CRLF line ends are
accepted. Line numbers in errors count the header as line 1.

Every problem raises :class:`InputFileError`, whose ``template`` is one of the named message
constants below (tests compare against them) and whose text names the file, the line and what
was expected. Parsing is pandas' C reader plus vectorised checks, so ten million lines cost a
few seconds, and ids that come in the gold file's order are matched without hashing.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

EMPTY_FILE = "the file is empty"
UNDECODABLE = "the bytes at offset {offset} are not UTF-8 text; save the file as UTF-8"
UTF16 = "the file is UTF-16 text; save it as UTF-8"
MISSING_HEADER = "the first line must be the header 'id,label' (or 'id' and one column per label), found {found!r}"
MISSING_COLUMN = "the header has no {column!r} column (found {found})"
UNEXPECTED_COLUMN = "unexpected column {column!r} in the header; expected {expected}"
DUPLICATE_COLUMN = "the header names the column {column!r} twice"
NO_ROWS = "the file has a header but no data lines"
FIELD_COUNT = "expected {expected} fields, found {found}"
MALFORMED = "the line cannot be parsed as CSV/TSV ({detail})"
EMPTY_VALUE = "the {column} is empty"
EMPTY_LINE = "the line is empty"
DUPLICATE_ID = "the id {id!r} appears a second time (first on line {first_line})"
UNKNOWN_LABEL = "unknown label {label!r}; expected one of {labels}"
UNKNOWN_ID = "the id {id!r} is not in the gold file"
MISSING_IDS = "{count} gold id(s) have no prediction, the first being {id!r} (gold line {gold_line})"
NOT_A_PROBABILITY = "the {column!r} value {value!r} is not a probability between 0 and 1"
PROBABILITIES_DONT_SUM = "the probabilities sum to {total:.6g}, not 1 (allowed deviation {tolerance:g})"
TOO_MANY_LINES = "the file has more than {limit:,} data lines"

PROBABILITY_TOLERANCE = 1e-3
"""How far a row of probabilities may sum from 1 (outputs printed with few decimals)."""

HEADER_LINE = 1

LONGEST_QUOTED = 200
"""Longest text quoted whole in a message: a 1 MB field is quoted cut, so that the error about
a huge line is not itself huge (it is shown on a page and kept in the session until then)."""


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


@dataclass(frozen=True)
class LabelFile:
    """A parsed ``id,label`` file: ids and label codes in file order."""

    name: str
    ids: np.ndarray
    codes: np.ndarray
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Predictions:
    """Predictions aligned to the gold file's order: hard codes or a probability matrix."""

    name: str
    codes: np.ndarray | None = None
    probabilities: np.ndarray | None = None

    @property
    def is_soft(self) -> bool:
        return self.probabilities is not None


def read_bytes(source: bytes | str | Path) -> tuple[bytes, str]:
    """The raw bytes of ``source`` and a name to use in messages."""
    if isinstance(source, bytes):
        return source, "<upload>"
    path = Path(source)
    return path.read_bytes(), str(path)


def _looks_like_utf16(data: bytes) -> bool:
    """UTF-16 without a byte-order mark: the header starts with ASCII ("id"), which UTF-16
    writes as a character and a zero byte, in one order or the other; UTF-8 text has no
    zero bytes."""
    start = data[:4]
    return len(start) == 4 and (start[1] == start[3] == 0) != (start[0] == start[2] == 0)


def _decode_check(data: bytes, name: str) -> bytes:
    if not data.strip():
        raise InputFileError(EMPTY_FILE, file=name)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or _looks_like_utf16(data):
        raise InputFileError(UTF16, file=name, line=HEADER_LINE)
    bom = len(b"\xef\xbb\xbf") if data.startswith(b"\xef\xbb\xbf") else 0
    data = data[bom:]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = len(_LINE_END.findall(data, 0, error.start)) + 1
        # The offset is the file's, counted with the byte-order mark the user sees in a hex editor.
        raise InputFileError(UNDECODABLE, file=name, line=line, offset=error.start + bom) from None
    # Blank lines at the very end are an editor's habit, not a missing record.
    if data.endswith(b"\n") and not data.endswith((b"\n\n", b"\n\r\n", b"\r\r\n")):
        return data  # the usual ending: no copy of a large file
    return data.rstrip(b"\r\n") + b"\n"


_PANDAS_LINE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_LINE_END = re.compile(rb"\r\n|\r|\n")
"""pandas ends a line at CRLF, LF or a lone CR (old Mac files): so does the header look-up."""


def read_table(data: bytes, *, name: str, max_rows: int | None = None) -> pd.DataFrame:
    """Parse a CSV/TSV file into a frame of strings with stripped header names.

    Row ``k`` of the frame is line ``k + 2`` of the file.
    """
    data = _decode_check(data, name)
    first_line = _LINE_END.split(data, maxsplit=1)[0]
    separator = "\t" if b"\t" in first_line else ","
    try:
        # The header is read as a row like any other: pandas' own header handling renames a
        # repeated name ("label.1") and, when the first data line has one field more than the
        # header, silently takes its first field as the index and shifts every column left.
        table = pd.read_csv(
            io.BytesIO(data),
            sep=separator,
            header=None,
            dtype=object,  # plain Python strings: the checks below compare them directly
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
    except pd.errors.EmptyDataError:
        raise InputFileError(EMPTY_FILE, file=name) from None
    # Views of the parsed columns without the header row: no copy of a large file.
    frame = pd.DataFrame({k: table[k].to_numpy(dtype=object)[1:] for k in table.columns}, copy=False)
    if max_rows is not None and len(frame) > max_rows:
        raise InputFileError(TOO_MANY_LINES, file=name, line=max_rows + 2, limit=max_rows)
    # "id" and "label" are matched in any case; label columns of probability files exactly.
    columns = [_column_name(c) for c in table.iloc[0]]
    if "id" not in columns:
        raise InputFileError(MISSING_HEADER, file=name, line=HEADER_LINE, found=first_line.decode()[:200])
    duplicates = pd.Index(columns)[pd.Index(columns).duplicated()]
    if len(duplicates):
        raise InputFileError(DUPLICATE_COLUMN, file=name, line=HEADER_LINE, column=duplicates[0])
    frame.columns = columns
    if frame.empty:
        raise InputFileError(NO_ROWS, file=name, line=HEADER_LINE + 1)
    # A blank or short line always leaves the last column empty: check that one column, and
    # look closer only when it finds something.
    if _empty(frame.iloc[:, -1].to_numpy(dtype=object)).any():
        _check_no_blank_lines(frame, name=name)
    frame.attrs["source"], frame.attrs["separator"] = data, separator
    return frame


def _column_name(column: object) -> str:
    """A header name stripped; "id" and "label" in any case, label columns exactly."""
    name = str(column).strip()
    return name.lower() if name.lower() in ("id", "label") else name


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _empty(values: np.ndarray) -> np.ndarray:
    """Where a parsed field is empty. With ``na_filter=False`` pandas gives every field as a
    string and pads the missing fields of a short line with "", so no NaN can occur."""
    return values == ""


def _check_no_blank_lines(frame: pd.DataFrame, *, name: str) -> None:
    """An error on the first blank line, then on the first line with too few fields."""
    blank = (frame.isna() | (frame == "")).all(axis=1).to_numpy()
    if blank.any():
        raise InputFileError(EMPTY_LINE, file=name, line=_first(blank) + 2)
    missing = frame.isna().to_numpy()
    short = missing.any(axis=1)
    if short.any():
        row = _first(short)
        found = int((~missing[row]).sum())
        raise InputFileError(FIELD_COUNT, file=name, line=row + 2, expected=frame.shape[1], found=found)


def _check_values(frame: pd.DataFrame, *, name: str, column: str, what: str) -> np.ndarray:
    """The column as an object array; an error on the first empty or missing value."""
    values = frame[column].to_numpy(dtype=object)
    missing = _empty(values)
    if missing.any():
        line = _first(missing) + 2
        found = _field_count(frame, line)
        if found is not None and found < frame.shape[1]:
            raise InputFileError(FIELD_COUNT, file=name, line=line, expected=frame.shape[1], found=found)
        raise InputFileError(EMPTY_VALUE, file=name, line=line, column=what)
    return values


def _field_count(frame: pd.DataFrame, line: int) -> int | None:
    """How many fields line ``line`` of the source holds (pandas pads short lines with "").

    Only called on the error path; ``None`` when the source is not at hand.
    """
    source = frame.attrs.get("source")
    if source is None:
        return None
    lines = _LINE_END.split(source, maxsplit=line)
    if len(lines) < line:
        return None
    text = lines[line - 1].decode("utf-8")
    try:
        return len(next(csv.reader([text], delimiter=frame.attrs["separator"]), [])) or 1
    except csv.Error:  # a field over csv's 128 KiB limit (which pandas does not have)
        return None


def _check_unique(ids: np.ndarray, *, name: str) -> None:
    index = pd.Index(ids)
    if index.is_unique:
        return
    duplicated = index.duplicated()
    if duplicated.any():
        row = _first(duplicated)
        first = _first(ids == ids[row])
        raise InputFileError(DUPLICATE_ID, file=name, line=row + 2, id=ids[row], first_line=first + 2)


def _check_columns(frame: pd.DataFrame, *, name: str, expected: Sequence[str]) -> None:
    for column in expected:
        if column not in frame.columns:
            raise InputFileError(
                MISSING_COLUMN, file=name, line=HEADER_LINE, column=column, found=", ".join(frame.columns)
            )
    for column in frame.columns:
        if column not in expected:
            raise InputFileError(
                UNEXPECTED_COLUMN, file=name, line=HEADER_LINE, column=column, expected=", ".join(expected)
            )


def encode_labels(values: np.ndarray, *, labels: Sequence[str], name: str) -> np.ndarray:
    """Codes 0..n-1 of string labels in task order; an error on the first unknown label."""
    codes = pd.Index(list(labels)).get_indexer(values)
    unknown = codes < 0
    if unknown.any():
        row = _first(unknown)
        raise InputFileError(UNKNOWN_LABEL, file=name, line=row + 2, label=values[row], labels=", ".join(labels))
    return codes


def read_labels(
    source: bytes | str | Path,
    *,
    labels: Sequence[str] | None = None,
    name: str | None = None,
    max_rows: int | None = None,
) -> LabelFile:
    """Read an ``id,label`` file (gold, or hard predictions checked on their own).

    ``labels`` fixes the label order and set; without it, the file's sorted distinct labels.
    """
    data, default_name = read_bytes(source)
    name = name or default_name
    frame = read_table(data, name=name, max_rows=max_rows)
    _check_columns(frame, name=name, expected=("id", "label"))
    ids = _check_values(frame, name=name, column="id", what="id")
    values = _check_values(frame, name=name, column="label", what="label")
    _check_unique(ids, name=name)
    labels = tuple(labels) if labels is not None else tuple(sorted(pd.unique(values)))
    return LabelFile(name=name, ids=ids, codes=encode_labels(values, labels=labels, name=name), labels=labels)


def _same_ids(ids: np.ndarray, gold: LabelFile) -> bool:
    return len(ids) == len(gold.ids) and bool(np.array_equal(ids, gold.ids))


def align_to_gold(ids: np.ndarray, *, gold: LabelFile, name: str) -> np.ndarray:
    """For each gold item, the row of ``ids`` that predicts it; errors on unknown or missing ids.

    When the file lists the gold ids in the gold order (the usual case) the answer is the
    identity, found without hashing, and the ids are unique since the gold ids are.
    """
    if _same_ids(ids, gold):
        return np.arange(len(ids))
    positions = pd.Index(gold.ids).get_indexer(ids)
    unknown = positions < 0
    if unknown.any():
        _check_unique(ids[: _first(unknown)], name=name)  # a duplicate before it comes first
        row = _first(unknown)
        raise InputFileError(UNKNOWN_ID, file=name, line=row + 2, id=ids[row])
    if len(positions) and np.bincount(positions).max() > 1:
        _check_unique(ids, name=name)
    covered = np.zeros(len(gold.ids), dtype=bool)
    covered[positions] = True
    if not covered.all():
        gold_row = _first(~covered)
        raise InputFileError(
            MISSING_IDS, file=name, count=int((~covered).sum()), id=gold.ids[gold_row], gold_line=gold_row + 2
        )
    order = np.empty(len(gold.ids), dtype=np.intp)
    order[positions] = np.arange(len(ids))
    return order


def _probabilities(frame: pd.DataFrame, *, labels: Sequence[str], name: str) -> np.ndarray:
    values = np.column_stack(
        [pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64) for column in labels]
    )
    bad = ~np.isfinite(values) | (values < 0) | (values > 1)
    if bad.any():
        row = _first(bad.any(axis=1))
        column = labels[_first(bad[row])]
        raise InputFileError(NOT_A_PROBABILITY, file=name, line=row + 2, column=column, value=frame[column].iloc[row])
    totals = values.sum(axis=1)
    off = np.abs(totals - 1.0) > PROBABILITY_TOLERANCE
    if off.any():
        row = _first(off)
        raise InputFileError(
            PROBABILITIES_DONT_SUM, file=name, line=row + 2, total=totals[row], tolerance=PROBABILITY_TOLERANCE
        )
    return values


def read_predictions(
    source: bytes | str | Path, *, gold: LabelFile, name: str | None = None, max_rows: int | None = None
) -> Predictions:
    """Read hard (``id,label``) or soft (``id`` + a column per label) predictions for ``gold``.

    The header decides which: a ``label`` column means hard labels, otherwise one probability
    column per task label is expected. The result is in the gold file's item order.
    """
    data, default_name = read_bytes(source)
    name = name or default_name
    frame = read_table(data, name=name, max_rows=max_rows)
    soft = "label" not in frame.columns and len(frame.columns) > 1
    _check_columns(frame, name=name, expected=("id", *gold.labels) if soft else ("id", "label"))
    ids = _check_values(frame, name=name, column="id", what="id")
    if not _same_ids(ids, gold):  # gold ids are unique: the same ids need no second look
        _check_unique(ids, name=name)
    if soft:
        probabilities = _probabilities(frame, labels=gold.labels, name=name)
        order = align_to_gold(ids, gold=gold, name=name)
        return Predictions(name=name, probabilities=probabilities[order])
    values = _check_values(frame, name=name, column="label", what="label")
    codes = encode_labels(values, labels=gold.labels, name=name)
    order = align_to_gold(ids, gold=gold, name=name)
    return Predictions(name=name, codes=codes[order])
