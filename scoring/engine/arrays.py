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


def _one(chunk: pa.Array) -> np.ndarray:
    if chunk.null_count:
        raise ValueError("an array with nulls has no numpy view; fill them first")
    if pa.types.is_boolean(chunk.type):
        bits = np.frombuffer(chunk.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, bitorder="little", count=chunk.offset + len(chunk))[chunk.offset :].view(bool)
    dtype = np.dtype(str(chunk.type))  # int8 … uint64, float32, float64: the same names in numpy
    return np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize)


def values(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of an Arrow array of numbers or booleans without nulls, in order: a read-only
    view of a single chunk's numbers, a new array otherwise."""
    parts = [_one(chunk) for chunk in _chunks(array)]
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return np.empty(0, dtype=bool if pa.types.is_boolean(array.type) else np.dtype(str(array.type)))
    return np.concatenate(parts)
