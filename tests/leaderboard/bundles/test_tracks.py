"""A CodaLab competition whose tracks ran side by side (a multilingual SemEval task: a trial
phase, then four tracks of a practice and an evaluation phase each) comes over as a task
divided into one subtask per track.

What this proves, through the command and through the import page (upload, preview, check
again, confirm): the four tracks are recognised by their phases' names and files although the
bundle lists the evaluation phases in another order; each subtask holds its track's two phases
on the bundle's days, one after the other; the trial phase goes where the organiser puts it (a
track, or every subtask) and the report and the preview say where each phase goes and why; a
track whose reference files hold three 0/1 columns is a subtask of three outputs; two phases
that ran side by side cannot be put in one track, and an unknown track is refused, naming the
phase; overlapping phases of a bundle without such a wave are guesses the organiser can undo,
and putting them in one track closes the earlier when the later opens, which the notes say.
"""

from __future__ import annotations

import datetime as dt
import io
from itertools import pairwise

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from leaderboard import errors
from leaderboard.bundles import tracks
from leaderboard.bundles.plan import ALONE, CHOSEN, EVERY_TRACK, GUESSED, RECOGNISED, ImportOptions
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.models import Task, TaskImport
from tests.leaderboard.bundles.support import codabench_v2
from tools.tracks_bundle import (
    COMPETITION_ENDS,
    EVALUATION_OPENS,
    OUTPUT_NAMES,
    PRACTICE_OPENS,
    TRIAL_OPENS,
    tracks_v15,
)

pytestmark = pytest.mark.django_db
NAMES = ("English A", "Spanish A", "English B", "Spanish B")
SLUGS = ("semeval-english-a", "semeval-spanish-a", "semeval-english-b", "semeval-spanish-b")


def day(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)


def phases_of(subtask: Task) -> list[tuple[str, dt.datetime, dt.datetime]]:
    return [(phase.name, phase.opens_at, phase.closes_at) for phase in subtask.ordered_phases()]


def track_phases(name: str) -> list[tuple[str, dt.datetime, dt.datetime]]:
    """A track's two phases as the bundle dates them: practice until the evaluation opens, the
    evaluation until the competition ends."""
    dashed = name.replace(" ", "-")
    return [
        (f"Practice-{dashed}", day(PRACTICE_OPENS), day(EVALUATION_OPENS)),
        (f"Evaluation-{dashed}", day(EVALUATION_OPENS), day(COMPETITION_ENDS)),
    ]


def import_command(tmp_path, *arguments: str, outputs_track=None) -> str:
    bundle = tmp_path / "tracks.zip"
    bundle.write_bytes(tracks_v15(outputs_track=outputs_track))
    out = io.StringIO()
    call_command("import_task", str(bundle), "--slug", "semeval", "--organiser", "organiser", *arguments, stdout=out)
    return out.getvalue()


def assert_one_after_another(task: Task) -> None:
    for subtask in task.subtasks.all():
        phases = subtask.ordered_phases()
        assert all(earlier.closes_at <= later.opens_at for earlier, later in pairwise(phases))


def test_each_track_is_a_subtask_with_its_phases_on_the_bundles_days(organiser, tmp_path):
    report = import_command(tmp_path, "--track", "1=2")
    task = Task.objects.get(slug="semeval")
    subtasks = list(task.subtasks.order_by("slug"))
    assert task.is_divided and sorted(s.slug for s in subtasks) == sorted(SLUGS)
    assert task.registration == "approval" and task.terms == "Cite the task paper."
    by_name = {subtask.title.rsplit(": ", 1)[1]: subtask for subtask in subtasks}
    assert set(by_name) == set(NAMES)
    trial = ("Trial", day(TRIAL_OPENS), day(PRACTICE_OPENS))
    for name in NAMES:
        expected = ([trial] if name == "Spanish A" else []) + track_phases(name)
        assert phases_of(by_name[name]) == expected
    assert by_name["English B"].labels == ["negative", "positive"]
    assert by_name["Spanish A"].labels == ["negative", "neutral", "positive"]
    assert not any(phase.waits_for_gold for phase in task.every_phase())
    assert_one_after_another(task)
    # The report says where each phase goes and why, and how to move it.
    assert "4 tracks ran side by side there" in report and "--track N=T" in report
    assert "    1. Trial → track 2, Spanish A (your choice)" in report
    assert "    7. Evaluation-English-B → track 3, English B (by its name and scoring program)" in report
    assert "    4. Practice-English-B → track 3, English B (by its name, scoring program and reference data)" in report
    assert "Created /tasks/semeval/: 4 subtask(s), 9 phase(s), 0 run(s)." in report


def test_the_trial_phase_alone_is_asked_about_and_may_go_to_every_subtask(organiser, tmp_path):
    plan = plan_of(open_bundle(tracks_v15(), name="tracks.zip"), ImportOptions())
    trial, *others = plan.track_choices
    assert plan.tracks == NAMES and trial.how == ALONE and trial.asked
    assert all(choice.how == RECOGNISED and not choice.asked for choice in others)
    assert [int(choice.track) for choice in others] == [1, 2, 3, 4, 1, 3, 2, 4]  # evaluation listed A, B, A, B

    import_command(tmp_path, "--track", "1=all")
    task = Task.objects.get(slug="semeval")
    for subtask in task.subtasks.all():
        first = subtask.ordered_phases()[0]
        assert (first.name, first.opens_at, first.closes_at) == ("Trial", day(TRIAL_OPENS), day(PRACTICE_OPENS))
        # its gold file holds subtask A's three labels: in subtask B it waits for one of B's
        assert first.waits_for_gold == subtask.title.endswith(" B")
    assert_one_after_another(task)


def test_a_track_of_three_binary_columns_is_a_subtask_of_three_outputs(organiser, tmp_path):
    report = import_command(tmp_path, "--track", "1=1", outputs_track=("English", "B"))
    subtask = Task.objects.get(slug="semeval-english-b")
    assert [(output.name, output.labels) for output in subtask.scheme.outputs] == [
        (name, ("0", "1")) for name in OUTPUT_NAMES
    ]
    assert subtask.labels == [] and phases_of(subtask) == track_phases("English B")
    assert not any(phase.waits_for_gold for phase in subtask.ordered_phases())
    assert "outputs: HS (0, 1); TR (0, 1); AG (0, 1)" in report
    assert Task.objects.get(slug="semeval-spanish-b").scheme.outputs == ()


def test_phases_that_ran_side_by_side_cannot_share_a_track(organiser, tmp_path):
    with pytest.raises(CommandError) as refused:
        import_command(tmp_path, "--track", "3=1")
    assert str(refused.value) == (
        "Practice-Spanish-A and Practice-English-A open at the same moment (2025-09-01 00:00 UTC): they ran side by "
        "side, and cannot follow one another in track 1; put them in different tracks."
    )
    with pytest.raises(CommandError, match=r"Phase 1 \(Trial\): the track '7' is none of this competition's; give a "):
        import_command(tmp_path, "--track", "1=7")
    assert not Task.objects.exists()


def test_overlapping_phases_are_a_guess_and_one_track_makes_them_follow_one_another():
    content = codabench_v2(development_ends="2026-02-25")  # ten days after the final phase opens
    plan = plan_of(open_bundle(content, name="b.zip"), ImportOptions())
    assert plan.divided and len(plan.tracks) == 2
    assert [choice.how for choice in plan.track_choices] == [GUESSED, GUESSED]
    one = plan_of(open_bundle(content, name="b.zip"), ImportOptions(tracks={1: "1"}))
    assert not one.divided and [choice.how for choice in one.track_choices] == [GUESSED, CHOSEN]
    development, final = one.phases
    assert development.closes_at == final.opens_at
    assert any(note.startswith(f"{development.name}: it ran until ") for note in one.notes)


def test_a_bundle_without_tracks_refuses_a_track():
    with pytest.raises(ValidationError) as refused:
        plan_of(open_bundle(codabench_v2(), name="b.zip"), ImportOptions(tracks={0: EVERY_TRACK}))
    assert errors.problem_codes(refused.value) == {"IMPORT_TRACK_UNKNOWN"}
    assert tracks.NO_TRACKS in " ".join(refused.value.messages)


def test_the_preview_shows_the_tracks_and_takes_the_organisers_choices(client, organiser):
    client.force_login(organiser)
    bundle = SimpleUploadedFile("tracks.zip", tracks_v15(outputs_track=("English", "B")))
    assert client.post(reverse("leaderboard:task_import"), {"bundle": bundle}).status_code == 302
    pending = TaskImport.objects.get()
    address = reverse("leaderboard:task_import_preview", args=[pending.pk])
    preview = client.get(address).content.decode()
    assert "Tracks: the phases that ran side by side" in preview and "divided into 4 subtasks" in preview
    assert '<span class="tag tag-alone">alone</span>' in preview and "<strong>check it</strong>" in preview
    assert preview.count('<span class="tag tag-recognised">recognised</span>') == 8
    assert '<select name="track-0" form="import-choices"' in preview
    assert '<option value="all">every subtask</option>' in preview
    assert "Outputs: HS (0, 1); TR (0, 1); AG (0, 1)" in preview
    assert 'name="gold-8"' in preview and 'name="primary_metric"' in preview  # every phase's gold file; one metric
    form = {"slug": "semeval", "primary_metric": "macro_f1", "labels": "", "track-0": "1"}
    # Two phases that opened together put in one track: refused on the page, naming both; nothing kept.
    refused = client.post(address, {**form, "track-2": "1", "action": "check"})
    assert refused.status_code == 200 and "Practice-Spanish-A and Practice-English-A open at the same moment" in (
        refused.content.decode()
    )
    assert TaskImport.objects.get().options == {}
    # The trial phase to subtask A of Spanish: kept, shown as chosen, then created there.
    assert client.post(address, {**form, "track-0": "2", "action": "check"}).status_code == 302
    assert TaskImport.objects.get().options["tracks"] == {"0": "2"}
    checked = client.get(address).content.decode()
    assert '<span class="tag tag-chosen">chosen</span> your choice' in checked
    assert '<option value="2" selected>2. Spanish A</option>' in checked
    created = client.post(address, {**form, "track-0": "2", "action": "confirm"})
    task = Task.objects.get(slug="semeval")
    assert created.status_code == 302 and created["Location"] == task.get_absolute_url()
    spanish_a = Task.objects.get(slug="semeval-spanish-a")
    assert [phase.name for phase in spanish_a.ordered_phases()] == [
        "Trial",
        "Practice-Spanish-A",
        "Evaluation-Spanish-A",
    ]
    assert phases_of(Task.objects.get(slug="semeval-english-a")) == track_phases("English A")
    assert len(Task.objects.get(slug="semeval-english-b").scheme.outputs) == 3
    assert_one_after_another(task)
