"""The bootstrap gives exactly the numbers it gave when it kept every replicate in memory.

The oracle is that computation, kept under tests (:mod:`tests.scoring.engine.bootstrap_reference`):
every score, rank and rho interval, every difference to the leader and Holm p-value, every
overall ranking's intervals, and the JSON built from them, compared as text (so that even the
sign of a zero would show), on the SemEval-2017 demo's eight teams, on
boards with what makes values undefined (one predicted class, a class absent from resampled test
sets), probability rows, twin teams and an ordinal scale, and through the command line. Then the
same with the replicates kept between computations: a new or re-scored run's values are the only
ones computed, and the numbers are still the oracle's. (A phase of 500 teams, from its stored
runs to its stored result: tests/leaderboard/test_stability_reference.py.)
"""

from __future__ import annotations

import json

import numpy as np

from leaderboard.demo_table8 import GOLD_COUNTS, LABELS, MATRICES
from scoring.__main__ import main
from scoring.engine import bootstrap as bs
from scoring.engine import replicate_passes as passes
from scoring.engine import replicates as replicate_values
from scoring.engine.aggregate import METHODS, Aggregate, column_sets
from scoring.engine.columns import paired_columns, ranking_columns
from scoring.engine.intervals_job import result_of
from scoring.engine.items import codes_with_matrix
from tests.scoring.engine import bootstrap_reference as reference

SEED = 1


def demo_board() -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """The demo's gold codes (SemEval-2017 Task 4A's class counts) and its eight teams'
    predictions, whose matrices are Table 8's reconstructions."""
    rng = np.random.default_rng(2017)
    gold = rng.permutation(np.repeat(np.arange(len(LABELS)), GOLD_COUNTS))
    return gold, {t: codes_with_matrix(np.array(m), gold, rng) for t, m in enumerate(MATRICES.values(), start=1)}


def random_board(rng: np.random.Generator, n_items: int, n_teams: int, n_classes: int = 3) -> tuple:
    """Gold codes and teams right on a team-specific share of the items, random elsewhere."""
    gold = rng.choice(n_classes, size=n_items, p=np.linspace(2, 1, n_classes) / np.linspace(2, 1, n_classes).sum())
    teams = {}
    for t in range(n_teams):
        right = rng.random(n_items) < rng.uniform(0.35, 0.9)
        teams[100 + t] = np.where(right, gold, rng.integers(0, n_classes, n_items))
    return gold, teams


def as_text(result: dict) -> str:
    return json.dumps(result, sort_keys=True, allow_nan=False)


def assert_same_result(gold, labels, items, *, replicates, ordinal=False, store=None) -> None:
    """The stored result of today's computation and of the oracle, as text."""
    names = {team: f"Team {team}" for team in items}
    settings = {"labels": labels, "teams": names, "items": items, "replicates": replicates, "seed": SEED}
    found = result_of(gold=gold, ordinal=ordinal, primary="macro_recall", store=store, **settings)
    expected = reference.stability_result(gold=gold, ordinal=ordinal, primary="macro_recall", **settings)
    assert as_text(found) == as_text(expected)


def test_the_demo_s_results_are_the_oracle_s() -> None:
    gold, items = demo_board()
    assert_same_result(gold, list(LABELS), items, replicates=1000)


def awkward_board() -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """A small test set whose third class has two items (absent from some resampled sets:
    calibration undefined there), a team that predicts one class (MCC undefined), twins, and
    probability rows (two of them twins too)."""
    rng = np.random.default_rng(9)
    gold, items = random_board(rng, 90, 5)
    gold[gold == 2] = 0
    gold[:2] = 2
    items[200] = np.ones(90, dtype=np.int64)
    items[201] = items[100].copy()
    soft = rng.dirichlet(np.ones(3), size=90)
    items[202], items[203] = soft, soft.copy()
    items[204] = np.round(rng.dirichlet(np.ones(3), size=90), 4)
    return gold, items


def test_undefined_values_probability_rows_and_twins_are_the_oracle_s() -> None:
    gold, items = awkward_board()
    assert_same_result(gold, ["a", "b", "c"], items, replicates=450)  # not a multiple of the blocks


def test_an_ordinal_scale_s_results_are_the_oracle_s() -> None:
    gold, items = random_board(np.random.default_rng(4), 300, 6, n_classes=4)
    assert_same_result(gold, ["0", "1", "2", "3"], items, replicates=210, ordinal=True)


def test_every_array_is_the_oracle_s_whatever_the_blocks(monkeypatch) -> None:
    """Blocks of one team and of one replicate at a time give the same arrays: values, ranks,
    observed values, every interval, the differences to the leader. (Values seven rows at a time:
    the 71 rows, the full test set's and 70 replicates, end in a chunk of one.)"""
    gold, items = awkward_board()
    labels = ["a", "b", "c"]
    teams = list(items.values())
    aggregates = [Aggregate(m, tuple(c)) for m in METHODS for c in column_sets(labels, primary="kappa").values()]
    expected = reference.bootstrap(gold, teams, labels=labels, replicates=70, seed=SEED)
    monkeypatch.setattr(passes, "TEAMS_PER_BLOCK", 1)
    monkeypatch.setattr(passes, "VALUES_PER_BLOCK", 1)
    monkeypatch.setattr(passes, "MATRICES_PER_CHUNK", 7)
    found = bs.bootstrap(
        gold, teams, labels=labels, replicates=70, seed=SEED, aggregates=aggregates, keep_replicates=True
    )
    for name in ("scores", "ranks", "rho", "observed", "replicate_values", "replicate_ranks"):
        np.testing.assert_array_equal(getattr(found, name), getattr(expected, name), err_msg=name)
    bounds = bs.order_statistics(70, bs.CONFIDENCE)
    for c, column in enumerate(found.columns):
        oracle = reference.behind_leader(
            expected.observed[c], expected.replicate_values[:, c], direction=column.direction, bounds=bounds
        )
        assert found.behind[c].leader == oracle.leader
        np.testing.assert_array_equal(found.behind[c].difference, oracle.difference)
        np.testing.assert_array_equal(found.behind[c].p_holm, oracle.p_holm)
    for aggregate in aggregates:
        for mine, theirs in zip(
            found.aggregate_intervals(aggregate), expected.aggregate_intervals(aggregate), strict=True
        ):
            np.testing.assert_array_equal(mine, theirs)


def test_kept_replicates_compute_only_new_runs_and_give_the_oracle_s_numbers(tmp_path, monkeypatch) -> None:
    """With a store: the first computation computes every team once (twins share their
    values); the next ones only a new team and a re-scored one, and still give the oracle's
    result; another seed, or other gold codes, start afresh."""
    computed = []
    real = replicate_values.column_values
    monkeypatch.setattr(
        replicate_values, "column_values", lambda m, c, labels: computed.append(m.shape[1]) or real(m, c, labels)
    )
    gold, items = awkward_board()
    labels = ["a", "b", "c"]
    store = tmp_path / "store"
    replicates = 210  # two blocks of draws, the second one short
    assert_same_result(gold, labels, items, replicates=replicates, store=store)
    assert sum(computed) == len(items) - 2  # two pairs of twins
    computed.clear()
    assert_same_result(gold, labels, items, replicates=replicates, store=store)
    assert computed == []
    items[100] = items[104].copy()  # re-scored: now a twin of another team
    items[300] = np.zeros(90, dtype=np.int64)  # a newcomer
    items[301] = np.where(np.arange(90) % 3 == 0, 1, gold)
    del items[103]
    assert_same_result(gold, labels, items, replicates=replicates, store=store)
    assert sum(computed) == 2
    computed.clear()
    assert_same_result(gold[::-1].copy(), labels, items, replicates=replicates, store=store)
    assert sum(computed) == len(items) - 2


def test_ties_are_written_again_once_three_teams_came_or_went_and_moved_until_then(tmp_path) -> None:
    """A computation after a few changes moves the last written ties by every team that came
    or went since them; from three such teams it writes its own. Each result is the oracle's."""
    gold, items = awkward_board()
    labels = ["a", "b", "c"]
    store = tmp_path / "store"

    def ties_after(changed: dict) -> str:
        items.update(changed)
        assert_same_result(gold, labels, items, replicates=210, store=store)
        return json.loads((store / "run.json").read_text())["ties"]

    first = ties_after({})
    assert ties_after({100: np.where(np.arange(90) % 4 == 0, 2, gold)}) == first  # re-scored: one gone, one came
    assert ties_after({300: np.zeros(90, dtype=np.int64)}) != first  # a newcomer: three since the first
    written = ties_after({})  # nothing changed since: nothing written
    assert written == ties_after({}) != first
    assert ties_after({301: np.where(np.arange(90) % 3 == 0, 1, gold)}) == written
    again = ties_after({102: items[104].copy()})  # a twin now: three since the last written
    assert again != written
    assert ties_after({}) == again


def write_files(tmp_path, gold, items) -> list[str]:
    (tmp_path / "gold.csv").write_text("id,label\n" + "".join(f"i{k},{LABELS[g]}\n" for k, g in enumerate(gold)))
    names = []
    for team, codes in items.items():
        path = tmp_path / f"team-{team}.csv"
        path.write_text("id,label\n" + "".join(f"i{k},{LABELS[c]}\n" for k, c in enumerate(codes)))
        names.append(str(path))
    return [str(tmp_path / "gold.csv"), *names]


def test_the_cli_gives_the_oracle_s_intervals(tmp_path, capsys) -> None:
    gold, items = demo_board()
    files = write_files(tmp_path, gold, items)
    options = ["--labels", ",".join(LABELS), "--format", "json", "--bootstrap", "300", "--seed", "7"]
    status = main([*files, *options, "--aggregate", "borda"])
    out, err = capsys.readouterr()
    assert status == 0, err
    board = json.loads(out)
    labels = list(LABELS)
    raw = ranking_columns(labels, calibrated=False)
    stability = reference.bootstrap(
        gold, list(items.values()), labels=labels, replicates=300, seed=7,
        columns=ranking_columns(labels, calibrated=None), heatmap=paired_columns(labels),
    )  # fmt: skip
    teams = [f"team-{team}" for team in items]
    expected = reference.stability_json(stability, teams, raw)
    assert as_text({key: board[key] for key in expected}) == as_text(expected)
    values, ranks = stability.aggregate_intervals(Aggregate("borda", tuple(raw)))
    assert board["aggregate_intervals"] == {
        team: {"value": reference.interval_json(values[t]), "rank": reference.interval_json(ranks[t], integral=True)}
        for t, team in enumerate(teams)
    }
