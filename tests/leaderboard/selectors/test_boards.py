"""The counting policies' one-query selection against a plain Python statement of each policy."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from leaderboard.models import Phase, Submission, Team
from leaderboard.selectors.boards import columns_of, counting_submissions, leaderboard
from leaderboard.services.teams import team_create
from scoring.engine import ranking
from scoring.engine.columns import score_fields
from tests.conftest import PERFECT

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


def test_a_board_loads_only_the_json_it_shows(make_task, make_user, submit):
    task = make_task()
    user = make_user("alice")
    team_create(task=task, user=user, name="Alice")
    submit(task, user, PERFECT)
    board = leaderboard(phase=task.current_phase(), calibrated=True)
    deferred = board.entries[0].submission.get_deferred_fields()
    assert {"metrics", "per_class", "confusion_matrix"} <= deferred
    assert not {"calibrated", "calibrated_per_class"} & deferred
