"""Matching ids by sorted 64-bit keys (:mod:`scoring.engine.ids`).

What this proves: an id's key depends on its bytes alone, not on where Arrow put it (chunk,
slice, last bytes of a buffer); the pairing found through keys is always confirmed on the
strings, so keys that collide (forced here by keeping only a few bits of them) cost a repair or
a fall back to Arrow, never a wrong match; and the uniqueness check agrees with a set.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import ids as id_matching
from tests.scoring.strategies import PROPERTY

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
