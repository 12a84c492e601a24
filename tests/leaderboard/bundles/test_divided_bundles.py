"""A task divided into subtasks is one bundle, and comes back as one task.

What this proves: the demo's whole task (SemEval-2017 Task 4, subtasks A and B) exported with
its runs and imported again, through the service, the pages (the route an organiser takes:
the archive's download, then the import page, its preview and confirmation) and the commands,
is a task divided into the same subtasks, with one registration, terms and set of teams, and
boards whose CSV downloads are the same bytes in every phase of every subtask (run ids mapped);
subtask B keeps its contrastive marks. The bundle is readable: ``task.yaml`` lists the subtasks
and each run names its subtask. A task bundle of version 1, and one of a plain task, read as
before; a phase that waits for its gold file comes back waiting; a bundle that names a subtask
it does not hold, or holds phases beside its subtasks, is refused with the field.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from leaderboard.bundles.export import task_bundle
from leaderboard.management.commands.load_demo import ROOT_SLUG, SLUG, SUBTASK_B_SLUG
from leaderboard.models import Submission, Task, TaskImport, Team
from leaderboard.pages import results as results_page
from leaderboard.services.tasks import phase_create
from tests.leaderboard.bundles.test_task_bundle import exported, imported, refusal, rewritten, with_mapped_ids

pytestmark = pytest.mark.django_db
DAY = dt.timedelta(days=1)


@pytest.fixture
def demo(organiser, django_capture_on_commit_callbacks) -> Task:
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())
    return Task.objects.get(slug=ROOT_SLUG)


def shape(root: Task) -> dict:
    """What must come back: the parent's shared settings and teams, each subtask's settings and
    phases (by slug, with their policies), and its runs' marks."""
    return {
        "title": root.title,
        "registration": root.registration,
        "terms": root.terms,
        "teams": sorted(root.community.teams.values_list("name", "removed_reason")),
        "subtasks": [
            {
                "title": subtask.title,
                "labels": subtask.labels,
                "primary_metric": subtask.primary_metric,
                "phases": [
                    (phase.slug, phase.counting, phase.visibility, phase.contrastive_runs, phase.data_files.count())
                    for phase in subtask.ordered_phases()
                ],
                "marks": sorted(
                    (team, contrastive or 0, chosen)
                    for team, contrastive, chosen in subtask.submissions.values_list(
                        "team__name", "contrastive", "chosen"
                    )
                ),
            }
            for subtask in root.subtasks.order_by("slug")
        ],
    }


def assert_same_boards(original: Task, copy: Task) -> None:
    """Every phase of every subtask: the same CSV, byte for byte, once each run id is mapped."""
    runs = [Submission.objects.filter(phase__task__parent=root).order_by("pk") for root in (original, copy)]
    mapping = dict(zip(*(found.values_list("pk", flat=True) for found in runs), strict=True))  # created in order
    files = [[(run.phase.slug, run.file.sha256) for run in found.select_related("phase", "file")] for found in runs]
    assert files[0] == files[1] and len(mapping) == 26
    compared = 0
    for before, after in zip(original.subtasks.order_by("slug"), copy.subtasks.order_by("slug"), strict=True):
        for old, new in zip(before.ordered_phases(), after.ordered_phases(), strict=True):
            old_csv, new_csv = (results_page.export(phase=found, kind="csv").decode() for found in (old, new))
            assert with_mapped_ids(old_csv, mapping) == with_mapped_ids(new_csv) and "Team A" in new_csv
            compared += 1
    assert compared == 3


def test_the_whole_demo_comes_back_as_one_task(demo, organiser, django_capture_on_commit_callbacks):
    content = exported(demo, organiser)
    names = zipfile.ZipFile(io.BytesIO(content)).namelist()
    document = yaml.safe_load(zipfile.ZipFile(io.BytesIO(content)).read("task.yaml"))
    assert document["version"] == 2 and "phases" not in document and "labels" not in document["task"]
    assert [subtask["task"]["slug"] for subtask in document["subtasks"]] == [SLUG, SUBTASK_B_SLUG]
    assert {run["subtask"] for run in document["runs"]} == {SLUG, SUBTASK_B_SLUG} and len(document["teams"]) == 8
    assert f"subtasks/{SLUG}/phases/evaluation/gold/" in "\n".join(names)
    assert f"runs/{SLUG}/evaluation/runs.csv" in names and f"runs/{SUBTASK_B_SLUG}/evaluation/runs.csv" in names
    assert (
        "subtasks/<subtask>/phases/<phase>/gold/<name>"
        in zipfile.ZipFile(io.BytesIO(content)).read("README.txt").decode()
    )

    copy = imported(content, organiser, django_capture_on_commit_callbacks, slug="t4-copy")
    assert copy.is_divided and not copy.phases.exists()
    assert [subtask.slug for subtask in copy.subtasks.order_by("slug")] == ["t4-copya", "t4-copyb"]
    assert copy.is_organiser(organiser) and shape(copy) == shape(demo)
    assert not Team.objects.filter(task__parent=copy).exists()  # one set of teams: the parent's
    assert_same_boards(demo, copy)


def test_an_organiser_exports_the_whole_task_and_imports_it_through_the_pages(
    demo, client, organiser, django_capture_on_commit_callbacks
):
    demo.organisers.add(organiser)
    client.force_login(organiser)
    archive = client.get(reverse("leaderboard:task_archive", args=[demo.slug])).content.decode()
    assert "every subtask with its labels, primary metric and phases" in archive
    assert reverse("leaderboard:runs_download", args=[SLUG, "evaluation"]) in archive
    response = client.get(reverse("leaderboard:task_bundle", args=[demo.slug]) + "?runs=1")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    content = b"".join(response.streaming_content)

    uploaded = client.post(reverse("leaderboard:task_import"), {"bundle": SimpleUploadedFile("t4.zip", content)})
    preview_address = uploaded["Location"]
    preview = client.get(preview_address).content.decode()
    assert "divided into 2 subtasks" in preview and "8 teams, 26 runs" in preview
    assert "Subtask “SemEval-2017 Task 4A: sentiment of tweets (demo)”" in preview
    assert f"/tasks/{ROOT_SLUG}-2a/" in preview and f"/tasks/{ROOT_SLUG}-2b/" in preview  # free addresses
    assert 'name="primary_metric"' not in preview  # each subtask keeps its own
    form = {"slug": "t4-next", "title": "", "with_runs": "on", "action": "confirm"}
    with django_capture_on_commit_callbacks(execute=True):
        created = client.post(preview_address, form)
    copy = Task.objects.get(slug="t4-next")
    assert created.status_code == 302 and created["Location"] == copy.get_absolute_url()
    assert not TaskImport.objects.exists() and shape(copy) == shape(demo)
    assert_same_boards(demo, copy)
    page = client.get(copy.get_absolute_url()).content.decode()
    assert reverse("leaderboard:leaderboard", args=["t4-nexta", "evaluation"]) in page


def test_the_commands_move_the_whole_task(demo, organiser, tmp_path, django_capture_on_commit_callbacks):
    bundle = tmp_path / "t4.zip"
    out = io.StringIO()
    call_command("export_task", ROOT_SLUG, "-o", str(bundle), "--runs", stdout=out)
    assert out.getvalue().startswith(f"Wrote {bundle}: ")
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_task", str(bundle), "--slug", "t5", "--organiser", "organiser", stdout=out)
    report = out.getvalue()
    assert f"  task {demo.title!r} at /tasks/t5/, divided into 2 subtask(s)" in report
    assert "  subtask 'SemEval-2017 Task 4A: sentiment of tweets (demo)' at /tasks/t5a/:" in report
    assert "Created /tasks/t5/: 2 subtask(s), 3 phase(s), 26 run(s)." in report
    assert shape(Task.objects.get(slug="t5")) == shape(demo)


def test_a_plain_task_and_a_version_1_bundle_read_as_before(make_task, organiser, django_capture_on_commit_callbacks):
    task = make_task()
    content = exported(task, organiser)
    document = yaml.safe_load(zipfile.ZipFile(io.BytesIO(content)).read("task.yaml"))
    assert "subtasks" not in document and document["phases"][0]["gold"]["file"] == "phases/evaluation/gold/gold.csv"
    old = rewritten(content, lambda doc: doc.update(version=1))
    copy = imported(old, organiser, django_capture_on_commit_callbacks, slug="old")
    assert not copy.is_divided and copy.parent is None and copy.current_phase().baselines.count() == 3


def test_a_phase_waiting_for_its_gold_file_comes_back_waiting(make_task, organiser, django_capture_on_commit_callbacks):
    task = make_task()
    first = task.current_phase()
    phase_create(task=task, name="Test", slug="test", opens_at=first.closes_at, closes_at=first.closes_at + DAY)
    content = exported(task, organiser)
    document = yaml.safe_load(zipfile.ZipFile(io.BytesIO(content)).read("task.yaml"))
    assert document["phases"][1]["gold"] is None
    assert not any(name.startswith("phases/test/gold/") for name in zipfile.ZipFile(io.BytesIO(content)).namelist())
    copy = imported(content, organiser, django_capture_on_commit_callbacks, slug="again")
    assert [phase.waits_for_gold for phase in copy.ordered_phases()] == [False, True]
    codes, text = refusal(rewritten(content, lambda doc: doc.update(version=1)), organiser)
    assert codes == {"BUNDLE_FIELD_MISSING"} and "task.yaml: phases[1].gold is missing" in text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda doc: doc["runs"][0].update(subtask="nowhere"), "runs[0].subtask: expected the slug of a subtask"),
        (lambda doc: doc["runs"][0].pop("subtask"), "task.yaml: runs[0].subtask is missing; expected a text."),
        (lambda doc: doc.update(phases=[]), "phases: expected no phases: a task divided into subtasks holds them"),
        (
            lambda doc: doc["subtasks"][1]["task"].update(slug=doc["subtasks"][0]["task"]["slug"]),
            "subtasks: expected subtasks with different slugs",
        ),
    ],
)
def test_a_bad_divided_bundle_says_which_field(demo, organiser, change, message):
    codes, text = refusal(rewritten(exported(demo, organiser), change), organiser)
    assert codes <= {"BUNDLE_FIELD", "BUNDLE_FIELD_MISSING"} and message in text


def test_a_bundle_streams_whole_for_a_divided_task_without_runs(demo, organiser):
    content = b"".join(task_bundle(demo, with_runs=False, user=organiser))
    archive = zipfile.ZipFile(io.BytesIO(content))
    assert archive.testzip() is None and not any(name.startswith("runs/") for name in archive.namelist())
