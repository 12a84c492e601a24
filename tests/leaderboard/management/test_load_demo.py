"""The demo reproduces Table 8 of paper 000 and bears out Figure 2's statements.

The confusion matrices of ``leaderboard/demo_table8.py`` were reconstructed to match every
printed column; these tests recompute each column with the engine, then load the demo through
the real upload path and check the leaderboard and the rank correlations of its evaluation
phase (the demo's current phase; its development phase is a smaller set of its own).
"""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.urls import reverse

from leaderboard.demo_table8 import GOLD_COUNTS, LABELS, MATRICES, TABLE8, TABLE8_COLUMNS
from leaderboard.management.commands.load_demo import CONTRASTIVE_TEAMS, DEV_ITEMS, ROOT_SLUG, SLUG, SUBTASK_B_SLUG
from leaderboard.models import Phase, Submission, Task
from leaderboard.selectors.boards import column_by_id, columns_of, leaderboard, rank_correlations
from leaderboard.uploads import gold_bytes, stored_gold, submission_bytes
from scoring.engine.formatting import value_text
from scoring.engine.suite import score_matrix
from tests.scoring.analysis_oracle import column_values, expected_analysis

# Table 8's columns as (metric key, calibrated?) of the suite; r1..r3 are class recalls.
COLUMN_KEYS = {
    "macR": ("macro_recall", False),
    "GmacR": ("gmean_recall", False),
    "HmacR": ("hmean_recall", False),
    "macF1": ("macro_f1", False),
    "macF1c": ("macro_f1", True),
    "kappa": ("kappa", False),
    "mcc": ("mcc", False),
    "r1": ("recall[negative]", False),
    "r2": ("recall[neutral]", False),
    "r3": ("recall[positive]", False),
}


def reproduces(value: float, printed: float) -> bool:
    """True if 100 * value rounds to the printed one-decimal percentage."""
    return abs(100 * value - printed) < 0.05


@pytest.mark.parametrize("team", sorted(MATRICES))
def test_every_column_of_table8_reproduces(team):
    matrix = np.array(MATRICES[team])
    assert matrix.sum(axis=0).tolist() == list(GOLD_COUNTS)
    report = score_matrix(matrix, labels=LABELS)
    for column, printed in zip(TABLE8_COLUMNS, TABLE8[team], strict=True):
        key, calibrated = COLUMN_KEYS[column]
        if key.startswith("recall["):
            value = report.per_class[key[7:-1]]["recall"]
        else:
            value = (report.calibrated if calibrated else report.metrics)[key]
        assert reproduces(value, printed), f"team {team}, {column}: {100 * value:.4f} vs printed {printed}"


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    return Task.objects.get(slug=SLUG)


def evaluation(task: Task) -> Phase:
    return task.phases.get(slug="evaluation")


def test_demo_loads_through_the_upload_path_and_scores_everything(demo):
    assert demo.labels == list(LABELS)
    assert demo.current_phase() == evaluation(demo)
    assert Submission.objects.filter(phase=evaluation(demo)).count() == len(MATRICES)
    assert not Submission.objects.filter(phase__task=demo).exclude(status=Submission.Status.SCORED).exists()
    board = leaderboard(phase=evaluation(demo), calibrated=None)
    assert len(board.entries) == len(MATRICES)
    for entry in board.entries:
        team = entry.name.removeprefix("Team ")
        submission = Submission.objects.get(pk=entry.submission_id)
        assert submission.confusion_matrix == [list(row) for row in MATRICES[team]]
        for column, printed in zip(TABLE8_COLUMNS, TABLE8[team], strict=True):
            key, calibrated = COLUMN_KEYS[column]
            board_column = column_by_id(demo, key + ("_c" if calibrated else ""))
            assert reproduces(board_column.value(submission), printed)
            assert entry.values[board_column.id] == board_column.value(submission)  # the board's packed values


def test_demo_is_idempotent(demo):
    call_command("load_demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert Task.objects.filter(slug=SLUG).count() == 1
    assert demo.phases.count() == 2
    assert Submission.objects.filter(phase__task=demo).count() == 2 * len(MATRICES)


def test_demo_runs_in_two_closed_phases_with_every_team_scored_in_each(demo):
    development, final = demo.ordered_phases()
    assert (development.slug, final.slug) == ("development", "evaluation")
    assert development.visibility == Phase.Visibility.PUBLIC
    assert final.visibility == Phase.Visibility.AFTER_CLOSE
    assert development.is_closed() and final.is_closed() and final.results_public() and demo.is_over()
    assert demo.open_phase() is None
    assert len(stored_gold(development).ids) == DEV_ITEMS == 1500
    assert len(stored_gold(final).ids) == sum(GOLD_COUNTS)
    for phase in (development, final):
        board = leaderboard(phase=phase)
        assert len(board.scored) == len(MATRICES) and not board.unscored, phase.slug
        assert phase.submissions.count() == len(MATRICES)
    every_team = set(demo.community.teams.values_list("pk", flat=True))  # the teams of SemEval-2017 Task 4
    assert len(every_team) == len(MATRICES)
    for phase in (development, final):
        assert set(phase.submissions.values_list("team_id", flat=True)) == every_team, phase.slug


def test_the_demo_is_a_task_of_two_subtasks_with_one_set_of_teams(demo):
    root = Task.objects.get(slug=ROOT_SLUG)
    assert demo.parent == root and root.is_divided and not root.phases.exists()
    subtask_b = Task.objects.get(slug=SUBTASK_B_SLUG)
    assert subtask_b.parent == root and subtask_b.labels == ["negative", "positive"]
    (phase,) = subtask_b.ordered_phases()
    assert phase.contrastive_runs == 1 and phase.counting == Phase.Counting.CHOSEN
    gold = stored_gold(phase)
    assert len(gold.ids) == GOLD_COUNTS[0] + GOLD_COUNTS[2]  # the test tweets that are not neutral
    assert set(gold.ids) < set(stored_gold(evaluation(demo)).ids)
    board = leaderboard(phase=phase)
    assert sorted(entry.name for entry in board.scored) == sorted(f"Team {name}" for name in MATRICES)
    assert sorted(run.name for run in board.contrastive) == sorted(f"Team {name}" for name in CONTRASTIVE_TEAMS)
    counted = {entry.submission_id for entry in board.scored}
    assert all(Submission.objects.get(pk=pk).chosen for pk in counted)  # each team's primary run
    assert not counted & {run.submission_id for run in board.contrastive}


def test_figure2_calibrated_kappa_ranks_exactly_as_macro_recall(demo):
    correlations = rank_correlations(phase=evaluation(demo), column_ids=["kappa_c", "macro_recall", "kappa"])
    assert correlations.matrix["kappa_c"]["macro_recall"].rho == pytest.approx(1.0)
    assert correlations.matrix["kappa_c"]["macro_recall"].n_teams == len(MATRICES)
    assert correlations.matrix["kappa"]["macro_recall"].rho < 1.0


def test_figure2_recall_of_class_2_disagrees_with_the_others(demo):
    """Figure 2: R2 disagrees with all other metrics (rho <= .14). With Table 8's own values
    that holds for every metric but HmacR and accuracy, which rank close to R2's order."""
    others = [
        "macro_recall",
        "macro_precision",
        "macro_f1",
        "macro_f1_of_averages",
        "kappa",
        "mcc",
        "gmean_recall",
        "recall[negative]",
        "recall[positive]",
    ]
    ids = ["recall[neutral]", *others, *(key + "_c" for key in others)]
    correlations = rank_correlations(phase=evaluation(demo), column_ids=ids)
    for other in ids[1:]:
        assert correlations.matrix["recall[neutral]"][other].rho <= 0.14, other


def read_labels_csv(content: bytes) -> dict[str, str]:
    """An ``id,label`` file as plain Python reads it."""
    rows = csv.reader(io.StringIO(content.decode()))
    assert next(rows) == ["id", "label"]
    return dict(rows)


def test_the_analysis_of_subtask_a_equals_an_independent_computation_from_the_runs_files(demo, client):
    """The analysis page and the board's two rows of the evaluation phase against what plain
    Python computes from the gold file and the eight files as uploaded (fractions, rounded once:
    ``tests/scoring/analysis_oracle.py``)."""
    phase = evaluation(demo)
    gold_by_id = read_labels_csv(gold_bytes(phase))
    ids = list(gold_by_id)
    gold = [gold_by_id[item] for item in ids]
    board_url = reverse("leaderboard:leaderboard_json", args=[demo.slug, phase.slug])
    board = json.loads(client.get(board_url).content)
    runs = {}
    for row in (row for row in board["rows"] if row["kind"] == "team"):  # first under the primary metric first
        labels = read_labels_csv(submission_bytes(Submission.objects.get(pk=row["submission"])))
        runs[row["name"]] = [labels[item] for item in ids]
    keys = list(Submission.objects.filter(phase=phase).first().metrics)
    expected = expected_analysis(gold, runs, keys, list(LABELS))

    columns = columns_of(demo, calibrated=None)
    rows = {row["kind"]: dict(row["values"]) for row in board["rows"] if row["kind"] in ("majority_vote", "oracle")}
    assert [row.pop("mean_rank") for row in rows.values()] == [None, None]  # never ranked: no overall rank
    assert rows["majority_vote"] == column_values(expected["majority_labels"], gold, columns, list(LABELS))
    assert rows["oracle"] == column_values(expected["oracle_labels"], gold, columns, list(LABELS))

    found = json.loads(client.get(reverse("leaderboard:analysis_json", args=[demo.slug, phase.slug])).content)
    assert found["status"] == "current" and found["teams"] == len(MATRICES)
    assert found["majority_vote"]["ties"] == expected["ties"]
    assert (found["majority_vote"]["metrics"], found["majority_vote"]["calibrated"]) == expected["majority"]
    assert (found["oracle"]["metrics"], found["oracle"]["calibrated"]) == expected["oracle"]
    assert (found["oracle"]["accuracy"], found["oracle"]["macro_recall"]) == (
        expected["oracle_accuracy"],
        expected["oracle_macro_recall"],
    )
    assert found["unsolved"] == expected["unsolved"]
    order = expected["order"]
    assert found["agreement"]["teams"] == order
    position = {team: index for index, team in enumerate(runs)}
    assert found["agreement"]["kappa"] == [[expected["kappa"][position[a]][position[b]] for b in order] for a in order]
    assert found["agreement"]["clustering"]["merges"] == expected["merges"]

    page = client.get(reverse("leaderboard:analysis", args=[demo.slug, phase.slug])).content.decode()
    for label, count in expected["unsolved"].items():
        assert (
            f'<th scope="row">{label}</th><td class="num">{gold.count(label):,}</td><td class="num">{count:,}</td>'
            in page
        )
    for column in ("accuracy", "macro_recall", "kappa_c"):
        assert value_text(rows["majority_vote"][column]) in page
        assert value_text(rows["oracle"][column]) in page
    shown = client.get(reverse("leaderboard:leaderboard", args=[demo.slug, phase.slug])).content.decode()
    vote_row = shown[shown.index("Majority vote of the teams") : shown.index("Oracle (any team right)")]
    assert value_text(rows["majority_vote"]["macro_recall"]) in vote_row
