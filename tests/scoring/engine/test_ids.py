"""Matching ids by sorted 64-bit keys (:mod:`scoring.engine.ids`).

What this proves: an id's key depends on its bytes alone, not on where Arrow put it (chunk,
slice, last bytes of a buffer); the pairing found through keys is always confirmed on the
strings, so keys that collide (forced here by keeping only a few bits of them) cost a repair or
a fall back to Arrow, never a wrong match; and the uniqueness check agrees with a set.
Keys of ids of one width (read with a stride) equal those of the general reading. ``increasing``
says ``True`` only of ids that strictly increase byte by byte or by length first, and says it
of every such list but those with neighbours differing only by NUL bytes at their end, in any
chunks, slice or blocks. Sorting a part per core sorts. The bytes of paired ids are compared to
the last one, for ids of one width and of many: an id changed only at its end is caught.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import ids as id_matching
from tests.scoring.strategies import PROPERTY, fit

ID_TEXT = st.text(alphabet=["a", "b", "0", "\x00", "é", "€"], max_size=20)


def chunked(values: list[str], cut: int) -> pa.ChunkedArray:
    cut = min(cut, len(values))
    return pa.chunked_array([pa.array(values[:cut], pa.string()), pa.array(values[cut:], pa.string())])


@PROPERTY
@given(values=st.lists(ID_TEXT, min_size=1, max_size=30), cut=st.integers(0, 30), start=st.integers(0, 5))
def test_a_key_depends_on_the_id_alone(values: list[str], cut: int, start: int) -> None:
    """The same ids, in one chunk, in two, or as a slice of a longer array: the same keys; and
    different ids get different keys here (a collision among so few would be a broken mix)."""
    whole = id_matching.id_keys(pa.chunked_array([pa.array(values, pa.string())]))
    assert np.array_equal(id_matching.id_keys(chunked(values, cut)), whole)
    sliced = pa.chunked_array([pa.array(["x" * 9] * start + values, pa.string()).slice(start)])
    assert np.array_equal(id_matching.id_keys(sliced), whole)
    assert len(set(whole.tolist())) == len(set(values))


@pytest.fixture
def short_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep four bits of every key: most ids then share a shortened key with others."""
    monkeypatch.setattr(id_matching, "_row_bits", lambda n: 60)


def shuffled_pairs(count: int, seed: int) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray]:
    gold = [f"doc-{k}" for k in range(count)]
    order = np.random.default_rng(seed).permutation(count)
    predicted = [gold[k] for k in order]
    return chunked(gold, count // 3), chunked(predicted, count // 2), order


@pytest.mark.usefixtures("short_keys")
def test_ids_whose_keys_collide_are_paired_by_their_strings() -> None:
    gold, predicted, order = shuffled_pairs(300, seed=1)
    rows = id_matching.gold_rows(predicted, gold_ids=gold, gold_order=id_matching.key_order(gold))
    assert rows.tolist() == order.tolist()


def test_too_many_collisions_are_left_to_an_exact_look_up(short_keys: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(id_matching, "MAX_REPAIRS", 5)
    gold, predicted, _ = shuffled_pairs(300, seed=2)
    assert id_matching.gold_rows(predicted, gold_ids=gold, gold_order=id_matching.key_order(gold)) is None


@pytest.mark.parametrize(
    "predicted",
    [["b", "a"], ["a", "b", "c", "d"], ["a", "a", "b"], ["a", "x", "c"], ["c", "b", "a", "a"]],
    ids=["one missing", "one more", "a repeat", "an unknown id", "a repeat, one more"],
)
def test_ids_that_are_not_the_gold_ids_are_not_paired(predicted: list[str]) -> None:
    gold = chunked(["a", "b", "c"], 1)
    ids = pa.chunked_array([pa.array(predicted, pa.string())])
    assert id_matching.gold_rows(ids, gold_ids=gold, gold_order=id_matching.key_order(gold)) is None


@PROPERTY
@given(values=st.lists(st.text(alphabet="ab\x00", max_size=3), min_size=1, max_size=40))
def test_distinct_ids_are_told_even_when_keys_collide(values: list[str]) -> None:
    ids = chunked(values, len(values) // 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_matching, "_row_bits", lambda n: 62)
        assert id_matching.all_distinct(ids, id_matching.key_order(ids)) == (len(set(values)) == len(values))
    assert id_matching.all_distinct(ids, id_matching.key_order(ids)) == (len(set(values)) == len(values))


# Ids in order: a proof of distinctness with no sort.

ORDER_TEXT = st.text(alphabet=["\x00", "a", "b", "0", "1", "é", "€"], max_size=20)
PLAIN_TEXT = st.text(alphabet=["a", "b", "0", "1", "é", "€"], max_size=20)
BLOCK_SIZES = st.sampled_from([1, 2, 3, id_matching.BLOCK_ROWS])


def by_bytes(value: str) -> bytes:
    return value.encode()


def by_length(value: str) -> tuple[int, bytes]:
    data = value.encode()
    return len(data), data


def strictly_increasing(values: list[str], key: Callable[[str], object]) -> bool:
    keys = [key(value) for value in values]
    return all(a < b for a, b in itertools.pairwise(keys))


@st.composite
def arranged(draw: st.DrawFn, text: st.SearchStrategy[str]) -> list[str]:
    """Ids as drawn, or sorted one way or the other, with or without their repeats; often all
    with one prefix, so that neighbours differ only after their first words."""
    prefix = draw(st.sampled_from(["", "0a0a0a0", "€€€€€", "id-0000000000000"]))
    values = [prefix + value for value in draw(st.lists(text, max_size=30))]
    how = draw(st.sampled_from(["as drawn", "bytes", "length first"]))
    if draw(st.booleans()):
        values = list(dict.fromkeys(values))
    if how != "as drawn":
        values.sort(key=by_bytes if how == "bytes" else by_length)
    return values


def laid_out(values: list[str], cuts: list[int], start: int) -> pa.ChunkedArray:
    """The ids as chunks cut from a slice of a longer array (its first ``start`` ids dropped)."""
    whole = pa.array(["x" * 9] * start + values, pa.string()).slice(start)
    bounds = [0, *sorted(min(cut, len(values)) for cut in cuts), len(values)]
    return pa.chunked_array([whole.slice(a, b - a) for a, b in itertools.pairwise(bounds)], pa.string())


LAYOUTS = {"cuts": st.lists(st.integers(0, 30), min_size=1, max_size=2), "start": st.integers(0, 5)}


def increasing_with_blocks(ids: pa.ChunkedArray, block_rows: int) -> bool:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_matching, "BLOCK_ROWS", block_rows)
        return id_matching.increasing(ids)


@PROPERTY
@given(values=arranged(ORDER_TEXT), block_rows=BLOCK_SIZES, **LAYOUTS)
def test_ids_said_to_increase_do(values: list[str], block_rows: int, cuts: list[int], start: int) -> None:
    """``True`` is a proof: the ids strictly increase byte by byte or by length first (so none
    repeats), whatever the chunks, the slice and the blocks; NUL bytes included."""
    if increasing_with_blocks(laid_out(values, cuts, start), block_rows):
        assert strictly_increasing(values, by_bytes) or strictly_increasing(values, by_length)


@PROPERTY
@given(values=arranged(PLAIN_TEXT), block_rows=BLOCK_SIZES, **LAYOUTS)
def test_ids_without_nul_bytes_are_judged_exactly(
    values: list[str], block_rows: int, cuts: list[int], start: int
) -> None:
    """Without NUL bytes zero padding never ties two ids: the answer is whether they increase,
    the same in one chunk as in several, in a slice and with blocks of a few rows."""
    expected = strictly_increasing(values, by_bytes) or strictly_increasing(values, by_length)
    assert id_matching.increasing(pa.chunked_array([pa.array(values, pa.string())])) == expected
    assert increasing_with_blocks(laid_out(values, cuts, start), block_rows) == expected


@PROPERTY
@given(
    values=st.lists(ORDER_TEXT, max_size=30, unique=True),
    prefix=st.sampled_from(["", "0a0a0a0", "id-0000000000000"]),
    block_rows=BLOCK_SIZES,
    **LAYOUTS,
)
def test_sorted_distinct_ids_are_seen_to_increase(
    values: list[str], prefix: str, block_rows: int, cuts: list[int], start: int
) -> None:
    """Sorted by length first, distinct ids always pass (ids of one length never tie); sorted
    byte by byte they pass unless two neighbours differ only by NUL bytes at their end."""
    values = [prefix + value for value in values]
    values.sort(key=by_length)
    assert increasing_with_blocks(laid_out(values, cuts, start), block_rows)
    values.sort(key=by_bytes)
    if all(a.rstrip("\x00") != b.rstrip("\x00") for a, b in itertools.pairwise(values)):
        assert increasing_with_blocks(laid_out(values, cuts, start), block_rows)


NUMBERED = [str(k) for k in range(1, 1001)]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([NUMBERED], True),
        ([NUMBERED[:500], NUMBERED[500:]], True),
        ([[*NUMBERED[:500], "500", *NUMBERED[500:]]], False),
        ([NUMBERED[:500], ["500", *NUMBERED[500:]]], False),
        ([["b", "a"]], False),
        ([["b"], ["a"]], False),
        ([["a", "b"], ["a", "c"]], False),
        ([["a1", "a2", "b1"]], True),
        ([[f"document-{k:03d}" for k in range(200)]], True),
        ([[f"document-{k:03d}" for k in (*range(100), 99, *range(100, 200))]], False),
        ([[f"document-{k:03d}" for k in (*range(100), 98, *range(100, 200))]], False),
        ([["a", "a"]], False),
        ([[], ["a"], [], ["b"]], True),
        ([[]], True),
    ],
    ids=[
        "1 to 1000",
        "1 to 1000 in two chunks",
        "a repeat",
        "a repeat across chunks",
        "b a",
        "b a in two chunks",
        "a drop between chunks",
        "byte by byte",
        "a long prefix",
        "a long prefix, a repeat",
        "a long prefix, a step down",
        "two equal",
        "empty chunks",
        "no id",
    ],
)
def test_numbered_ids_increase_by_length_first(chunks: list[list[str]], expected: bool) -> None:
    ids = pa.chunked_array([pa.array(chunk, pa.string()) for chunk in chunks], pa.string())
    assert id_matching.increasing(ids) is expected
    assert increasing_with_blocks(ids, 3) is expected


# Keys of ids of one width, read with a stride.


@st.composite
def same_width_ids(draw: st.DrawFn) -> list[str]:
    width = draw(st.integers(id_matching.WORD, 40))
    texts = draw(st.lists(st.text(alphabet=["a", "b", "0", "\x00", "é", "€"], max_size=40), min_size=1, max_size=20))
    return [fit(text, width) for text in texts]


def one_chunk(values: list[str]) -> pa.ChunkedArray:
    return pa.chunked_array([pa.array(values, pa.string())])


@PROPERTY
@given(values=same_width_ids(), block_rows=BLOCK_SIZES, start=st.integers(0, 5))
def test_ids_of_one_width_get_the_keys_of_any_ids(values: list[str], block_rows: int, start: int) -> None:
    """Keys of a block of ids of one width (eight bytes or more, multi-byte characters counted
    in bytes) equal those computed in a block with an id of another length, which reads them
    the general way; in a slice and in blocks of a few rows too."""
    general = id_matching.id_keys(one_chunk([*values, "x"]))
    assert len(set(general[:-1].tolist())) == len(set(values))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_matching, "BLOCK_ROWS", block_rows)
        assert np.array_equal(id_matching.id_keys(one_chunk(values)), general[:-1])
        sliced = pa.array([values[0][::-1]] * start + values, pa.string()).slice(start)
        assert np.array_equal(id_matching.id_keys(pa.chunked_array([sliced])), general[:-1])
        assert np.array_equal(id_matching.id_keys(one_chunk([*values, "x"])), general)


@PROPERTY
@given(values=same_width_ids(), start=st.integers(0, 5))
def test_long_ids_get_the_keys_of_their_digests_wherever_they_stand(values: list[str], start: int) -> None:
    """Ids longer than ``LONG_ID`` bytes (twelve here, so that most drawn ids are) are keyed
    from their digests: the same keys in a block of one width, beside ids of other lengths and
    in a slice; different ids, different keys."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_matching, "LONG_ID", 12)
        general = id_matching.id_keys(one_chunk([*values, "x"]))
        assert len(set(general[:-1].tolist())) == len(set(values))
        assert np.array_equal(id_matching.id_keys(one_chunk(values)), general[:-1])
        sliced = pa.array([values[0][::-1]] * start + values, pa.string()).slice(start)
        assert np.array_equal(id_matching.id_keys(pa.chunked_array([sliced])), general[:-1])


def test_a_megabyte_id_repeated_is_found_and_paired() -> None:
    """One id of a megabyte among short ones: a repeat of it is seen, and it pairs with itself
    in another order."""
    huge = "x" * 2**20
    gold = one_chunk([huge, "a", "b"])
    assert not id_matching.increasing(gold)
    order = id_matching.key_order(gold)
    assert id_matching.all_distinct(gold, order)
    repeated = one_chunk(["a", huge, "b", huge])
    assert not id_matching.all_distinct(repeated, id_matching.key_order(repeated))
    rows = id_matching.gold_rows(one_chunk(["b", huge, "a"]), gold_ids=gold, gold_order=order)
    assert rows.tolist() == [2, 0, 1]


# Sorting a part per core.


@pytest.mark.parametrize("cores", [2, 3])
@pytest.mark.parametrize("length", [0, 1, 7, 8, 13, 1000])
@pytest.mark.parametrize("distinct", [3, 2**64], ids=["many repeats", "any values"])
def test_sorting_on_several_cores_sorts(
    monkeypatch: pytest.MonkeyPatch, cores: int, length: int, distinct: int
) -> None:
    monkeypatch.setattr(id_matching, "PARALLEL_SORT_ROWS", 4)
    monkeypatch.setattr(id_matching, "available_cores", lambda: cores)
    values = np.random.default_rng(length + cores).integers(0, distinct, size=length, dtype=np.uint64)
    expected = np.sort(values)
    id_matching.sort_on_all_cores(values)
    assert np.array_equal(values, expected)


# Confirming the pairs on the ids' bytes, for ids of one width and for others.

ID_SETS = {
    "six digits": [f"{k:06d}" for k in range(500)],
    "twelve bytes": [f"€{k:09d}" for k in range(500)],
    "nine bytes": [f"é{k:03d}\x00€" for k in range(500)],
    "sixteen bytes": [f"id-{k:013d}" for k in range(500)],
    "numbers": [str(k) for k in range(500)],
    "multi-byte and NUL": [
        "a",
        "",
        "a\x00",
        "a\x00\x00",
        "\x00",
        *("é" * (k % 3) + str(k) + "\x00" * (k % 9) + "€" * (k % 2) for k in range(495)),
    ],
}


def shuffled(values: list[str], seed: int) -> tuple[pa.ChunkedArray, pa.ChunkedArray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(len(values))
    return chunked(values, len(values) // 3), chunked([values[k] for k in order], len(values) // 2), order


@pytest.mark.parametrize("block_rows", [7, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize("row_bits", [None, 60], ids=["full keys", "short keys"])
@pytest.mark.parametrize("name", ID_SETS)
def test_ids_in_another_order_are_paired(
    monkeypatch: pytest.MonkeyPatch, name: str, row_bits: int | None, block_rows: int
) -> None:
    monkeypatch.setattr(id_matching, "BLOCK_ROWS", block_rows)
    if row_bits is not None:
        monkeypatch.setattr(id_matching, "_row_bits", lambda n: row_bits)
    gold, predicted, order = shuffled(ID_SETS[name], seed=len(name))
    rows = id_matching.gold_rows(predicted, gold_ids=gold, gold_order=id_matching.key_order(gold))
    assert rows is not None
    assert rows.tolist() == order.tolist()


def last_byte_changed(value: str, taken: set[str]) -> str:
    """``value`` with another last byte, still UTF-8 and not one of the ``taken`` ids."""
    data = value.encode()
    for byte in range(256):
        try:
            changed = (data[:-1] + bytes([byte])).decode()
        except UnicodeDecodeError:
            continue
        if changed not in taken:
            return changed
    raise AssertionError(f"no other last byte for {value!r}")


def nul_bytes_added(value: str, taken: set[str]) -> str:
    """``value`` with NUL bytes at its end (as few as make an id that is not ``taken``)."""
    return next(value + "\x00" * count for count in range(1, 9) if value + "\x00" * count not in taken)


ALTERATIONS = {"last byte changed": last_byte_changed, "NUL bytes added": nul_bytes_added}


@pytest.mark.parametrize("block_rows", [7, id_matching.BLOCK_ROWS])
@pytest.mark.parametrize("alteration", ALTERATIONS)
@pytest.mark.parametrize("place", [0, 250, 499])
@pytest.mark.parametrize("name", ID_SETS)
def test_an_id_differing_only_at_its_end_is_told_apart(
    monkeypatch: pytest.MonkeyPatch, name: str, place: int, alteration: str, block_rows: int
) -> None:
    """Paired with the gold id it was made from, an id changed only at its end is the one pair
    found to differ (by the rows of bytes when all ids have one width, by lengths and words
    otherwise); and when every key collides, so that only the bytes can tell, the ids are not
    taken for the gold ids, in the gold order or in another, while the gold ids still are."""
    monkeypatch.setattr(id_matching, "BLOCK_ROWS", block_rows)
    values = ID_SETS[name]
    predicted = list(values)
    predicted[place] = ALTERATIONS[alteration](values[place], set(values))
    gold, rows = chunked(values, 200), np.arange(len(values))
    assert id_matching._differing(chunked(predicted, 300), gold, rows).tolist() == [place]
    assert id_matching._differing(chunked(values, 300), gold, rows).tolist() == []
    monkeypatch.setattr(id_matching, "_row_bits", lambda n: 64)  # no bit of any key kept
    gold_order = id_matching.key_order(gold)
    assert id_matching.gold_rows(chunked(predicted, 300), gold_ids=gold, gold_order=gold_order) is None
    _, altered, _ = shuffled(predicted, seed=place)
    assert id_matching.gold_rows(altered, gold_ids=gold, gold_order=gold_order) is None
    _, same, order = shuffled(values, seed=place)
    assert id_matching.gold_rows(same, gold_ids=gold, gold_order=gold_order).tolist() == order.tolist()
