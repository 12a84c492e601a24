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

import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from scoring.engine import arrays
from scoring.engine.cores import available_cores

WORD = 8
"""Bytes of an id read at a time: one little-endian 64-bit word."""

_MASKS = np.array([(1 << (8 * count)) - 1 for count in range(WORD)] + [2**64 - 1], dtype=np.uint64)
"""``_MASKS[k]`` keeps the first ``k`` bytes of a word (the bytes of an id that end within it)."""

# Odd 64-bit constants of SplitMix64 (Steele, Lea and Flood 2014): each multiplication spreads
# every input bit over the high bits, each shift brings them back down.
_GOLDEN, _MIX_1, _MIX_2 = (np.uint64(c) for c in (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB))

BLOCK_ROWS = 1 << 16
"""Ids worked on at a time. The temporaries of a block (half a megabyte each) stay in the
processor's cache, where temporaries of ten million rows would each be new memory for the
kernel to hand over page by page, which costs more than the arithmetic done in them."""

LONG_ID = 256
"""Bytes beyond which an id's key is a digest of its bytes (hashlib's BLAKE2b, 8 bytes), one
id at a time: an id of a megabyte would otherwise take 131,072 rounds of numpy calls, each
over the few long ids of its chunk."""

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
    return values & _MASKS[np.clip(lengths, 0, WORD)]


def _mix(keys: np.ndarray, words: np.ndarray) -> np.ndarray:
    mixed = (keys ^ words) * _MIX_1
    return mixed ^ (mixed >> np.uint64(31))


def id_offsets(chunk: pa.StringArray) -> np.ndarray:
    """Where each id of a chunk starts in its data buffer, and where the last one ends."""
    return np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=len(chunk) + 1, offset=4 * chunk.offset)


def _windows(chunk: pa.StringArray) -> np.ndarray:
    """Every 8-byte window of a chunk's data buffer, as one unaligned uint64 each: no copy of
    the data (a buffer shorter than a word is copied, padded with zeros)."""
    data = np.frombuffer(chunk.buffers()[2] or b"", dtype=np.uint8)
    if len(data) < WORD:
        data = np.concatenate([data, np.zeros(WORD, dtype=np.uint8)])
    return np.ndarray(shape=(len(data) - WORD + 1,), dtype="<u8", buffer=data, strides=(1,))


def _fixed_width(chunk: pa.StringArray, offsets: np.ndarray) -> int | None:
    """The length of every id of the chunk when they all have one (zero-padded numbers,
    hashes, UUIDs: the usual case), else ``None``."""
    lengths = np.diff(offsets)
    if not len(lengths) or lengths.min() != lengths.max():
        return None
    return int(lengths[0])


def _finish(keys: np.ndarray) -> np.ndarray:
    keys ^= keys >> np.uint64(30)
    keys *= _MIX_2
    keys ^= keys >> np.uint64(27)
    return keys


def fixed_width(chunk: pa.StringArray) -> int | None:
    """The length in bytes of every id of the chunk when they all have one, else ``None``."""
    return _fixed_width(chunk, id_offsets(chunk))


def _digest_keys(chunk: pa.StringArray, rows: np.ndarray) -> np.ndarray:
    """The keys of the ids at ``rows`` (each longer than :data:`LONG_ID` bytes), from their
    digests."""
    digests = [hashlib.blake2b(chunk[int(row)].as_buffer(), digest_size=8).digest() for row in rows]
    return np.array([int.from_bytes(digest, "little") for digest in digests], dtype=np.uint64)


def _fixed_width_keys(windows: np.ndarray, first: int, length: int, n: int) -> np.ndarray:
    """:func:`_chunk_keys` of ``n`` ids of ``length`` bytes (at least a word, at most
    :data:`LONG_ID`) laid end to end from ``first``: each word read with a stride, no index
    array. The last, partial word is read from the id's last eight bytes and shifted down, so no
    read passes the buffer."""
    keys = np.full(n, np.uint64((length * int(_GOLDEN)) % 2**64))
    for word in range(-(-length // WORD)):
        remaining = length - WORD * word
        if remaining >= WORD:
            values = windows[first + WORD * word :: length][:n]
        else:
            values = windows[first + length - WORD :: length][:n] >> np.uint64(8 * (WORD - remaining))
        keys = _mix(keys, values)
    return _finish(keys)


def _chunk_keys(chunk: pa.StringArray) -> np.ndarray:
    """The 64-bit key of every id of one Arrow chunk, read from its offsets and bytes."""
    offsets = id_offsets(chunk)
    windows = _windows(chunk)
    width = _fixed_width(chunk, offsets)
    if width is not None and WORD <= width <= LONG_ID:
        return _fixed_width_keys(windows, int(offsets[0]), width, len(chunk))
    starts, lengths = offsets[:-1], np.diff(offsets)
    keys = _mix(lengths.astype(np.uint64) * _GOLDEN, _words(windows, starts, lengths))
    longer = np.flatnonzero((lengths > WORD) & (lengths <= LONG_ID))  # the words after the first
    word = 1
    while len(longer):
        keys[longer] = _mix(keys[longer], _words(windows, starts[longer] + WORD * word, lengths[longer] - WORD * word))
        word += 1
        longer = longer[lengths[longer] > WORD * word]
    keys = _finish(keys)
    long = np.flatnonzero(lengths > LONG_ID)
    keys[long] = _digest_keys(chunk, long)
    return keys


def blocks(ids: pa.ChunkedArray) -> Iterator[tuple[int, pa.StringArray]]:
    """The ids a block at a time, each with the row of its first id."""
    start = 0
    for chunk in ids.chunks:
        for offset in range(0, len(chunk), BLOCK_ROWS):
            yield start + offset, chunk.slice(offset, BLOCK_ROWS)
        start += len(chunk)


def id_keys(ids: pa.ChunkedArray) -> np.ndarray:
    """A 64-bit key per id, in file order: equal ids have equal keys."""
    keys = np.empty(len(ids), dtype=np.uint64)
    for start, block in blocks(ids):
        keys[start : start + len(block)] = _chunk_keys(block)
    return keys


def _row_bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


def _low_mask(bits: int) -> np.uint64:
    return np.uint64((1 << bits) - 1)


def key_order(ids: pa.ChunkedArray) -> np.ndarray:
    """The ids' keys in sorted order, each with its row in the low bits (``_row_bits`` of them).

    One packed array sorts with numpy's vectorised sort of integers, several times faster than
    an ``argsort``; the keys lose as many high-order bits as the rows need.
    """
    bits = _row_bits(len(ids))
    packed = np.empty(len(ids), dtype=np.uint64)
    for start, block in blocks(ids):
        keys = _chunk_keys(block)
        keys &= ~_low_mask(bits)
        keys |= np.arange(start, start + len(block), dtype=np.uint64)
        packed[start : start + len(block)] = keys
    sort_on_all_cores(packed)
    return packed


PARALLEL_SORT_ROWS = 1 << 20
"""Fewer values than this are sorted in one go: threads would cost more than they save."""


def sort_on_all_cores(values: np.ndarray) -> None:
    """Sort an array of integers in place, a part per core: numpy lets go of the interpreter
    lock while it sorts, so the parts are sorted side by side, and a stable sort (timsort,
    which finds the sorted runs) then merges them in one pass. On two cores 10 million keys
    take about 0.37 s instead of 0.64 s."""
    parts = min(available_cores(), len(values) // PARALLEL_SORT_ROWS)
    if parts < 2:
        values.sort()
        return
    bounds = np.linspace(0, len(values), parts + 1).astype(np.intp)
    with ThreadPoolExecutor(max_workers=parts) as pool:
        list(pool.map(lambda part: values[bounds[part] : bounds[part + 1]].sort(), range(parts)))
    values.sort(kind="stable")


def _big_endian_words(chunk: pa.StringArray, offsets: np.ndarray, count: int) -> list[np.ndarray]:
    """The ids' bytes as ``count`` words each, zero-padded, most significant byte first: words
    compare as the bytes do."""
    windows = _windows(chunk)
    starts, lengths = offsets[:-1], np.diff(offsets)
    return [_words(windows, starts + WORD * word, lengths - WORD * word).byteswap() for word in range(count)]


def _steps_up(chunk: pa.StringArray) -> tuple[bool, bool]:
    """Whether each id of the chunk is above the one before it byte by byte, and whether it is
    by length first and then byte by byte.

    Words are the ids' bytes padded with zeros: an id above another by its words is above it
    by its bytes too (padding never makes an id look larger than it is), so a ``True`` is a
    proof; ids whose padded words tie (they differ by zero bytes at their end) answer ``False``.
    An id longer than :data:`LONG_ID` bytes answers ``False`` too: its words would be read for
    every id of the chunk.
    """
    offsets = id_offsets(chunk)
    lengths = np.diff(offsets)
    if len(lengths) and lengths.max() > LONG_ID:
        return False, False
    count = -(-int(lengths.max()) // WORD) if len(lengths) else 0
    above = np.zeros(len(chunk) - 1, dtype=bool)
    tied = np.ones(len(chunk) - 1, dtype=bool)
    for words in _big_endian_words(chunk, offsets, max(count, 1)):
        above |= tied & (words[1:] > words[:-1])
        tied &= words[1:] == words[:-1]
    bytewise = bool(above.all())
    longer, same_length = lengths[1:] > lengths[:-1], lengths[1:] == lengths[:-1]
    return bytewise, bool((longer | (same_length & above)).all())


def _shortlex(text: bytes) -> tuple[int, bytes]:
    return len(text), text


def increasing(ids: pa.ChunkedArray) -> bool:
    """Whether the ids strictly increase, byte by byte (``a1, a2, b1``) or by length first
    (``1, 2, …, 10``, as numbered ids come): either proves in one pass, with no sort, that
    no id repeats. Gold files are often written sorted; ``False`` says only that this proof
    does not apply. Rows are compared a slice at a time, so the words take little memory."""
    orders = {"bytes": True, "length first": True}
    previous: bytes | None = None
    for chunk in ids.chunks:
        if not len(chunk):
            continue
        first = chunk[0].as_py().encode()
        if previous is not None:
            orders["bytes"] &= first > previous
            orders["length first"] &= _shortlex(first) > _shortlex(previous)
        for start in range(0, len(chunk) - 1, BLOCK_ROWS):
            bytewise, by_length = _steps_up(chunk.slice(start, BLOCK_ROWS + 1))
            orders["bytes"] &= bytewise
            orders["length first"] &= by_length
            if not any(orders.values()):
                return False
        previous = chunk[len(chunk) - 1].as_py().encode()
    return any(orders.values())


def all_distinct(ids: pa.ChunkedArray, order: np.ndarray) -> bool:
    """Whether no id repeats, from the ids' :func:`key_order`: ids whose shortened keys differ
    differ; the few that share one are compared as strings (all of them by Arrow when many do)."""
    bits = _row_bits(len(ids))
    shared = ties(order, bits)
    if not len(shared):
        return True
    if len(shared) > MAX_REPAIRS:
        return pc.count_distinct(ids, mode="all").as_py() == len(ids)
    places = np.union1d(shared, shared + 1)
    rows = (order[places] & _low_mask(bits)).astype(np.intp)
    shortened = order[places] >> np.uint64(bits)
    return len({(int(key), ids[int(row)].as_py()) for key, row in zip(shortened, rows, strict=True)}) == len(rows)


def ties(order: np.ndarray, bits: int) -> np.ndarray:
    """The places ``k`` where sorted packed keys ``k`` and ``k + 1`` share their shortened key,
    found a block at a time (two packed keys share it exactly when their exclusive or fits in
    the row's bits)."""
    found = []
    for start in range(0, max(len(order) - 1, 0), BLOCK_ROWS):
        part = order[start : start + BLOCK_ROWS + 1]
        found.append(start + np.flatnonzero((part[1:] ^ part[:-1]) <= _low_mask(bits)))
    return np.concatenate(found) if found else np.empty(0, dtype=np.intp)


def first_codes(ids: pa.ChunkedArray) -> np.ndarray:
    """For each id, the number of distinct ids before its first occurrence (Arrow's exact hash):
    two rows hold the same id exactly when they have the same code."""
    return arrays.values(pc.dictionary_encode(ids.combine_chunks()).indices)


def gold_rows(ids: pa.ChunkedArray, *, gold_ids: pa.ChunkedArray, gold_order: np.ndarray) -> np.ndarray | None:
    """For each id, the row of the same id in ``gold_ids`` when ``ids`` are the gold ids in
    another order; ``None`` when they are not (a repeat, an unknown or a missing id), which
    only an exact look-up may tell apart. ``gold_order`` is :func:`key_order` of the gold ids.
    """
    n = len(gold_ids)
    if len(ids) != n:
        return None
    rows = paired_rows(key_order(ids), gold_order, bits=_row_bits(n))
    return None if rows is None else _confirmed(rows, ids=ids, gold_ids=gold_ids)


def paired_rows(mine: np.ndarray, theirs: np.ndarray, *, bits: int) -> np.ndarray | None:
    """Two sorted arrays of packed values (a value above, its row in the low ``bits``) of the
    same length: for each row of ``mine``, the row of ``theirs`` with the same value, when the
    values match one for one; ``None`` when they differ. Compared a block at a time."""
    low = _low_mask(bits)
    rows = np.empty(len(mine), dtype=np.intp)
    for start in range(0, len(mine), BLOCK_ROWS):
        ours, others = mine[start : start + BLOCK_ROWS], theirs[start : start + BLOCK_ROWS]
        if ((ours ^ others) > low).any():
            return None
        rows[(ours & low).astype(np.intp)] = (others & low).astype(np.intp)
    return rows


def byte_rows(chunk: pa.StringArray, width: int, *, unit: int | None = None) -> np.ndarray:
    """The ids of a chunk whose ids all have ``width`` bytes, as a matrix of a row per id, in
    unsigned integers of ``unit`` bytes (default: the widest that divide the width): a view of
    the data, no copy."""
    offsets = id_offsets(chunk)
    data = np.frombuffer(chunk.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    unit = unit or next(size for size in (8, 4, 2, 1) if width % size == 0)
    return data.view(f"<u{unit}").reshape(len(chunk), width // unit)


def _differing(ids: pa.ChunkedArray, gold_ids: pa.ChunkedArray, rows: np.ndarray) -> np.ndarray:
    """Where ``ids`` differ from the gold ids at ``rows`` (``gold_ids`` in one chunk), a block
    at a time. Ids of one width, as they usually are, are compared as rows of integers
    gathered from the gold's bytes; others by their lengths and then word by word."""
    gold = gold_ids.chunk(0) if gold_ids.num_chunks == 1 else gold_ids.combine_chunks()
    gold_offsets = id_offsets(gold)
    width = _fixed_width(gold, gold_offsets)
    if width is not None and all(_fixed_width(chunk, id_offsets(chunk)) == width for chunk in ids.chunks):
        gold_matrix = byte_rows(gold, width)
        found = []
        for start, block in blocks(ids):
            theirs = np.take(gold_matrix, rows[start : start + len(block)], axis=0)
            found.append(start + np.flatnonzero((theirs != byte_rows(block, width)).any(axis=1)))
        return np.concatenate(found) if found else np.empty(0, dtype=np.intp)
    gold_windows = _windows(gold)
    found = []
    for start, block in blocks(ids):
        paired = rows[start : start + len(block)]
        offsets = id_offsets(block)
        starts, lengths = offsets[:-1], np.diff(offsets)
        gold_starts = gold_offsets[paired]
        differ = gold_offsets[paired + 1] - gold_starts != lengths
        windows = _windows(block)
        for word in range(-(-int(lengths.max(initial=0)) // WORD)):
            left = lengths - WORD * word
            mine = _words(windows, starts + WORD * word, left)
            differ |= mine != _words(gold_windows, gold_starts + WORD * word, left)
        found.append(start + np.flatnonzero(differ))
    return np.concatenate(found) if found else np.empty(0, dtype=np.intp)


def _confirmed(rows: np.ndarray, *, ids: pa.ChunkedArray, gold_ids: pa.ChunkedArray) -> np.ndarray | None:
    """``rows`` once every id equals the gold id it is paired with. Ids whose shortened keys
    collide may have been paired the wrong way round: those few are paired again by their
    strings."""
    wrong = _differing(ids, gold_ids, rows)
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
