"""Arrow arrays as numpy arrays, read from their buffers.

pyarrow's own ``to_numpy`` imports pandas on its first call (a few tenths of a second, more
than the command line spends on some whole files), so the engine's hot paths read the buffers
themselves: a view where the values lie in memory as numpy would hold them, a copy only for a
chunked array or for bits.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def _chunks(array: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return array.chunks if isinstance(array, pa.ChunkedArray) else [array]


_NUMPY_TYPES = {
    arrow: np.dtype(numpy)
    for arrow, numpy in (
        (pa.int8(), np.int8),
        (pa.int16(), np.int16),
        (pa.int32(), np.int32),
        (pa.int64(), np.int64),
        (pa.uint8(), np.uint8),
        (pa.uint16(), np.uint16),
        (pa.uint32(), np.uint32),
        (pa.uint64(), np.uint64),
        (pa.float32(), np.float32),
        (pa.float64(), np.float64),
    )
}
"""The Arrow types whose values lie in memory as numpy's of the same width do."""


def _numpy_type(arrow_type: pa.DataType) -> np.dtype:
    try:
        return _NUMPY_TYPES[arrow_type]
    except KeyError:
        raise TypeError(f"no numpy view of an Arrow array of {arrow_type}") from None


def _one(chunk: pa.Array) -> np.ndarray:
    if chunk.null_count:
        raise ValueError("an array with nulls has no numpy view; fill them first")
    if pa.types.is_boolean(chunk.type):
        bits = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little", count=chunk.offset + len(chunk))[chunk.offset :].view(bool)
    dtype = _numpy_type(chunk.type)
    return np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize)


def values(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of an Arrow array of numbers or booleans without nulls, in order: a read-only
    view of a single chunk's numbers, a new array otherwise."""
    parts = [_one(chunk) for chunk in _chunks(array)]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, dtype=bool if pa.types.is_boolean(array.type) else _numpy_type(array.type))
    return np.concatenate(parts)
