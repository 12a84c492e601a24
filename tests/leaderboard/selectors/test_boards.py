"""The counting policies' one-query selection against a plain Python statement of each policy,
and a board's values read as packed doubles (or from the JSON of rows without them)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from leaderboard.models import Baseline, Phase, Submission, Team
from leaderboard.selectors.boards import board_data, columns_of, counting_submissions
from leaderboard.services.teams import team_create
from scoring.engine import ranking
from scoring.engine.columns import score_fields
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db

# (team, minutes ago, macro F1): ties on the value, on the upload time, and undefined values
SUBMISSIONS = [
    ("Tied values", 30, 0.5),
    ("Tied values", 20, 0.5),
    ("Tied values", 10, 0.25),
    ("Same time", 10, 0.5),
    ("Same time", 10, 0.5),
    ("Undefined", 5, None),
    ("Undefined", 50, 0.75),
    ("All undefined", 5, None),
    ("All undefined", 6, None),
    ("Negative", 1, -0.5),
    ("Negative", 2, -0.25),
]


def reference(phase: Phase) -> dict[int, int]:
    """Each team's counting submission id, as the policies are stated (DESIGN.md)."""
    scored: dict[int, list[Submission]] = {}
    for submission in phase.submissions.scored().order_by("-created_at", "-id"):
        scored.setdefault(submission.team_id, []).append(submission)
    chosen = dict(phase.submissions.filter(chosen=True).values_list("team_id", "pk"))
    counting = {}
    for team_id, submissions in scored.items():
        if phase.counting == Phase.Counting.BEST:
            best = min(
                submissions,
                key=lambda s: (*ranking.sort_key(s.metrics["macro_f1"]), -s.created_at.timestamp()),
            )
        elif phase.counting == Phase.Counting.CHOSEN:
            best = next((s for s in submissions if s.pk == chosen.get(team_id)), submissions[0])
        else:
            best = submissions[0]
        counting[team_id] = best.pk
    return counting


@pytest.mark.parametrize("counting", list(Phase.Counting))
def test_counting_submissions_follow_the_policy(make_task, counting):
    task = make_task(f"policy-{counting}", counting=counting)
    phase = task.current_phase()
    now = timezone.now()
    teams = {name: Team.objects.create(task=task, name=name) for name in dict.fromkeys(n for n, _, _ in SUBMISSIONS)}
    created = [
        Submission.objects.create(
            phase=phase,
            team=teams[name],
            file=phase.gold_file,
            kind=Submission.Kind.HARD,
            status=Submission.Status.SCORED,
            created_at=now - dt.timedelta(minutes=minutes),
            metrics={"macro_f1": value, "accuracy": 0.5},
            per_class={},
        )
        for name, minutes, value in SUBMISSIONS
    ]
    Submission.objects.create(  # newer, but not scored: never counts
        phase=phase,
        team=teams["Negative"],
        file=phase.gold_file,
        kind=Submission.Kind.HARD,
        created_at=now,
    )
    Submission.objects.filter(pk__in=[created[0].pk, created[5].pk]).update(chosen=True)

    counting_ids = {team_id: s.pk for team_id, s in counting_submissions(phase).items()}
    assert counting_ids == reference(phase)
    raw_only = counting_submissions(phase, fields=score_fields(columns_of(task, calibrated=False)))
    assert {team_id: s.pk for team_id, s in raw_only.items()} == counting_ids
    assert all("calibrated" in s.get_deferred_fields() for s in raw_only.values())


def test_a_board_reads_packed_values_and_the_json_only_of_rows_without_them(make_task, make_user, submit):
    task = make_task()
    for name, content in (("Alice", PERFECT), ("Bob", MOSTLY_A)):
        user = make_user(name.lower())
        team_create(task=task, user=user, name=name)
        submit(task, user, content)
    phase = task.current_phase()
    with CaptureQueriesContext(connection) as queries:
        packed = board_data(phase)
    assert len(queries) == 5  # counting submissions, teams, their values, baselines, the analysis rows
    assert not any(field in query["sql"] for query in queries for field in ('"metrics"', '"per_class"', '"parts"'))
    columns = columns_of(task, calibrated=None)
    for row, name in enumerate(packed.names):
        submission = Submission.objects.get(team__name=name)
        assert packed.column_values(columns[0], np.array([row])) == [columns[0].value(submission)]
        assert [packed.value(row, c) for c in columns] == [c.value(submission) for c in columns]
    # A row scored before values were packed (or under other columns) is read from its JSON.
    Submission.objects.filter(team__name="Alice").update(board_values=None, board_layout="")
    Baseline.objects.filter(phase=phase).update(board_layout="an old layout")
    fallback = board_data(phase)
    np.testing.assert_array_equal(fallback.values, packed.values)
    np.testing.assert_array_equal(fallback.ranks, packed.ranks)
    np.testing.assert_array_equal(fallback.baseline_values, packed.baseline_values)


def test_a_board_at_new_scores_reads_only_the_values_its_board_before_lacks(make_task, make_user, submit):
    task = make_task()
    users = {name: make_user(name.lower()) for name in ("Alice", "Bob", "Carol")}
    for name, user in users.items():
        team_create(task=task, user=user, name=name)
    submit(task, users["Alice"], PERFECT)
    submit(task, users["Bob"], PERFECT)
    phase = task.current_phase()
    before = board_data(phase)
    alice = Submission.objects.get(team__name="Alice")
    # Alice's row stands as it was scored (the same score count): taken from the board before,
    # not read again, as a value changed behind the board's back shows.
    Submission.objects.filter(pk=alice.pk).update(board_values=np.full(len(alice.board_values) // 8, 0.125).tobytes())
    submit(task, users["Bob"], MOSTLY_A)  # Bob's new run counts, Carol's first one too
    submit(task, users["Carol"], MOSTLY_A)
    with CaptureQueriesContext(connection) as queries:
        after = board_data(phase, previous=before)
    assert len(queries) == 4  # the teams are the board's before: a change of a team raises the results version
    assert not [query["sql"] for query in queries if 'FROM "leaderboard_team"' in query["sql"]]
    read = [query["sql"] for query in queries if '"board_values"' in query["sql"]]
    assert len(read) == 3  # the new runs' values, the baselines', the analysis'
    new_runs = {str(Submission.objects.filter(team__name=name).latest("pk").pk) for name in ("Bob", "Carol")}
    assert set(re.search(r" IN \(([^)]*)\)", read[0]).group(1).split(", ")) == new_runs
    Submission.objects.filter(pk=alice.pk).update(board_values=alice.board_values)
    fresh = board_data(phase)
    for field in ("submission_ids", "score_counts", "values", "ranks", "matrices", "rescoring"):
        np.testing.assert_array_equal(getattr(after, field), getattr(fresh, field))
    # Scored again (a new gold file): its score count rises, and its values are read anew.
    Submission.objects.filter(pk=alice.pk).update(
        score_count=alice.score_count + 1, board_values=np.full(len(alice.board_values) // 8, 0.125).tobytes()
    )
    again = board_data(phase, previous=after)
    assert np.all(again.values[list(again.names).index("Alice")] == 0.125)
    # A board of other columns is no board before: every value is read.
    other = board_data(phase, previous=replace(before, columns=before.columns[:-1]))
    np.testing.assert_array_equal(other.values, again.values)
