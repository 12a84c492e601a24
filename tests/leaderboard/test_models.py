"""Stored bytes go with the rows that own them, whatever deletes the rows (leaderboard.models)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from leaderboard.models import StoredFile, Submission, Task
from leaderboard.services.tasks import gold_preview, phase_file_add, phase_file_remove
from leaderboard.services.teams import team_create
from tests.conftest import GOLD, MOSTLY_A, PERFECT

pytestmark = pytest.mark.django_db


def test_deleting_a_task_in_the_admin_deletes_every_byte_it_stored(make_task, make_user, submit):
    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    submit(task, alice, MOSTLY_A)
    phase = task.current_phase()
    phase_file_add(phase=phase, title="inputs", name="inputs.csv", content=b"id\n1\n")
    gold_preview(phase=phase, gold_name="new.csv", gold_content=GOLD)  # a pending gold file too
    other = make_task("other")  # another task's files stay
    kept = set(StoredFile.objects.filter(pk=other.current_phase().gold_file_id).values_list("pk", flat=True))
    assert StoredFile.objects.count() == 5 + len(kept)  # gold, two runs, a data file, a pending gold
    staff = Client()
    staff.force_login(make_user("staff", is_staff=True, is_superuser=True))
    response = staff.post(reverse("admin:leaderboard_task_delete", args=[task.pk]), {"post": "yes"})
    assert response.status_code == 302
    assert not Task.objects.filter(pk=task.pk).exists()
    assert set(StoredFile.objects.values_list("pk", flat=True)) == kept


def test_a_file_another_row_still_names_stays(make_task, make_user, submit):
    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    run = submit(task, alice, PERFECT)
    twin = Submission.objects.create(phase=run.phase, team=run.team, file=run.file, kind=run.kind)
    twin.delete()
    assert StoredFile.objects.filter(pk=run.file_id).exists()
    run.delete()
    assert not StoredFile.objects.filter(pk=run.file_id).exists()


def test_removing_a_data_file_removes_its_bytes(task):
    data_file = phase_file_add(phase=task.current_phase(), title="inputs", name="inputs.csv", content=b"id\n1\n")
    phase_file_remove(data_file=data_file)
    assert not StoredFile.objects.filter(pk=data_file.file_id).exists()


def test_the_admin_registers_every_model_and_lists_each(make_task, make_user, submit):
    from django.apps import apps
    from django.contrib import admin

    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    models = [model for model in apps.get_app_config("leaderboard").get_models() if not model._meta.abstract]
    assert models and [model.__name__ for model in models if model not in admin.site._registry] == []
    staff = Client()
    staff.force_login(make_user("staff", is_staff=True, is_superuser=True))
    for model in models:
        changelist = reverse(f"admin:leaderboard_{model._meta.model_name}_changelist")
        assert staff.get(changelist).status_code == 200, model.__name__
