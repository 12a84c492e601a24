"""Moving in from CodaLab (competition.yaml v1.5) and Codabench (version 2), on bundles written
in their documented formats.

What this proves: the title, description and pages (HTML as text: no script survives, links
keep their address), the terms, registration approval, the phases with their dates (CodaLab's
phases end when the next starts; Codabench's ``1-15-2026``, CodaLab's ``2012-10-1``), limits
(0 is no limit there), the counting rule and a hidden leaderboard come over; reference data
becomes the gold file when it is a labels file (a CSV with a header, one label per line, a
table whose columns the preview asks about); what cannot come over is listed; a competition
inside one folder is found; and a phase without labels asks for a gold file, which then
completes the import.
"""

from __future__ import annotations

import datetime as dt

import pytest

from leaderboard.bundles.documents import parse_moment
from leaderboard.bundles.plan import LINE_NUMBER, FilePlan, ImportOptions, ReferenceChoice
from leaderboard.bundles.reading import open_bundle, plan_of
from leaderboard.models import Counting, Participant, Registration, Submission, Visibility
from leaderboard.services.imports import task_import
from leaderboard.services.submissions import submission_create
from leaderboard.services.teams import team_create
from tests.leaderboard.bundles.support import GOLD_PAIRS, codabench_v2, codalab_v15, labels_csv

pytestmark = pytest.mark.django_db
UTC = dt.UTC


def plan_for(content: bytes, **options):
    return plan_of(open_bundle(content, name="competition.zip"), ImportOptions(**options))


def test_a_codalab_v15_competition():
    plan = plan_for(codalab_v15())
    assert plan.source == "a CodaLab competition (competition.yaml v1.5)"
    assert plan.title == "Sentiment 2025" and plan.registration == Registration.APPROVAL
    assert plan.labels == ("neg", "neu", "pos")
    assert plan.description.startswith(
        "Classify short texts.\n\n# Overview\n\n# Sentiment\n\nTexts are short.\n\n# Data"
    )
    assert "alert" not in plan.description and "the definition (https://example.org/f1)" in plan.description
    assert "- train\n- test" in plan.description and plan.terms == "Cite the overview paper."
    development, final = plan.phases
    assert (development.opens_at, development.closes_at) == (dt.datetime(2025, 1, 10, tzinfo=UTC), final.opens_at)
    assert final.opens_at == dt.datetime(2025, 2, 10, 12, tzinfo=UTC)
    assert final.closes_at == final.opens_at + dt.timedelta(days=365)
    assert (development.max_per_day, development.max_total, final.max_per_day, final.max_total) == (5, 50, 5, 3)
    assert development.counting == Counting.LATEST and development.gold_items == 12
    assert development.gold_counts == (("neg", 4), ("neu", 4), ("pos", 4))
    assert [f.title for f in development.data_files] == ["Public data"]
    notes = "\n".join(plan.notes)
    for expected in (
        "Final: no end date there",
        "The scoring programs of Development and Final do not come over",
        "The docker image (codalab/codalab-legacy:py37) does not come over",
        "The logo (logo.png) is not shown here.",
        "The leaderboard's columns (F1) came from its scoring program",
        "Final: the daily limit was 0 (no limit there)",
    ):
        assert expected in notes
    assert plan.ready and not plan.questions


def test_a_codabench_v2_competition_in_a_folder():
    plan = plan_for(codabench_v2(folder="Wheat-Bundle", hidden=True))
    assert plan.source == "a Codabench competition (competition.yaml version 2)"
    assert plan.registration == Registration.OPEN and plan.terms == "# Terms\n\nBe fair."
    assert "# Overview\n\n# Overview\n\nSeeds of **three** kinds." in plan.description  # Markdown kept as text
    development, final = plan.phases
    assert development.opens_at == dt.datetime(2026, 1, 15, tzinfo=UTC)
    assert development.closes_at == dt.datetime(2026, 2, 15, tzinfo=UTC) == final.opens_at
    assert development.counting == Counting.BEST and development.visibility == Visibility.AFTER_CLOSE
    assert development.gold.content.startswith(b"id,label\n1,0\n2,1\n3,2\n")  # ids by line number
    assert plan.labels == ("0", "1", "2") and development.data_files[0].name == "public_data.zip"
    assert "Its leaderboard was hidden" in "\n".join(plan.notes)


def test_dates_may_move_to_next_years_edition():
    plan = plan_for(codabench_v2(), first_opens=dt.date(2027, 1, 11))
    assert plan.phases[0].opens_at == dt.datetime(2027, 1, 11, tzinfo=UTC)
    assert plan.phases[1].closes_at - plan.phases[1].opens_at == dt.timedelta(days=365)


@pytest.mark.parametrize(
    ("written", "moment"),
    [
        ("1-15-2026", dt.datetime(2026, 1, 15, tzinfo=UTC)),  # Codabench's month first
        ("2012-10-1", dt.datetime(2012, 10, 1, tzinfo=UTC)),  # CodaLab's BRaTS-2012 example
        ("2026-01-31T12:00:00Z", dt.datetime(2026, 1, 31, 12, tzinfo=UTC)),
        ("2012-13-1", None),
        ("1-1-26", None),
    ],
)
def test_dates_as_the_platforms_write_them(written, moment):
    assert parse_moment(written) == moment


def test_a_table_without_header_is_a_question_answered_by_the_organiser():
    reference = labels_csv([(label, item) for item, label in GOLD_PAIRS], header="")  # label first, then id
    plan = plan_for(codalab_v15(reference=reference))
    question = plan.questions[0]
    assert question.columns == (LINE_NUMBER, "column 1", "column 2")
    assert (question.id_column, question.label_column) == ("column 2", "column 1")  # all different: the ids
    answered = plan_for(
        codalab_v15(reference=reference),
        references={
            0: ReferenceChoice("truth.csv", LINE_NUMBER, "column 1"),
            1: ReferenceChoice("", "column 2", "column 1"),
        },
    )
    assert answered.phases[0].gold.content.startswith(b"id,label\n1,neg\n")
    assert answered.phases[1].gold.content.startswith(b"id,label\ns01,neg\n")


def test_a_phase_without_labels_asks_for_a_gold_file(organiser, django_capture_on_commit_callbacks, make_user):
    content = codalab_v15(reference=b"Hello World!\n")
    plan = plan_for(content)
    assert not plan.ready and plan.phases[0].gold is None
    assert "fewer than two labels" in plan.phases[0].gold_problem
    gold = FilePlan(name="gold.csv", content=labels_csv(GOLD_PAIRS), source="given")
    options = ImportOptions(
        slug="sentiment", golds={0: gold, 1: gold}, first_opens=dt.date.today() - dt.timedelta(days=1)
    )
    bundle = open_bundle(content, name="competition.zip")
    task = task_import(organiser=organiser, bundle=bundle, plan=plan_of(bundle, options), options=options)
    assert [phase.slug for phase in task.ordered_phases()] == ["development", "final"]
    assert task.registration == Registration.APPROVAL and task.terms == "Cite the overview paper."
    assert task.current_phase().data_files.get().file.name == "public_data.zip"
    # It works as a task: a participant registers, forms a team and uploads.
    alice = make_user("alice")
    Participant.objects.create(task=task, user=alice, status="approved", terms_version=task.terms_version)
    team_create(task=task, user=alice, name="Alpha")
    with django_capture_on_commit_callbacks(execute=True):
        run = submission_create(task=task, user=alice, name="run.csv", content=labels_csv(GOLD_PAIRS))
    run.refresh_from_db()
    assert run.status == Submission.Status.SCORED and run.metrics["macro_f1"] == 1.0
