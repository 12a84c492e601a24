"""The phases migration keeps everything a task held: a task made before phases existed gets one
phase, "evaluation", with its old gold file, dates, limits and policies, and its submissions,
baselines and each team's chosen submission move into it (migrations 0008–0010)."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from leaderboard.models import Baseline, Phase, Submission, Task
from tests.conftest import GOLD, MOSTLY_A, PERFECT

BEFORE_PHASES = ("leaderboard", "0007_organiser_actions")


def migrate(target: list[tuple[str, str]]):
    """Migrate the test database to ``target``; the historical apps at that state."""
    executor = MigrationExecutor(connection)
    executor.migrate(target)
    executor.loader.build_graph()
    return executor.loader.project_state(target).apps


def latest() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes("leaderboard")


def stored(apps, name: str, content: bytes):
    return apps.get_model("leaderboard", "StoredFile").objects.create(
        name=name, content=content, size=len(content), sha256=hashlib.sha256(content).hexdigest()
    )


@pytest.mark.django_db(transaction=True)
def test_a_task_from_before_phases_gets_one_evaluation_phase_with_everything_in_it():
    try:
        old = migrate([BEFORE_PHASES])
        user = old.get_model("auth", "User").objects.create(username="organiser")
        opens_at = timezone.now() - dt.timedelta(days=3)
        closes_at = opens_at + dt.timedelta(days=10)
        gold = stored(old, "gold.csv", GOLD)
        task = old.get_model("leaderboard", "Task").objects.create(
            slug="old",
            title="An old task",
            labels=["a", "b", "c"],
            gold_file=gold,
            gold_version=3,
            opens_at=opens_at,
            closes_at=closes_at,
            max_per_day=4,
            max_total=44,
            counting="chosen",
            visibility="after_close",
            feedback="primary",
            primary_metric="macro_recall",
        )
        task.organisers.add(user)
        team = old.get_model("leaderboard", "Team").objects.create(
            task=task, name="Alpha", name_key="alpha", invite_code="old-invite"
        )
        old_submission = old.get_model("leaderboard", "Submission")
        first, second = (
            old_submission.objects.create(
                task=task, team=team, file=stored(old, name, content), kind="hard", status="scored"
            )
            for name, content in (("first.csv", PERFECT), ("second.csv", MOSTLY_A))
        )
        team.chosen_submission = first
        team.save()
        baseline = old.get_model("leaderboard", "Baseline").objects.create(task=task, kind="majority", name="Majority")

        migrate(latest())

        migrated = Task.objects.get(slug="old")
        [phase] = migrated.phases.all()
        assert (phase.slug, phase.name) == ("evaluation", "Evaluation")
        assert (phase.opens_at, phase.closes_at) == (opens_at, closes_at)
        assert (phase.max_per_day, phase.max_total) == (4, 44)
        assert (phase.counting, phase.visibility, phase.feedback) == ("chosen", "after_close", "primary")
        assert (phase.gold_file_id, phase.gold_version, phase.pending_gold_file_id) == (gold.pk, 3, None)
        assert bytes(phase.gold_file.content) == GOLD
        assert (migrated.primary_metric, migrated.labels) == ("macro_recall", ["a", "b", "c"])
        assert list(migrated.organisers.values_list("username", flat=True)) == ["organiser"]
        submissions = {s.pk: s for s in Submission.objects.filter(phase__task=migrated)}
        assert set(submissions) == {first.pk, second.pk}
        assert all(s.phase_id == phase.pk for s in submissions.values())
        assert (submissions[first.pk].chosen, submissions[second.pk].chosen) == (True, False)
        assert Baseline.objects.get(pk=baseline.pk).phase == phase
        assert Phase.objects.count() == 1
    finally:
        migrate(latest())
