"""What replacing a gold file changes (scoring.engine.gold.compare_gold), against a plain
Python reading of the same two files."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.engine.gold import EXAMPLES, compare_gold
from scoring.engine.io import read_labels

LABELS = ("a", "b", "c")


def gold_file(rows: list[tuple[str, str]]) -> bytes:
    return ("id,label\n" + "".join(f"{item},{label}\n" for item, label in rows)).encode()


def expected_change(old: list[tuple[str, str]], new: list[tuple[str, str]]) -> dict:
    old_of, new_of = dict(old), dict(new)
    relabelled = sorted(
        (item, old_of[item], new_of[item]) for item in old_of.keys() & new_of if old_of[item] != new_of[item]
    )
    return {
        "added": sorted(new_of.keys() - old_of.keys()),
        "removed": sorted(old_of.keys() - new_of.keys()),
        "relabelled": relabelled,
    }


def test_exact_ids_unicode_and_sorted_examples():
    old = [("007", "a"), ("7", "b"), ("été", "c"), ("x", "a"), ("gone", "b")]
    new = [("7", "c"), ("007", "a"), ("été", "a"), ("x", "a"), ("new", "b"), ("0007", "c")]
    change = compare_gold(read_labels(gold_file(old), labels=LABELS), read_labels(gold_file(new), labels=LABELS))
    assert (change.added, change.removed, change.relabelled) == (2, 1, 2)
    assert change.examples_added == ("0007", "new")
    assert change.examples_removed == ("gone",)
    assert change.examples_relabelled == (("7", "b", "c"), ("été", "c", "a"))
    assert change.counts_new == {"a": 3, "b": 1, "c": 2} and not change.same_ids


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_replacements_agree_with_a_plain_reading(seed):
    rng = np.random.default_rng(seed)
    pool = [f"doc-{n:05d}" for n in rng.permutation(30_000)]
    old = [(item, LABELS[rng.integers(3)]) for item in pool[:20_000]]
    kept = [(item, LABELS[rng.integers(3)] if rng.random() < 0.1 else label) for item, label in old[2_000:]]
    new = [kept[k] for k in rng.permutation(len(kept))] + [(item, "a") for item in pool[20_000:23_000]]
    change = compare_gold(read_labels(gold_file(old), labels=LABELS), read_labels(gold_file(new), labels=LABELS))
    expected = expected_change(old, new)
    assert (change.added, change.removed, change.relabelled) == tuple(len(v) for v in expected.values())
    assert change.examples_added == tuple(expected["added"][:EXAMPLES])
    assert change.examples_removed == tuple(expected["removed"][:EXAMPLES])
    assert change.examples_relabelled == tuple(expected["relabelled"][:EXAMPLES])
    assert (change.n_old, change.n_new) == (20_000, 21_000)


def test_the_same_file_changes_nothing():
    rows = [(f"i{n}", LABELS[n % 3]) for n in range(50)]
    gold = read_labels(gold_file(rows), labels=LABELS)
    change = compare_gold(gold, gold)
    assert change.unchanged and change.examples_added == change.examples_removed == change.examples_relabelled == ()


def test_a_first_gold_file_adds_every_id():
    """A phase that waited for its gold file compares its first one with none: every id added."""
    new = [("b", "a"), ("a", "c"), ("c", "c")]
    change = compare_gold(None, read_labels(gold_file(new), labels=LABELS))
    assert (change.n_old, change.n_new, change.added, change.removed, change.relabelled) == (0, 3, 3, 0, 0)
    assert change.examples_added == ("a", "b", "c") and change.counts_old == {"a": 0, "b": 0, "c": 0}
    assert change.counts_new == {"a": 1, "b": 0, "c": 2} and not change.same_ids
