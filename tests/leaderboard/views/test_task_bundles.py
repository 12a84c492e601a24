"""The task as a bundle through the pages: the organisers' archive page and download, the
import page with its preview, questions and confirmation.

What this proves: only the task's organisers export it (others 403); an upload is refused at
once with the file, the field and what was expected, and nothing is kept; a good one leads to
a preview of what will be created (and what cannot come over), which only its uploader sees;
"check again" keeps the answers (a gold file given, the columns chosen); "create" makes the
task at the address chosen and lets the upload go; "discard" keeps nothing.
"""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.bundles.export import task_bundle
from leaderboard.models import StoredFile, Task, TaskImport, TaskImportGold
from leaderboard.services.teams import team_create
from tests.conftest import PERFECT
from tests.leaderboard.bundles.support import GOLD_PAIRS, codalab_v15, labels_csv, zip_of

pytestmark = pytest.mark.django_db


def upload(client, content: bytes, name: str = "bundle.zip"):
    return client.post(reverse("leaderboard:task_import"), {"bundle": SimpleUploadedFile(name, content)})


def test_only_organisers_export_a_task(client, task, organiser, make_user, submit):
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    client.force_login(alice)
    assert client.get(reverse("leaderboard:task_archive", args=[task.slug])).status_code == 403
    assert client.get(reverse("leaderboard:task_bundle", args=[task.slug])).status_code == 403
    client.force_login(organiser)
    page = client.get(reverse("leaderboard:task_archive", args=[task.slug]))
    assert page.status_code == 200 and b"with its teams and every run" in page.content
    response = client.get(reverse("leaderboard:task_bundle", args=[task.slug]) + "?runs=1")
    assert response.streaming and response["Content-Disposition"] == 'attachment; filename="toy-task-with-runs.zip"'
    names = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist()
    assert "task.yaml" in names and any(name.startswith("runs/evaluation/Alpha/") for name in names)


def test_a_bad_bundle_is_refused_at_once(client, organiser):
    client.force_login(organiser)
    files = StoredFile.objects.count()
    response = upload(client, zip_of({"../escape.txt": b"x"}))
    assert response.status_code == 200
    assert "bundle.zip: the path &#x27;../escape.txt&#x27; climbs out of the bundle" in response.content.decode()
    response = upload(client, zip_of({"readme.txt": b"x"}))
    assert "has no task.yaml (a task exported from this site) and no competition.yaml" in response.content.decode()
    assert StoredFile.objects.count() == files and not TaskImport.objects.exists()


def test_an_exported_task_is_previewed_then_created(
    client, task, organiser, make_user, django_capture_on_commit_callbacks
):
    content = b"".join(task_bundle(task, with_runs=True, user=organiser))
    client.force_login(organiser)
    response = upload(client, content)
    pending = TaskImport.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse(
        "leaderboard:task_import_preview", args=[pending.pk]
    )
    preview = client.get(response["Location"]).content.decode()
    assert "What will be created" in preview and "a task exported from this site" in preview
    assert 'value="toy-2"' in preview  # a free address is suggested
    stranger = make_user("stranger")
    client.force_login(stranger)
    assert client.get(response["Location"]).status_code == 404
    client.force_login(organiser)
    form = {"slug": "toy-next", "title": "Task toy, again", "primary_metric": "macro_f1", "with_runs": "on"}
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(response["Location"], {**form, "action": "confirm"})
    new = Task.objects.get(slug="toy-next")
    assert created.status_code == 302 and created["Location"] == new.get_absolute_url()
    assert new.title == "Task toy, again" and new.is_organiser(organiser)
    assert not TaskImport.objects.exists()


def test_a_codalab_bundle_without_labels_asks_for_them_and_takes_a_gold_file(client, organiser):
    """Its reference data holds no labels: the preview asks for them (confirming waits until
    they are given), lists each phase that will wait for its gold file and why, and keeps a gold
    file given for one phase; the other comes over waiting for its own."""
    client.force_login(organiser)
    assert upload(client, codalab_v15(reference=b"Hello World!\n"), name="hello.zip").status_code == 302
    pending = TaskImport.objects.get()
    address = reverse("leaderboard:task_import_preview", args=[pending.pk])
    preview = client.get(address).content.decode()
    assert "What cannot come over" in preview and "The docker image" in preview
    assert 'value="confirm" disabled' in preview and "The bundle states no labels" in preview
    assert "Phases that will wait for their gold file" in preview
    assert "<strong>Final</strong>: its reference data holds fewer than two labels (World!)" in preview
    gold = labels_csv(GOLD_PAIRS)
    form = {"slug": "sentiment-2025", "primary_metric": "macro_recall", "labels": "pos, neu, neg"}
    files = {"gold-0": SimpleUploadedFile("dev.csv", gold)}
    assert client.post(address, {**form, **files, "action": "check"}).status_code == 302
    assert TaskImportGold.objects.filter(pending=pending).count() == 1
    checked = client.get(address).content.decode()
    assert 'value="confirm" disabled' not in checked and "given: dev.csv: 12 items" in checked
    assert "<strong>Development</strong>" not in checked and "<strong>Final</strong>" in checked
    assert client.post(address, {**form, "action": "confirm"}).status_code == 302  # the gold file kept
    task = Task.objects.get(slug="sentiment-2025")
    assert task.labels == ["pos", "neu", "neg"] and task.primary_metric == "macro_recall"
    development, final = task.ordered_phases()
    assert not development.waits_for_gold and development.baselines.count() == 3
    assert final.waits_for_gold and final.gold_version == 0 and not final.baselines.exists()
    assert not TaskImport.objects.exists() and not TaskImportGold.objects.exists()
    page = client.get(task.get_absolute_url()).content.decode()
    give = reverse("leaderboard:gold_replace", args=[task.slug, final.slug])
    assert "A phase waits for its gold file" in page and f'href="{give}"' in page


def test_discard_keeps_nothing(client, organiser):
    client.force_login(organiser)
    files = StoredFile.objects.count()
    upload(client, codalab_v15())
    pending = TaskImport.objects.get()
    response = client.post(reverse("leaderboard:task_import_preview", args=[pending.pk]), {"action": "discard"})
    assert response.status_code == 302 and not TaskImport.objects.exists() and StoredFile.objects.count() == files
