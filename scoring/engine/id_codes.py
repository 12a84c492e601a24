"""Exact integer codes for ids, where the ids allow one: matching with no hash and no check.

Two kinds of ids are common in shared tasks, and each has an exact, compact integer code:

- **Plain numbers** (``1``, ``42``, ``100000``): digits only, no sign, no leading zero, at most
  18 digits. The code is the number. ``007`` and ``+7`` are not plain, so they get no code,
  and the code of a plain id never stands for another id.
- **Ids of one width** (``doc-00a3f1``, ``en_0000123``, zero-padded numbers, short hashes):
  each position holds few distinct bytes in the gold file. The code is a mixed-radix number,
  one digit per position: the rank of the id's byte among the bytes the gold file has at
  that position. A position that holds one byte throughout costs nothing, and an id with a
  byte the gold file never has there gets no code (it cannot be a gold id).

A code is exact: two ids get the same code only when they are the same string. Codes looked
up, compared or sorted therefore need no check on the strings afterwards, where the 64-bit
keys of :mod:`scoring.engine.ids` (hashes) need every pairing confirmed. Where the gold's
codes are dense (their range at most ``DENSE_SPAN`` times the number of ids, as numbered ids
are), a table indexed by code gives each id's gold row in one look-up, with no sort at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from scoring.engine import arrays
from scoring.engine.ids import (
    BLOCK_ROWS,
    blocks,
    byte_rows,
    fixed_width,
    id_offsets,
    paired_rows,
    sort_on_all_cores,
    ties,
)

LONGEST_PLAIN_NUMBER = 18
"""Digits of the longest plain number coded: every such number fits a signed 64-bit integer."""

_POWERS_OF_TEN = np.array([10**k for k in range(LONGEST_PLAIN_NUMBER + 1)], dtype=np.int64)

WIDEST_CODED = 64
"""Bytes of the widest ids coded by position (a wider id is hashed as any other)."""

LARGEST_CODE = 2**63
"""Codes stay below this, so that they are exact in 64-bit arithmetic."""

DENSE_SPAN = 2
"""Codes whose range is at most this many times the number of ids are looked up in a table
indexed by code (four bytes a slot): a table at most twice the size of an array of rows."""


def _lengths(block: pa.StringArray) -> np.ndarray:
    return np.diff(id_offsets(block))


def _all_digits(block: pa.StringArray) -> bool:
    """Whether every byte of the block's ids is an ASCII digit (so Arrow's parse of each is
    its plain value, whatever else that parser would accept)."""
    ends = id_offsets(block)
    data = np.frombuffer(block.buffers()[2], dtype=np.uint8)[ends[0] : ends[-1]]
    return bool(data.min() >= ord("0") and data.max() <= ord("9"))


@dataclass(frozen=True)
class PlainNumbers:
    """Ids that are plain numbers, coded by their value."""

    def encode(self, ids: pa.ChunkedArray) -> np.ndarray | None:
        """Each id's value, or ``None`` when an id is not a plain number."""
        codes = np.empty(len(ids), dtype=np.uint64)
        for start, block in blocks(ids):
            lengths = _lengths(block)
            if lengths.min() < 1 or lengths.max() > LONGEST_PLAIN_NUMBER or not _all_digits(block):
                return None
            values = arrays.values(pc.cast(block, pa.int64()))
            # Plain: as many digits as the value has (no leading zero), 0 written "0".
            at_least = np.where(lengths == 1, 0, _POWERS_OF_TEN[lengths - 1])
            if not ((values >= at_least) & (values < _POWERS_OF_TEN[lengths])).all():
                return None
            codes[start : start + len(block)] = values
        return codes


SAMPLE_BLOCKS = 16
"""Blocks of ids, spread over the file, whose bytes make the first guess at each position's
bytes (:meth:`OneWidth.of`); all ids are read only when the guess misses one."""


@dataclass(frozen=True, eq=False)
class OneWidth:
    """Ids of ``width`` bytes, coded by the rank of their byte at each position.

    ``digit_of[p, b]`` is the rank of byte ``b`` among the gold's bytes at position ``p``, or
    -1 where the gold has no such byte there; ``radix[p]`` is how many bytes it has there.
    Positions with one byte (``doc-`` of ``doc-00a3f1``) are checked together, a word at a
    time: the ids' bytes in words (``word_mask`` keeps those positions, which must hold
    ``word_value``). The others are read two at a time where the width is even (``steps``:
    a column of the ids' bytes read as ``step_bytes``-byte integers, the table of their digits
    with -1 for a byte the gold lacks, and the radix of that column): half the look-ups.
    """

    width: int
    digit_of: np.ndarray
    radix: np.ndarray
    word_mask: np.ndarray
    word_value: np.ndarray
    step_bytes: int
    steps: tuple[tuple[int, np.ndarray, int], ...]

    @classmethod
    def coded(cls, ids: pa.ChunkedArray) -> tuple[OneWidth, np.ndarray] | None:
        """The coding of a gold file's ids and their codes, or ``None`` when they differ in
        width, are empty, are not in one chunk (:mod:`scoring.engine.io` gives a gold file's
        ids in one) or when the codes would not fit in 63 bits. The bytes at each position are
        first read from a sample of the ids; that coding is kept if it codes every id."""
        if ids.num_chunks != 1 or not len(ids):
            return None
        chunk = ids.chunk(0)
        width = fixed_width(chunk)
        if width is None or width == 0 or width > WIDEST_CODED:
            return None
        matrix = byte_rows(chunk, width, unit=1)
        rows = max(1, BLOCK_ROWS // width)
        spread = np.unique(np.linspace(0, max(len(matrix) - rows, 0), SAMPLE_BLOCKS).astype(np.intp))
        for starts in (spread, range(0, len(matrix), rows)):
            coding = cls._from_bytes(chunk, matrix, width=width, starts=starts, rows=rows)
            if coding is None:
                return None
            codes = coding.encode(ids)
            if codes is not None:
                return coding, codes
        return None  # unreachable: a coding made from every id codes every id

    @classmethod
    def _from_bytes(
        cls, chunk: pa.StringArray, matrix: np.ndarray, *, width: int, starts: Sequence[int], rows: int
    ) -> OneWidth | None:
        cell = np.arange(width, dtype=np.intp) * 256  # byte b at position p counts in cell 256 p + b
        counts = np.zeros(256 * width, dtype=np.int64)
        for start in starts:
            cells = matrix[start : start + rows] + cell
            counts += np.bincount(cells.ravel(), minlength=256 * width)
        present = counts.reshape(width, 256) > 0
        radix = present.sum(axis=1)
        if np.prod([int(size) for size in radix], dtype=object) > LARGEST_CODE:
            return None
        digit_of = np.where(present, np.cumsum(present, axis=1) - 1, -1).astype(np.int64)
        one = radix == 1
        first = np.array(matrix[0])
        word_mask = np.where(one, 0xFF, 0).astype(np.uint8)
        word_value = np.where(one, first, 0).astype(np.uint8)
        unit = byte_rows(chunk.slice(0, 1), width).dtype.itemsize
        step_bytes = 2 if width % 2 == 0 else 1
        return cls(
            width=width,
            digit_of=digit_of,
            radix=radix,
            word_mask=word_mask.view(f"<u{unit}"),
            word_value=word_value.view(f"<u{unit}"),
            step_bytes=step_bytes,
            steps=_steps(digit_of, radix, step_bytes=step_bytes),
        )

    def encode(self, ids: pa.ChunkedArray) -> np.ndarray | None:
        """Each id's code, or ``None`` when an id has another width or a byte that the gold
        file does not have at its position."""
        codes = np.empty(len(ids), dtype=np.uint64)
        for start, block in blocks(ids):
            if fixed_width(block) != self.width:
                return None
            if not ((byte_rows(block, self.width) & self.word_mask) == self.word_value).all():
                return None
            matrix = byte_rows(block, self.width, unit=self.step_bytes)
            code = np.zeros(len(block), dtype=np.int64)
            for column, digits_of, size in self.steps:
                digits = digits_of[matrix[:, column]]
                if digits.min() < 0:
                    return None
                code *= size
                code += digits
            codes[start : start + len(block)] = code
        return codes


def _steps(digit_of: np.ndarray, radix: np.ndarray, *, step_bytes: int) -> tuple[tuple[int, np.ndarray, int], ...]:
    """The look-ups of :meth:`OneWidth.encode`: for each column of ``step_bytes`` positions
    that is not all constant, its index, the digit of every value it can hold (-1 where a
    position holds a byte the gold lacks there), and its radix. Two positions ``p, p + 1`` read
    as one little-endian integer ``b_p + 256 b_{p+1}`` have the digit ``d_p r_{p+1} + d_{p+1}``:
    the same code as two steps of one position."""
    steps = []
    values = np.arange(256**step_bytes)
    for column in range(len(radix) // step_bytes):
        positions = range(column * step_bytes, (column + 1) * step_bytes)
        if all(radix[position] == 1 for position in positions):
            continue
        digits, size, known = np.zeros(len(values), dtype=np.int64), 1, np.ones(len(values), dtype=bool)
        for shift, position in enumerate(positions):
            digit = digit_of[position][(values >> (8 * shift)) & 0xFF]
            known &= digit >= 0
            digits = digits * int(radix[position]) + digit
            size *= int(radix[position])
        steps.append((column, np.where(known, digits, -1).astype(np.int32), size))
    return tuple(steps)


IdCoder = PlainNumbers | OneWidth


def coded(ids: pa.ChunkedArray) -> tuple[IdCoder, np.ndarray] | None:
    """An exact coding of a gold file's ids and their codes, when they are plain numbers or of
    one width; ``None`` otherwise. Plain numbers are tried only when the first id is one."""
    if not len(ids):
        return None
    if ids[0].as_py().isascii() and ids[0].as_py().isdigit():
        numbers = PlainNumbers()
        codes = numbers.encode(ids)
        if codes is not None:
            return numbers, codes
    return OneWidth.coded(ids)


def _bits(n: int) -> int:
    return max(1, (n - 1).bit_length())


@dataclass(frozen=True, eq=False)
class CodeIndex:
    """Where each code is among the gold's: a table indexed by code (``slots``, from the
    smallest code ``first``) or the codes sorted with their row in the low bits (``packed``)."""

    n_items: int
    distinct: bool
    first: int = 0
    slots: np.ndarray | None = None
    packed: np.ndarray | None = None

    @classmethod
    def of(cls, codes: np.ndarray) -> CodeIndex | None:
        """The index of the gold's codes; ``None`` when they are neither dense nor narrow
        enough to share 64 bits with a row number."""
        n = len(codes)
        first, last = int(codes.min()), int(codes.max())
        if last - first < DENSE_SPAN * n:
            slots = np.full(last - first + 1, -1, dtype=np.int32 if n < 2**31 else np.int64)
            for start in range(0, n, BLOCK_ROWS):
                part = codes[start : start + BLOCK_ROWS]
                slots[(part - np.uint64(first)).astype(np.intp)] = np.arange(start, start + len(part))
            # A repeated code keeps one slot for two rows: fewer slots are filled than rows.
            return cls(n_items=n, distinct=int(np.count_nonzero(slots >= 0)) == n, first=first, slots=slots)
        bits = _bits(n)
        if last >= 1 << (64 - bits):
            return None
        packed = _packed(codes, bits)
        return cls(n_items=n, distinct=not len(ties(packed, bits)), packed=packed)

    def rows_of(self, codes: np.ndarray) -> np.ndarray | None:
        """For each code, the gold row that has it, when ``codes`` are the gold's in another
        order; ``None`` otherwise (an unknown id, a repeat or a missing one), which the exact
        look-up of :mod:`scoring.engine.io` then names."""
        if len(codes) != self.n_items:
            return None
        return self._rows_in_table(codes) if self.slots is not None else self._rows_by_sorting(codes)

    def _rows_in_table(self, codes: np.ndarray) -> np.ndarray | None:
        """Each code's slot; the rows found must then cover every gold row once (a repeated
        code leaves a gold row uncovered), where sorted codes pair one for one already."""
        rows = np.empty(len(codes), dtype=np.intp)
        for start in range(0, len(codes), BLOCK_ROWS):
            part = codes[start : start + BLOCK_ROWS]
            if int(part.min()) < self.first or int(part.max()) >= self.first + len(self.slots):
                return None
            found = self.slots[(part - np.uint64(self.first)).astype(np.intp)]
            if found.min() < 0:
                return None
            rows[start : start + len(part)] = found
        covered = np.zeros(self.n_items, dtype=bool)
        covered[rows] = True
        return rows if covered.all() else None

    def _rows_by_sorting(self, codes: np.ndarray) -> np.ndarray | None:
        bits = _bits(self.n_items)
        if int(codes.max()) >= 1 << (64 - bits):
            return None
        return paired_rows(_packed(codes, bits), self.packed, bits=bits)


def _packed(codes: np.ndarray, bits: int) -> np.ndarray:
    """The codes shifted up by ``bits`` with their row below, sorted (on every core)."""
    packed = np.empty(len(codes), dtype=np.uint64)
    for start in range(0, len(codes), BLOCK_ROWS):
        part = codes[start : start + BLOCK_ROWS] << np.uint64(bits)
        part |= np.arange(start, start + len(part), dtype=np.uint64)
        packed[start : start + len(part)] = part
    sort_on_all_cores(packed)
    return packed
