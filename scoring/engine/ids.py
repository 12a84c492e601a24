"""Matching ids between two files without a Python object per id.

Ids are exact strings (``007`` is not ``7``) held in Arrow string arrays. Each id gets a 64-bit
key computed with numpy straight from the Arrow buffers: its bytes read eight at a time, mixed
with its length. Keys are sorted rather than put in a hash table: sorting ten million 64-bit
integers is vectorised and walks memory in order, while a table of ten million strings costs a
cache miss or two per id (Arrow's own hash kernels take seconds there). Equal keys never prove
equal ids: whatever the keys pair up is confirmed by comparing the strings themselves, and what
they cannot settle is left to Arrow's exact hash kernels, so a collision costs time, never a
wrong answer.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

WORD = 8
"""Bytes of an id read at a time: one little-endian 64-bit word."""

_MASKS = np.array([(1 << (8 * count)) - 1 for count in range(WORD)] + [2**64 - 1], dtype=np.uint64)
"""``_MASKS[k]`` keeps the first ``k`` bytes of a word (the bytes of an id that end within it)."""

# Odd 64-bit constants of SplitMix64 (Steele, Lea and Flood 2014): each multiplication spreads
# every input bit over the high bits, each shift brings them back down.
_GOLDEN, _MIX_1, _MIX_2 = (np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB))

VERIFY_ROWS = 1 << 20
"""Ids compared at a time: the gold ids they are paired with are gathered a slice at a time."""

MAX_REPAIRS = 1_000
"""How many rows paired by keys but holding different ids are paired again one by one; more
means the files do not hold the same ids, which only Arrow's exact kernels may judge."""


def _words(windows: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The first eight bytes of each id (fewer for a shorter one, the rest zero) as a word.
    ``windows`` are all the 8-byte windows of the bytes; an id that ends within the last eight
    bytes is read from the last window and shifted into place."""
    last = len(windows) - 1
    window = np.minimum(starts, last)
    values = windows[window]
    late = np.flatnonzero(window != starts)  # at most seven ids, at the very end
    values[late] >>= (starts[late] - window[late]).astype(np.uint64) * np.uint64(8)
    return values & _MASKS[np.minimum(lengths, WORD)]


def _mix(keys: np.ndarray, words: np.ndarray) -> np.ndarray:
    mixed = (keys ^ words) * _MIX_1
    return mixed ^ (mixed >> np.uint64(31))


def _chunk_keys(chunk: pa.StringArray) -> np.ndarray:
    """The 64-bit key of every id of one Arrow chunk, read from its offsets and bytes."""
    n = len(chunk)
    offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=n + 1, offset=4 * chunk.offset)
    starts, lengths = offsets[:-1], np.diff(offsets)
    data = np.frombuffer(chunk.buffers()[2] or b"", dtype=np.uint8)
    if len(data) < WORD:
        data = np.concatenate([data, np.zeros(WORD, dtype=np.uint8)])
    # Every 8-byte window of the bytes, as one unaligned uint64 each: no copy of the data.
    windows = np.ndarray(shape=(len(data) - WORD + 1,), dtype="<u8", buffer=data, strides=(1,))
    keys = _mix(lengths.astype(np.uint64) * _GOLDEN, _words(windows, starts, lengths))
    longer = np.flatnonzero(lengths > WORD)  # the words after the first: only for the ids that have them
    word = 1
    while len(longer):
        keys[longer] = _mix(keys[longer], _words(windows, starts[longer] + WORD * word, lengths[longer] - WORD * word))
        word += 1
        longer = longer[lengths[longer] > WORD * word]
    keys ^= keys >> np.uint64(30)
    keys *= _MIX_2
    keys ^= keys >> np.uint64(27)
    return keys


def id_keys(ids: pa.ChunkedArray) -> np.ndarray:
    """A 64-bit key per id, in file order: equal ids have equal keys."""
    keys = np.empty(len(ids), dtype=np.uint64)
    start = 0
    for chunk in ids.chunks:
        keys[start : start + len(chunk)] = _chunk_keys(chunk)
        start += len(chunk)
    return keys


def _row_bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


def key_order(ids: pa.ChunkedArray) -> np.ndarray:
    """The ids' keys in sorted order, each with its row in the low bits (``_row_bits`` of them).

    One packed array sorts with numpy's vectorised sort of integers, several times faster than
    an ``argsort``; the keys lose as many high-order bits as the rows need.
    """
    bits = np.uint64(_row_bits(len(ids)))
    packed = id_keys(ids)
    packed >>= bits
    packed <<= bits
    packed |= np.arange(len(ids), dtype=np.uint64)
    packed.sort()
    return packed


def all_distinct(ids: pa.ChunkedArray, order: np.ndarray) -> bool:
    """Whether no id repeats, from the ids' :func:`key_order`: ids whose shortened keys differ
    differ; the few that share one are compared as strings (all of them by Arrow when many do)."""
    bits = np.uint64(_row_bits(len(ids)))
    shortened = order >> bits
    shared = np.flatnonzero(shortened[1:] == shortened[:-1])
    if not len(shared):
        return True
    if len(shared) > MAX_REPAIRS:
        return pc.count_distinct(ids, mode="all").as_py() == len(ids)
    places = np.union1d(shared, shared + 1)
    rows = (order[places] & np.uint64((1 << int(bits)) - 1)).astype(np.intp)
    return len({(int(key), ids[int(row)].as_py()) for key, row in zip(shortened[places], rows, strict=True)}) == len(
        rows
    )


def first_codes(ids: pa.ChunkedArray) -> np.ndarray:
    """For each id, the number of distinct ids before its first occurrence (Arrow's exact hash):
    two rows hold the same id exactly when they have the same code."""
    return pc.dictionary_encode(ids.combine_chunks()).indices.to_numpy(zero_copy_only=False)


def gold_rows(ids: pa.ChunkedArray, *, gold_ids: pa.ChunkedArray, gold_order: np.ndarray) -> np.ndarray | None:
    """For each id, the row of the same id in ``gold_ids`` when ``ids`` are the gold ids in
    another order; ``None`` when they are not (a repeat, an unknown or a missing id), which
    only an exact look-up may tell apart. ``gold_order`` is :func:`key_order` of the gold ids.
    """
    n = len(gold_ids)
    if len(ids) != n:
        return None
    order = key_order(ids)
    bits = np.uint64(_row_bits(n))
    if not np.array_equal(order >> bits, gold_order >> bits):
        return None
    low = np.uint64((1 << int(bits)) - 1)
    rows = np.empty(n, dtype=np.intp)
    rows[(order & low).astype(np.intp)] = (gold_order & low).astype(np.intp)
    return _confirmed(rows, ids=ids, gold_ids=gold_ids)


def _differing(ids: pa.ChunkedArray, gold_ids: pa.ChunkedArray, rows: np.ndarray) -> np.ndarray:
    """Where ``ids`` differ from the gold ids at ``rows``."""
    return np.flatnonzero(~pc.equal(ids, gold_ids.take(rows)).to_numpy(zero_copy_only=False))


def _confirmed(rows: np.ndarray, *, ids: pa.ChunkedArray, gold_ids: pa.ChunkedArray) -> np.ndarray | None:
    """``rows`` once every id equals the gold id it is paired with. Ids whose shortened keys
    collide may have been paired the wrong way round: those few are paired again by their
    strings."""
    wrong = np.concatenate(
        [
            start + _differing(ids.slice(start, VERIFY_ROWS), gold_ids, rows[start : start + VERIFY_ROWS])
            for start in range(0, len(rows), VERIFY_ROWS)
        ]
    )
    if not len(wrong):
        return rows
    if len(wrong) > MAX_REPAIRS:
        return None
    gold_row_of = {gold_ids[int(row)].as_py(): row for row in rows[wrong]}
    repaired = [gold_row_of.get(ids[int(row)].as_py()) for row in wrong]
    if None in repaired or len(set(repaired)) < len(repaired):
        return None
    rows[wrong] = repaired
    return rows
