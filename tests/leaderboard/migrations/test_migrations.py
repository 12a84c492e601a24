"""Migrations that move data. The phases migration keeps everything a task held: a task made before phases existed gets one
phase, "evaluation", with its old gold file, dates, limits and policies, and its submissions,
baselines and each team's chosen submission move into it (migrations 0008–0010)."""

from __future__ import annotations

import datetime as dt
import hashlib

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from leaderboard.models import Baseline, Phase, Scored, Submission, Task, stored_scores
from leaderboard.selectors.boards import board_data
from scoring.engine.columns import ranking_columns
from scoring.engine.suite import score_matrix
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


BEFORE_PACKING = ("leaderboard", "0018_board_values")


@pytest.mark.django_db(transaction=True)
def test_rows_scored_before_packing_are_packed_for_the_board():
    """Migration 0019: a scored submission and a baseline of a split phase, stored as JSON only,
    read from their packed rows afterwards, each value and matrix as the JSON holds it."""
    labels = ["a", "b", "c"]
    whole, public, private = (np.array(m) for m in ([[3, 1, 0], [1, 2, 0], [0, 0, 1]], [[2, 0, 0], [1, 1, 0], [0, 0, 0]], [[1, 1, 0], [0, 1, 0], [0, 0, 1]]))
    try:
        old = migrate([BEFORE_PACKING])
        task = old.get_model("leaderboard", "Task").objects.create(slug="old", title="Old", labels=labels)
        now = timezone.now()
        phase = old.get_model("leaderboard", "Phase").objects.create(
            task=task, slug="evaluation", name="Evaluation", gold_file=stored(old, "gold.csv", GOLD),
            opens_at=now - dt.timedelta(days=2), closes_at=now + dt.timedelta(days=2), private_percent=50,
        )
        team = old.get_model("leaderboard", "Team").objects.create(task=task, name="Alpha", name_key="alpha")
        parts = {"public": stored_scores(score_matrix(public, labels=labels)), "private": stored_scores(score_matrix(private, labels=labels))}
        submission = old.get_model("leaderboard", "Submission").objects.create(
            phase=phase, team=team, file=stored(old, "run.csv", PERFECT), kind="hard", status="scored",
            parts=parts, **stored_scores(score_matrix(whole, labels=labels)),
        )
        old.get_model("leaderboard", "Baseline").objects.create(
            phase=phase, kind="majority", name="Majority", **stored_scores(score_matrix(whole, labels=labels))
        )

        migrate(latest())

        migrated = Submission.objects.get(pk=submission.pk)
        columns = ranking_columns(labels, calibrated=None)
        assert migrated.board_layout == Scored.layout_of(columns)
        phase = Phase.objects.get(pk=phase.pk)
        for part, matrix in (("all", whole), ("public", public), ("private", private)):
            data = board_data(phase, part)
            expected = [column.value(migrated.part(part)) for column in columns]
            assert [None if np.isnan(v) else float(v) for v in data.values[0]] == expected
            assert data.matrices[0].tolist() == matrix.tolist()
            assert data.baseline_values.shape == (1, len(columns))
        assert Baseline.objects.get().board_layout == Scored.layout_of(columns)
    finally:
        migrate(latest())


@pytest.mark.django_db(transaction=True)
def test_a_task_from_before_subtasks_is_its_own_single_subtask():
    """Migration 0020: a task, its phase, team and submission stay as they were; the task is its
    own single subtask (no parent, not divided), its phase takes no contrastive runs and its
    runs are unmarked, so its board counts what it counted."""
    try:
        old = migrate([("leaderboard", "0019_pack_scored_rows")])
        task = old.get_model("leaderboard", "Task").objects.create(slug="old", title="Old", labels=["a", "b", "c"])
        now = timezone.now()
        phase = old.get_model("leaderboard", "Phase").objects.create(
            task=task,
            slug="evaluation",
            name="Evaluation",
            gold_file=stored(old, "gold.csv", GOLD),
            opens_at=now - dt.timedelta(days=2),
            closes_at=now + dt.timedelta(days=2),
            counting="chosen",
        )
        team = old.get_model("leaderboard", "Team").objects.create(task=task, name="Alpha", name_key="alpha")
        old.get_model("leaderboard", "Submission").objects.create(
            phase=phase, team=team, file=stored(old, "run.csv", PERFECT), kind="hard", status="queued", chosen=True
        )

        migrate(latest())

        migrated = Task.objects.get(slug="old")
        assert migrated.root == migrated and not migrated.is_subtask and not migrated.is_divided
        assert list(migrated.subtasks.all()) == [] and migrated.phases.get().contrastive_runs == 0
        submission = Submission.objects.get()
        assert (submission.run_mark, submission.team.task) == ("primary", migrated)
    finally:
        migrate(latest())


@pytest.mark.django_db(transaction=True)
def test_a_decision_recorded_on_a_subtask_moves_to_its_parent():
    """Migration 0025: a disqualification once recorded on the subtask of its run belongs to the
    community of the parent task, where the removal of a team always was."""
    try:
        old = migrate([("leaderboard", "0024_task_scores_version")])
        tasks = old.get_model("leaderboard", "Task").objects
        parent = tasks.create(slug="parent", title="Parent", labels=[])
        subtask = tasks.create(slug="sub", title="Sub", labels=["a", "b", "c"], parent=parent)
        team = old.get_model("leaderboard", "Team").objects.create(task=parent, name="Alpha", name_key="alpha")
        actions = old.get_model("leaderboard", "OrganiserAction").objects
        actions.create(task=subtask, kind="disqualify", team=team, reason="late")
        actions.create(task=parent, kind="remove_team", team=team, reason="gone")

        migrate(latest())

        moved = Task.objects.get(slug="parent").community.organiser_actions
        assert sorted(moved.values_list("reason", flat=True)) == ["gone", "late"]
        assert Task.objects.get(slug="sub").community == Task.objects.get(slug="parent").community
    finally:
        migrate(latest())
