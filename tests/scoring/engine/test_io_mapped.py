"""Files mapped into memory rather than read (``text.mapped_plain``).

What this proves, with ``io.MAP_FROM_BYTES`` lowered so that small files are mapped: a gold or
prediction file read from its path gives exactly what the same bytes give (ids, label codes,
labels, probabilities), or the same error (template, line, parameters, message), whether it
is mapped or read; exactly the plain files are mapped (ASCII, no byte-order mark, text on the
first line, one line end at the end) and no file is when a count of lines is asked for or the
bytes are given; and an error that quotes a line of a mapped file, deep in it and with either
line end, names that line.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from scoring.engine import io
from scoring.engine.files import header as header_grammar
from scoring.engine.files import text

GOLD = b"id,label\n1,a\n2,b\n3,a\n"
NAME = "run.csv"


@pytest.fixture
def mapped(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Map files of any size, and record whether each file read was mapped."""
    monkeypatch.setattr(text, "MAP_FROM_BYTES", 0)
    seen: list[bool] = []
    original = text.mapped_plain

    def recorded(origin: bytes | str | Path, *, max_rows: int | None) -> object:
        result = original(origin, max_rows=max_rows)
        seen.append(result is not None)
        return result

    monkeypatch.setattr(header_grammar, "mapped_plain", recorded)
    return seen


def outcome(read: Callable[..., object], source: bytes | Path, **kwargs: object) -> tuple[object, ...]:
    """Everything a read gives: the parsed file, or the error."""
    try:
        result = read(source, name=NAME, **kwargs)
    except io.InputFileError as error:
        return "error", error.template, error.line, error.params, str(error)
    if isinstance(result, io.LabelFile):
        return "labels", result.id_array.to_pylist(), result.codes.tolist(), result.labels, type(result.id_coder)
    probabilities = None if result.probabilities is None else result.probabilities.tolist()
    return "predictions", None if result.codes is None else result.codes.tolist(), probabilities


FILES = {
    # name: (bytes, whether the file is mapped, the template read_labels raises (None: none))
    "plain LF": (GOLD, True, None),
    "CRLF": (GOLD.replace(b"\n", b"\r\n"), True, None),
    "TSV": (GOLD.replace(b",", b"\t"), True, None),
    "UTF-8 byte-order mark": (codecs.BOM_UTF8 + GOLD, False, None),
    "non-ASCII ids": ("id,label\né1,a\n€2,b\n3,a\n".encode(), False, None),
    "non-ASCII label": ("id,label\n1,à\n2,b\n3,à\n".encode(), False, None),
    "a NUL byte in an id": (b"id,label\n\x001,a\n2,b\n3,a\n", True, None),
    "trailing blank lines": (GOLD + b"\n\n", False, None),
    "trailing blank lines, CRLF": (GOLD.replace(b"\n", b"\r\n") + b"\r\n\r\n", False, None),
    "trailing line of spaces": (GOLD + b"  \n", True, io.FIELD_COUNT),
    "no line end at the end": (GOLD.rstrip(b"\n"), False, None),
    "lone CR line ends": (GOLD.replace(b"\n", b"\r"), False, None),
    "quotes": (b'"id","label"\n"1","a"\n2,"b"\n"3",a\n', True, None),
    "a comma in a quoted label": (b'id,label\n1,"a, b"\n2,b\n3,"a, b"\n', True, None),
    "a blank line first": (b"\n" + GOLD, False, io.BLANK_BEFORE_HEADER),
    "a space first": (b" " + GOLD, False, None),
    "only blank lines": (b"\n\r\n\n", False, io.EMPTY_FILE),
    "header only": (b"id,label\n", True, io.NO_ROWS),
    "header only, CRLF": (b"id,label\r\n", True, io.NO_ROWS),
    "a line with a field too many": (b"id,label\n1,a\n2,b,c\n3,a\n", True, io.FIELD_COUNT),
    "a line with a field too few": (b"id,label\n1,a\n2\n3,a\n", True, io.FIELD_COUNT),
    "an empty line inside": (b"id,label\n1,a\n\n3,a\n", True, io.EMPTY_LINE),
    "a repeated id": (b"id,label\n1,a\n2,b\n1,a\n", True, io.DUPLICATE_ID),
    "a quote left open in the header": (b'id,"label\n1,a\n', True, io.MALFORMED),
    "a quote left open in the data": (b'id,label\n1,"a\n2,b\n', True, io.MALFORMED),
    "no id column": (b"label,x\n1,a\n", True, io.MISSING_HEADER),
    "probabilities": (b"id,a,b\n1,0.5,0.5\n3,1,0\n2,0.25,0.75\n", True, io.MISSING_COLUMN),
    "a probability out of range": (b"id,a,b\n1,0.5,0.5\n2,1.50,-0.5\n3,1,0\n", True, io.MISSING_COLUMN),
    "probabilities, CRLF": (b"id,b,a\r\n2,0.75,0.25\r\n1,0.5,0.5\r\n3,0,1\r\n", True, io.MISSING_COLUMN),
    "undecodable bytes": (b"id,label\n1,a\n2,\xff\n", False, io.UNDECODABLE),
    "UTF-16 without a byte-order mark, ending in LF": ("id,label\n1,a\n".encode("utf-16-le") + b"\n", False, io.UTF16),
    "UTF-16 with a byte-order mark": ("id,label\n1,a\n".encode("utf-16"), False, io.UTF16),
}


def written(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "run.csv"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(("data", "is_mapped", "template"), FILES.values(), ids=FILES)
def test_a_file_reads_from_its_path_as_from_its_bytes(
    tmp_path: Path, mapped: list[bool], data: bytes, is_mapped: bool, template: str | None
) -> None:
    """As a gold file and as predictions (for the file itself as gold, or for 1, 2, 3)."""
    path = written(tmp_path, data)
    from_bytes = outcome(io.read_labels, data)
    assert mapped == [False]
    from_path = outcome(io.read_labels, path)
    assert mapped == [False, is_mapped]
    assert from_path == from_bytes
    if template is None:
        assert from_bytes[0] == "labels"
    else:
        assert from_bytes[:2] == ("error", template)
    gold = io.read_labels(data) if template is None else io.read_labels(GOLD)
    assert outcome(io.read_predictions, path, gold=gold) == outcome(io.read_predictions, data, gold=gold)
    assert mapped == [False, is_mapped, False, is_mapped, False]


PREDICTIONS = {
    # name: (bytes, what they read to: hard codes, or probabilities, or an error's template)
    "hard, in another order": (b"id,label\n3,b\n1,b\n2,a\n", [1, 0, 1]),
    "probabilities": (b"id,a,b\n1,0.5,0.5\n3,1,0\n2,0.25,0.75\n", [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]]),
    "probabilities, CRLF": (b"id,b,a\r\n2,0.75,0.25\r\n1,0.5,0.5\r\n3,0,1\r\n", [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]]),
    "probabilities, quoted": (b'id,"a",b\n"1",0.5,"0.5"\n2,0.25,0.75\n3,1,0\n', [[0.5, 0.5], [0.25, 0.75], [1.0, 0.0]]),
    "a probability out of range": (b"id,a,b\n1,0.5,0.5\n2,1.50,-0.5\n3,1,0\n", io.NOT_A_PROBABILITY),
    "probabilities not summing to 1": (b"id,a,b\n1,0.5,0.5\n2,0.5,0.4\n3,1,0\n", io.PROBABILITIES_DONT_SUM),
    "an unknown id": (b"id,label\n1,a\n9,b\n3,a\n", io.UNKNOWN_ID),
    "a missing id": (b"id,label\n1,a\n3,a\n", io.MISSING_IDS),
    "an unknown label": (b"id,label\n1,a\n2,c\n3,a\n", io.UNKNOWN_LABEL),
}


@pytest.mark.parametrize(("data", "expected"), PREDICTIONS.values(), ids=PREDICTIONS)
def test_predictions_read_from_a_mapped_file_as_from_their_bytes(
    tmp_path: Path, mapped: list[bool], data: bytes, expected: object
) -> None:
    gold = io.read_labels(GOLD)
    from_bytes = outcome(io.read_predictions, data, gold=gold)
    from_path = outcome(io.read_predictions, written(tmp_path, data), gold=gold)
    assert mapped == [False, False, True]  # the gold's bytes, these bytes, the mapped file
    assert from_path == from_bytes
    if isinstance(expected, str):
        assert from_bytes[:2] == ("error", expected)
    elif isinstance(expected[0], list):
        np.testing.assert_allclose(from_bytes[2], expected, rtol=1e-15)
    else:
        assert from_bytes[1] == expected


# --- which files are mapped ------------------------------------------------------------------


@pytest.mark.parametrize(("data", "is_mapped"), [case[:2] for case in FILES.values()], ids=FILES)
def test_exactly_the_plain_files_are_mapped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: bytes, is_mapped: bool
) -> None:
    """Mapped, the file's bytes are all there, as written; and never when a count of lines is
    asked for (``max_rows``), or for bytes given rather than a path."""
    monkeypatch.setattr(text, "MAP_FROM_BYTES", 0)
    path = written(tmp_path, data)
    for origin in (path, str(path)):
        found = text.mapped_plain(origin, max_rows=None)
        assert (found is not None) == is_mapped
        if found is not None:
            assert found[:] == data
            found.close()
    assert text.mapped_plain(path, max_rows=10) is None
    assert text.mapped_plain(path, max_rows=0) is None
    assert text.mapped_plain(data, max_rows=None) is None


def test_only_files_of_at_least_map_from_bytes_are_mapped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = written(tmp_path, GOLD)
    monkeypatch.setattr(text, "MAP_FROM_BYTES", len(GOLD) + 1)
    assert text.mapped_plain(path, max_rows=None) is None
    monkeypatch.setattr(text, "MAP_FROM_BYTES", len(GOLD))
    found = text.mapped_plain(path, max_rows=None)
    assert found is not None
    found.close()


def test_a_file_too_small_to_map_is_read(tmp_path: Path) -> None:
    """At the default threshold a small file is read, and reads as its bytes."""
    assert len(GOLD) < io.MAP_FROM_BYTES
    assert text.mapped_plain(written(tmp_path, GOLD), max_rows=None) is None


def test_an_empty_file_is_not_mapped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With every size mapped (``MAP_FROM_BYTES`` 0), an empty file is still read, and refused
    as empty, as its bytes are."""
    monkeypatch.setattr(text, "MAP_FROM_BYTES", 0)
    path = written(tmp_path, b"")
    assert outcome(io.read_labels, b"")[:2] == ("error", io.EMPTY_FILE)
    assert text.mapped_plain(path, max_rows=None) is None
    assert outcome(io.read_labels, path) == outcome(io.read_labels, b"")


def test_a_count_of_lines_asked_for_reads_the_file(tmp_path: Path, mapped: list[bool]) -> None:
    path = written(tmp_path, GOLD)
    assert outcome(io.read_labels, path, max_rows=2)[:3] == ("error", io.TOO_MANY_LINES, 4)
    assert outcome(io.read_labels, path, max_rows=3) == outcome(io.read_labels, GOLD)
    assert mapped == [False, False, False]


# --- errors on a line of a mapped file, deep in it --------------------------------------------

ROWS = 1_000
BAD_LINE = 700
"""The line of data row 698, the id 699's."""


def hard_line(item: int) -> bytes:
    return b"%d,%s" % (item, b"a" if item % 2 else b"b")


def soft_line(item: int) -> bytes:
    return b"%d,0.25,0.75" % item


def lines(
    line_end: bytes, *, header: bytes = b"id,label", bad: bytes | None = None, line: Callable[[int], bytes] = hard_line
) -> bytes:
    """A file of the ids 1 to ``ROWS``, one a line, the id 699's line (``BAD_LINE``) replaced
    by ``bad``."""
    data = [header] + [bad if bad is not None and item == BAD_LINE - 1 else line(item) for item in range(1, ROWS + 1)]
    return line_end.join(data) + line_end


DEEP_ERRORS = {
    # name: (header, the bad line, read as, template, some of the message parameters)
    "a field too many": (b"id,label", b"699,a,x", "gold", io.FIELD_COUNT, {"expected": 2, "found": 3}),
    "a field too few": (b"id,label", b"699", "gold", io.FIELD_COUNT, {"expected": 2, "found": 1}),
    "an unknown label": (b"id,label", b"699,zz", "gold", io.UNKNOWN_LABEL, {"label": "zz"}),
    "a repeated id": (b"id,label", b"17,a", "gold", io.DUPLICATE_ID, {"id": "17", "first_line": 18}),
    "an empty line": (b"id,label", b"", "gold", io.EMPTY_LINE, {}),
    "an empty label": (b"id,label", b"699,", "gold", io.EMPTY_VALUE, {"column": "label"}),
    "an unknown id": (b"id,label", b"5000,a", "predictions", io.UNKNOWN_ID, {"id": "5000"}),
    "a repeated predicted id": (b"id,label", b"17,a", "predictions", io.DUPLICATE_ID, {"first_line": 18}),
    "a probability, quoted as written": (
        b"id,a,b",
        b"699,1.50,-0.5",
        "predictions",
        io.NOT_A_PROBABILITY,
        {"value": "1.50", "column": "a"},
    ),
}


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize(("header", "bad", "kind", "template", "params"), DEEP_ERRORS.values(), ids=DEEP_ERRORS)
def test_an_error_deep_in_a_mapped_file_names_its_line(
    tmp_path: Path,
    mapped: list[bool],
    header: bytes,
    bad: bytes,
    kind: str,
    template: str,
    params: dict,
    line_end: bytes,
) -> None:
    """Line 700 of 1001, with LF or CRLF line ends: the message names it (a line quoted in it
    is found again in the file's text, read again from its path) as for the same bytes."""
    line = soft_line if header == b"id,a,b" else hard_line
    data = lines(line_end, header=header, bad=bad, line=line)
    path = written(tmp_path, data)
    if kind == "gold":
        read, kwargs = io.read_labels, {"labels": ("a", "b")}
    else:
        read, kwargs = io.read_predictions, {"gold": io.read_labels(lines(b"\n"))}
    with pytest.raises(io.InputFileError) as caught:
        read(path, name=NAME, **kwargs)
    assert mapped[-1]
    error = caught.value
    assert error.template is template
    assert error.line == BAD_LINE
    assert params.items() <= error.params.items()
    assert str(error).startswith(f"{NAME}, line {BAD_LINE}: ")
    assert outcome(read, path, **kwargs) == outcome(read, data, **kwargs)
