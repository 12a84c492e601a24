"""The site's intervals: computed in a process of their own, the numbers of the computation that
kept every replicate in memory (the oracle under tests), and a computation that fails leaves the
previous intervals on the pages, marked stale with the reason, never an error page.

The oracle is given the inputs as ``leaderboard.stability`` gathered them before (each team's
counting run, its stored per-item predictions checked against its matrix, the part of the test
set shown) and its result is compared with the stored one as text: on every phase of the
SemEval-2017 demo (both subtasks) and on a phase of 500 teams.
"""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from leaderboard import derived, stability, stability_job
from leaderboard.demo_table8 import GOLD_COUNTS, LABELS
from leaderboard.models import ALL_ITEMS, Phase, PhaseStability, StoredFile, Submission, Team
from leaderboard.selectors.boards import counting_submissions
from leaderboard.services.registrations import registration_request
from leaderboard.services.teams import team_create
from leaderboard.uploads import kept_gold
from scoring.engine import bootstrap as engine_bootstrap
from scoring.engine.items import reproduces
from scoring.engine.split import part_masks
from tests.conftest import MOSTLY_A, PERFECT
from tests.scoring.engine import bootstrap_reference as reference
from tools import factory

pytestmark = pytest.mark.django_db

REPLICATES = 1000
SEED = 1


@pytest.fixture(autouse=True)
def bootstrap_settings(settings):
    settings.BOOTSTRAP_REPLICATES = REPLICATES
    settings.BOOTSTRAP_SEED = SEED
    return settings


def expected_result(phase: Phase) -> dict:
    """The oracle's result for the phase's current scores, from the inputs as gathered before."""
    counting = sorted(counting_submissions(phase, fields=("confusion_matrix", "items", "score_count")).items())
    gold = kept_gold(phase)
    items, skipped = {}, {}
    for team_id, submission in counting:
        found = submission.item_predictions()
        if submission.scored_gold_version != phase.gold_version:
            skipped[str(team_id)] = stability.SKIPPED_RESCORING
        elif not reproduces(gold.codes, found, submission.confusion_matrix):
            skipped[str(team_id)] = stability.SKIPPED_MISMATCH
        else:
            items[team_id] = found
    names = dict(Team.objects.filter(pk__in=[team for team, _ in counting]).values_list("pk", "name"))
    part = phase.shown_part()
    keep = None
    if part != ALL_ITEMS:
        keep = part_masks(len(gold.codes), percent=phase.private_percent, seed=phase.split_seed_number)[part]
    result = reference.stability_result(
        gold=gold.codes,
        labels=gold.labels,
        teams=names,
        items=items,
        replicates=REPLICATES,
        seed=SEED,
        keep=keep,
        ordinal=phase.task.ordinal,
        primary=phase.task.primary_metric,
    )
    return {**result, "skipped": skipped}


def as_text(result: dict) -> str:
    return json.dumps(result, sort_keys=True, allow_nan=False)


def test_every_phase_of_the_demo_stores_the_oracle_s_intervals(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the runs are scored once the load commits
        call_command("load_demo")  # computes each phase's intervals, as a new site would
    rows = PhaseStability.objects.exclude(result=None).select_related("phase__task")
    assert {row.phase.task.slug for row in rows} == {
        "semeval-2017-task-4a",
        "semeval-2017-task-4b",
        "semeval-2018-task-1-ec",
    }
    for row in rows:
        assert row.stamp == stability.inputs_digest(row.phase)
        teams = Submission.objects.filter(phase=row.phase).values("team").distinct().count()
        assert len(row.result["teams"]) == teams > 1 and not row.result["skipped"]
        if row.phase.task.scheme.has_outputs:  # its oracle: tests/leaderboard/test_outputs_tasks.py
            assert set(row.result["intervals"]["raw"]["jaccard"]) == set(row.result["teams"])
            continue
        assert as_text(row.result) == as_text(expected_result(row.phase)), row.phase


@pytest.mark.slow
def test_a_500_team_phase_stores_the_oracle_s_intervals():
    rng = np.random.default_rng(2017)
    gold = rng.permutation(np.repeat(np.arange(len(LABELS)), GOLD_COUNTS))
    now = timezone.now()
    task = factory.task_create(
        slug="five-hundred",
        title="Five hundred teams",
        description="",
        labels=LABELS,
        gold_content=factory.labels_csv(factory.item_ids(len(gold)), LABELS, gold),
        organiser_password="five-hundred-password",
        opens_at=now - dt.timedelta(days=2),
        closes_at=now + dt.timedelta(days=1),
    )
    run = StoredFile.of(name="run.csv", content=b"id,label\n")
    run.save()
    matrix = factory.random_confusion_matrix
    runs = [
        factory.ScoredRun(team=team, file=run, matrix=matrix(rng, gold_counts=GOLD_COUNTS), at=now)
        for team in factory.teams_create(task=task, count=500)
    ]
    factory.scored_submissions_create(task=task, runs=runs, batch_size=500)
    phase = task.current_phase()
    derived.compute("intervals", phase.pk)
    row = PhaseStability.objects.get(phase=phase)
    assert as_text(row.result) == as_text(expected_result(phase))


# --- where it runs, and when it fails --------------------------------------------------------------


@pytest.fixture(params=["plain", "subtask"])
def board(request, make_task, make_user, submit, settings):
    """A board of two teams on a plain task, or on a subtask of a task divided into subtasks."""
    settings.BOOTSTRAP_REPLICATES = 60
    task = make_task(kind=request.param)
    for name, content in (("Alpha", PERFECT), ("Beta", MOSTLY_A)):
        user = make_user(f"member-{name.lower()}")
        registration_request(task=task, user=user, accept_terms=True)
        team_create(task=task, user=user, name=name)
        submit(task, user, content)
    return task, make_user, submit


def late_run(task, make_user, submit) -> None:
    user = make_user("late")
    registration_request(task=task, user=user, accept_terms=True)
    team_create(task=task, user=user, name="Late")
    submit(task, user, MOSTLY_A)


def test_the_computation_runs_outside_the_process_that_asks(board, monkeypatch):
    """Not in this process: a bootstrap here would fail, and the intervals are computed all the same."""
    task, make_user, submit = board

    def not_here(*args, **kwargs):
        raise AssertionError("the bootstrap ran inside the process that asked for it")

    monkeypatch.setattr(engine_bootstrap, "bootstrap", not_here)
    late_run(task, make_user, submit)
    row = PhaseStability.objects.get(phase=task.current_phase())
    assert row.stamp == stability.inputs_digest(task.current_phase()) and row.failure == ""
    assert set(row.result["intervals"]["raw"]["macro_f1"]) == set(
        map(str, task.community.teams.values_list("pk", flat=True))
    )


def test_the_child_keeps_its_freed_memory_runs_one_thread_per_library_and_the_operator_s_tunables_win(
    board, monkeypatch
):
    task, make_user, submit = board
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
    given = []
    real = stability_job.subprocess.run

    def run(command, **kwargs):
        given.append(kwargs["env"])
        return real(command, **kwargs)

    monkeypatch.setattr(stability_job.subprocess, "run", run)
    late_run(task, make_user, submit)
    assert given and given[-1]["OPENBLAS_NUM_THREADS"] == "1"
    assert given[-1]["GLIBC_TUNABLES"] == f"{stability_job.KEEP_FREED_MEMORY}:glibc.malloc.arena_max=2"
    row = PhaseStability.objects.get(phase=task.current_phase())
    assert row.failure == "" and row.stamp == stability.inputs_digest(task.current_phase())


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        ({"BOOTSTRAP_TIMEOUT_S": 0.01}, stability_job.FAILED_TIME.format(limit=0.01)),
        # The same scores with four million replicates: their matrices alone take gigabytes.
        (
            {"BOOTSTRAP_MEMORY_MB": 1024, "BOOTSTRAP_REPLICATES": 4_000_000},
            stability_job.FAILED_MEMORY.format(limit=1024),
        ),
    ],
)
def test_a_failed_computation_keeps_the_previous_intervals_marked_stale_with_its_reason(board, client, limits, reason):
    task, make_user, submit = board
    phase = task.current_phase()
    before = PhaseStability.objects.get(phase=phase)
    with override_settings(**limits):
        if "BOOTSTRAP_REPLICATES" in limits:
            assert derived.compute("intervals", phase.pk) == f"failed: {reason}"
        else:
            late_run(task, make_user, submit)  # the job its score asks for fails
        row = PhaseStability.objects.get(phase=phase)
        assert (row.failure, row.failed_stamp) == (reason, stability.inputs_digest(phase))
        assert (row.stamp, row.result, row.computed_at) == (before.stamp, before.result, before.computed_at)
        assert row.requested_at is None

        page = client.get(reverse("leaderboard:leaderboard", args=[task.slug]))
        assert page.status_code == 200
        content = page.content.decode()
        assert f"The intervals of the latest scores could not be computed: {reason}." in content
        assert 'class="tag tag-stale"' in content and "Computed " not in content
        api = client.get(f"/api/tasks/{task.slug}/leaderboard").json()["intervals"]
        assert api == {"status": stability.FAILED, "failure": reason}
        # The recovery sweep does not try these scores again...
        PhaseStability.objects.filter(pk=row.pk).update(failed_at=timezone.now() - dt.timedelta(hours=1))
        assert derived.sweep() == 0
    # ... a new score does.
    user = make_user("later")
    registration_request(task=task, user=user, accept_terms=True)
    team_create(task=task, user=user, name="Later")
    submit(task, user, PERFECT)
    row = PhaseStability.objects.get(phase=phase)
    assert row.stamp == stability.inputs_digest(phase) and row.failure == ""
    content = client.get(reverse("leaderboard:leaderboard", args=[task.slug])).content.decode()
    assert "could not be computed" not in content and "Computed " in content
