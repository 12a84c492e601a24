"""The header line, read on its own before any data line is parsed (the grammar is in
:mod:`scoring.engine.io`): its fields counted and split as pandas reads them, and the id, label
and probability columns found."""

from __future__ import annotations

import mmap
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scoring.engine.files.messages import (
    AMBIGUOUS_ID_COLUMN,
    BLANK_BEFORE_HEADER,
    DUPLICATE_COLUMN,
    FIELD_COUNT,
    HEADER_LINE,
    LONGEST_QUOTED,
    MALFORMED,
    MISSING_COLUMN,
    MISSING_HEADER,
    OPEN_QUOTE_IN_HEADER,
    UNEXPECTED_COLUMN,
    InputFileError,
)
from scoring.engine.files.text import decode_check, header_start, line_end, mapped_plain, read_bytes

ID, LABEL = "id", "label"


ID_SPELLINGS = ("id", "ID", "Id", "iD")


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


def count_fields(line: bytes, separator: bytes) -> int | None:
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


@dataclass(frozen=True)
class Header:
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
        return decode_check(read_bytes(self.origin)[0], "")


def read_header(
    origin: bytes | str | Path, *, name: str, widths: Sequence[int], described: str, max_rows: int | None = None
) -> tuple[Header, bytes | mmap.mmap]:
    """Check the file's text and read its header; refuse one far wider than ``widths`` (the
    field counts a header of this kind may have, ``described`` for the message) at once.
    Returns the header and the file's text (without a byte-order mark, ending in one line end).
    """
    source = mapped_plain(origin, max_rows=max_rows) or decode_check(read_bytes(origin)[0], name)
    if header_start(source):
        raise InputFileError(BLANK_BEFORE_HEADER, file=name, line=HEADER_LINE)
    line = HEADER_LINE
    end = line_end(source)
    text = source[:end]
    separator = b"\t" if b"\t" in text else b","
    found = count_fields(text, separator)
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
    return Header(names=names, separator=separator.decode(), body_start=body_start, origin=origin), source


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


def label_columns(header: Header, *, name: str) -> tuple[int, int]:
    """Where the id and the label are in an ``id,label`` header."""
    columns = [_column_name(column) for column in header.names]
    _check_columns(columns, expected=(ID, LABEL), found=", ".join(columns), name=name, line=HEADER_LINE)
    return columns.index(ID), columns.index(LABEL)


def is_hard(names: Sequence[str], labels: Sequence[str]) -> bool:
    """Whether a prediction header holds hard labels (the rule is in the module docstring)."""
    lowered = [column.lower() for column in names]
    if len(names) == 1 or sorted(lowered) == [ID, LABEL]:
        return True
    return LABEL in lowered and all(label.lower() != LABEL for label in labels)


def probability_columns(header: Header, *, labels: Sequence[str], name: str) -> tuple[int, list[int]]:
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


def output_columns(header: Header, *, outputs: Sequence[str] | None, name: str) -> tuple[int, list[int]]:
    """Where the id column and each output's column are in the header of a file of a task with
    several outputs: the id column (``id`` in any case) and one column per output, named as
    written; in the order of ``outputs`` (a prediction file's, which must name exactly those),
    or of the header (a gold file's, whose columns name the outputs)."""
    line = HEADER_LINE
    ids = [index for index, column in enumerate(header.names) if column.lower() == ID]
    if len(ids) > 1:
        raise InputFileError(DUPLICATE_COLUMN, file=name, line=line, column=header.names[ids[1]])
    others = [column for column in header.names if column.lower() != ID]
    expected = others if outputs is None else list(outputs)
    _check_columns(others, expected=expected, found=", ".join(header.names), name=name, line=line)
    if not expected:
        raise InputFileError(MISSING_COLUMN, file=name, line=line, column="output", found=", ".join(header.names))
    return ids[0], [header.names.index(output) for output in expected]
