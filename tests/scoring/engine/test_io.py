"""Reading and validating gold and prediction files (the file-format contract of DESIGN.md).

What this proves: every problem a file can have raises ``InputFileError`` carrying the named
message constant that describes it (tests compare ``error.template`` by identity), the line it
is on (the header is line 1) and the file's name in the message; and the accepted variations
(byte-order mark, CRLF, TSV, quoted fields, header case, ids in another order than the gold
file, probability columns in any order) read to the same codes and probabilities.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import numpy as np
import pytest

from scoring.engine import io

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
