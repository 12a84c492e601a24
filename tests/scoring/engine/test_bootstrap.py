"""Paired bootstrap intervals of scores, ranks and rho (:mod:`scoring.engine.bootstrap`).

What this proves:

- the replicate matrices of all teams (one matrix product per gold class) are exactly the
  matrices of the straightforward way, one weighted ``np.bincount`` per team and replicate, for
  hard labels and for probability rows; matrices are rows predicted, columns gold;
- ranks per replicate are the engine's competition ranks (``ranking.competition_ranks``, ties
  and undefined values included) and rho per replicate is ``ranking.spearman``;
- **coverage by simulation**: data drawn from known class-conditional rates (gold prevalence
  ``PREVALENCE``, ``RATES[i, j]`` = P(predicted i | gold j)); over ``REPETITIONS`` test sets the
  95 % score interval covers the population value (the metric of the expected matrix) in
  ``[0.90, 0.985]`` of them for every metric checked: the binomial standard error at
  300 repetitions is 1.3 %, so the tolerance is about 3.5 standard errors;
- intervals shrink as the test set grows (16 times the items: every width at most half);
- identical teams are always tied: the same rank in every replicate, the same intervals, both
  tied with the leader or neither, always in one group;
- the same seed gives the same intervals; the rules for undefined values, the tie with the
  leader and the groups; and the CLI's JSON (``--bootstrap``, ``--seed``), its layout (with
  ``behind_leader``: every team but each column's leader, a twin of the leader never behind) and
  its errors.
"""

from __future__ import annotations

import json
import sys
import threading
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest
from threadpoolctl import threadpool_info

from scoring.__main__ import main
from scoring.engine import bootstrap as bs
from scoring.engine import compiled, twofold
from scoring.engine import replicate_passes as passes
from scoring.engine.aggregate import BORDA, MEAN_RANK, Aggregate
from scoring.engine.calibration import calibrate
from scoring.engine.columns import Column, paired_columns, ranking_columns
from scoring.engine.rank_order import (
    RankOrder,
    Ties,
    competition_of_totals,
    correlations_of_products,
    keys,
    restricted_rho,
)
from scoring.engine.ranking import competition_ranks, spearman
from scoring.engine.replicates import ReplicateMatrices, column_values, prediction_masses

LABELS = ("negative", "neutral", "positive")
PREVALENCE = np.array([0.32, 0.48, 0.20])
RATES = np.array([[0.70, 0.15, 0.10], [0.20, 0.75, 0.25], [0.10, 0.10, 0.65]])
"""P(predicted i | gold j): each column sums to 1."""
REPETITIONS = 300


def simulate(rng: np.random.Generator, n_items: int, n_teams: int = 1) -> tuple[np.ndarray, list[np.ndarray]]:
    """Gold codes drawn from PREVALENCE and each team's predictions from RATES."""
    gold = rng.choice(3, size=n_items, p=PREVALENCE)
    cumulative = np.cumsum(RATES, axis=0)[:, gold]  # (3, items)
    teams = [(rng.random(n_items) > cumulative).sum(axis=0) for _ in range(n_teams)]
    return gold, teams


def test_replicate_matrices_equal_one_bincount_per_team_and_replicate() -> None:
    rng = np.random.default_rng(3)
    gold, hard = simulate(rng, 500, n_teams=3)
    soft = rng.dirichlet(np.ones(3), size=500)
    for predicted in (hard, [*hard, soft]):
        source = ReplicateMatrices(gold, n_classes=3)
        weights = source.weights(np.random.default_rng(0), 7)
        matrices = source.of_weights(weights, source.parts(predicted))
        in_gold_order = np.empty_like(weights, dtype=np.float64)
        in_gold_order[:, source.order] = weights  # weights are numbered in sorted-item order
        assert in_gold_order.sum(axis=1).tolist() == [500] * 7
        for b in range(7):
            for t, team in enumerate(predicted):
                if team.ndim == 1:
                    expected = np.bincount(team * 3 + gold, weights=in_gold_order[b], minlength=9).reshape(3, 3)
                    np.testing.assert_array_equal(matrices[b, t], expected)
                else:  # each cell the double nearest to the exact weighted sum
                    exact = [[Fraction(0)] * 3 for _ in range(3)]
                    for k in np.flatnonzero(in_gold_order[b]):
                        for i in range(3):
                            exact[i][gold[k]] += int(in_gold_order[b, k]) * Fraction(float(team[k, i]))
                    expected = [[cell.numerator / cell.denominator for cell in row] for row in exact]
                    assert matrices[b, t].tolist() == expected


def test_ranks_and_rho_per_replicate_are_the_engines() -> None:
    rng = np.random.default_rng(5)
    values = rng.integers(0, 4, size=(30, 4, 7)).astype(np.float64)  # many ties
    values[rng.random(values.shape) < 0.15] = np.nan  # undefined values
    values[0, 1] = np.nan  # a column undefined for every team
    values[1, 2] = 2.0  # a ranking that is all ties
    ties = Ties.of_columns(values, np.ones(4))
    ranks = ties.competition()
    rows, cols = np.triu_indices(4)
    rho = restricted_rho(values, np.ones(4), [0, 1, 2, 3], list(zip(rows, cols, strict=True)))
    centred = ties.centred()
    by_products = correlations_of_products(np.matmul(centred, np.swapaxes(centred, 1, 2)), (rows, cols))
    complete = ties.defined.all(axis=-1)  # (replicates, columns)
    both = complete[:, rows] & complete[:, cols]
    np.testing.assert_array_equal(by_products[both], rho[both])  # the sums of products where no team is left out
    for b in range(30):
        for c in range(4):
            column = [None if np.isnan(v) else float(v) for v in values[b, c]]
            assert [r or None for r in ranks[b, c].tolist()] == competition_ranks(column)
        for pair, (first, second) in enumerate(zip(rows, cols, strict=True)):
            a = [None if np.isnan(v) else float(v) for v in values[b, first]]
            c = [None if np.isnan(v) else float(v) for v in values[b, second]]
            expected = spearman(a, c).rho
            if expected is None:
                assert np.isnan(rho[b, pair])
            else:
                assert rho[b, pair] == expected  # both correctly rounded: the same double


def test_ties_updated_for_teams_that_came_and_went_are_those_of_a_sort() -> None:
    """A team's count of better teams and of teams tied with it, updated for each team that
    left or came (an undefined one counts for none), equals the count from a sort of the
    current teams, ties, undefined values and twins included."""
    rng = np.random.default_rng(17)
    for _ in range(20):
        earlier = rng.integers(0, 6, size=(9, 12)).astype(np.float64)
        earlier[rng.random(earlier.shape) < 0.1] = np.nan
        gone = rng.choice(12, size=rng.integers(0, 4), replace=False)
        stay = np.setdiff1d(np.arange(12), gone)
        came = rng.integers(0, 6, size=(9, rng.integers(0, 4))).astype(np.float64)
        came[rng.random(came.shape) < 0.1] = np.nan
        now = np.concatenate([earlier[:, stay], came, earlier[:, stay[:1]]], axis=1)  # a twin of a team that stayed
        order = rng.permutation(now.shape[1])
        now = now[:, order]
        position = {team: index for index, team in enumerate(order)}
        kept = np.array([position[index] for index in range(len(stay))])
        sign = rng.choice([-1.0, 1.0])
        before = Ties.of(earlier, sign)
        found = Ties.changed(
            before.better,
            before.tied,
            now=keys(now, sign),
            kept=kept,
            before=stay,
            removed=keys(earlier[:, gone], sign),
        )
        expected = Ties.of(now, sign)
        for name in ("better", "tied", "defined"):
            np.testing.assert_array_equal(getattr(found, name), getattr(expected, name))
        np.testing.assert_array_equal(found.competition(), RankOrder.of(now, sign).competition())
        np.testing.assert_array_equal(found.centred(), RankOrder.of(now, sign).centred())


COVERAGE_COLUMNS = [
    Column("accuracy"),
    Column("macro_recall"),
    Column("macro_f1"),
    Column("kappa"),
    Column("mcc"),
    Column("gmean_recall"),
    Column("macro_f1", calibrated=True),
    Column("recall", "positive"),
]


def population_value(column: Column) -> float:
    expected = RATES * PREVALENCE[None, :]
    matrix = calibrate(expected) if column.calibrated else expected
    if column.label is None:
        return column.metric(matrix)
    return column.metric(matrix)[LABELS.index(column.label)]


def test_score_intervals_cover_the_population_value_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(2024)
    truth = np.array([population_value(column) for column in COVERAGE_COLUMNS])
    covered = np.zeros(len(COVERAGE_COLUMNS))
    for repetition in range(REPETITIONS):
        gold, teams = simulate(rng, 1000)
        stability = bs.bootstrap(
            gold,
            teams,
            labels=LABELS,
            replicates=300,
            seed=repetition,
            columns=COVERAGE_COLUMNS,
            heatmap=COVERAGE_COLUMNS[:1],
        )
        low, high = stability.scores[:, 0, 0], stability.scores[:, 0, 1]
        covered += (low <= truth) & (truth <= high)
    coverage = dict(zip((c.id for c in COVERAGE_COLUMNS), covered / REPETITIONS, strict=True))
    assert all(0.90 <= share <= 0.985 for share in coverage.values()), coverage


def test_intervals_shrink_as_the_test_set_grows() -> None:
    widths = {}
    for n_items in (400, 6400):
        gold, teams = simulate(np.random.default_rng(n_items), n_items, n_teams=3)
        stability = bs.bootstrap(gold, teams, labels=LABELS, replicates=200, seed=1)
        widths[n_items] = stability.scores[..., 1] - stability.scores[..., 0]
    assert not np.isnan(widths[400]).any() and not np.isnan(widths[6400]).any()
    assert np.all(widths[6400] <= 0.5 * widths[400])


def test_identical_teams_are_always_tied() -> None:
    gold, teams = simulate(np.random.default_rng(11), 300, n_teams=4)
    soft = np.random.default_rng(12).dirichlet(np.ones(3), size=300)
    predicted = [teams[0], teams[1], teams[0].copy(), teams[2], teams[3], soft, soft.copy()]
    twins = [(0, 2), (5, 6)]
    columns = ranking_columns(LABELS, calibrated=None)
    source = ReplicateMatrices(gold, n_classes=3)
    matrices = source.of_weights(source.weights(np.random.default_rng(0), 150), source.parts(predicted))
    ranks = RankOrder.of(np.moveaxis(column_values(matrices, columns, LABELS), 0, 1)).competition()
    stability = bs.bootstrap(gold, predicted, labels=LABELS, replicates=300, seed=4)
    for first, second in twins:
        np.testing.assert_array_equal(ranks[:, :, first], ranks[:, :, second])
        np.testing.assert_array_equal(stability.ranks[:, first], stability.ranks[:, second])
        np.testing.assert_array_equal(stability.scores[:, first], stability.scores[:, second])
        for column in columns:
            tied = stability.tied_with_leader(column)
            assert (first in tied) == (second in tied)
            assert any(first in group and second in group for group in stability.groups(column))


def test_quantile_levels_are_exact() -> None:
    """(1 - 0.95) / 2 is 0.025000000000000022 in doubles, which made every lower bound the 26th
    of 1,000 ordered values (the 6th of 200): the levels are exact fractions."""
    assert bs.order_statistics(1000, 0.95) == (25, 975)
    assert bs.order_statistics(200, 0.95) == (5, 195)
    assert bs.order_statistics(1000, 0.9) == (50, 950)
    samples = np.random.default_rng(0).permutation(np.arange(1.0, 1001.0))[:, None]
    interval = bs.percentile_interval(samples, undefined=np.zeros_like(samples, dtype=bool))
    assert interval.tolist() == [[25.0, 975.0]]


def test_equal_values_are_equal_doubles_in_every_replicate() -> None:
    """Accuracy and prevalence-weighted recall are one fraction (trace / N): in every replicate
    they are one double, the two rankings are identical and rho between them is exactly 1, as
    on the board (it was [0.9999999999999998, 0.9999999999999998], and [0.994, 1.0] on the
    SemEval-2017 demo)."""
    gold, teams = simulate(np.random.default_rng(21), 400, n_teams=6)
    columns = [Column("accuracy"), Column("weighted_recall"), Column("accuracy", calibrated=True)]
    columns.append(Column("macro_recall"))
    stability = bs.bootstrap(
        gold, teams, labels=LABELS, replicates=200, seed=3, columns=columns, heatmap=columns, keep_replicates=True
    )
    values = stability.replicate_values
    np.testing.assert_array_equal(values[:, 0], values[:, 1])
    np.testing.assert_array_equal(values[:, 2], values[:, 3])  # calibrated accuracy is macro recall
    assert stability.rho[0, 1].tolist() == [1.0, 1.0]
    assert stability.rho[2, 3].tolist() == [1.0, 1.0]
    assert stability.rho[0, 0].tolist() == [1.0, 1.0]


def test_same_seed_same_intervals_and_blocks_do_not_matter_for_the_shape() -> None:
    gold, teams = simulate(np.random.default_rng(8), 200, n_teams=3)
    runs = [bs.bootstrap(gold, teams, labels=LABELS, replicates=bs.BLOCK_SIZE + 50, seed=seed) for seed in (1, 1, 2)]
    for field in ("scores", "ranks", "rho"):
        np.testing.assert_array_equal(getattr(runs[0], field), getattr(runs[1], field))
    assert not np.array_equal(runs[0].scores, runs[2].scores)
    heatmap = paired_columns(LABELS)
    assert runs[0].rho.shape == (len(heatmap), len(heatmap), 2)
    np.testing.assert_array_equal(runs[0].rho, np.swapaxes(runs[0].rho, 0, 1))


@pytest.mark.parametrize("cores", [1, 3])
def test_the_blocks_evaluated_side_by_side_give_the_numbers_of_one_thread(monkeypatch, cores) -> None:
    """Blocks are drawn in order and evaluated on several threads: every replicate's values and
    ranks, and the observed values, are those of evaluating them one after the other."""
    gold, teams = simulate(np.random.default_rng(9), 300, n_teams=4)
    monkeypatch.setattr(passes, "available_cores", lambda: 1)
    alone = bs.bootstrap(gold, teams, labels=LABELS, replicates=3 * bs.BLOCK_SIZE + 7, seed=5, keep_replicates=True)
    monkeypatch.setattr(passes, "available_cores", lambda: cores + 1)
    together = bs.bootstrap(gold, teams, labels=LABELS, replicates=3 * bs.BLOCK_SIZE + 7, seed=5, keep_replicates=True)
    for field in ("replicate_values", "replicate_ranks", "observed", "scores", "ranks", "rho"):
        np.testing.assert_array_equal(getattr(alone, field), getattr(together, field))


def test_a_process_with_the_compiled_loops_loaded_gives_the_same_numbers(monkeypatch) -> None:
    """What a large bootstrap loads (:mod:`scoring.engine.compiled`), here for every array and
    sort of a small one with undefined values among them: the same replicates, ranks, intervals
    and rho as numpy's routes."""
    gold, teams = simulate(np.random.default_rng(10), 300, n_teams=6)
    teams[5] = np.zeros_like(teams[5])  # one class only: some columns undefined in every replicate
    monkeypatch.setattr(compiled, "_loaded", False)
    arrays = bs.bootstrap(gold, teams, labels=LABELS, replicates=bs.BLOCK_SIZE + 20, seed=3, keep_replicates=True)
    compiled.load()
    monkeypatch.setattr(twofold, "KERNEL_SIZE", 1)
    loops = bs.bootstrap(gold, teams, labels=LABELS, replicates=bs.BLOCK_SIZE + 20, seed=3, keep_replicates=True)
    for field in ("replicate_values", "replicate_ranks", "observed", "scores", "ranks", "rho"):
        np.testing.assert_array_equal(getattr(arrays, field), getattr(loops, field))
    assert np.isnan(arrays.replicate_values).any()


@pytest.mark.parametrize("cores", [1, 2, 3])
def test_the_work_goes_in_blocks_of_one_size_give_or_take_one_and_as_many_for_each_core(monkeypatch, cores) -> None:
    monkeypatch.setattr(passes, "available_cores", lambda: cores)
    for count, most in [(100, 32), (3000, 32), (1000, 200), (1, 32), (7, 7), (10000, 24), (0, 5)]:
        blocks = passes.even_blocks(count, most)
        sizes = [len(block) for block in blocks]
        assert [i for block in blocks for i in block] == list(range(count))
        assert not blocks or (max(sizes) <= most and max(sizes) - min(sizes) <= 1)
        assert len(blocks) == count or len(blocks) % cores == 0, "every core as many blocks"
        assert len(blocks) < -(-count // most) + cores, "no more blocks than that takes"
    if cores == 2:
        assert [len(block) for block in passes.even_blocks(100, 32)] == [25, 25, 25, 25]


def test_the_blas_runs_one_thread_while_the_blocks_take_every_core() -> None:
    def blas_threads(_) -> list[int]:
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    before = blas_threads(None)
    inside = passes.on_all_cores(blas_threads, range(4))  # numpy's OpenBLAS (and scipy's, once loaded)
    assert len(inside) == 4 and all(threads and set(threads) == {1} for threads in inside)
    assert blas_threads(None) == before, "as many as before once the blocks are done"


def test_undefined_in_any_replicate_makes_the_interval_undefined() -> None:
    gold, teams = simulate(np.random.default_rng(9), 60, n_teams=2)
    gold[:2] = 2  # a class with two gold items: some resampled test sets lack it
    gold[2:][gold[2:] == 2] = 0
    always_neutral = np.ones(60, dtype=np.int64)  # one predicted class: MCC undefined
    stability = bs.bootstrap(gold, [*teams, always_neutral], labels=LABELS, replicates=200, seed=3)
    mcc, mcc_c = stability.index(Column("mcc")), stability.index(Column("mcc", calibrated=True))
    assert np.isnan(stability.scores[mcc, 2]).all() and np.isnan(stability.ranks[mcc, 2]).all()
    assert not np.isnan(stability.ranks[mcc, :2]).any()  # the others are ranked without it
    assert np.isnan(stability.scores[mcc_c]).all()  # calibration undefined in some replicate
    assert stability.tied_with_leader(Column("mcc", calibrated=True)) == []
    assert stability.groups(Column("mcc", calibrated=True)) == []


def test_tied_with_leader_and_groups_follow_the_rank_intervals() -> None:
    column = Column("accuracy")
    ranks = np.array([[[1, 2], [1, 3], [3, 4], [5, 6], [4, 5], [np.nan, np.nan]]], dtype=np.float64)
    stability = bs.Stability(
        replicates=1,
        seed=0,
        confidence=0.95,
        columns=(column,),
        scores=np.zeros((1, 6, 2)),
        ranks=ranks,
        heatmap=(column,),
        rho=np.zeros((1, 1, 2)),
    )
    assert stability.tied_with_leader(column) == [0, 1]
    assert stability.groups(column) == [[0, 1, 2, 4, 3]]
    ranks[0, 2] = [4, 4]
    ranks[0, 4] = [6, 6]
    assert stability.groups(column) == [[0, 1], [2], [3, 4]]


# --- the command line -------------------------------------------------------------------------


def write_board(directory: Path) -> tuple[str, list[str]]:
    gold, teams = simulate(np.random.default_rng(21), 120, n_teams=3)
    rows = [f"{i},{LABELS[code]}\n" for i, code in enumerate(gold)]
    (directory / "gold.csv").write_text("id,label\n" + "".join(rows))
    paths = []
    for name, team in (("a", teams[0]), ("b", teams[1]), ("a-twin", teams[0]), ("c", teams[2])):
        path = directory / f"{name}.csv"
        path.write_text("id,label\n" + "".join(f"{i},{LABELS[code]}\n" for i, code in enumerate(team)))
        paths.append(str(path))
    soft = np.random.default_rng(22).dirichlet(np.ones(3), size=120)
    path = directory / "soft.csv"
    lines = "".join(f"{i},{','.join(f'{p:.6f}' for p in row)}\n" for i, row in enumerate(soft))
    path.write_text("id," + ",".join(LABELS) + "\n" + lines)
    paths.append(str(path))
    return str(directory / "gold.csv"), paths


def run(capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_adds_intervals_to_the_json_board(tmp_path, capsys) -> None:
    gold, predictions = write_board(tmp_path)
    status, out, err = run(capsys, gold, *predictions, "--bootstrap", "250", "--seed", "1", "--format", "json")
    assert status == 0, err
    board = json.loads(out, parse_constant=lambda constant: pytest.fail(f"{constant} in JSON"))
    teams = board["teams"]
    assert board["bootstrap"] == {
        "replicates": 250,
        "seed": 1,
        "confidence": 0.95,
        "percentile_method": "inverted_cdf",
        "block_size": bs.BLOCK_SIZE,
    }
    for section in ("raw", "calibrated"):
        assert set(board["intervals"][section]) == set(board["ranks"][section])
        for column_id, by_team in board["intervals"][section].items():
            assert list(by_team) == teams
            for team, cell in by_team.items():
                assert set(cell) == {"score", "rank"}
                assert cell["score"] is None or cell["score"][0] <= cell["score"][1]
                if cell["rank"] is not None:
                    best, worst = cell["rank"]
                    assert isinstance(best, int) and 1 <= best <= worst <= len(teams)
                    assert (best == 1) == (team in board["tied_with_leader"][section][column_id])
            assert by_team["a"] == by_team["a-twin"]
            groups = board["indistinguishable"][section][column_id]
            in_groups = [team for group in groups for team in group]
            assert sorted(in_groups) == sorted(t for t in teams if by_team[t]["rank"] is not None)
            if by_team["a"]["rank"] is not None:
                assert any("a" in group and "a-twin" in group for group in groups)
            behind = board["behind_leader"][section][column_id]
            leaders = [team for team in teams if board["ranks"][section][column_id][team] == 1]
            assert list(behind) == [team for team in teams if not leaders or team != leaders[0]]
            for team, cell in behind.items():
                assert set(cell) == {"difference", "p_holm"}
                assert cell["difference"] is None or cell["difference"][0] <= cell["difference"][1]
                assert cell["p_holm"] is None or 1 / 251 <= cell["p_holm"] <= 1
                if leaders and leaders[0] == "a" and team == "a-twin":
                    assert cell == {"difference": [0.0, 0.0], "p_holm": 1.0}  # tied in every replicate
    assert set(board["behind_leader"]) == {"raw", "calibrated"}
    rho = board["spearman"]["rho"]
    cells = board["spearman_intervals"]
    assert len(cells) == len(rho) and all(len(row) == len(rho) for row in cells)
    assert all(cell is None or (len(cell) == 2 and cell[0] <= cell[1]) for row in cells for cell in row)
    again = run(capsys, gold, *predictions, "--bootstrap", "250", "--seed", "1", "--format", "json")[1]
    other = run(capsys, gold, *predictions, "--bootstrap", "250", "--seed", "2", "--format", "json")[1]
    assert again == out and other != out


def test_cli_without_bootstrap_has_no_intervals(tmp_path, capsys) -> None:
    gold, predictions = write_board(tmp_path)
    board = json.loads(run(capsys, gold, *predictions, "--format", "json")[1])
    assert not {"bootstrap", "intervals", "spearman_intervals", "behind_leader"} & set(board)


@pytest.mark.parametrize(
    "more",
    [["--format", "text"], ["--format", "latex"], ["--format", "json", "--bootstrap", "0"]],
)
def test_cli_bootstrap_needs_a_json_board(tmp_path, capsys, more) -> None:
    gold, predictions = write_board(tmp_path)
    status, out, err = run(capsys, gold, *predictions, "--bootstrap", "10", *more)
    assert status == 2 and out == "" and "--bootstrap" in err
    status, out, err = run(capsys, gold, predictions[0], "--bootstrap", "10", "--format", "json")
    assert status == 2 and out == "" and "--bootstrap" in err


def test_cli_writes_every_replicate_so_that_a_reader_recomputes_the_intervals(tmp_path, capsys) -> None:
    """``--bootstrap-replicates FILE``: pandas and numpy read it, and the order statistics the
    README names (the ceil(B·0.025)-th and ceil(B·0.975)-th of each column's values) give the
    JSON's intervals, scores and ranks, for every column and team."""
    import pandas as pd

    gold, predictions = write_board(tmp_path)
    replicates_file = tmp_path / "replicates.csv"
    status, out, err = run(
        capsys, gold, *predictions, "--bootstrap", "200", "--seed", "3", "--format", "json",
        "--bootstrap-replicates", str(replicates_file),
    )  # fmt: skip
    assert status == 0, err
    board = json.loads(out)
    table = pd.read_csv(replicates_file)
    assert list(table.columns) == ["replicate", "column", "team", "value", "rank"]
    assert len(table) == 200 * len(board["teams"]) * 2 * len(board["ranks"]["raw"])
    values = np.loadtxt(replicates_file, delimiter=",", skiprows=1, usecols=3, quotechar='"', dtype=str)
    assert len(values) == len(table)
    low, high = 5, 195  # of 200 ordered values
    for section, suffix in (("raw", ""), ("calibrated", "_c")):
        for column_id, per_team in board["intervals"][section].items():
            for team, interval in per_team.items():
                rows = table[(table["column"] == column_id + suffix) & (table["team"] == team)]
                if interval["score"] is None:
                    assert rows["value"].isna().any()
                    continue
                ordered = np.sort(rows["value"].to_numpy())
                assert [ordered[low - 1], ordered[high - 1]] == interval["score"], (column_id, team)
                ranks = np.sort(rows["rank"].to_numpy())
                assert [ranks[low - 1], ranks[high - 1]] == interval["rank"], (column_id, team)


def test_cli_replicates_need_the_bootstrap(tmp_path, capsys) -> None:
    gold, predictions = write_board(tmp_path)
    status, _, err = run(capsys, gold, *predictions, "--format", "json", "--bootstrap-replicates", "x.csv")
    assert status == 2 and "--bootstrap-replicates" in err


def test_the_constants_of_the_pairs_do_not_depend_on_what_another_thread_does_with_mpmath() -> None:
    """The blocks of a bootstrap are evaluated on several threads, and the first evaluation of a
    logarithm or of discriminant power computes constants with mpmath: at mpmath's global
    precision, which another thread may be changing meanwhile, they could come out wrong, and
    with them every value of that process."""
    expected = (*twofold._log_table(), twofold._dp_factor().hi, twofold._dp_factor().lo)
    stop = threading.Event()
    precision = mpmath.mp.prec  # the oracle of other tests works at 400 bits: given back after

    def meddle() -> None:
        while not stop.is_set():
            mpmath.mp.prec = 10
            mpmath.mp.prec = 53

    meddler = threading.Thread(target=meddle)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns often, as two busy cores would have them
    meddler.start()
    try:
        for _ in range(20):
            twofold._log_table.cache_clear()
            twofold._dp_factor.cache_clear()
            found = (*twofold._log_table(), twofold._dp_factor().hi, twofold._dp_factor().lo)
            assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))
    finally:
        stop.set()
        meddler.join()
        sys.setswitchinterval(interval)
        mpmath.mp.prec = precision


def test_the_replicates_count_each_team_s_own_predictions() -> None:
    """The one-hot masses of a block of hard-label teams: each team's matrix on the full test
    set is its confusion matrix, and a class code outside the labels is refused, not counted
    in a neighbour's column."""
    gold, teams = simulate(np.random.default_rng(5), 200, n_teams=3)
    source = ReplicateMatrices(gold, n_classes=3)
    matrices = source.of_weights(np.ones((1, len(gold)), dtype=np.int32), source.parts(teams))[0]
    for team, matrix in zip(teams, matrices, strict=True):
        expected = np.zeros((3, 3))
        np.add.at(expected, (team, gold), 1)
        np.testing.assert_array_equal(matrix, expected)
    with pytest.raises(ValueError, match="class codes run from 0 to 2"):
        source.parts([teams[0], np.full(len(gold), 3)])
    with pytest.raises(ValueError, match="class codes run from 0 to 2"):
        prediction_masses(np.array([0, -1, 2]), 3)  # a negative code counted nowhere, not in the last class


@pytest.mark.parametrize("method", [MEAN_RANK, BORDA])
def test_the_overall_rankings_rank_each_replicate_s_totals_as_a_board_ranks_their_values(method: str) -> None:
    """Ties of totals share a rank, a total of -1 (a team without a rank under some column) has
    none, whichever way the method's values go."""
    aggregate = Aggregate(method, tuple(ranking_columns(LABELS)[:5]))
    totals = np.random.default_rng(3).integers(-1, 40, size=(30, 200))  # many ties, some undefined
    places = competition_of_totals(totals, aggregate.direction.value)
    for row, total in zip(places, totals, strict=True):
        values = [None if v != v else v for v in aggregate.of_totals(total).tolist()]
        expected = [0 if rank is None else rank for rank in competition_ranks(values, aggregate.direction)]
        assert row.tolist() == expected
