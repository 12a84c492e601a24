"""Reading and validating gold and prediction files (the file-format contract of DESIGN.md).

What this proves: every problem a file can have raises ``InputFileError`` carrying the named
message constant that describes it (tests compare ``error.template`` by identity), the line it
is on (the header is line 1) and the file's name in the message; and the accepted variations
(byte-order mark, CRLF, TSV, quoted fields, header case, blank lines before the header, ids
in another order than the gold file, probability columns in any order) read to the same codes
and probabilities. Beyond that: a header far wider than its kind allows is refused from its own
line, before pandas parses anything; the header is split exactly as pandas splits it; any label
works in hard and probability files (``label``, ``ID``, ``x]``, ``two words``), and the one
truly ambiguous header is refused by name; probability rows come back divided by their sums.
"""

from __future__ import annotations

import codecs
import random
from io import BytesIO
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.csv as pa_csv
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from scoring.engine import io
from scoring.engine.files import header as header_grammar
from scoring.engine.files import rows as data_rows
from tests.scoring.strategies import PROPERTY

GOLD = b"id,label\n1,a\n2,b\n3,a\n"
LABELS = ("a", "b")


def gold() -> io.LabelFile:
    return io.read_labels(GOLD)


def error_of(read: object, data: bytes, **kwargs: object) -> io.InputFileError:
    with pytest.raises(io.InputFileError) as info:
        read(data, **kwargs)
    return info.value


LABEL_FILE_ERRORS = {
    # name: (file, template, line, some of the message parameters)
    "empty file": (b"", io.EMPTY_FILE, None, {}),
    "only blank lines": (b"\n\r\n  \n", io.EMPTY_FILE, None, {}),
    "utf-16": ("id,label\n1,a\n".encode("utf-16"), io.UTF16, 1, {}),
    "utf-16 big-endian": (codecs.BOM_UTF16_BE + "id,label\n".encode("utf-16-be"), io.UTF16, 1, {}),
    "undecodable bytes": (b"id,label\n1,a\n2,\xff\n", io.UNDECODABLE, 3, {"offset": 15}),
    "undecodable after a byte-order mark": (b"\xef\xbb\xbfid,label\n1,\xe9\n", io.UNDECODABLE, 2, {"offset": 14}),
    "missing header": (b"1,a\n2,b\n", io.MISSING_HEADER, 1, {"found": "1,a"}),
    "missing label column": (b"id,lab\n1,a\n", io.MISSING_COLUMN, 1, {"column": "label"}),
    "only an id column": (b"id\n1\n", io.MISSING_COLUMN, 1, {"column": "label"}),
    "unexpected column": (b"id,label,score\n1,a,0.5\n", io.UNEXPECTED_COLUMN, 1, {"column": "score"}),
    "duplicate column": (b"id,label,label\n1,a,a\n", io.DUPLICATE_COLUMN, 1, {"column": "label"}),
    "duplicate column in another case": (b"id,ID,label\n1,1,a\n", io.DUPLICATE_COLUMN, 1, {"column": "id"}),
    "no rows": (b"id,label\n", io.NO_ROWS, 2, {}),
    "no rows, CRLF": (b"id,label\r\n", io.NO_ROWS, 2, {}),
    "too many fields": (b"id,label\n1,a\n2,b,c\n", io.FIELD_COUNT, 3, {"expected": 2, "found": 3}),
    "unterminated quote": (b'id,label\n1,"a\n', io.MALFORMED, None, {}),
    "empty line": (b"id,label\n1,a\n\n2,b\n", io.EMPTY_LINE, 3, {}),
    "line of empty fields": (b"id,label\n1,a\n,\n2,b\n", io.EMPTY_LINE, 3, {}),
    "empty id": (b"id,label\n1,a\n,b\n", io.EMPTY_VALUE, 3, {"column": "id"}),
    "empty label": (b"id,label\n1,a\n2,\n", io.EMPTY_VALUE, 3, {"column": "label"}),
    # One field on a two-field line: pandas pads it with "", but the message counts the fields.
    "missing label field": (b"id,label\n1,a\n2\n", io.FIELD_COUNT, 3, {"expected": 2, "found": 1}),
    "duplicate id": (b"id,label\n1,a\n2,b\n1,a\n", io.DUPLICATE_ID, 4, {"id": "1", "first_line": 2}),
    "unknown label": (b"id,label\n1,a\n2,c\n", io.UNKNOWN_LABEL, 3, {"label": "c"}),
}


@pytest.mark.parametrize(("data", "template", "line", "params"), LABEL_FILE_ERRORS.values(), ids=LABEL_FILE_ERRORS)
def test_label_file_errors(data: bytes, template: str, line: int | None, params: dict) -> None:
    error = error_of(io.read_labels, data, labels=LABELS, name="gold.csv")
    assert error.template is template
    assert error.line == line
    assert error.file == "gold.csv"
    assert params.items() <= error.params.items()
    where = "gold.csv" if line is None else f"gold.csv, line {line}"
    assert str(error) == f"{where}: {error.message}"


PREDICTION_ERRORS = {
    "unknown id": (b"id,label\n1,a\n9,b\n3,a\n", io.UNKNOWN_ID, 3, {"id": "9"}),
    "missing ids": (b"id,label\n1,a\n3,a\n", io.MISSING_IDS, None, {"count": 1, "id": "2", "gold_line": 3}),
    "unknown label": (b"id,label\n1,a\n2,c\n3,a\n", io.UNKNOWN_LABEL, 3, {"label": "c"}),
    "duplicate id": (b"id,label\n1,a\n2,b\n1,a\n", io.DUPLICATE_ID, 4, {"first_line": 2}),
    "empty label": (b"id,label\n1,a\n2,\n3,a\n", io.EMPTY_VALUE, 3, {"column": "label"}),
    "probability above 1": (b"id,a,b\n1,0.5,0.5\n2,1.5,-0.5\n3,1,0\n", io.NOT_A_PROBABILITY, 3, {"value": "1.5"}),
    "negative probability": (b"id,a,b\n1,0.5,0.5\n2,1,0\n3,1.5,-0.5\n", io.NOT_A_PROBABILITY, 4, {"column": "a"}),
    "probability not a number": (b"id,a,b\n1,0.5,0.5\n2,x,0.5\n3,1,0\n", io.NOT_A_PROBABILITY, 3, {"value": "x"}),
    "probability NaN": (b"id,a,b\n1,0.5,0.5\n2,0.5,nan\n3,1,0\n", io.NOT_A_PROBABILITY, 3, {"column": "b"}),
    "probability infinite": (b"id,a,b\n1,inf,0.5\n2,0.5,0.5\n3,1,0\n", io.NOT_A_PROBABILITY, 2, {"column": "a"}),
    "empty probability": (b"id,a,b\n1,0.5,0.5\n2,,1\n3,1,0\n", io.NOT_A_PROBABILITY, 3, {"value": ""}),
    "probabilities not summing to 1": (b"id,a,b\n1,0.5,0.5\n2,0.5,0.4\n3,1,0\n", io.PROBABILITIES_DONT_SUM, 3, {}),
    "missing probability column": (b"id,a\n1,1\n2,1\n3,1\n", io.MISSING_COLUMN, 1, {"column": "b"}),
    "unexpected probability column": (b"id,a,b,c\n1,1,0,0\n", io.UNEXPECTED_COLUMN, 1, {"column": "c"}),
    "unknown id in probabilities": (b"id,a,b\n1,1,0\n2,1,0\n4,1,0\n", io.UNKNOWN_ID, 4, {"id": "4"}),
}


@pytest.mark.parametrize(("data", "template", "line", "params"), PREDICTION_ERRORS.values(), ids=PREDICTION_ERRORS)
def test_prediction_file_errors(data: bytes, template: str, line: int | None, params: dict) -> None:
    error = error_of(io.read_predictions, data, gold=gold(), name="run1.csv")
    assert error.template is template
    assert error.line == line
    assert params.items() <= error.params.items()
    assert str(error).startswith("run1.csv")


def test_probability_sums_are_checked_with_the_stated_tolerance() -> None:
    within = b"id,a,b\n1,0.3333,0.6666\n2,0.5,0.5\n3,1,0\n"
    assert io.read_predictions(within, gold=gold()).is_soft
    outside = b"id,a,b\n1,0.333,0.665\n2,0.5,0.5\n3,1,0\n"
    error = error_of(io.read_predictions, outside, gold=gold())
    assert error.template is io.PROBABILITIES_DONT_SUM
    assert error.params["tolerance"] == io.PROBABILITY_TOLERANCE
    assert error.params["total"] == pytest.approx(0.998)


THREE = io.read_labels(b"id,label\n1,a\n2,b\n3,c\n")


@pytest.mark.parametrize("quoted", [False, True], ids=["plain", "quoted"])
def test_the_row_sum_rule_applies_to_the_numbers_as_written(quoted: bool) -> None:
    """Within 0.001 of 1 as written: 0.2,0.2,0.599 (0.999) is accepted like 0.2,0.3,0.501
    (1.001), though in doubles |0.999 - 1| is 0.0010000000000000009 > 0.001; 0.2,0.2,0.5989
    and 0.2,0.3,0.5011 are refused on their lines."""

    def file(*rows: str) -> bytes:
        body = [
            f'{k + 1},"{row.replace(",", chr(34) + "," + chr(34))}"' if quoted else f"{k + 1},{row}"
            for k, row in enumerate(rows)
        ]
        return ("id,a,b,c\n" + "\n".join(body) + "\n").encode()

    assert io.read_predictions(file("0.2,0.2,0.599", "0.2,0.3,0.501", "1,0,0"), gold=THREE).is_soft
    for row in ("0.2,0.2,0.5989", "0.2,0.3,0.5011"):
        error = error_of(io.read_predictions, file("1,0,0", row, "0,0,1"), gold=THREE)
        assert error.template is io.PROBABILITIES_DONT_SUM
        assert error.line == 3


def test_too_many_lines() -> None:
    error = error_of(io.read_labels, b"id,label\n1,a\n2,b\n3,a\n", max_rows=2)
    assert error.template is io.TOO_MANY_LINES
    assert error.line == 4
    assert io.read_labels(b"id,label\n1,a\n2,b\n", max_rows=2).ids.tolist() == ["1", "2"]


def test_a_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        io.read_labels(tmp_path / "nope.csv")


def test_the_file_name_is_the_path(tmp_path: Path) -> None:
    path = tmp_path / "gold.csv"
    path.write_bytes(b"id,label\n1,a\n1,b\n")
    error = error_of(io.read_labels, path)
    assert error.file == str(path)
    assert str(error).startswith(f"{path}, line 3: ")


# --- accepted variations --------------------------------------------------------------------


def assert_reads_as_gold(data: bytes) -> None:
    parsed = io.read_labels(data)
    assert parsed.ids.tolist() == ["1", "2", "3"]
    assert parsed.labels == LABELS
    assert parsed.codes.tolist() == [0, 1, 0]


ACCEPTED_GOLD = {
    "plain": GOLD,
    "byte-order mark": codecs.BOM_UTF8 + GOLD,
    "CRLF": GOLD.replace(b"\n", b"\r\n"),
    "TSV": GOLD.replace(b",", b"\t"),
    "quoted fields": b'"id","label"\n"1","a"\n2,"b"\n"3",a\n',
    "header in another case, padded": b"ID , Label\n1,a\n2,b\n3,a\n",
    "no final newline": GOLD.rstrip(b"\n"),
}


@pytest.mark.parametrize("data", ACCEPTED_GOLD.values(), ids=ACCEPTED_GOLD)
def test_accepted_variations_read_the_same(data: bytes) -> None:
    assert_reads_as_gold(data)


def test_fields_keep_commas_quotes_and_leading_zeros() -> None:
    parsed = io.read_labels(b'id,label\n007,"x, y"\n7,"say ""hi"""\n')
    assert parsed.ids.tolist() == ["007", "7"]
    assert parsed.labels == ('say "hi"', "x, y")
    tsv = io.read_labels(b"id\tlabel\n1\tx, y\n")
    assert tsv.labels == ("x, y",)


def test_labels_fix_order_and_set() -> None:
    parsed = io.read_labels(GOLD, labels=("b", "a", "c"))
    assert parsed.labels == ("b", "a", "c")
    assert parsed.codes.tolist() == [1, 0, 1]


def test_predictions_in_another_order_are_aligned_to_the_gold_order() -> None:
    predictions = io.read_predictions(b"id,label\n3,b\n1,b\n2,a\n", gold=gold())
    assert not predictions.is_soft
    assert predictions.codes.tolist() == [1, 0, 1]  # gold order 1, 2, 3


def test_probability_columns_are_matched_by_name_and_rows_by_id() -> None:
    predictions = io.read_predictions(b"id,b,a\n2,0.75,0.25\n1,0.5,0.5\n3,0,1\n", gold=gold())
    assert predictions.is_soft
    np.testing.assert_array_equal(predictions.probabilities, [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]])


def test_hard_predictions_accept_the_same_variations() -> None:
    data = codecs.BOM_UTF8 + b"ID\tLABEL\r\n2\tb\r\n3\ta\r\n1\ta\r\n"
    assert io.read_predictions(data, gold=gold()).codes.tolist() == [0, 1, 0]


def test_trailing_blank_lines_are_accepted_but_inner_ones_are_not():
    gold = io.read_labels(b"id,label\n1,a\n2,b\n\n\r\n\n", name="gold.csv")
    assert list(gold.ids) == ["1", "2"]
    with pytest.raises(io.InputFileError) as caught:
        io.read_labels(b"id,label\n1,a\n\n2,b\n", name="gold.csv")
    assert caught.value.template is io.EMPTY_LINE and caught.value.line == 3


# --- the header is bounded: read on its own, before any data line -----------------------------

WIDE = 1_000_000


def unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any call of either reader, pandas' or Arrow's, fail the test: what is refused now was
    never parsed."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a reader was asked to parse the file")

    monkeypatch.setattr(pd, "read_csv", refuse)
    monkeypatch.setattr(pa_csv, "read_csv", refuse)


WIDE_HEADERS = {
    # name: (read a file of which kind, the description of the widths it allows)
    "gold": ("gold", "2 (id,label)"),
    "predictions": ("predictions", "2 (id,label) or 3 (id and one column per label: a, b)"),
}


def reader(kind: str) -> tuple[object, dict]:
    if kind == "gold":
        return io.read_labels, {"labels": LABELS, "name": "run.csv"}
    return io.read_predictions, {"gold": gold(), "name": "run.csv"}


@pytest.mark.parametrize(("kind", "described"), WIDE_HEADERS.values(), ids=WIDE_HEADERS)
def test_a_header_of_a_million_fields_is_refused_before_any_data_line_is_parsed(
    monkeypatch: pytest.MonkeyPatch, kind: str, described: str
) -> None:
    read, kwargs = reader(kind)
    data = ("id," + ",".join(f"c{k}" for k in range(WIDE)) + "\n1,a\n2,b\n3,a\n").encode()
    unparsed(monkeypatch)
    error = error_of(read, data, **kwargs)
    assert error.template is io.FIELD_COUNT
    assert (error.line, error.params) == (1, {"expected": described, "found": WIDE + 1})
    assert str(error) == f"run.csv, line 1: expected {described} fields, found {WIDE + 1}"


HEADER_WIDTHS = {
    # name: (kind, header, template); the data lines are the gold file's, in the header's width
    "gold, one field too many: named": ("gold", "id,label,x", io.UNEXPECTED_COLUMN),
    "gold, two too many: counted": ("gold", "id,label,x,y", io.FIELD_COUNT),
    "gold, two too many, all duplicates: counted": ("gold", "id,label,label,label", io.FIELD_COUNT),
    "predictions, one too many: named": ("predictions", "id,a,b,c", io.UNEXPECTED_COLUMN),
    "predictions, two too many: counted": ("predictions", "id,a,b,c,d", io.FIELD_COUNT),
    "predictions, hard, one too many: named": ("predictions", "id,label,x", io.UNEXPECTED_COLUMN),
    "a quoted separator is not a field": ("gold", 'id,"label,x,y"', io.MISSING_COLUMN),
    "a TSV header": ("gold", "id\tlabel\tx\ty", io.FIELD_COUNT),
}


@pytest.mark.parametrize(("kind", "header", "template"), HEADER_WIDTHS.values(), ids=HEADER_WIDTHS)
def test_header_widths(monkeypatch: pytest.MonkeyPatch, kind: str, header: str, template: str) -> None:
    """A header one field too wide names the field; two or more too wide are counted at once."""
    read, kwargs = reader(kind)
    width = len(header.split("\t" if "\t" in header else ","))
    rows = "".join(f"{k}" + ",a" * (width - 1) + "\n" for k in (1, 2, 3))
    unparsed(monkeypatch)
    error = error_of(read, f"{header}\n{rows}".encode(), **kwargs)
    assert error.template is template
    assert error.line == 1


def test_a_quote_left_open_in_the_header_is_refused_on_line_1(monkeypatch: pytest.MonkeyPatch) -> None:
    unparsed(monkeypatch)
    for header in ('id,"label', 'id,"la""bel', 'id,"' + "x," * 100_000):
        error = error_of(io.read_labels, f"{header}\n1,a\n".encode(), name="run.csv")
        assert error.template is io.MALFORMED
        assert (error.line, error.params) == (1, {"detail": io.OPEN_QUOTE_IN_HEADER})


def pandas_row(line: bytes, separator: str) -> list[str] | None:
    """How pandas reads one line (None: it refuses it), with the options io uses."""
    try:
        table = pd.read_csv(
            BytesIO(line + b"\n"),
            sep=separator,
            header=None,
            dtype=object,
            na_filter=False,
            keep_default_na=False,
            skip_blank_lines=False,
            engine="c",
        )
    except pd.errors.ParserError:
        return None
    return list(table.iloc[0])


HEADER_TEXT = st.lists(st.sampled_from(['"', ",", "\t", "a", "b", " ", "id"]), min_size=1, max_size=24).map("".join)


@PROPERTY
@given(text=HEADER_TEXT)
def test_the_header_is_split_exactly_as_pandas_splits_it(text: str) -> None:
    """The width check and the names come from the header line alone, so they must agree with
    the table pandas makes of the same line: same fields, and an open quote where pandas fails."""
    assume(text.strip())
    line, separator = text.encode(), "\t" if "\t" in text else ","
    expected = pandas_row(line, separator)
    count = header_grammar.count_fields(line, separator.encode())
    if expected is None:
        assert count is None
    else:
        assert count == len(expected)
        assert [field.decode() for field in header_grammar._split_fields(line, separator.encode())] == expected


# --- any label works; the one ambiguous header is refused by name -----------------------------

ODD_LABELS = ("label", "ID", "x]", "two words")
ODD_GOLD = b"id,label\n1,label\n2,ID\n3,x]\n4,two words\n5,label\n"
ODD_CODES = [0, 1, 2, 3, 0]


def odd_gold() -> io.LabelFile:
    return io.read_labels(ODD_GOLD, labels=ODD_LABELS)


def test_labels_that_look_like_header_names_read_in_gold_and_hard_files() -> None:
    parsed = odd_gold()
    assert parsed.codes.tolist() == ODD_CODES
    hard = b"ID , Label\n5,label\n4,two words\n3,x]\n2,ID\n1,label\n"
    assert io.read_predictions(hard, gold=parsed).codes.tolist() == ODD_CODES


ODD_SOFT_HEADERS = {
    # name: (header names, which of them is the id column)
    "task order": (["id", "label", "ID", "x]", "two words"], 0),
    "the id column last, in another case": (["label", "ID", "x]", "two words", "Id"], 4),
    "the label ID before the id column": (["ID", "id", "two words", "x]", "label"], 1),
    "spaces around the names": ([" id ", " label", "ID ", " x] ", "  two words"], 0),
    "quoted": (['"id"', '"label"', '"ID"', '"x]"', '"two words"'], 0),
}


@pytest.mark.parametrize(("header", "id_column"), ODD_SOFT_HEADERS.values(), ids=ODD_SOFT_HEADERS)
def test_labels_that_look_like_header_names_read_in_probability_files(header: list[str], id_column: int) -> None:
    gold_file = odd_gold()
    names = [name.strip().strip('"') for name in header]
    rows = [
        ",".join(item if k == id_column else str(int(name == ODD_LABELS[code])) for k, name in enumerate(names))
        for item, code in zip(gold_file.ids, gold_file.codes, strict=True)
    ]
    data = (",".join(header) + "\n" + "\n".join(rows) + "\n").encode()
    predictions = io.read_predictions(data, gold=gold_file)
    assert predictions.is_soft
    np.testing.assert_array_equal(predictions.probabilities, np.eye(len(ODD_LABELS))[ODD_CODES])


HEADER_PROBLEMS = {
    # name: (task labels, header, template, some of the message parameters)
    "the label id named twice": (("id", "b"), "id,id,b", io.AMBIGUOUS_ID_COLUMN, {"column": "id", "suggestion": "ID"}),
    "the label ID named twice": (("ID", "b"), "ID,ID,b", io.AMBIGUOUS_ID_COLUMN, {"column": "ID", "suggestion": "id"}),
    "the label ID but no id column": (("ID", "b"), "ID,b", io.MISSING_COLUMN, {"column": "id", "found": "ID, b"}),
    "a label in another case": (("Label", "b"), "id,label,b", io.MISSING_COLUMN, {"column": "Label"}),
    "a label named twice": (("label", "b"), "id,label,label,b", io.DUPLICATE_COLUMN, {"column": "label"}),
    "two id columns besides the label ID": (("ID", "b"), "id,ID,Id,b", io.DUPLICATE_COLUMN, {"column": "id"}),
    "hard labels with an extra column": (("a", "b"), "id,label,x", io.UNEXPECTED_COLUMN, {"column": "x"}),
}


@pytest.mark.parametrize(("labels", "header", "template", "params"), HEADER_PROBLEMS.values(), ids=HEADER_PROBLEMS)
def test_header_problems_with_odd_labels_are_named(labels: tuple, header: str, template: str, params: dict) -> None:
    gold_file = io.read_labels(b"id,label\n1,%s\n2,%s\n" % (labels[0].encode(), labels[1].encode()), labels=labels)
    error = error_of(io.read_predictions, f"{header}\n1,1,0\n2,0,1\n".encode(), gold=gold_file, name="run.csv")
    assert error.template is template
    assert error.line == 1
    assert params.items() <= error.params.items()


def test_a_label_id_is_told_apart_from_the_id_column_by_case() -> None:
    gold_file = io.read_labels(b"id,label\n1,id\n2,b\n", labels=("id", "b"))
    soft = io.read_predictions(b"ID,id,b\n1,0.75,0.25\n2,0,1\n", gold=gold_file)
    np.testing.assert_array_equal(soft.probabilities, [[0.75, 0.25], [0.0, 1.0]])
    assert io.read_predictions(b"id,label\n2,b\n1,id\n", gold=gold_file).codes.tolist() == [0, 1]
    error = error_of(io.read_predictions, b"id,id,b\n1,0.75,0.25\n2,0,1\n", gold=gold_file, name="run.csv")
    assert str(error) == (
        "run.csv, line 1: the header names 'id' twice, and 'id' is a label as well as the id column, so which "
        "column holds the ids is unclear; write the id column as 'ID' (its name may be written in any case)"
    )


# --- a blank line before the header -----------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"\n" + GOLD,
        b" \r\n" + GOLD,
        b"\t\n" + GOLD,
        b"\r\r" + GOLD.replace(b"\n", b"\r"),
        codecs.BOM_UTF8 + b"\n" + GOLD,
    ],
    ids=["LF", "spaces CRLF", "tab", "CR", "BOM"],
)
def test_a_file_starting_with_a_blank_line_is_refused_on_line_1(data: bytes) -> None:
    error = error_of(io.read_labels, data, labels=LABELS)
    assert (error.template, error.line) == (io.BLANK_BEFORE_HEADER, 1)
    assert "starts with a blank line" in str(error)
    gold_file = io.read_labels(GOLD, labels=LABELS)
    assert error_of(io.read_predictions, b"\n" + GOLD, gold=gold_file).template is io.BLANK_BEFORE_HEADER


# --- short lines are counted on the line itself, whatever its length or line end --------------


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_a_short_line_is_counted_where_it_is(line_end: str) -> None:
    lines = ["id,label", "1,a", "x" * 200_000, "3,a"]
    error = error_of(io.read_labels, (line_end.join(lines) + line_end).encode(), labels=LABELS)
    assert error.template is io.FIELD_COUNT
    assert (error.line, error.params) == (3, {"expected": 2, "found": 1})


# --- probability rows are renormalised ----------------------------------------------------------


def test_probability_rows_are_divided_by_their_sums_after_validation() -> None:
    data = b"id,a,b\n1,0.3333,0.6666\n2,0.6,0.4005\n3,1,0\n"
    probabilities = io.read_predictions(data, gold=gold()).probabilities
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=0, atol=2 * np.finfo(float).eps)
    np.testing.assert_allclose(probabilities[0], [1 / 3, 2 / 3], rtol=1e-15)
    np.testing.assert_allclose(probabilities[1], [0.6 / 1.0005, 0.4005 / 1.0005], rtol=1e-15)
    assert probabilities[2].tolist() == [1.0, 0.0]


# --- ids that numpy would mangle ----------------------------------------------------------------


@pytest.mark.parametrize("item", ["\x00", "a\x00", "\x00\x00"])
def test_a_repeated_id_ending_in_nul_is_named(item: str) -> None:
    """numpy compares a str as its own string type, which drops trailing NULs; the first line of
    a repeated id is found with Python's equality (hypothesis found ``id,label\\n\\x00\\r\\x00``)."""
    data = f"id,label\n{item},a\n2,b\n{item},a\n".encode()
    for error in (error_of(io.read_labels, data), error_of(io.read_predictions, data, gold=gold())):
        assert error.template is io.DUPLICATE_ID
        assert (error.line, error.params) == (4, {"id": item, "first_line": 2})


# --- labels read from the file come in natural order -------------------------------------------


def test_labels_read_from_the_file_are_in_natural_order() -> None:
    data = b"id,label\n1,class10\n2,class2\n3,class1\n4,class2\n5,Class3\n"
    parsed = io.read_labels(data)
    assert parsed.labels == ("Class3", "class1", "class2", "class10")
    assert parsed.codes.tolist() == [3, 2, 1, 2, 0]


NATURAL_ORDERS = {
    "numbers inside": (["c10", "c9", "c1", "c100"], ["c1", "c9", "c10", "c100"]),
    "numbers alone": (["10", "9", "0"], ["0", "9", "10"]),
    "several runs": (["a2b10", "a2b9", "a10b1"], ["a2b9", "a2b10", "a10b1"]),
    "leading zeros tie, then text": (["c1", "c01", "c001"], ["c001", "c01", "c1"]),
    "a prefix first": (["ab", "a", "a1"], ["a", "a1", "ab"]),
    "no digits: as text": (["positive", "negative", "neutral"], ["negative", "neutral", "positive"]),
}


@pytest.mark.parametrize(("labels", "expected"), NATURAL_ORDERS.values(), ids=NATURAL_ORDERS)
def test_natural_order(labels: list[str], expected: list[str]) -> None:
    assert sorted(labels, key=io.natural_key) == expected


@PROPERTY
@given(labels=st.lists(st.text(alphabet="ab01 9\u0660", max_size=6), unique=True))
def test_natural_order_is_a_total_order(labels: list[str]) -> None:
    """Any labels sort (text and numbers never meet in one comparison), and the order does not
    depend on the order they came in."""
    assert sorted(labels, key=io.natural_key) == sorted(reversed(labels), key=io.natural_key)


# --- Arrow and pandas read a file without quotes alike --------------------------------------------

FIELD_TEXT = st.text(alphabet=["a", "1", "0", " ", ".", "\x00", "é", "-"], max_size=4)


@PROPERTY
@given(
    rows=st.lists(st.tuples(FIELD_TEXT, FIELD_TEXT, FIELD_TEXT), min_size=1, max_size=8),
    separator=st.sampled_from([",", "\t"]),
    line_end=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_arrow_reads_a_file_without_quotes_as_pandas_does(
    rows: list[tuple[str, str, str]], separator: str, line_end: str
) -> None:
    """Both readers, on the same text: the same fields, or Arrow steps aside (``None``)."""
    text = line_end.join([separator.join(["id", "a", "b"]), *(separator.join(row) for row in rows)]) + line_end
    header, source = header_grammar.read_header(text.encode(), name="run.csv", widths=(3,), described="3")
    from_arrow = data_rows._read_plain(header, source, kinds={}, max_rows=None)
    from_pandas = data_rows._read_with_pandas(header, source, name="run.csv", max_rows=None)
    assert from_arrow is not None
    assert [column.to_pylist() for column in from_arrow] == [column.tolist() for column in from_pandas]


NUMBER_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=["0", "1", "5", ".", "e", "E", "-", "+", " ", "n", "a", "i", "f", "x"], min_size=1, max_size=8),
)


@PROPERTY
@given(values=st.lists(NUMBER_TEXT, min_size=1, max_size=8))
def test_arrow_reads_numbers_as_pandas_converts_them(values: list[str]) -> None:
    """A probability column read by Arrow holds what ``pandas.to_numeric`` makes of the same
    text, or Arrow steps aside and pandas reads the file (``None``)."""
    assume(all("," not in value for value in values))
    text = "id,a\n" + "".join(f"{row},{value}\n" for row, value in enumerate(values))
    header, source = header_grammar.read_header(text.encode(), name="run.csv", widths=(2,), described="2")
    from_arrow = data_rows._read_plain(header, source, kinds={1: data_rows.NUMBERS}, max_rows=None)
    expected = pd.to_numeric(np.array(values, dtype=object), errors="coerce").astype(np.float64)
    if from_arrow is not None:
        np.testing.assert_array_equal(from_arrow[1].to_numpy(), expected)
    else:
        assert np.isnan(expected).any()


def test_a_file_with_quotes_or_too_many_lines_is_read_by_pandas() -> None:
    quoted = header_grammar.read_header(b'id,label\n1,"a"\n', name="run.csv", widths=(2,), described="2")
    assert data_rows._read_plain(*quoted, kinds={}, max_rows=None) is None
    plain = header_grammar.read_header(b"id,label\n1,a\n2,b\n", name="run.csv", widths=(2,), described="2")
    assert data_rows._read_plain(*plain, kinds={}, max_rows=1) is None
    assert data_rows._read_plain(*plain, kinds={}, max_rows=2) is not None


def test_a_probability_out_of_range_is_quoted_as_written() -> None:
    """Arrow parsed the number; the message quotes the field's text from its line."""
    error = error_of(io.read_predictions, b"id,a,b\n1,0.5,0.5\n2,1.50,-0.5\n3,1,0\n", gold=gold())
    assert error.template is io.NOT_A_PROBABILITY
    assert (error.line, error.params["value"]) == (3, "1.50")


# --- many ids in another order ----------------------------------------------------------------------


def many_ids(count: int, seed: int) -> list[str]:
    """Ids of every length from 0 to 20 bytes, a few with NULs or non-ASCII letters, never empty."""
    rng = random.Random(seed)  # numpy's strings would drop a trailing NUL
    ids = {"".join(rng.choices("0123456789abcdef\x00é", k=rng.randint(1, 20))) for _ in range(count)}
    return sorted(ids)


def label_file(ids: list[str], labels: list[str]) -> bytes:
    return ("id,label\n" + "".join(f"{item},{label}\n" for item, label in zip(ids, labels, strict=True))).encode()


def test_many_shuffled_ids_are_aligned_to_the_gold_order() -> None:
    ids = many_ids(5_000, seed=1)
    rng = np.random.default_rng(2)
    gold_labels = rng.choice(["a", "b", "c"], size=len(ids)).tolist()
    predicted = rng.choice(["a", "b", "c"], size=len(ids)).tolist()
    gold_file = io.read_labels(label_file(ids, gold_labels))
    order = rng.permutation(len(ids))
    shuffled = label_file([ids[k] for k in order], [predicted[k] for k in order])
    codes = io.read_predictions(shuffled, gold=gold_file).codes
    assert codes.tolist() == [("a", "b", "c").index(label) for label in predicted]
    assert gold_file.ids.tolist() == ids


def test_a_repeat_among_many_ids_is_found_on_its_line() -> None:
    ids = many_ids(3_000, seed=3)
    repeated = [*ids[:2_000], ids[1_234], *ids[2_000:]]
    error = error_of(io.read_labels, label_file(repeated, ["a"] * len(repeated)))
    assert error.template is io.DUPLICATE_ID
    assert (error.line, error.params) == (2_002, {"id": ids[1_234], "first_line": 1_236})
    gold_file = io.read_labels(label_file(ids, ["a"] * len(ids)))
    shuffled = [*reversed(ids[:2_500]), ids[7], *ids[2_501:]]
    error = error_of(io.read_predictions, label_file(shuffled, ["a"] * len(shuffled)), gold=gold_file)
    assert error.template is io.DUPLICATE_ID
    assert (error.line, error.params) == (2_502, {"id": ids[7], "first_line": 2_494})
