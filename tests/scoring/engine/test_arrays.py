"""Arrow arrays as numpy arrays (:mod:`scoring.engine.arrays`).

What this proves: ``values`` gives the same numbers, in the same order and of the same dtype,
as the Python values of an Arrow array of integers, floats or booleans, whether it is one
array, a slice of one (the offset is honoured, also for booleans whose offset is not a whole
byte) or a chunked array of no, one or several chunks; an array with nulls is refused rather
than read as whatever its buffers hold; and reading a column this way does not import pandas,
which pyarrow's own ``to_numpy`` does (the reason the module exists).
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from scoring.engine import arrays

REPO = Path(__file__).resolve().parents[3]

NUMBERS = {
    "int8": (pa.int8(), np.int8, [-128, -1, 0, 1, 5, 7, 127, -3, 9, 100]),
    "int32": (pa.int32(), np.int32, [-(2**31), -1, 0, 1, 2**31 - 1, 42, -42, 3, 4, 5]),
    "uint64": (pa.uint64(), np.uint64, [0, 1, 2**63, 2**64 - 1, 7, 8, 9, 2**40, 3, 11]),
    "float64": (pa.float64(), np.float64, [0.5, -1.25, 0.0, 1e300, -1e-300, 3.0, 2.5, float("inf"), 7.75, 1.0]),
    "float32": (pa.float32(), np.float32, [0.5, -1.25, 0.0, 2.0**100, -(2.0**-100), 3.0, 2.5, float("inf"), 7.75, 1.0]),
    "bool": (pa.bool_(), np.bool_, [True, False, False, True, True, True, False, True, False, False, True]),
}


@pytest.mark.parametrize("kind", NUMBERS)
def test_an_array_gives_its_values_with_their_dtype(kind: str) -> None:
    arrow_type, dtype, python = NUMBERS[kind]
    got = arrays.values(pa.array(python, arrow_type))
    assert got.dtype == dtype
    assert got.tolist() == python


@pytest.mark.parametrize("kind", NUMBERS)
@pytest.mark.parametrize(("start", "length"), [(3, 5), (1, 7), (0, 0), (9, 1)])
def test_a_slice_gives_the_values_from_its_offset(kind: str, start: int, length: int) -> None:
    arrow_type, dtype, python = NUMBERS[kind]
    got = arrays.values(pa.array(python, arrow_type).slice(start, length))
    assert got.dtype == dtype
    assert got.tolist() == python[start : start + length]


@pytest.mark.parametrize("kind", NUMBERS)
@pytest.mark.parametrize("cuts", [(), (4,), (3, 7), (0, 3, 3, 9)], ids=["one", "two", "three", "empty ones too"])
def test_a_chunked_array_gives_its_chunks_in_order(kind: str, cuts: tuple[int, ...]) -> None:
    """Chunks cut from one sliced array, so every chunk after the first has an offset."""
    arrow_type, dtype, python = NUMBERS[kind]
    whole = pa.array([python[0], *python], arrow_type).slice(1)
    bounds = [0, *cuts, len(python)]
    chunks = [whole.slice(a, b - a) for a, b in itertools.pairwise(bounds)]
    got = arrays.values(pa.chunked_array(chunks, arrow_type))
    assert got.dtype == dtype
    assert got.tolist() == python


@pytest.mark.parametrize("kind", NUMBERS)
def test_a_chunked_array_of_no_chunks_is_empty_with_its_dtype(kind: str) -> None:
    arrow_type, dtype, _ = NUMBERS[kind]
    got = arrays.values(pa.chunked_array([], arrow_type))
    assert got.dtype == dtype
    assert len(got) == 0


@pytest.mark.parametrize("start", range(17))
def test_booleans_are_read_from_any_bit(start: int) -> None:
    """Offsets that fall inside a byte, across two bytes and past the first ones."""
    python = [k % 3 == 0 or k % 7 == 1 for k in range(40)]
    array = pa.array(python)
    for length in (0, 1, 5, 8, 13, 40 - start):
        assert arrays.values(array.slice(start, length)).tolist() == python[start : start + length]
    chunked = pa.chunked_array([array.slice(start, 9), array.slice(start + 9, 3), array.slice(0, start)])
    assert arrays.values(chunked).tolist() == python[start : start + 12] + python[:start]


@pytest.mark.parametrize(
    "array",
    [
        pa.array([1, None, 3], pa.int32()),
        pa.array([0.5, None], pa.float64()),
        pa.array([True, None, False]),
        pa.chunked_array([pa.array([1, 2], pa.int64()), pa.array([None], pa.int64())]),
        pa.array([None, 1, 2], pa.int64()).slice(0, 2),
    ],
    ids=["int32", "float64", "bool", "in a later chunk", "in a slice"],
)
def test_an_array_with_nulls_is_refused(array: pa.Array | pa.ChunkedArray) -> None:
    with pytest.raises(ValueError, match="null"):
        arrays.values(array)


def test_reading_a_column_does_not_import_pandas() -> None:
    """In a fresh interpreter, a column read by Arrow's CSV reader (as the engine reads files)
    turned into numpy leaves pandas unimported; ``to_numpy`` afterwards shows that the check
    would see it (pyarrow imports pandas there)."""
    code = (
        "import io, sys\n"
        "import pyarrow.compute as pc, pyarrow.csv as pa_csv\n"
        "from scoring.engine import arrays\n"
        "column = pa_csv.read_csv(io.BytesIO(b'n\\n1\\n2\\n3\\n')).column(0)\n"
        "numbers = arrays.values(column).tolist() + arrays.values(column.chunk(0).slice(1)).tolist()\n"
        "flags = arrays.values(pc.less(column, pc.max(column))).tolist()\n"
        "print(numbers, flags, 'pandas' in sys.modules)\n"
        "column.to_numpy()\n"
        "print('pandas' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n") == ["[1, 2, 3, 2, 3] [True, True, False] False", "True", ""]


def test_an_array_of_a_type_numpy_does_not_share_is_refused() -> None:
    with pytest.raises(TypeError, match="date32"):
        arrays.values(pa.array([1, 2], pa.date32()))
