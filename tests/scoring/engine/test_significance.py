"""Who is really behind the leader (:mod:`scoring.engine.significance`).

What this proves:

- Holm's step-down on a textbook example (the four hypotheses of the Holm–Bonferroni article
  of Wikipedia: p = 0.01, 0.04, 0.03, 0.005 at α = 0.05, where H1 and H4 are rejected and H2
  and H3 are not), its adjusted p-values computed independently here as the smallest level at
  which the sequential procedure rejects each hypothesis; the same on random p-values with
  ties; against statsmodels' ``multipletests(method="holm")``; adjusted
  values are monotone in the raw ones, never below them, capped at 1, and tie where they tie;
- the comparison with the leader on replicates written by hand: the leader (the first of the
  teams tied for first), the differences oriented by the column's direction, the percentile
  interval, p = (1 + #{d <= 0}) / (1 + B), Holm across the other teams, and undefined teams left
  out of the family;
- in the bootstrap: the values on the full test set are the board's (the same doubles, hard
  and soft predictions), and every column's comparisons are the method applied to the
  replicates' values, recomputed here from them.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine import significance as sg
from scoring.engine.bootstrap import bootstrap, order_statistics
from scoring.engine.columns import Column, ranking_columns
from scoring.engine.confusion import hard_confusion, soft_confusion
from scoring.engine.ranking import HIGHER, LOWER
from scoring.engine.suite import score_matrix
from tests.scoring.strategies import PROPERTY

# --- Holm's step-down --------------------------------------------------------------------------


def rejected(p_values: list[Fraction], level: Fraction) -> set[int]:
    """Holm's sequentially rejective procedure (Holm 1979) at ``level``, as the textbooks state
    it: test the smallest p-value against level/m, the next against level/(m - 1), ..., and
    stop at the first that is not small enough."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out: set[int] = set()
    for k, index in enumerate(order):
        if p_values[index] > level / (m - k):
            break
        out.add(index)
    return out


def adjusted_by_brute_force(p_values: list[Fraction]) -> list[Fraction]:
    """Each hypothesis's adjusted p-value: the smallest level at which the procedure rejects it
    (the levels where a decision can change are the (m - k) p-values, and 1)."""
    m = len(p_values)
    candidates = sorted({min(Fraction(1), (m - k) * p) for k in range(m) for p in p_values} | {Fraction(1)})
    # A hypothesis that even level 1 keeps has the adjusted value 1 (the cap).
    return [next((level for level in candidates if i in rejected(p_values, level)), Fraction(1)) for i in range(m)]


WIKIPEDIA = [Fraction(1, 100), Fraction(4, 100), Fraction(3, 100), Fraction(5, 1000)]


def test_holm_on_the_textbook_example() -> None:
    assert rejected(WIKIPEDIA, Fraction(5, 100)) == {0, 3}  # H1 and H4, as the article says
    expected = adjusted_by_brute_force(WIKIPEDIA)
    assert expected == [Fraction(3, 100), Fraction(6, 100), Fraction(6, 100), Fraction(2, 100)]
    assert sg.holm(WIKIPEDIA) == expected
    assert {i for i, p in enumerate(sg.holm(WIKIPEDIA)) if p <= Fraction(5, 100)} == {0, 3}


@PROPERTY
@given(
    st.lists(st.integers(min_value=1, max_value=60), min_size=0, max_size=9), st.integers(min_value=60, max_value=70)
)
def test_holm_is_the_smallest_level_that_rejects(numerators: list[int], denominator: int) -> None:
    p_values = [Fraction(n, denominator) for n in numerators]
    adjusted = sg.holm(p_values)
    assert adjusted == adjusted_by_brute_force(p_values)
    integer = sg.holm_step_down(np.array(numerators, dtype=np.int64), denominator)
    assert [Fraction(int(n), denominator) for n in integer] == adjusted
    for (p, a), (q, b) in itertools.product(zip(p_values, adjusted, strict=True), repeat=2):
        assert p <= a <= 1
        assert (p <= q) <= (a <= b)  # monotone
        assert (p == q) <= (a == b)  # ties stay ties


def test_holm_agrees_with_statsmodels() -> None:
    from statsmodels.stats import multitest

    rng = np.random.default_rng(1)
    for size in (1, 2, 5, 12):
        numerators = rng.integers(1, 1001, size=size)
        _, expected, _, _ = multitest.multipletests(numerators / 1001, method="holm")
        found = sg.holm_step_down(numerators, 1001) / 1001
        np.testing.assert_allclose(found, expected, rtol=1e-12)


# --- one column's comparisons with its leader ---------------------------------------------------


def test_behind_the_leader_by_hand() -> None:
    """Five replicates, three teams; team 0 leads on the full data. Differences leader − team:
    team 1: 0.1, 0.2, -0.1, 0.3, 0.0 (not better twice: p = 3/6); team 2: 0.5, 0.5, 0.5, 0.5, 0.4
    (never not better: p = 1/6). Holm with m = 2: 2 · 1/6 = 1/3 for
    team 2, max(1/3, 3/6) = 1/2 for team 1."""
    observed = np.array([0.9, 0.8, 0.4])
    replicates = np.array([[0.9, 0.8, 0.4], [0.9, 0.7, 0.4], [0.8, 0.9, 0.3], [1.0, 0.7, 0.5], [0.6, 0.6, 0.2]])
    result = sg.behind_leader(observed, replicates, direction=HIGHER, bounds=(1, 5))
    assert result.leader == 0
    assert result.p_holm.tolist()[1:] == [1 / 2, 1 / 3]
    assert np.isnan(result.p_holm[0]) and np.isnan(result.difference[0]).all()
    expected_1 = [0.9 - 0.8, 0.9 - 0.7, 0.8 - 0.9, 1.0 - 0.7, 0.6 - 0.6]
    assert result.difference[1].tolist() == [min(expected_1), max(expected_1)]
    expected_2 = [0.9 - 0.4, 0.9 - 0.4, 0.8 - 0.3, 1.0 - 0.5, 0.6 - 0.2]
    assert result.difference[2].tolist() == [min(expected_2), max(expected_2)]
    assert result.not_significantly_behind() == [0, 1, 2]
    assert result.not_significantly_behind(level=0.4) == [0, 1]


def test_an_error_s_leader_has_the_lowest_value_and_differences_are_oriented() -> None:
    observed = np.array([0.5, 0.2, 0.2])  # teams 1 and 2 tie for the lowest error: team 1 leads
    replicates = np.array([[0.5, 0.2, 0.3], [0.6, 0.1, 0.1], [0.4, 0.3, 0.2]])
    result = sg.behind_leader(observed, replicates, direction=LOWER, bounds=(1, 3))
    assert result.leader == 1
    assert result.difference[0].tolist() == [0.4 - 0.3, 0.6 - 0.1]  # team's error − the leader's
    assert result.difference[2].tolist() == [0.2 - 0.3, 0.3 - 0.2]
    # Team 0 is behind in every replicate: p = 1/4; team 2 is not behind in two of three: p = 3/4.
    assert result.p_holm.tolist()[0] == 2 * (1 / 4) and result.p_holm.tolist()[2] == 3 / 4


def test_undefined_teams_are_left_out_of_the_family() -> None:
    observed = np.array([0.9, 0.5, np.nan, 0.4])
    replicates = np.array([[0.9, 0.5, np.nan, 0.4], [0.8, np.nan, 0.1, 0.4], [0.9, 0.6, 0.2, 0.5]])
    result = sg.behind_leader(observed, replicates, direction=HIGHER, bounds=(1, 3))
    assert np.isnan(result.p_holm[1]) and np.isnan(result.difference[1]).all()  # undefined in a replicate
    assert np.isnan(result.p_holm[2])
    assert result.p_holm[3] == 1 / 4  # alone in the family: m = 1
    nothing = sg.behind_leader(np.full(3, np.nan), np.full((4, 3), np.nan), direction=HIGHER, bounds=(1, 4))
    assert nothing.leader is None and nothing.not_significantly_behind() == []


# --- in the bootstrap ---------------------------------------------------------------------------


def by_definition(observed: np.ndarray, replicates: np.ndarray, direction, bounds) -> tuple:
    """The method written out: the first team ranked 1, the oriented differences, their order
    statistics, (1 + #{d <= 0}) / (1 + B) and Holm by brute force."""
    sign = 1 if direction is HIGHER else -1
    defined = [t for t in range(len(observed)) if not np.isnan(observed[t])]
    if not defined:
        return None, {}
    best = max(sign * observed[t] for t in defined)
    leader = next(t for t in defined if sign * observed[t] == best)
    count = len(replicates)
    raw, intervals = {}, {}
    for t in range(len(observed)):
        d = [sign * replicates[r, leader] - sign * replicates[r, t] for r in range(count)]
        if t == leader or any(np.isnan(x) for x in d):
            continue
        ordered = sorted(d)
        intervals[t] = [ordered[bounds[0] - 1], ordered[bounds[1] - 1]]
        raw[t] = Fraction(1 + sum(x <= 0 for x in d), 1 + count)
    adjusted = dict(zip(raw, adjusted_by_brute_force(list(raw.values())), strict=True))
    return leader, {t: (intervals[t], float(adjusted[t])) for t in raw}


@pytest.mark.parametrize("soft", [False, True], ids=["hard", "soft"])
def test_the_bootstrap_compares_every_column_with_its_leader(soft: bool) -> None:
    rng = np.random.default_rng(13)
    labels = ["a", "b", "c"]
    gold = rng.integers(0, 3, size=200)
    teams = [np.where(rng.random(200) < share, gold, rng.integers(0, 3, size=200)) for share in (0.8, 0.75, 0.5)]
    teams.append(teams[0].copy())  # a twin of the likely leader: tied in every replicate
    if soft:
        teams[2] = rng.dirichlet(np.ones(3), size=200)
    columns = [*ranking_columns(labels, calibrated=None), Column("mae"), Column("macro_mae", calibrated=True)]
    stability = bootstrap(
        gold, teams, labels=labels, replicates=150, seed=5, columns=columns, heatmap=columns[:1], keep_replicates=True
    )
    reports = [
        score_matrix(
            soft_confusion(t, gold) if t.ndim == 2 else hard_confusion(t, gold, 3), labels=labels, ordinal=True
        )
        for t in teams
    ]
    bounds = order_statistics(150, 0.95)
    for index, column in enumerate(columns):
        board_values = [column.value(report) for report in reports]
        assert [None if np.isnan(v) else v for v in stability.observed[index]] == board_values, column.id
        leader, expected = by_definition(
            stability.observed[index], stability.replicate_values[:, index], column.direction, bounds
        )
        found = stability.behind_leader(column)
        assert found.leader == leader, column.id
        for t in range(len(teams)):
            if t in expected:
                assert (found.difference[t].tolist(), float(found.p_holm[t])) == expected[t], (column.id, t)
            else:
                assert np.isnan(found.p_holm[t]) and np.isnan(found.difference[t]).all(), (column.id, t)
    accuracy = stability.behind_leader(Column("accuracy"))
    assert accuracy.leader == 0 and accuracy.p_holm[3] == 1.0  # the twin is never behind
    assert accuracy.p_holm[2] == 3 * (1 / 151)  # far behind in every replicate, smallest of m = 3
