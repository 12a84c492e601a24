"""A phase without its gold file, in the services: what reads the gold file copes.

What this proves: a phase created without one waits (version 0, no baselines); changing its
split asks for no baselines; a run left queued in it (one imported, or queued before) is not
scored and not failed, and is scored once the gold file is given; its intervals are not
computed; the recovery sweep passes it by; giving the gold file opens it at version 1 with its
baselines.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from leaderboard import derived
from leaderboard.models import Phase, PhaseAnalysis, StoredFile, Submission
from leaderboard.services.organisers import team_remove
from leaderboard.services.scoring import lost_runs, submission_score
from leaderboard.services.tasks import gold_confirm, gold_preview, phase_create, phase_update
from leaderboard.services.teams import team_create
from tests.conftest import GOLD, PERFECT

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(task) -> Phase:
    """A second phase of the toy task, to come, without its gold file."""
    now = timezone.now()
    return phase_create(
        task=task, name="Test", slug="test", opens_at=now + dt.timedelta(days=2), closes_at=now + dt.timedelta(days=3)
    )


def test_a_phase_created_without_gold_waits_for_it(waiting):
    assert waiting.waits_for_gold and waiting.gold_version == 0 and not waiting.baselines.exists()
    phase_update(phase=waiting, settings={"private_percent": 30})
    waiting.refresh_from_db()
    assert waiting.private_percent == 30 and not waiting.baselines.exists()
    assert derived.compute("intervals", waiting.pk) == "nothing to compute"


def test_a_run_queued_in_a_waiting_phase_is_scored_once_the_gold_file_is_given(
    waiting, make_user, django_capture_on_commit_callbacks
):
    alice = make_user("alice")
    team = team_create(task=waiting.task, user=alice, name="Alpha")
    stored = StoredFile.of(name="run.csv", content=PERFECT)
    stored.save()
    run = Submission.objects.create(phase=waiting, team=team, file=stored, kind=Submission.Kind.HARD)
    assert submission_score(submission_id=run.pk) == "waits for its phase's gold file"
    run.refresh_from_db()
    assert run.status == Submission.Status.QUEUED and run.failure == ""
    assert lost_runs(now=timezone.now() + dt.timedelta(days=1)) == []
    assert not waiting.task.submissions.needing_scoring(stuck_after=dt.timedelta(0)).exists()
    change = gold_preview(phase=waiting, gold_name="gold.csv", gold_content=GOLD)
    assert (change.n_old, change.added) == (0, 8)
    waiting.refresh_from_db()
    assert waiting.waits_for_gold  # a preview changes nothing
    with django_capture_on_commit_callbacks(execute=True):
        assert gold_confirm(phase=waiting) == 1
    waiting.refresh_from_db()
    run.refresh_from_db()
    assert waiting.gold_version == 1 and waiting.baselines.count() == 3
    assert run.status == Submission.Status.SCORED and run.scored_gold_version == 1 and run.metrics["accuracy"] == 1


def test_a_change_of_every_phase_s_scores_asks_no_analysis_of_a_waiting_phase(
    waiting, make_user, organiser, submit, django_capture_on_commit_callbacks
):
    """Removing a team changes the scores of every phase: the open one is analysed again, the
    waiting one, which has no gold file to analyse against, is left alone."""
    alice = make_user("alice")
    team = team_create(task=waiting.task, user=alice, name="Alpha")
    submit(waiting.task, alice, PERFECT)
    with django_capture_on_commit_callbacks(execute=True):
        team_remove(team=team, user=organiser, reason="a copy")
    assert not PhaseAnalysis.objects.filter(phase=waiting).exists()
    assert PhaseAnalysis.objects.filter(phase=waiting.task.current_phase()).exists()
