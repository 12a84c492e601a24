"""A competition's reference data as a gold file: which file, which columns, and the
``id,label`` CSV the site takes.

What is read as labels (anything else cannot come over, and the import asks for a gold file):

- a table, CSV or TSV (or columns separated by spaces), with or without a header: one column
  holds the ids, another the labels. A header that names them (``id``, ``filename``, ``name``…
  and ``label``, ``class``, ``target``…) settles which is which; otherwise the preview asks,
  having guessed the first column whose values are all different for the ids and the column
  with the fewest different values for the labels;
- one label per line: the ids are the line numbers, from 1;
- one row of 0s and a single 1 per item (the one-hot ``.solution`` files of CodaLab's AutoML
  examples): the label is the number of the column that holds the 1, from 0, and the id the
  line number;
- a table with a header, a column of ids and several *label columns* (each with few different
  values: 0 and 1, or up to :data:`MAX_OUTPUT_LABELS`), none named as the label column: a task of
  several outputs (:mod:`scoring.engine.outputs`), one an output column (:data:`OUTPUTS`).
  Certain when the ids column is named and every other column holds only 0 and 1 (SemEval-2018
  Task 1 E-c, HatEval's subtask B); otherwise the preview asks (a text column is left out).

Lines at the top that start with ``#`` are comments (SemEval's reference files often open with
a few); the last of them names the columns when it reads as a header (``#id<TAB>label``). A file
that holds a header and nothing else, or comments only, is a test set whose labels are not
final yet (:data:`HEADER_ONLY`): its phase waits for its gold file.

Reading is line by line over the bytes (a gold file of two million lines takes seconds).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from leaderboard.bundles.plan import LINE_NUMBER, OUTPUTS
from scoring.engine.files.labels import natural_key

ID_NAMES = ("id", "ids", "item", "item_id", "filename", "file", "name", "image", "sample", "index", "key")
LABEL_NAMES = ("label", "labels", "class", "category", "target", "gold", "y", "answer", "truth", "sentiment")
SAMPLE_LINES = 2000
"""Lines read to tell the layout of a file (its delimiter, header and columns)."""
WHITESPACE = re.compile(r"\s+")
COMMENT = "#"
HEADER_ONLY = "header"
"""The kind of a file that holds a header (or comments) and no labels."""
LABEL_KINDS = ("table", "lines", "one-hot")
"""The kinds of file that hold labels."""
BINARY = frozenset({"0", "1"})
MAX_OUTPUT_LABELS = 20
"""More different values than this in a column (or one value an item): not an output's labels."""


@dataclass(frozen=True)
class Layout:
    """How a reference file is laid out, as far as it can be told."""

    kind: str
    """``table``, ``lines`` (one label per line), ``one-hot``, :data:`HEADER_ONLY` or ``unreadable``."""
    columns: tuple[str, ...] = ()
    delimiter: str = ","
    header: bool = False
    skip: int = 0
    """Lines (not blank) before the first item: comments, then the header if it has a line of its own."""
    id_column: str = ""
    label_column: str = ""
    """The column of labels, or :data:`OUTPUTS`."""
    certain: bool = True
    """False: the preview asks which column is which."""
    problem: str = ""
    label_columns: tuple[str, ...] = ()
    """The columns that look like labels (few different values), outputs where there are two or more."""


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _split(line: str, delimiter: str) -> list[str]:
    if delimiter == " ":
        return WHITESPACE.split(line.strip())
    return next(csv.reader([line], delimiter=delimiter))


def _named(columns: list[str], names: tuple[str, ...]) -> str:
    lowered = {column.strip().lower(): column for column in columns}
    return next((lowered[name] for name in names if name in lowered), "")


def decode(content: bytes) -> str | None:
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def _delimiter(line: str) -> str:
    if "\t" in line:
        return "\t"
    if "," in line:
        return ","
    return " " if len(WHITESPACE.split(line.strip())) > 1 else ""


def _names_columns(cells: list[str]) -> bool:
    return bool(_named(cells, ID_NAMES) or _named(cells, LABEL_NAMES))


def layout_of(content: bytes) -> Layout:
    """The layout of a reference file, from its first :data:`SAMPLE_LINES` lines."""
    text = decode(content)
    if text is None:
        return Layout("unreadable", problem="it is not UTF-8 text")
    lines = _lines(text)[:SAMPLE_LINES]
    if not lines:
        return Layout("unreadable", problem="it is empty")
    comments = next((index for index, line in enumerate(lines) if not line.lstrip().startswith(COMMENT)), len(lines))
    lines, preamble = lines[comments:], [line.lstrip()[1:] for line in lines[:comments]]
    if not lines:
        return Layout(HEADER_ONLY, problem="holds comment lines only, no labels yet")
    if lines[0].lstrip()[:1] in ("{", "["):
        return Layout("unreadable", problem="it is JSON, not a table of ids and labels")
    delimiter = _delimiter(lines[0])
    rows = [_split(line, delimiter) if delimiter else [line.strip()] for line in lines]
    width = len(rows[0])
    named = _split(preamble[-1], delimiter) if preamble and delimiter else None
    if named is not None and len(named) == width and _names_columns(named):
        rows = [[cell.strip() for cell in named], *rows]  # the header is the last comment line
    elif _names_columns(rows[0]):
        comments += 1  # the header has a line of its own
    if len(rows) == 1 and _names_columns(rows[0]):
        return Layout(HEADER_ONLY, problem=f"holds only a header ({lines[0].strip()[:80]}), no labels yet")
    if (
        delimiter
        and all(len(row) == width for row in rows)
        and all(cell in {"0", "1"} for row in rows[1:] for cell in row)
        and all(row.count("1") == 1 for row in rows)
        and width > 2
    ):
        return Layout("one-hot", columns=tuple(str(i) for i in range(width)), delimiter=delimiter, skip=comments)
    id_named, label_named = _named(rows[0], ID_NAMES), _named(rows[0], LABEL_NAMES)
    header = bool(id_named or label_named)
    skip = comments
    columns = tuple(rows[0]) if header else tuple(f"column {number}" for number in range(1, width + 1))
    body = rows[1:] if header else rows
    if width < 2:
        return Layout(
            "lines",
            columns=(LINE_NUMBER, "label"),
            id_column=LINE_NUMBER,
            label_column="label",
            header=header,
            skip=skip,
        )
    values = [[row[index] if index < len(row) else "" for row in body] for index in range(width)]
    distinct = [len(set(column)) for column in values]
    guessed_id = next((columns[i] for i in range(width) if distinct[i] == len(body)), LINE_NUMBER)
    candidates = [i for i in range(width) if columns[i] != guessed_id]
    guessed_label = columns[min(candidates, key=lambda i: (distinct[i], i))]
    id_column = id_named or guessed_id
    label_column = label_named or (guessed_label if guessed_label != id_column else "")
    certain = bool(id_named and label_named)
    label_like = tuple(
        columns[i]
        for i in range(width)
        if columns[i] != id_column
        and (set(values[i]) <= BINARY or 2 <= distinct[i] <= min(MAX_OUTPUT_LABELS, len(body) - 1))
    )
    if header and not label_named and len(label_like) >= 2:  # several label columns: a task of several outputs
        label_column = OUTPUTS
        binary = all(set(values[columns.index(column)]) <= BINARY for column in label_like)
        certain = bool(id_named) and binary and len(label_like) == width - 1
    if header and width == 2 and not certain:
        other = next(column for column in columns if column not in (id_named, label_named))
        id_column, label_column = (id_named, other) if id_named else (other, label_named)
        certain = True
    return Layout(
        "table",
        columns=columns,
        delimiter=delimiter,
        header=header,
        skip=skip,
        id_column=id_column,
        label_column=label_column,
        certain=certain,
        label_columns=label_like,
    )


def _numbered(text: str, *, skip: int):
    """(line number, line) of every line that is not blank, one at a time, the first ``skip``
    (comments, a header) left out."""
    lines = ((number, line.rstrip("\r\n")) for number, line in enumerate(io.StringIO(text), start=1) if line.strip())
    for _ in range(skip):
        next(lines, None)
    return lines


class ReferenceError(ValueError):
    """A reference file that cannot become a gold file as asked (the message says why)."""


def gold_csv(content: bytes, layout: Layout, *, id_column: str, label_column: str) -> bytes:
    """The ``id,label`` CSV of a reference file read with ``layout`` and the columns chosen; with
    ``label_column`` :data:`OUTPUTS`, the CSV of an id column and one column per output (each
    label column of the layout, under its name)."""
    text = decode(content)
    if text is None or layout.kind in ("unreadable", HEADER_ONLY):
        raise ReferenceError(layout.problem or "it is not UTF-8 text")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    numbered = _numbered(text, skip=layout.skip)
    if layout.kind != "table":
        writer.writerow(["id", "label"])
    if layout.kind == "lines":
        for number, line in numbered:
            writer.writerow([number, line.strip()])
        return out.getvalue().encode()
    if layout.kind == "one-hot":
        for number, line in numbered:
            cells = _split(line, layout.delimiter)
            if cells.count("1") != 1:
                raise ReferenceError(f"line {number} does not hold exactly one 1")
            writer.writerow([number, cells.index("1")])
        return out.getvalue().encode()
    columns = list(layout.columns)
    outputs = [column for column in layout.label_columns if column != id_column] if label_column == OUTPUTS else []
    if label_column == OUTPUTS and len(outputs) < 2:
        raise ReferenceError(f"it has no two label columns besides the ids ({', '.join(columns)})")
    if (label_column not in columns and not outputs) or (id_column not in columns and id_column != LINE_NUMBER):
        raise ReferenceError(f"choose the id and label columns among {', '.join(columns)}")
    if id_column == label_column:
        raise ReferenceError("the ids and the labels must come from two different columns")
    if outputs:
        writer.writerow(["id", *outputs])
    else:
        writer.writerow(["id", "label"])
    label_at = [columns.index(column) for column in outputs or [label_column]]
    id_at = None if id_column == LINE_NUMBER else columns.index(id_column)
    for number, line in numbered:
        cells = _split(line, layout.delimiter)
        if max(*label_at, id_at or 0) >= len(cells):
            raise ReferenceError(f"line {number} has {len(cells)} column(s), not {len(columns)}")
        writer.writerow([number if id_at is None else cells[id_at].strip(), *(cells[at].strip() for at in label_at)])
    return out.getvalue().encode()


def columns_in(gold: bytes) -> dict[str, set[str]]:
    """The values of each label column of a CSV written by :func:`gold_csv` (``label``, or each
    output), by its name."""
    rows = csv.reader(io.StringIO(gold.decode()))
    names = next(rows, ["id"])[1:]
    found: dict[str, set[str]] = {name: set() for name in names}
    for row in rows:
        for name, value in zip(names, row[1:], strict=False):
            found[name].add(value)
    return found


def labels_in(gold: bytes) -> set[str]:
    """The labels of an ``id,label`` CSV written by :func:`gold_csv` (every value, of every
    output, of another)."""
    return set().union(*columns_in(gold).values())


def label_order(labels: set[str]) -> tuple[str, ...]:
    """Labels in their natural order (``class2`` before ``class10``), as the scorer sorts them."""
    return tuple(sorted(labels, key=natural_key))
