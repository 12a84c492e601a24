"""Exact integer codes of ids (:mod:`scoring.engine.id_codes`) and their use by :mod:`scoring.engine.io`.

What this proves: a coding that :func:`coded` gives a gold file is exact (two of its ids get
one code only when they are the same string), for plain numbers (code = value) and for ids of
one width (the mixed-radix number of each byte's rank at its position, written out here from
the docstring), in a slice, in blocks of a few rows, and whatever sample of blocks the coding
is first guessed from: a byte the sample misses is found by reading every row. Plain numbers
are exactly the spellings ``0`` and ``[1-9][0-9]{0,17}`` in ASCII; an id of one width is coded
against the gold's coding exactly when it has the gold's width and, at each position, a byte
the gold has there. A coding is refused where it would not fit in 63 bits or the ids are wider
than 64 bytes. :class:`CodeIndex` tells repeats in its table and in its sorted codes, gives
each code's gold row when the codes are the gold's in another order and ``None`` otherwise.
Read through :mod:`scoring.engine.io`, ids that are plain numbers, of one width or neither
give the same codes in any order, and a repeated, unknown or missing id raises the same error
on the same line as when no coding is used.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import id_codes, io
from scoring.engine import ids as id_matching
from scoring.engine.files import alignment
from scoring.engine.id_codes import CodeIndex, OneWidth, PlainNumbers
from tests.scoring.strategies import PROPERTY, fit

BLOCK_SIZES = st.sampled_from([1, 3, 7, id_matching.BLOCK_ROWS])
SAMPLES = st.sampled_from([1, 2, 3, id_codes.SAMPLE_BLOCKS])


def small_blocks(patch: pytest.MonkeyPatch, block_rows: int, sample_blocks: int | None = None) -> None:
    """Blocks of ``block_rows`` ids in both modules (id_codes imported the constant), and a
    sample of ``sample_blocks`` blocks."""
    patch.setattr(id_matching, "BLOCK_ROWS", block_rows)
    patch.setattr(id_codes, "BLOCK_ROWS", block_rows)
    if sample_blocks is not None:
        patch.setattr(id_codes, "SAMPLE_BLOCKS", sample_blocks)


def one_chunk(values: list[str], start: int = 0) -> pa.ChunkedArray:
    """The ids in one chunk, a slice of a longer array (its first ``start`` ids dropped)."""
    whole = pa.array(["x" * 9] * start + values, pa.string()).slice(start)
    return pa.chunked_array([whole], pa.string())


def in_chunks(values: list[str], cuts: list[int]) -> pa.ChunkedArray:
    bounds = [0, *sorted(min(cut, len(values)) for cut in cuts), len(values)]
    return pa.chunked_array([pa.array(values[a:b], pa.string()) for a, b in itertools.pairwise(bounds)], pa.string())


CUTS = st.lists(st.integers(0, 40), max_size=3)

# --- the reference codings, from the module's docstring ------------------------------------------

_PLAIN = re.compile(r"0|[1-9][0-9]{0,17}")


def is_plain(text: str) -> bool:
    """A plain number: ASCII digits, no leading zero but ``0`` itself, at most 18 digits."""
    return _PLAIN.fullmatch(text) is not None


def position_bytes(values: list[str]) -> list[list[int]]:
    """The distinct bytes at each position of ids of one width, in byte order."""
    data = [value.encode() for value in values]
    return [sorted({item[position] for item in data}) for position in range(len(data[0]))]


def mixed_radix(value: str, bytes_at: list[list[int]]) -> int:
    """The id's code: one digit per position (the first the most significant), the rank of its
    byte among the gold's bytes at that position."""
    code = 0
    for position, byte in enumerate(value.encode()):
        code = code * len(bytes_at[position]) + bytes_at[position].index(byte)
    return code


def codable(value: str, bytes_at: list[list[int]]) -> bool:
    data = value.encode()
    return len(data) == len(bytes_at) and all(byte in bytes_at[p] for p, byte in enumerate(data))


def assert_exact(values: list[str], codes: np.ndarray) -> None:
    """code(a) == code(b) exactly when a == b: the pairs (id, code) are as many as either."""
    pairs = set(zip(values, codes.tolist(), strict=True))
    assert len(pairs) == len(set(values)) == len(set(codes.tolist()))


# --- exactness -------------------------------------------------------------------------------

ID_LETTERS = ["a", "b", "0", "1", "\x00", "é", "€"]


@st.composite
def one_width_ids(draw: st.DrawFn, *, max_width: int = 64) -> list[str]:
    """Ids of one width in bytes (multi-byte letters and NUL among them), often with repeats."""
    width = draw(st.integers(1, max_width))
    texts = draw(st.lists(st.text(alphabet=ID_LETTERS, max_size=width), min_size=1, max_size=25))
    values = [fit(text, width) for text in texts]
    values += draw(st.lists(st.sampled_from(values), max_size=5))
    return draw(st.permutations(values))


@PROPERTY
@given(values=one_width_ids(), start=st.integers(0, 3), block_rows=BLOCK_SIZES, sample_blocks=SAMPLES)
def test_ids_of_one_width_get_exact_codes(values: list[str], start: int, block_rows: int, sample_blocks: int) -> None:
    """Plain numbers are coded by their value; other ids of one width by the mixed-radix number
    of their bytes' ranks, whatever the slice, the blocks and the sample, unless those numbers
    would not fit in 63 bits. Either way two ids share a code only when they are equal."""
    with pytest.MonkeyPatch.context() as patch:
        small_blocks(patch, block_rows, sample_blocks)
        result = id_codes.coded(one_chunk(values, start))
    bytes_at = position_bytes(values)
    if all(is_plain(value) for value in values):
        assert isinstance(result[0], PlainNumbers)
        assert result[1].tolist() == [int(value) for value in values]
    elif math.prod(len(found) for found in bytes_at) > id_codes.LARGEST_CODE:
        assert result is None
        return
    else:
        assert isinstance(result[0], OneWidth)
        assert result[1].tolist() == [mixed_radix(value, bytes_at) for value in values]
    assert result[1].dtype == np.uint64
    assert_exact(values, result[1])


NUMBERS = st.one_of(st.integers(0, 30), st.integers(0, 10**18 - 1))


@PROPERTY
@given(numbers=st.lists(NUMBERS, min_size=1, max_size=30), cuts=CUTS, block_rows=BLOCK_SIZES)
def test_numbers_written_plainly_are_coded_by_their_value(numbers: list[int], cuts: list[int], block_rows: int) -> None:
    """In any chunks and blocks: a code per id, the number itself (so exact), up to 18 digits."""
    values = [str(number) for number in numbers]
    with pytest.MonkeyPatch.context() as patch:
        small_blocks(patch, block_rows)
        coder, codes = id_codes.coded(in_chunks(values, cuts))
    assert isinstance(coder, PlainNumbers)
    assert codes.tolist() == numbers
    assert_exact(values, codes)


SPELLING = st.text(alphabet="0123456789+- .ex\u0661\uff17\u00b2", max_size=20)


@PROPERTY
@given(
    before=st.lists(NUMBERS.map(str), max_size=8),
    text=SPELLING,
    after=st.lists(NUMBERS.map(str), max_size=3),
    cuts=CUTS,
    block_rows=BLOCK_SIZES,
)
def test_plain_numbers_are_exactly_the_plain_spellings(
    before: list[str], text: str, after: list[str], cuts: list[int], block_rows: int
) -> None:
    """A list is coded as numbers exactly when every id is ``0`` or ``[1-9][0-9]{0,17}`` in
    ASCII (signs, spaces, exponents, Arabic-Indic, full-width or superscript digits, leading
    zeros and 19 digits are not), wherever the other spelling is."""
    values = [*before, text, *after]
    with pytest.MonkeyPatch.context() as patch:
        small_blocks(patch, block_rows)
        codes = PlainNumbers().encode(in_chunks(values, cuts))
    if all(is_plain(value) for value in values):
        assert codes.tolist() == [int(value) for value in values]
    else:
        assert codes is None


NOT_PLAIN = ["007", "00", "+7", "-7", "-0", " 7", "7 ", "1e3", "0x10", "\u0661\u0662", "", "1" + "0" * 18, "9" * 19]


@pytest.mark.parametrize("block_rows", [3, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize("spelling", NOT_PLAIN)
def test_a_number_not_written_plainly_has_no_code(
    monkeypatch: pytest.MonkeyPatch, spelling: str, block_rows: int
) -> None:
    """One such id, alone, first, or in the last block of the second chunk: no codes at all."""
    small_blocks(monkeypatch, block_rows)
    numbers = PlainNumbers()
    assert numbers.encode(one_chunk([spelling])) is None
    assert numbers.encode(in_chunks([spelling, "1", "2"], [1])) is None
    assert numbers.encode(in_chunks([str(k) for k in range(1, 9)] + [spelling], [4])) is None


@pytest.mark.parametrize("spelling", ["0", "7", "10", "100", "999999999999999999"])
def test_numbers_written_plainly_are_their_code(spelling: str) -> None:
    assert PlainNumbers().encode(in_chunks(["5", spelling], [1])).tolist() == [5, int(spelling)]


CODERS = {
    # name: (gold ids, which coder, or None)
    "plain numbers": (["5", "3", "5"], PlainNumbers),
    "zero-padded numbers": (["0001", "0002"], OneWidth),
    "a number first, then letters": (["12", "ab"], OneWidth),
    "letters first, then numbers": (["x", "1"], OneWidth),
    "an Arabic-Indic digit first": (["\u0661", "12"], OneWidth),  # two bytes each
    "mixed widths, a leading zero": (["007", "7"], None),
    "mixed widths, not numbers": (["ab", "abc"], None),
    "mixed widths, a number first": (["1", "10", "ab"], None),
    "mixed widths, a letter first": (["x", "1", "10"], None),
    "wider than 64 bytes": (["x" * 64 + "a", "x" * 64 + "b"], None),
    "64 bytes": (["x" * 63 + "a", "x" * 63 + "b"], OneWidth),
}


@pytest.mark.parametrize(("values", "coder"), CODERS.values(), ids=CODERS)
def test_which_coding_ids_get(values: list[str], coder: type | None) -> None:
    result = id_codes.coded(one_chunk(values))
    if coder is None:
        assert result is None
    else:
        assert type(result[0]) is coder
        assert_exact(values, result[1])


def test_ids_that_are_all_empty_get_a_coding_or_none() -> None:
    """Empty ids are of one width, 0 bytes (io refuses them before it codes any id)."""
    result = id_codes.coded(one_chunk(["", ""]))
    assert result is None or result[1].tolist() == [0, 0]


def test_a_coding_that_would_not_fit_in_63_bits_is_refused() -> None:
    """Two bytes at each of 63 positions make codes up to 2**63 - 1, which fit; 64 positions,
    or three bytes at each of 64 positions, would not."""
    coder, codes = id_codes.coded(one_chunk(["a" * 63, "b" * 63, "a" * 63]))
    assert isinstance(coder, OneWidth)
    assert codes.tolist() == [0, 2**63 - 1, 0]
    assert id_codes.coded(one_chunk(["a" * 64, "b" * 64])) is None
    assert id_codes.coded(one_chunk(["a" * 64, "b" * 64, "c" * 64])) is None
    assert id_codes.coded(one_chunk(["ab" * 32, "bc" * 32, "ca" * 32, "aa" * 32])) is None


# --- encoding a prediction file's ids with the gold's coding -----------------------------------


@st.composite
def gold_and_predicted(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    """Gold ids of one width (at most 16 bytes, so that the coding always fits), and predicted
    ids: gold ids, gold ids spliced at a byte (often coded, often not gold ids), other ids of
    the width, and now and then an id of another width."""
    gold = draw(one_width_ids(max_width=16))
    width = len(gold[0].encode())
    spliced = []
    for _ in range(draw(st.integers(0, 4))):
        a, b = draw(st.sampled_from(gold)), draw(st.sampled_from(gold))
        cut = draw(st.integers(0, width))
        with contextlib.suppress(UnicodeDecodeError):
            spliced.append((a.encode()[:cut] + b.encode()[cut:]).decode())
    other = draw(st.lists(st.text(alphabet=ID_LETTERS, max_size=width).map(lambda text: fit(text, width)), max_size=2))
    wider = draw(st.lists(st.text(alphabet=ID_LETTERS, min_size=1, max_size=3).map(lambda t: gold[0] + t), max_size=1))
    predicted = draw(st.lists(st.sampled_from(gold), max_size=20)) + spliced
    predicted += draw(st.sampled_from([[], other, wider]))
    return gold, draw(st.permutations(predicted))


@PROPERTY
@given(pair=gold_and_predicted(), cuts=CUTS, block_rows=BLOCK_SIZES)
def test_predicted_ids_are_coded_as_the_gold_codes_them(
    pair: tuple[list[str], list[str]], cuts: list[int], block_rows: int
) -> None:
    """No codes when an id has another width or a byte the gold has not at its position (even
    a byte the gold has elsewhere); otherwise each id's code is the one the gold's coding gives
    that string, so a gold id gets its gold code and no other id does."""
    gold, predicted = pair
    with pytest.MonkeyPatch.context() as patch:
        small_blocks(patch, block_rows, sample_blocks=2)
        coder, gold_codes = OneWidth.coded(one_chunk(gold))
        codes = coder.encode(in_chunks(predicted, cuts))
    bytes_at = position_bytes(gold)
    if all(codable(value, bytes_at) for value in predicted):
        assert codes.tolist() == [mixed_radix(value, bytes_at) for value in predicted]
        code_of = dict(zip(gold, gold_codes.tolist(), strict=True))
        gold_code_set = set(code_of.values())
        for value, code in zip(predicted, codes.tolist(), strict=True):
            assert code_of.get(value, code) == code
            assert (code in gold_code_set) == (value in code_of)
    else:
        assert codes is None


DOCS = [f"doc-{k:04d}" for k in range(0, 1000, 7)]

PREDICTED_IDS = {
    # name: (gold ids, predicted ids, whether they are coded)
    "gold ids": (DOCS, [DOCS[5], DOCS[0]], True),
    "a combination of the gold's bytes": (DOCS, ["doc-0999", "doc-0000"], True),
    "the shared prefix changed": (DOCS, [DOCS[0], "dox-0001"], False),
    "the shared prefix in another case": (DOCS, ["Doc-0007"], False),
    "the first byte changed": (DOCS, ["xoc-0007"], False),
    "a byte of the gold at other positions only": (["ax", "by"], ["xa"], False),
    "a byte the gold has at another position only, a varying one": (["ax", "by"], ["ay", "bx", "ab"], False),
    "a combination of varying bytes": (["ax", "by"], ["ay", "bx"], True),
    "the prefix changed past the first word": (
        [f"document-{k:07d}" for k in range(30)],
        ["document_0000001"],
        False,
    ),
    "a byte changed in the varying part past the first word": (
        [f"document-{k:07d}" for k in range(30)],
        ["document-000000a"],
        False,
    ),
    "a longer id": (DOCS, [DOCS[0], DOCS[1] + "0"], False),
    "a shorter id": (DOCS, [DOCS[0], DOCS[1][:-1]], False),
    "a multi-byte letter for two bytes of the gold": (["éa", "abb"], ["éa", "éb", "abb", "aba"], True),
    "a multi-byte letter cut differently": (["éa", "abb"], ["aé"], False),
}


@pytest.mark.parametrize("block_rows", [1, 3, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize(("gold", "predicted", "coded"), PREDICTED_IDS.values(), ids=PREDICTED_IDS)
def test_predicted_ids_the_gold_cannot_have_get_no_codes(
    monkeypatch: pytest.MonkeyPatch, gold: list[str], predicted: list[str], coded: bool, block_rows: int
) -> None:
    small_blocks(monkeypatch, block_rows)
    coder, _ = OneWidth.coded(one_chunk(gold))
    for ids in (one_chunk(predicted), in_chunks(predicted * 3, [1, 4])):
        codes = coder.encode(ids)
        if coded:
            bytes_at = position_bytes(gold)
            assert codes.tolist() == [mixed_radix(value, bytes_at) for value in ids.to_pylist()]
        else:
            assert codes is None


# --- the coding is first guessed from a sample of blocks --------------------------------------


def guesses(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Record the first rows of the blocks each coding of OneWidth is made from."""
    made: list[list[int]] = []
    original = OneWidth._from_bytes

    def spy(cls: type, chunk: pa.StringArray, matrix: np.ndarray, **kwargs: object) -> OneWidth | None:
        made.append(list(kwargs["starts"]))
        return original(chunk, matrix, **kwargs)

    monkeypatch.setattr(OneWidth, "_from_bytes", classmethod(spy))
    return made


RARE_BYTES = {
    # name: gold ids, some byte of which only a few rows have
    "sorted, 9999 last": [f"{k:04d}" for k in range(1000)] + ["9999"],
    "one row in the middle": [f"{k:04d}" for k in range(500)] + ["z000"] + [f"{k:04d}" for k in range(500, 1000)],
    "a multi-byte letter in the middle": [f"a{k:03d}" for k in range(300)] + ["€0"] + [f"b{k:03d}" for k in range(300)],
}


@pytest.mark.parametrize("block_rows", [3, 7, 40])
@pytest.mark.parametrize("values", RARE_BYTES.values(), ids=RARE_BYTES)
def test_a_byte_the_sample_misses_is_found_in_all_rows(
    monkeypatch: pytest.MonkeyPatch, values: list[str], block_rows: int
) -> None:
    """Two sampled blocks miss bytes that the rows between them have: that coding does not code
    every gold id, so the coding is made again from every row, and codes them all."""
    small_blocks(monkeypatch, block_rows, sample_blocks=2)
    made = guesses(monkeypatch)
    coder, codes = id_codes.coded(one_chunk(values))
    bytes_at = position_bytes(values)
    assert codes.tolist() == [mixed_radix(value, bytes_at) for value in values]
    assert len(made) == 2
    assert len(made[0]) == 2
    rows = max(1, block_rows // len(values[0].encode()))
    assert made[1] == list(range(0, len(values), rows))
    assert coder.encode(in_chunks(values[::-1], [5, 500])).tolist() == codes[::-1].tolist()


def test_a_sample_that_has_every_byte_is_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    small_blocks(monkeypatch, 3, sample_blocks=4)
    made = guesses(monkeypatch)
    values = ["ab", "ba", "bb", "aa"] * 50
    _, codes = id_codes.coded(one_chunk(values))
    assert codes.tolist() == [1, 2, 3, 0] * 50
    assert len(made) == 1


# --- the index of the gold's codes -----------------------------------------------------------

SPREADS = st.sampled_from([1, 10**6])


@PROPERTY
@given(
    small=st.lists(st.integers(0, 40), min_size=1, max_size=40),
    spread=SPREADS,
    first=st.sampled_from([0, 3, 10**12]),
    block_rows=BLOCK_SIZES,
)
def test_the_index_tells_whether_codes_repeat(small: list[int], spread: int, first: int, block_rows: int) -> None:
    """In a table (dense codes) or in sorted codes (spread out): ``distinct`` is whether no code
    repeats."""
    codes = np.array([first + spread * value for value in small], dtype=np.uint64)
    with pytest.MonkeyPatch.context() as patch:
        small_blocks(patch, block_rows)
        index = CodeIndex.of(codes)
    dense = int(codes.max()) - int(codes.min()) < id_codes.DENSE_SPAN * len(codes)
    assert (index.slots is not None) == dense
    assert (index.packed is not None) == (not dense)
    assert index.distinct == (len(set(small)) == len(small))
    assert index.n_items == len(codes)


@st.composite
def gold_and_predicted_codes(draw: st.DrawFn) -> tuple[list[int], list[int]]:
    spread, first = draw(SPREADS), draw(st.sampled_from([0, 5, 10**12]))
    gold = [
        first + spread * value for value in draw(st.lists(st.integers(0, 40), min_size=1, max_size=30, unique=True))
    ]
    predicted = list(draw(st.permutations(gold)))
    change = draw(st.sampled_from(["none", "repeat", "unknown", "drop", "add"]))
    place = draw(st.integers(0, len(predicted) - 1))
    unknown = draw(st.sampled_from([0, 1, 41, 2 * 10**12])) * spread
    if change == "repeat":
        predicted[place] = draw(st.sampled_from(gold))
    elif change == "unknown":
        predicted[place] = unknown
    elif change == "drop":
        del predicted[place]
    elif change == "add":
        predicted.insert(place, draw(st.sampled_from([*gold, unknown])))
    return gold, predicted


@PROPERTY
@given(pair=gold_and_predicted_codes(), block_rows=BLOCK_SIZES)
def test_rows_are_found_exactly_when_the_codes_are_the_golds(
    pair: tuple[list[int], list[int]], block_rows: int
) -> None:
    """Each code's gold row when the predicted codes are the gold's in some order; ``None`` for
    a repeat, an unknown code, one missing or one more, in the table and in sorted codes."""
    gold, predicted = pair
    with pytest.MonkeyPatch.context() as patch:
        small_blocks(patch, block_rows)
        index = CodeIndex.of(np.array(gold, dtype=np.uint64))
        rows = index.rows_of(np.array(predicted, dtype=np.uint64))
    if sorted(predicted) == sorted(gold):
        assert rows.tolist() == [gold.index(code) for code in predicted]
    else:
        assert rows is None


def table_and_sorted(codes: list[int]) -> list[tuple[CodeIndex, list[int]]]:
    """An index of the codes in a table, and one of the codes times a million, sorted."""
    dense = CodeIndex.of(np.array(codes, dtype=np.uint64))
    spread = [code * 10**6 for code in codes]
    sparse = CodeIndex.of(np.array(spread, dtype=np.uint64))
    assert dense.slots is not None and sparse.packed is not None
    return [(dense, codes), (sparse, spread)]


GOLD_CODES = [4, 0, 6, 2, 8, 10]


@pytest.mark.parametrize("block_rows", [1, 4, id_matching.BLOCK_ROWS])
def test_rows_of_a_permutation_are_the_permutation(monkeypatch: pytest.MonkeyPatch, block_rows: int) -> None:
    small_blocks(monkeypatch, block_rows)
    order = np.random.default_rng(0).permutation(len(GOLD_CODES))
    for index, codes in table_and_sorted(GOLD_CODES):
        assert index.distinct
        assert index.rows_of(np.array([codes[k] for k in order], dtype=np.uint64)).tolist() == order.tolist()


NOT_THE_GOLD_CODES = {
    "one fewer": [4, 0, 6, 2, 8],
    "one more": [4, 0, 6, 2, 8, 10, 12],
    "unknown inside the table": [4, 0, 6, 2, 8, 5],
    "unknown above": [4, 0, 6, 2, 8, 11],
    "far above": [4, 0, 6, 2, 8, 10**9],
    "a repeat": [4, 0, 6, 2, 8, 8],
    "a repeat first": [4, 4, 6, 2, 8, 10],
}


@pytest.mark.parametrize("block_rows", [1, 4, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize("predicted", NOT_THE_GOLD_CODES.values(), ids=NOT_THE_GOLD_CODES)
def test_codes_that_are_not_the_golds_have_no_rows(
    monkeypatch: pytest.MonkeyPatch, predicted: list[int], block_rows: int
) -> None:
    small_blocks(monkeypatch, block_rows)
    for index, codes in table_and_sorted(GOLD_CODES):
        scale = codes[0] // GOLD_CODES[0]
        assert index.rows_of(np.array([scale * code for code in predicted], dtype=np.uint64)) is None


def test_an_unknown_code_below_the_table_has_no_row() -> None:
    gold = np.array([5, 6, 7], dtype=np.uint64)
    assert CodeIndex.of(gold).rows_of(np.array([6, 7, 1], dtype=np.uint64)) is None
    assert CodeIndex.of(gold).rows_of(np.array([7, 5, 6], dtype=np.uint64)).tolist() == [2, 0, 1]


def test_codes_too_wide_to_share_a_word_with_their_rows_are_not_indexed() -> None:
    """Three codes need two bits for their rows: a code of 2**62 leaves them none."""
    assert CodeIndex.of(np.array([0, 2**62, 5], dtype=np.uint64)) is None
    assert CodeIndex.of(np.array([0, 2**63 - 1], dtype=np.uint64)) is not None  # one bit for two rows
    index = CodeIndex.of(np.array([0, 2**62 - 1, 5], dtype=np.uint64))
    assert index.distinct
    assert index.rows_of(np.array([5, 0, 2**62 - 1], dtype=np.uint64)).tolist() == [2, 0, 1]
    assert index.rows_of(np.array([5, 0, 2**62], dtype=np.uint64)) is None
    spread = CodeIndex.of(np.array([0, 10**6, 2 * 10**6], dtype=np.uint64))
    # Shifted up by two bits, 2 * 10**6 + 2**62 would wrap round to the gold's 2 * 10**6.
    assert spread.rows_of(np.array([2 * 10**6 + 2**62, 0, 10**6], dtype=np.uint64)) is None
    assert spread.rows_of(np.array([2 * 10**6, 0, 10**6], dtype=np.uint64)).tolist() == [2, 0, 1]
    assert not CodeIndex.of(np.array([2**62 - 1, 0, 2**62 - 1], dtype=np.uint64)).distinct


# --- through scoring.engine.io ---------------------------------------------------------------

KEPT = [k for k in range(1, 202) if k != 100]
"""200 numbers, 100 left out (an unknown id inside the range of the gold's codes)."""


def shuffled(values: list[str], seed: int) -> list[str]:
    return [values[k] for k in np.random.default_rng(seed).permutation(len(values))]


def hex_ids(count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return list(dict.fromkeys(f"{value:08x}" for value in rng.integers(0, 2**32, size=count)))


def another_last_letter(values: list[str]) -> str:
    """An id that is not among ``values``: the first one with another last letter that they have."""
    return next(values[0][:-1] + letter for letter in "0123456789abcdef" if values[0][:-1] + letter not in values)


HEX = hex_ids(200, 4)


def binary_ids(count: int) -> list[str]:
    """63-byte ids with two bytes at each position: codes up to 2**63 - 1, too wide to index."""
    return ["a" * 63, "b" * 63] + [f"{k:063b}".replace("0", "a").replace("1", "b") for k in range(1, count - 1)]


ID_KINDS = {
    # name: (gold ids, the coder the gold file gets, ids not in the gold file: coded, not coded)
    "plain numbers": (shuffled([str(k) for k in KEPT], 1), PlainNumbers, ["100", "5000", "0"], ["0100", "+7"]),
    "plain numbers, spread out": (
        shuffled([str(k * 10**9) for k in KEPT], 2),
        PlainNumbers,
        ["100000000000", "7"],
        ["7.0", "-1000000000"],
    ),
    "one width": (
        shuffled([f"doc-{k:04x}" for k in KEPT], 3),
        OneWidth,
        ["doc-0064", "doc-00cf", "doc-0000"],
        ["doc-00g0", "dox-0001", "doc-001"],
    ),
    "one width, spread out": (HEX, OneWidth, [another_last_letter(HEX)], ["zzzzzzzz", "0000000"]),
    "one width, too wide to index": (shuffled(binary_ids(200), 5), type(None), [], ["c" * 63, "a" * 54 + "bbbbbbbbb"]),
    "neither": (shuffled([f"d{k}" for k in KEPT], 6), type(None), [], ["d100", "e5"]),
}


def test_the_unknown_ids_of_each_kind_are_coded_or_not_as_said() -> None:
    """So that the cases below try an unknown id that the gold's coding codes and one it does not,
    with the gold's codes in a table (dense) and sorted (spread out)."""
    for name, (values, coder, coded_unknown, uncoded_unknown) in ID_KINDS.items():
        result = id_codes.coded(one_chunk(values))
        if coder is type(None):
            assert result is None or CodeIndex.of(result[1]) is None
            continue
        assert type(result[0]) is coder
        assert (CodeIndex.of(result[1]).slots is not None) == ("spread out" not in name)
        for unknown in coded_unknown:
            assert result[0].encode(one_chunk([unknown])) is not None
        for unknown in uncoded_unknown:
            assert result[0].encode(one_chunk([unknown])) is None


def label_file(ids: list[str], labels: list[str]) -> bytes:
    return ("id,label\n" + "".join(f"{item},{label}\n" for item, label in zip(ids, labels, strict=True))).encode()


def soft_file(ids: list[str], rows: np.ndarray) -> bytes:
    lines = [f"{item},{row[0]!r},{row[1]!r},{row[2]!r}\n" for item, row in zip(ids, rows.tolist(), strict=True)]
    return ("id,a,b,c\n" + "".join(lines)).encode()


LETTERS = ("a", "b", "c")


@pytest.mark.parametrize("block_rows", [7, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize(("ids", "coder"), [kind[:2] for kind in ID_KINDS.values()], ids=ID_KINDS)
def test_predictions_in_any_order_read_to_the_same_codes(
    monkeypatch: pytest.MonkeyPatch, ids: list[str], coder: type, block_rows: int
) -> None:
    small_blocks(monkeypatch, block_rows, sample_blocks=2)
    rng = np.random.default_rng(len(ids))
    gold = io.read_labels(label_file(ids, rng.choice(LETTERS, size=len(ids)).tolist()))
    assert type(gold.id_coder) is coder
    assert (gold.code_index is None) == (coder is type(None))
    predicted = rng.choice(LETTERS, size=len(ids)).tolist()
    in_order = io.read_predictions(label_file(ids, predicted), gold=gold).codes
    assert in_order.tolist() == [LETTERS.index(label) for label in predicted]
    order = rng.permutation(len(ids))
    again = io.read_predictions(label_file([ids[k] for k in order], [predicted[k] for k in order]), gold=gold)
    assert again.codes.tolist() == in_order.tolist()
    rows = rng.dirichlet(np.ones(3), size=len(ids))
    soft = io.read_predictions(soft_file([ids[k] for k in order], rows[order]), gold=gold)
    np.testing.assert_allclose(soft.probabilities, rows / rows.sum(axis=1, keepdims=True), rtol=1e-12)


def without_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read as before id codes: no gold file gets a coding."""
    monkeypatch.setattr(alignment, "coded", lambda ids: None)


def error_of(read: Callable[..., object], data: bytes, **kwargs: object) -> io.InputFileError:
    with pytest.raises(io.InputFileError) as info:
        read(data, name="run.csv", **kwargs)
    return info.value


def described(error: io.InputFileError) -> tuple[object, ...]:
    return error.template, error.line, error.params, str(error)


def repeated(values: list[str], row: int, first: int) -> list[str]:
    """The ids with the id of row ``first`` written again at row ``row``."""
    return [*values[:row], values[first], *values[row:]]


GOLD_REPEATS = {
    # name: (gold ids, the repeat's line, the first line)
    "plain numbers": (["5", "3", "5"], 4, 2),
    "plain numbers, the repeat last in a block": (["5", "3", "1", "9", "8", "7", "2", "1"], 9, 4),
    "one width": (["ab", "cd", "ab"], 4, 2),
    "one width, the repeat next to it": (["ab", "cd", "cd", "ab"], 4, 3),
    "a NUL byte": (["a\x00", "b\x00", "a\x00"], 4, 2),
    "plain numbers, many": (repeated([str(k) for k in KEPT], 150, 37), 152, 39),
    "plain numbers, spread out, many": (repeated(ID_KINDS["plain numbers, spread out"][0], 99, 98), 101, 100),
    "one width, many": (repeated(ID_KINDS["one width"][0], 199, 0), 201, 2),
    "one width, spread out, many": (repeated(ID_KINDS["one width, spread out"][0], 120, 7), 122, 9),
    "one width, too wide to index": (["a" * 63, "b" * 63, "a" * 63], 4, 2),
    "neither, many": (repeated(ID_KINDS["neither"][0], 50, 49), 52, 51),
}


@pytest.mark.parametrize("block_rows", [3, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize(("ids", "line", "first_line"), GOLD_REPEATS.values(), ids=GOLD_REPEATS)
def test_a_repeated_gold_id_is_named_on_its_line(
    monkeypatch: pytest.MonkeyPatch, ids: list[str], line: int, first_line: int, block_rows: int
) -> None:
    small_blocks(monkeypatch, block_rows, sample_blocks=2)
    data = label_file(ids, ["a"] * len(ids))
    error = error_of(io.read_labels, data)
    assert error.template is io.DUPLICATE_ID
    assert (error.line, error.params) == (line, {"id": ids[line - 2], "first_line": first_line})
    without_codes(monkeypatch)
    assert described(error_of(io.read_labels, data)) == described(error)


def prediction_problems(name: str) -> dict[str, tuple[list[str], str, int | None, dict]]:
    """Predicted ids of one kind that are not its gold ids: (ids, template, line, parameters)."""
    gold, _, coded_unknown, uncoded_unknown = ID_KINDS[name]
    ids = shuffled(gold, 7)
    problems = {}
    for unknown in coded_unknown + uncoded_unknown:
        problems[f"unknown {unknown!r}"] = ([*ids[:5], unknown, *ids[6:]], io.UNKNOWN_ID, 7, {"id": unknown})
        problems[f"unknown {unknown!r}, one more"] = ([*ids, unknown], io.UNKNOWN_ID, len(ids) + 2, {"id": unknown})
    missing = {"count": 1, "id": ids[5], "gold_line": gold.index(ids[5]) + 2}
    problems["missing"] = ([*ids[:5], *ids[6:]], io.MISSING_IDS, None, missing)
    problems["missing the last"] = (ids[:-1], io.MISSING_IDS, None, {"count": 1, "id": ids[-1]})
    problems["repeated"] = ([*ids[:6], ids[2], *ids[7:]], io.DUPLICATE_ID, 8, {"id": ids[2], "first_line": 4})
    problems["repeated, one more"] = (ids + ids[-1:], io.DUPLICATE_ID, len(ids) + 2, {"first_line": len(ids) + 1})
    return problems


PREDICTION_PROBLEMS = {
    f"{kind}: {problem}": (kind, *case) for kind in ID_KINDS for problem, case in prediction_problems(kind).items()
}


@pytest.mark.parametrize("block_rows", [3, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize(
    ("kind", "ids", "template", "line", "params"), PREDICTION_PROBLEMS.values(), ids=PREDICTION_PROBLEMS
)
def test_predicted_ids_that_are_not_the_gold_ids_are_named_as_before(
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    ids: list[str],
    template: str,
    line: int | None,
    params: dict,
    block_rows: int,
) -> None:
    """An unknown id (coded or not), a missing one and a repeat: the error names it on its line,
    exactly as when no coding is used."""
    small_blocks(monkeypatch, block_rows, sample_blocks=2)
    gold_ids = ID_KINDS[kind][0]
    gold = io.read_labels(label_file(gold_ids, ["a"] * len(gold_ids)))
    data = label_file(ids, ["a"] * len(ids))
    error = error_of(io.read_predictions, data, gold=gold)
    assert error.template is template
    assert error.line == line
    assert params.items() <= error.params.items()
    without_codes(monkeypatch)
    uncoded = io.read_labels(label_file(gold_ids, ["a"] * len(gold_ids)))
    assert uncoded.code_index is None
    assert described(error_of(io.read_predictions, data, gold=uncoded)) == described(error)
