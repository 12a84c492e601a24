"""A submission's per-item predictions, stored compactly: what a paired bootstrap needs.

The confusion matrix is the sufficient statistic of every metric, but not of a bootstrap over
the test items: resampling the items needs each item's prediction, in the gold file's order
(:mod:`scoring.engine.bootstrap`). A scored upload therefore keeps them next to its matrix:

* **hard** labels as class codes, in the smallest unsigned integer type that holds them
  (``uint8`` for up to 256 classes): 12,284 items take 12 kB, a few kB compressed;
* a task of several outputs's labels as class codes too, items × outputs;
* **soft** outputs as the probability rows the matrix was built from, ``float64``. Single
  precision would halve them, but the rows would then no longer give the stored soft matrix to
  the last bit, and a bootstrap on the site would differ from the command line's on the same
  files (which reads float64): exactness wins over a factor of two for the rarer kind of upload.

Packed as ``numpy.save`` bytes (the header records dtype and shape; ``allow_pickle=False`` both
ways, so stored bytes never run code) compressed with zlib.
"""

from __future__ import annotations

import io
import zlib

import numpy as np

from scoring.engine.confusion import hard_confusion, soft_confusion

COMPRESSION_LEVEL = 6
"""zlib's default: most of level 9's gain on class codes, at a fraction of its time."""


def compact(predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """``predicted`` in the type it is stored in: class codes (an item's, or items × outputs of a
    task of several) as the smallest unsigned integers that hold ``n_classes`` codes,
    probability rows as float64."""
    predicted = np.asarray(predicted)
    if predicted.ndim == 2 and not np.issubdtype(predicted.dtype, np.integer):
        return predicted.astype(np.float64, copy=False)
    if predicted.ndim not in (1, 2) or not np.issubdtype(predicted.dtype, np.integer):
        raise ValueError("per-item predictions are class codes (1-d, or 2-d of several outputs) or probability rows")
    return predicted.astype(np.min_scalar_type(max(n_classes - 1, 0)), copy=False)


def pack_items(predicted: np.ndarray, n_classes: int) -> bytes:
    """Codes or probability rows as compressed ``.npy`` bytes (see the module docstring)."""
    buffer = io.BytesIO()
    np.save(buffer, compact(predicted, n_classes), allow_pickle=False)
    return zlib.compress(buffer.getvalue(), COMPRESSION_LEVEL)


_LAYOUTS: dict[bytes, tuple[np.dtype, tuple[int, ...], str]] = {}
"""``.npy`` headers already read, and the dtype, shape and order they say: every run of a phase
has the same header, and reading one costs ten times what decompressing a run's codes does."""
LAYOUTS_KEPT = 64


def unpack_items(data: bytes | memoryview) -> np.ndarray:
    """The array :func:`pack_items` stored (writable, as ``numpy.load`` returns it)."""
    raw = zlib.decompress(bytes(data))
    start = 10 if raw[6:7] == b"\x01" else 12  # the header's length: 2 bytes in format 1.0, 4 after
    header = raw[: start + int.from_bytes(raw[8:start], "little")] if raw.startswith(b"\x93NUMPY") else b""
    layout = _LAYOUTS.get(header)
    if layout is None:
        array = np.load(io.BytesIO(raw), allow_pickle=False)
        if header and len(_LAYOUTS) < LAYOUTS_KEPT:
            _LAYOUTS[header] = (array.dtype, array.shape, "F" if np.isfortran(array) else "C")
        return array
    dtype, shape, order = layout
    count = int(np.prod(shape))
    return np.frombuffer(bytearray(raw), dtype=dtype, count=count, offset=len(header)).reshape(shape, order=order)


def items_confusion(gold: np.ndarray, predicted: np.ndarray, n_classes: int) -> np.ndarray:
    """The confusion matrix (rows predicted, columns gold) of per-item predictions: hard counts
    for codes, the soft matrix (paper 000, footnote 1) for probability rows."""
    predicted = np.asarray(predicted)
    if predicted.ndim == 2:
        return soft_confusion(predicted, gold)
    return hard_confusion(predicted, gold, n_classes)


def reproduces(gold: np.ndarray, predicted: np.ndarray, matrix: np.ndarray | list) -> bool:
    """Whether ``predicted`` gives exactly ``matrix`` against ``gold``: the check that stored
    items belong with stored scores before a bootstrap uses them."""
    expected = np.asarray(matrix, dtype=np.float64)
    if expected.ndim != 2 or expected.shape[0] != expected.shape[1] or len(predicted) != len(gold):
        return False
    return bool(np.array_equal(items_confusion(gold, predicted, expected.shape[0]).astype(np.float64), expected))


def codes_with_matrix(matrix: np.ndarray | list, gold: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Predicted class codes whose hard confusion matrix against ``gold`` is ``matrix`` (rows
    predicted, columns gold): each gold class's items get its column's predictions in a random
    order. For demos and benchmarks that start from a matrix; a column that does not sum to its
    class's gold count is refused (``ValueError``)."""
    matrix = np.asarray(matrix)
    gold = np.asarray(gold)
    n_classes = matrix.shape[0]
    predicted = np.empty(len(gold), dtype=np.min_scalar_type(max(n_classes - 1, 0)))
    for j in range(n_classes):
        items = np.flatnonzero(gold == j)
        column = np.repeat(np.arange(n_classes), matrix[:, j].astype(np.int64))
        if len(column) != len(items):
            raise ValueError(f"column {j} of the matrix sums to {len(column)}, not {len(items)}")
        predicted[items] = rng.permutation(column)
    return predicted
