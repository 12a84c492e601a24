"""A task as a bundle, and back: export, then import as a new task.

What this proves: the demo task with its runs comes back with boards whose CSV downloads are
the same bytes but for the run ids (each new run maps to the original); the dates are kept,
or moved by whole days so that the first phase opens on the day given (runs and decisions
move with them, and a split phase draws a new seed, while a restore keeps it); a bundle
without runs creates no team; and a bad task.yaml is refused with the file, the field and
what was expected — wrong types, missing fields, bad dates, unknown choices, a missing or
changed file, a gold file that is not one, a Python tag — with nothing written.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import zipfile
from collections.abc import Callable

import pytest
import yaml
from django.core.exceptions import ValidationError
from django.core.management import call_command

from leaderboard import errors
from leaderboard.bundles.export import task_bundle
from leaderboard.bundles.plan import ImportOptions
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.management.commands.load_demo import EMOTIONS_SLUG, SLUG, SUBTASK_B_SLUG
from leaderboard.models import OrganiserAction, Phase, StoredFile, Submission, Task, Team
from leaderboard.pages import results as results_page
from leaderboard.services.imports import import_upload, task_import
from leaderboard.services.organisers import submission_disqualify, team_remove
from leaderboard.services.submissions import submission_choose
from leaderboard.services.tasks import task_update
from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A, PERFECT
from tests.leaderboard.support import prediction_file

pytestmark = pytest.mark.django_db


def exported(task: Task, user, *, with_runs: bool = True) -> bytes:
    return b"".join(task_bundle(task, with_runs=with_runs, user=user))


def imported(content: bytes, organiser, capture, **options) -> Task:
    choices = ImportOptions(**options)
    bundle = open_bundle(content, name="bundle.zip")
    with capture(execute=True):
        return task_import(organiser=organiser, bundle=bundle, plan=plan_of(bundle, choices), options=choices)


def board_csvs(task: Task) -> list[str]:
    """Each phase's CSV download, as Python's csv module writes its cells (one way of quoting)."""
    csvs = []
    for phase in Task.objects.get(pk=task.pk).ordered_phases():
        csvs.append(with_mapped_ids(results_page.export(phase=phase, kind="csv").decode()))
    return csvs


def with_mapped_ids(text: str, mapping: dict[int, int] | None = None) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows[1:]:
        if row[3] and mapping is not None:
            row[3] = str(mapping[int(row[3])])
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue()


def test_the_demo_comes_back_with_the_same_boards(organiser, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())
    demo = Task.objects.get(slug=SLUG)
    content = exported(demo, organiser)
    copy = imported(content, organiser, django_capture_on_commit_callbacks, slug="demo-copy")
    assert copy.submissions.filter(status=Submission.Status.SCORED).count() == demo.submissions.count() == 16
    originals = {run.file.sha256: run.pk for run in demo.submissions.select_related("file")}
    mapping = {originals[run.file.sha256]: run.pk for run in copy.submissions.select_related("file")}
    before, after = board_csvs(demo), board_csvs(copy)
    assert [with_mapped_ids(text, mapping) for text in before] == after
    assert [phase.opens_at for phase in demo.ordered_phases()] == [phase.opens_at for phase in copy.ordered_phases()]
    names = zipfile.ZipFile(io.BytesIO(content)).namelist()
    assert names[:2] == ["task.yaml", "README.txt"] and "runs/evaluation/runs.csv" in names


def test_a_subtask_with_contrastive_runs_comes_back_with_its_marks(organiser, django_capture_on_commit_callbacks):
    """Demo subtask B moves as a task of its own: its parent's teams, its phase that takes a
    contrastive run, each run's mark; its board (contrastive rows included) is the same."""
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())
    subtask = Task.objects.get(slug=SUBTASK_B_SLUG)
    copy = imported(exported(subtask, organiser), organiser, django_capture_on_commit_callbacks, slug="b-copy")
    assert copy.parent is None and copy.phases.get().contrastive_runs == 1

    def marks(task: Task) -> list[tuple[str, int, bool]]:
        return sorted(
            (team, contrastive or 0, chosen)
            for team, contrastive, chosen in task.submissions.values_list("team__name", "contrastive", "chosen")
        )

    assert marks(copy) == marks(subtask) and sum(mark for _, mark, _ in marks(copy)) == 2
    originals = {run.file.sha256: run.pk for run in subtask.submissions.select_related("file")}
    mapping = {originals[run.file.sha256]: run.pk for run in copy.submissions.select_related("file")}
    (before,), (after,) = board_csvs(subtask), board_csvs(copy)
    assert with_mapped_ids(before, mapping) == after and after.count(",contrastive,") == 2


def test_the_multi_label_task_comes_back_with_its_outputs_and_the_same_board(
    organiser, django_capture_on_commit_callbacks
):
    """The demo's task of 11 emotions: its outputs, its primary metric and every run, each scored
    again on import to the same values under every column, the item metrics too."""
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=io.StringIO())
    task = Task.objects.get(slug=EMOTIONS_SLUG)
    copy = imported(exported(task, organiser), organiser, django_capture_on_commit_callbacks, slug="ec-copy")
    assert copy.outputs == task.outputs and copy.primary_metric == "jaccard" and copy.labels == []
    assert copy.submissions.filter(status=Submission.Status.SCORED).count() == task.submissions.count() == 6
    originals = {run.file.sha256: run.pk for run in task.submissions.select_related("file")}
    mapping = {originals[run.file.sha256]: run.pk for run in copy.submissions.select_related("file")}
    (before,), (after,) = board_csvs(task), board_csvs(copy)
    assert with_mapped_ids(before, mapping) == after and "jaccard" in after.splitlines()[0]


def test_an_ordinal_task_comes_back_ordinal_with_its_overall_ranking(
    make_task, make_user, submit, organiser, django_capture_on_commit_callbacks
):
    """The scale and the organisers' overall column move with the task: the same errors, the
    same overall column, the same board."""
    task = make_task(slug="scale", ordinal=True)
    for name, predictions in (("Near", "a b c a b b a a"), ("Far", "c a a c a a c c"), ("Same", "a b c a b c a a")):
        user = make_user(name.lower())
        team_create(task=task, user=user, name=name)
        submit(task, user, prediction_file(predictions))
    task_update(task=task, settings={"overall_method": "borda", "overall_columns": "macro_mae, mae, kappa"})
    copy = imported(exported(task, organiser), organiser, django_capture_on_commit_callbacks, slug="scale-copy")
    assert copy.ordinal and (copy.overall_method, copy.overall_columns) == ("borda", "macro_mae, mae, kappa")
    originals = {run.file.sha256: run.pk for run in task.submissions.select_related("file")}
    mapping = {originals[run.file.sha256]: run.pk for run in copy.submissions.select_related("file")}

    def board(found: Task) -> str:
        found = Task.objects.get(pk=found.pk)
        return results_page.export(phase=found.current_phase(), kind="csv", overall=found.overall).decode()

    before, after = with_mapped_ids(board(task), mapping), with_mapped_ids(board(copy))
    assert before == after and "borda,borda rank" in after and ",macro_mae," in after


@pytest.fixture
def contest(make_task, make_user, submit, organiser, django_capture_on_commit_callbacks):
    """A split phase with three teams: one removed, one run disqualified, one chosen (each
    decision's work, the analysis of the new scores, run on commit as a request's would be)."""
    task = make_task(max_per_day=100, private_percent=50, counting=Phase.Counting.CHOSEN)
    users = [make_user(name) for name in ("alice", "bob", "carol")]
    for user, name in zip(users, ("Alpha", "Beta", "Gamma"), strict=True):
        team_create(task=task, user=user, name=name)
    first = submit(task, users[0], MOSTLY_A, description="baseline")
    submit(task, users[0], PERFECT)
    cheat = submit(task, users[1], PERFECT)
    submit(task, users[1], prediction_file("a b c a b c a a"))
    submit(task, users[2], MOSTLY_A)
    with django_capture_on_commit_callbacks(execute=True):
        submission_choose(submission=first, user=users[0])
        submission_disqualify(submission=cheat, user=organiser, reason="copied")
        team_remove(team=Team.objects.get(name="Gamma"), user=organiser, reason="two accounts")
    task_update(task=task, settings={"terms": "Cite us."})
    return task


def test_a_restore_keeps_the_split_the_choices_and_the_decisions(
    contest, organiser, django_capture_on_commit_callbacks
):
    copy = imported(exported(contest, organiser), organiser, django_capture_on_commit_callbacks, slug="copy")
    old, new = contest.current_phase(), copy.current_phase()
    assert (new.private_percent, new.split_seed) == (old.private_percent, old.split_seed)
    assert copy.terms == "Cite us." and copy.terms_version == 1
    assert copy.submissions.get(chosen=True).description == "baseline"
    assert copy.submissions.get(disqualified_at__isnull=False).disqualified_reason == "copied"
    assert Team.objects.get(task=copy, name="Gamma").removed_reason == "two accounts"
    assert sorted(OrganiserAction.objects.filter(task=copy).values_list("kind", flat=True)) == [
        "disqualify",
        "remove_team",
    ]
    assert not Team.objects.filter(task=copy, membership__isnull=False).exists()  # no accounts come over
    mapping = dict(
        zip(
            contest.submissions.order_by("pk").values_list("pk", flat=True),
            copy.submissions.order_by("pk").values_list("pk", flat=True),
            strict=True,
        )
    )
    assert [with_mapped_ids(text, mapping) for text in board_csvs(contest)] == board_csvs(copy)


def test_next_years_edition_moves_every_date(contest, organiser, django_capture_on_commit_callbacks):
    old = contest.current_phase()
    copy = imported(
        exported(contest, organiser),
        organiser,
        django_capture_on_commit_callbacks,
        slug="next",
        first_opens=dt.date(2031, 3, 2),
    )
    new = copy.current_phase()
    assert new.opens_at.date() == dt.date(2031, 3, 2) and new.opens_at.timetz() == old.opens_at.timetz()
    delta = new.opens_at - old.opens_at
    assert new.closes_at - old.closes_at == delta and delta.seconds == 0 and delta.microseconds == 0
    assert new.split_seed != old.split_seed  # a new edition draws its private items anew
    runs = zip(contest.submissions.order_by("pk"), copy.submissions.order_by("pk"), strict=True)
    assert all(after.created_at - before.created_at == delta for before, after in runs)


def test_without_runs_there_are_no_teams(contest, organiser, django_capture_on_commit_callbacks):
    content = exported(contest, organiser, with_runs=False)
    assert not any(name.startswith("runs/") for name in zipfile.ZipFile(io.BytesIO(content)).namelist())
    copy = imported(content, organiser, django_capture_on_commit_callbacks, slug="bare")
    assert copy.community.teams.count() == 0
    assert copy.phases.count() == 1 and copy.current_phase().baselines.count() == 3


# --- refusals ---------------------------------------------------------------------------------


@pytest.fixture
def small_bundle(make_task, make_user, submit, organiser) -> bytes:
    task = make_task()
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    submit(task, alice, PERFECT)
    return exported(task, organiser)


def rewritten(
    content: bytes, change: Callable[[dict], None] | None = None, files: dict | None = None, yaml_text=None
) -> bytes:
    """The bundle with its task.yaml changed (and files replaced, or removed with ``None``)."""
    source = zipfile.ZipFile(io.BytesIO(content))
    document = yaml.safe_load(source.read("task.yaml"))
    if change:
        change(document)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("task.yaml", yaml_text if yaml_text is not None else yaml.safe_dump(document))
        for name in source.namelist():
            if name == "task.yaml":
                continue
            replaced = (files or {}).get(name, source.read(name))
            if replaced is not None:
                archive.writestr(name, replaced)
    return out.getvalue()


def refusal(content: bytes, user) -> tuple[set[str], str]:
    tasks, files = Task.objects.count(), StoredFile.objects.count()
    with pytest.raises(ValidationError) as caught:
        import_upload(user=user, name="bundle.zip", content=content)
    assert (Task.objects.count(), StoredFile.objects.count()) == (tasks, files)  # nothing written
    return errors.problem_codes(caught.value), " ".join(caught.value.messages)


def set_path(path: str, value):
    def change(document: dict) -> None:
        target = document
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is KeyError:
            del target[last]
        else:
            target[last] = value

    return change


@pytest.mark.parametrize(
    ("path", "value", "code", "message"),
    [
        ("task.labels", "abc", "BUNDLE_FIELD", "task.yaml: task.labels: expected a list; found the text 'abc'."),
        ("task.labels", ["a", "a"], "BUNDLE_FIELD", "task.labels: expected at least two different labels"),
        ("task.title", KeyError, "BUNDLE_FIELD_MISSING", "task.yaml: task.title is missing; expected a text."),
        ("task.primary_metric", "speed", "BUNDLE_FIELD", "task.primary_metric: expected one of accuracy"),
        ("phases", [], "BUNDLE_FIELD", "phases: expected a list of 1 to 20 phases; found a list of 0."),
        ("phases.0.opens_at", "tomorrow", "BUNDLE_FIELD", "phases[0].opens_at: expected a date (2026-01-31)"),
        ("phases.0.closes_at", "2000-01-01", "BUNDLE_FIELD", "phases[0].closes_at: expected a moment after opens_at"),
        ("phases.0.max_total", -3, "BUNDLE_FIELD", "phases[0].max_total: expected a whole number from 0"),
        (
            "phases.0.max_per_day",
            "5",
            "BUNDLE_FIELD",
            "phases[0].max_per_day: expected a whole number; found the text '5'",
        ),
        ("phases.0.counting", "random", "BUNDLE_FIELD", "phases[0].counting: expected one of latest, best, chosen"),
        ("phases.0.slug", "../x", "BUNDLE_FIELD", "phases[0].slug: expected an address of letters"),
        ("phases.0.gold.file", "nowhere.csv", "BUNDLE_MISSING_FILE", "phases[0].gold.file names 'nowhere.csv'"),
        ("phases.0.gold.sha256", "0" * 64, "BUNDLE_CHECKSUM", "has the SHA-256"),
        ("runs.0.team", "Nobody", "BUNDLE_FIELD", "runs[0].team: expected the name of a team listed under teams"),
        (
            "teams.0.name",
            "Al\u202epha",
            "BUNDLE_FIELD",
            "teams[0].name: expected a team name (The name holds characters",
        ),
        ("teams.0.name", "Alpha  ", "BUNDLE_FIELD", "teams[0].name: expected a team name in its canonical form"),
        ("runs.0.chosen", "yes", "BUNDLE_FIELD", "runs[0].chosen: expected true or false; found the text 'yes'."),
        ("runs.0.uploaded_at", 12, "BUNDLE_FIELD", "runs[0].uploaded_at: expected a date"),
        ("task.ordinal", "yes", "BUNDLE_FIELD", "task.ordinal: expected true or false; found the text 'yes'."),
        ("task.overall_method", "median", "BUNDLE_FIELD", "task.overall_method: expected one of mean_rank, borda, or"),
        ("format", "something-else", "BUNDLE_VERSION", "task.yaml: format is 'something-else'"),
        ("version", 99, "BUNDLE_VERSION", "task.yaml: version is 99; this site reads versions up to 2."),
    ],
)
def test_a_bad_task_yaml_says_which_field_and_what_was_expected(small_bundle, organiser, path, value, code, message):
    codes, text = refusal(rewritten(small_bundle, set_path(path, value)), organiser)
    assert codes == {code}
    assert message in text


def test_a_gold_file_that_is_not_one_is_refused_with_its_line(small_bundle, organiser):
    gold = next(n for n in zipfile.ZipFile(io.BytesIO(small_bundle)).namelist() if "/gold/" in n)
    document = yaml.safe_load(zipfile.ZipFile(io.BytesIO(small_bundle)).read("task.yaml"))
    bad = b"id,label\n1,a\n2,zebra\n"

    def change(doc):
        doc["phases"][0]["gold"]["sha256"] = hashlib.sha256(bad).hexdigest()

    codes, text = refusal(rewritten(small_bundle, change, files={gold: bad}), organiser)
    assert codes == {"BUNDLE_FILE_REFUSED"}
    assert text.startswith(f"task.yaml: phases[0].gold.file ({gold}): ") and "line 3" in text and "zebra" in text
    assert document["phases"][0]["gold"]["file"] == gold


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        (
            "format: !!python/object/apply:os.system ['touch /tmp/pwned']\n",
            "BUNDLE_YAML_TAG",
            "line 1: the tag '!!python/object/apply:os.system' is refused",
        ),
        ("task: [unclosed\n", "BUNDLE_YAML_SYNTAX", "task.yaml: not valid YAML at line 2"),
        ("- a list\n- not a mapping\n", "BUNDLE_FIELD", "task.yaml: the document: expected a mapping"),
    ],
)
def test_yaml_is_read_safely(small_bundle, organiser, text, code, message):
    codes, refused = refusal(rewritten(small_bundle, yaml_text=text), organiser)
    assert codes == {code} and message in refused


def test_a_run_changed_after_the_preview_leaves_nothing_half_written(
    small_bundle, organiser, django_capture_on_commit_callbacks
):
    run = next(
        n
        for n in zipfile.ZipFile(io.BytesIO(small_bundle)).namelist()
        if n.startswith("runs/") and n.endswith("run.csv")
    )
    bundle = open_bundle(small_bundle, name="bundle.zip")
    plan = plan_of(bundle, ImportOptions())
    changed = open_bundle(rewritten(small_bundle, files={run: b"id,label\n1,a\n"}), name="bundle.zip")
    tasks, files = Task.objects.count(), StoredFile.objects.count()
    with pytest.raises(ValidationError) as caught:
        task_import(organiser=organiser, bundle=changed, plan=plan, options=ImportOptions(slug="half"))
    assert errors.problem_codes(caught.value) == {"BUNDLE_CHECKSUM"}
    assert (Task.objects.count(), StoredFile.objects.count()) == (tasks, files)


def test_teams_that_would_clash_on_the_site_are_refused(small_bundle, organiser):
    def change(document: dict) -> None:
        document["teams"].append({**document["teams"][0], "name": "ALPHA"})

    codes, text = refusal(rewritten(small_bundle, change), organiser)
    assert codes == {"BUNDLE_FIELD"} and "teams: expected teams whose names differ, and do not look alike" in text
