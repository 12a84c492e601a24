"""A board at another class distribution (``scoring.engine.whatif``, paper 000, Eq. 5 and 26-27).

What this proves: scaling every team to the gold's own shares changes no value and no rank;
scaling to equal shares is prevalence calibration, value for value the very doubles of the
calibrated (``_c``) columns, on random boards of counts and of soft masses, however the equal
shares are written; on a hand-worked example, precision at the target is Eq. 27's estimate
R_i·share(i) / P(f→i) and kappa the one that follows from it, computed here with fractions;
recall never moves (Eq. 5 keeps each class's error proportions); the teams that move are
named with their ranks today and at the target; the exact values agree with the float scaling
of :mod:`scoring.engine.calibration`; and bad targets are refused with a message naming the class.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.engine.calibration import scale_to_distribution
from scoring.engine.canonical import ExactMatrix
from scoring.engine.confusion import hard_confusion
from scoring.engine.ranking import competition_ranks
from scoring.engine.registry import CLASS_MEASURES
from scoring.engine.suite import metric_values, score_matrix
from scoring.engine.whatif import (
    CLASS_WITHOUT_GOLD,
    TARGET_LENGTH,
    TARGET_NOT_A_NUMBER,
    TARGET_NOT_POSITIVE,
    TargetError,
    integer_weights,
    parse_target,
    what_if,
)
from tests.scoring.strategies import MAX_N, PROPERTY, close, distributions, supported_matrices

LABELS = ("a", "b", "c")

# Rows predicted, columns gold; both teams see the same gold: 40 a, 30 b, 50 c.
EVEN = np.array([[30, 5, 10], [6, 20, 5], [4, 5, 35]])  # recalls 3/4, 2/3, 7/10
A_EXPERT = np.array([[38, 10, 20], [1, 15, 5], [1, 5, 25]])  # recalls 19/20, 1/2, 1/2


@st.composite
def boards(draw: st.DrawFn) -> tuple[tuple[str, ...], dict[str, np.ndarray]]:
    """Two to five teams of one size, each a count or a soft matrix with gold mass in every class."""
    n = draw(st.integers(min_value=1, max_value=MAX_N))
    size = draw(st.integers(min_value=2, max_value=5))
    teams = {f"team{t}": draw(supported_matrices(min_n=n, max_n=n, floats=draw(st.booleans()))) for t in range(size)}
    return tuple(f"class {i}" for i in range(n)), teams


@st.composite
def gold_boards(draw: st.DrawFn) -> tuple[tuple[str, ...], np.ndarray, dict[str, np.ndarray]]:
    """Hard-label teams against one gold file in which every class occurs."""
    n = draw(st.integers(min_value=1, max_value=MAX_N))
    extra = draw(st.lists(st.integers(min_value=0, max_value=n - 1), max_size=30))
    gold = np.array([*range(n), *extra])
    size = draw(st.integers(min_value=2, max_value=5))
    codes = st.lists(st.integers(min_value=0, max_value=n - 1), min_size=len(gold), max_size=len(gold))
    teams = {f"team{t}": hard_confusion(np.array(draw(codes)), gold, n) for t in range(size)}
    return tuple(f"class {i}" for i in range(n)), gold, teams


def reports(labels: tuple[str, ...], matrices: dict[str, np.ndarray]) -> dict:
    return {team: score_matrix(matrix, labels=labels) for team, matrix in matrices.items()}


# --- the two targets the board already has ---------------------------------------------------


@PROPERTY
@given(board=gold_boards())
def test_the_golds_own_shares_change_nothing(board) -> None:
    labels, gold, matrices = board
    target = parse_target("gold", labels=labels, gold_counts=np.bincount(gold, minlength=len(labels)).tolist())
    scenario = what_if(matrices, labels=labels, target=target)
    scored = reports(labels, matrices)
    for column in scenario.columns():
        today = [column.value(scored[team]) for team in scenario.teams]
        assert scenario.values_today(column) == today
        assert scenario.values(column) == today
        assert scenario.ranks(column) == scenario.ranks_today(column)
        assert scenario.moves(column) == []


@PROPERTY
@given(matrix=supported_matrices(floats=True))
def test_a_soft_teams_own_shares_change_nothing(matrix: np.ndarray) -> None:
    labels = tuple(f"class {i}" for i in range(len(matrix)))
    exact = ExactMatrix.of(matrix)
    scenario = what_if({"team": matrix}, labels=labels, target=[Fraction(p) for p in exact.prevalence])
    today, at_target = score_matrix(matrix, labels=labels), scenario.suite("team")
    assert at_target.metrics == {key: today.metrics[key] for key in at_target.metrics}
    for label in labels:  # the measures, not the masses: support and predicted become shares
        assert all(at_target.per_class[label][m.key] == today.per_class[label][m.key] for m in CLASS_MEASURES)


@PROPERTY
@given(board=boards())
def test_equal_shares_are_calibration_exactly(board) -> None:
    labels, matrices = board
    scored = reports(labels, matrices)
    scenario = what_if(matrices, labels=labels, target=[1] * len(labels))
    for column in scenario.columns():
        calibrated = [column.counterpart().value(scored[team]) for team in scenario.teams]
        assert scenario.values(column) == calibrated, column.id
        assert list(scenario.ranks(column).values()) == competition_ranks(calibrated)
    for team in scenario.teams:
        assert scenario.suite(team).per_class == scored[team].calibrated_per_class


@pytest.mark.parametrize("text", ["uniform", "Uniform", "1,1,1", "1/3,1/3,1/3", "0.5, 0.5, 0.5", "7,7,7"])
def test_equal_shares_however_written_are_calibration(text: str) -> None:
    target = parse_target(text, labels=LABELS, gold_counts=[40, 30, 50])
    assert integer_weights(target) == [1, 1, 1]
    scenario = what_if({"even": EVEN}, labels=LABELS, target=target)
    assert scenario.suite("even").metrics == score_matrix(EVEN, labels=LABELS).calibrated


def test_decimal_shares_are_read_exactly() -> None:
    """0.2 as text is 1/5, not the double nearest to it: equal decimals are equal shares, and
    0.2,0.3,0.5 is exactly 2:3:5."""
    assert integer_weights(parse_target("0.2,0.2,0.2", labels=LABELS, gold_counts=[1, 1, 1])) == [1, 1, 1]
    assert integer_weights(parse_target("0.2,0.3,0.5", labels=LABELS, gold_counts=[1, 1, 1])) == [2, 3, 5]


# --- a hand-worked example: Eq. 26-27 -----------------------------------------------------------


def eq27(matrix: np.ndarray, shares: list[Fraction]) -> tuple[list[Fraction], list[Fraction], list[Fraction]]:
    """Per class: recall R_i, the predicted rate P(f→i) = sum_j P(f→i | class j)·share(j), and
    the precision estimate R_i·share(i) / P(f→i) (paper 000, Eq. 27), in fractions."""
    n = len(shares)
    gold = [sum(int(matrix[i, j]) for i in range(n)) for j in range(n)]
    recall = [Fraction(int(matrix[i, i]), gold[i]) for i in range(n)]
    predicted = [sum(Fraction(int(matrix[i, j]), gold[j]) * shares[j] for j in range(n)) for i in range(n)]
    precision = [recall[i] * shares[i] / predicted[i] for i in range(n)]
    return recall, predicted, precision


def test_precision_at_the_target_is_eq_27() -> None:
    shares = [Fraction(1, 5), Fraction(3, 10), Fraction(1, 2)]
    recall, predicted, precision = eq27(EVEN, shares)
    # By hand: P(f→a) = 3/4·1/5 + 5/30·3/10 + 10/50·1/2 = 3/20 + 1/20 + 1/10 = 3/10,
    # so P*(a) = (3/4 · 1/5) / (3/10) = 1/2.
    assert predicted[0] == Fraction(3, 10)
    assert precision[0] == Fraction(1, 2)
    scenario = what_if({"even": EVEN}, labels=LABELS, target=["0.2", "0.3", "0.5"])
    per_class, today = scenario.suite("even").per_class, score_matrix(EVEN, labels=LABELS).per_class
    for i, label in enumerate(LABELS):
        assert per_class[label]["recall"] == float(recall[i]) == today[label]["recall"]
        assert per_class[label]["precision"] == float(precision[i])
        assert per_class[label]["support"] == float(shares[i])
        assert per_class[label]["predicted"] == float(predicted[i])
    metrics = scenario.suite("even").metrics
    assert metrics["macro_precision"] == float(sum(precision) / 3)
    accuracy = sum(r * s for r, s in zip(recall, shares, strict=True))
    assert metrics["accuracy"] == float(accuracy)
    chance = sum(s * p for s, p in zip(shares, predicted, strict=True))
    assert metrics["kappa"] == float((accuracy - chance) / (1 - chance))


def test_the_teams_that_move_are_named_with_their_ranks() -> None:
    """Today (40 a, 30 b, 50 c) the even team is more accurate (85/120 against 78/120); where 8 in
    10 items are a, the a expert is (0.86 against 0.7367)."""
    matrices = {"even": EVEN, "a_expert": A_EXPERT}
    scenario = what_if(matrices, labels=LABELS, target=["0.8", "0.1", "0.1"])
    accuracy = next(column for column in scenario.columns() if column.id == "accuracy")
    assert scenario.values(accuracy) == [
        float(Fraction(3, 4) * Fraction(8, 10) + Fraction(2, 3) / 10 + Fraction(7, 10) / 10),
        float(Fraction(19, 20) * Fraction(8, 10) + Fraction(1, 2) / 10 + Fraction(1, 2) / 10),
    ]
    assert scenario.ranks_today(accuracy) == {"even": 1, "a_expert": 2}
    assert scenario.ranks(accuracy) == {"even": 2, "a_expert": 1}
    moves = [(move.team, move.rank_a, move.rank_b, move.shift) for move in scenario.moves(accuracy)]
    assert sorted(moves) == [("a_expert", 2, 1, 1), ("even", 1, 2, -1)]
    assert scenario.as_json()["moved"]["accuracy"] == [
        {"team": move.team, "from": move.rank_a, "to": move.rank_b} for move in scenario.moves(accuracy)
    ]


@PROPERTY
@given(data=st.data(), board=boards())
def test_recall_never_moves(data: st.DataObject, board) -> None:
    labels, matrices = board
    target = [Fraction(share) for share in data.draw(distributions(len(labels)))]
    scenario = what_if(matrices, labels=labels, target=target)
    for column in scenario.columns():
        if column.key == "recall" or column.key == "macro_recall":
            assert scenario.values(column) == scenario.values_today(column)
            assert scenario.moves(column) == []


@PROPERTY
@given(data=st.data(), board=boards())
def test_exact_scaling_agrees_with_the_float_scaling(data: st.DataObject, board) -> None:
    labels, matrices = board
    shares = data.draw(distributions(len(labels)))
    scenario = what_if(matrices, labels=labels, target=list(shares))
    for team, matrix in matrices.items():
        floats = metric_values(scale_to_distribution(matrix, shares))
        for key, value in scenario.suite(team).metrics.items():
            assert close(value, floats[key], rel=1e-6, abs_tol=1e-9), (team, key)


def test_the_json_holds_every_raw_column_and_the_per_class_measures() -> None:
    scenario = what_if({"even": EVEN, "a_expert": A_EXPERT}, labels=LABELS, target=["1", "2", "2"])
    out = scenario.as_json()
    assert set(out) == {"target", "columns", "moved", "per_class"}
    assert out["target"] == {"a": 0.2, "b": 0.4, "c": 0.4}
    assert list(out["columns"]) == [column.id for column in scenario.columns()] == list(out["moved"])
    assert set(out["columns"]["kappa"]["even"]) == {"value", "rank", "rank_today"}
    measures = {measure.key for measure in CLASS_MEASURES}
    assert set(out["per_class"]["even"]["a"]) == measures | {"support", "predicted"}


# --- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "template", "named"),
    [
        ("0.5,0.5", TARGET_LENGTH, "(3: a, b, c), got 2"),
        ("0.2,x,0.5", TARGET_NOT_A_NUMBER, "'x' of class 'b'"),
        ("0.2,,0.5", TARGET_NOT_A_NUMBER, "'' of class 'b'"),
        ("0.2,0.3,nan", TARGET_NOT_A_NUMBER, "class 'c'"),
        ("inf,0.3,0.5", TARGET_NOT_A_NUMBER, "class 'a'"),
        ("1/0,0.3,0.5", TARGET_NOT_A_NUMBER, "class 'a'"),
        ("0,0.5,0.5", TARGET_NOT_POSITIVE, "class 'a' is 0"),
        ("0.5,-0.1,0.6", TARGET_NOT_POSITIVE, "class 'b' is -0.1"),
        ("gold", CLASS_WITHOUT_GOLD, "class 'b'"),
    ],
)
def test_bad_targets_are_refused_naming_the_class(text: str, template: str, named: str) -> None:
    with pytest.raises(TargetError) as caught:
        parse_target(text, labels=LABELS, gold_counts=[3, 0, 2])
    assert caught.value.template == template
    assert named in str(caught.value)


def test_a_class_without_gold_items_cannot_be_given_a_share() -> None:
    no_gold_b = np.array([[2, 0, 1], [1, 0, 0], [0, 0, 3]])
    with pytest.raises(TargetError) as caught:
        what_if({"even": EVEN, "no_b": no_gold_b}, labels=LABELS, target=[1, 1, 1])
    assert caught.value.template == CLASS_WITHOUT_GOLD
    assert "class 'b'" in str(caught.value)


def test_numbers_as_well_as_text() -> None:
    by_text = what_if({"even": EVEN}, labels=LABELS, target=["0.25", "0.25", "0.5"])
    by_number = what_if({"even": EVEN}, labels=LABELS, target=[0.25, Fraction(1, 4), 2])
    assert by_text.target == (Fraction(1, 4), Fraction(1, 4), Fraction(1, 2))
    assert by_number.target == (Fraction(1, 10), Fraction(1, 10), Fraction(4, 5))
    with pytest.raises(TargetError) as caught:
        what_if({"even": EVEN}, labels=LABELS, target=[float("nan"), 1, 1])
    assert caught.value.template == TARGET_NOT_A_NUMBER
