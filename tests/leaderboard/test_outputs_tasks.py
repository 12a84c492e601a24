"""Tasks with several labels an item, on the site: created through the form (its outputs read from
the gold file), runs uploaded through the form and refused with the line and the column, scored
as the command line scores them, ranked under every column of such a task (each suite metric's
mean over the outputs, raw and calibrated, and the metrics read from the items), on a plain task
and on a subtask.

What this proves:

- the task's outputs are its gold file's columns, the 0/1 ones labels; a label given for an
  output is its order; a gold file with one output column, or an output given that the file
  does not have, is refused, as a primary metric of the other kind of task;
- an upload is scored to the values of ``python -m scoring --multi-label`` on the same files,
  its per-output scores kept, its row ranked under every column, the primary one first;
- every results page, download and API answer of such a phase opens for an anonymous visitor, a
  team and the organiser; the team's page shows each output's confusion matrix; the intervals
  and the analysis say they are not computed for such a task;
- a bad file is refused with its line and column, and a stable code in the API.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard import errors
from leaderboard.models import Submission, Task
from leaderboard.services.teams import team_create
from leaderboard.stability import NOT_FOR_OUTPUTS
from scoring.engine.outputs import score_output_files
from scoring.engine.registry import ITEM_METRICS, ranking_metrics
from scoring.engine.schemes import Output
from tests.leaderboard.test_analysis import url

pytestmark = pytest.mark.django_db

NAMES = ["hate", "target", "aggressive"]


def outputs_file(rows: np.ndarray, names: list[str] = NAMES) -> bytes:
    lines = [",".join(["id", *names]), *(",".join([f"tw{i}", *map(str, row)]) for i, row in enumerate(rows))]
    return ("\n".join(lines) + "\n").encode()


GOLD = np.random.default_rng(19).integers(0, 2, (40, 3))


def runs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20)
    return {
        name: np.where(rng.random(GOLD.shape) < share, GOLD, 1 - GOLD) for name, share in (("Ada", 0.9), ("Bo", 0.6))
    }


def form(**fields) -> dict:
    return {
        "title": "HatEval B",
        "slug": "hateval-b",
        "description": "",
        "kind": "outputs",
        "labels": "",
        "primary_metric": "macro_f1",
        "opens_at": "2026-01-01T00:00",
        "closes_at": "2099-01-01T00:00",
        "max_per_day": 10,
        "max_total": 100,
        "counting": "latest",
        "visibility": "public",
        "phase_name": "Evaluation",
        "phase_slug": "evaluation",
        "gold": SimpleUploadedFile("gold.csv", outputs_file(GOLD)),
        **fields,
    }


@pytest.fixture
def organiser_client(client, organiser):
    client.force_login(organiser)
    return client


def test_a_task_of_several_outputs_is_made_from_its_gold_file_s_columns(organiser_client):
    response = organiser_client.post(reverse("leaderboard:task_create"), form(labels="target: 1, 0"))
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    task = Task.objects.get(slug="hateval-b")
    assert task.labels == [] and [o.name for o in task.scheme.outputs] == NAMES
    assert [o.labels for o in task.scheme.outputs] == [("0", "1"), ("1", "0"), ("0", "1")]
    assert not task.scheme.multi_label and task.overall_columns == "raw"


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"gold": SimpleUploadedFile("gold.csv", b"id,hate\ntw0,1\ntw1,0\n")}, errors.TOO_FEW_OUTPUTS.code),
        ({"labels": "colour: red, blue"}, errors.UNKNOWN_OUTPUT.code),
        ({"primary_metric": "macro_mae"}, errors.PRIMARY_NEEDS_ORDINAL.code),
        ({"kind": "one", "primary_metric": "jaccard", "labels": "a, b"}, errors.PRIMARY_NEEDS_OUTPUTS.code),
        ({"gold": SimpleUploadedFile("gold.csv", b"id,hate,hate\ntw0,1,0\n")}, "DUPLICATE_COLUMN"),
    ],
)
def test_a_task_the_other_kind_would_take_is_refused(organiser_client, fields, code):
    response = organiser_client.post(reverse("leaderboard:task_create"), form(**fields))
    assert response.status_code == 200 and not Task.objects.filter(slug="hateval-b").exists()
    found = {item.code for items in response.context["form"].errors.as_data().values() for item in items}
    assert code in found, response.context["form"].errors


@pytest.fixture
def scored_outputs(make_task, make_user, client, django_capture_on_commit_callbacks):
    """A task of three 0/1 outputs (so multi-label), two teams' runs uploaded through the form."""

    def build(kind: str = "plain"):
        task = make_task(
            "hateval", kind=kind, gold=outputs_file(GOLD), labels=None, outputs=outputs_of(), primary_metric="jaccard"
        )
        for name, rows in runs().items():
            user = make_user(name.lower())
            team_create(task=task, user=user, name=name)
            client.force_login(user)
            with django_capture_on_commit_callbacks(execute=True):
                response = client.post(
                    reverse("leaderboard:submission_create", args=[task.slug]),
                    {"file": SimpleUploadedFile("run.csv", outputs_file(rows[:, ::-1], NAMES[::-1]))},
                )
            assert response.status_code == 302
        client.logout()
        return task

    return build


def outputs_of() -> tuple[Output, ...]:
    return tuple(Output(name, ("0", "1")) for name in NAMES)


@pytest.mark.parametrize("kind", ["plain", "subtask"])
def test_a_run_is_scored_as_the_command_line_scores_it_and_ranked(scored_outputs, client, kind):
    task = scored_outputs(kind)
    for name, rows in runs().items():
        run = Submission.objects.get(team__name=name)
        assert run.status == Submission.Status.SCORED, run.failure
        expected = score_output_files(outputs_file(GOLD), outputs_file(rows))
        assert run.metrics == expected.metrics and run.calibrated == expected.calibrated
        assert (
            run.output_scores["target"]["confusion_matrix"] == expected.reports["target"].as_json()["confusion_matrix"]
        )
    board = client.get(f"/api/tasks/{task.slug}/leaderboard").json()
    ids = {column["id"] for column in board["columns"]}
    assert {m.key for m in ranking_metrics()} <= ids and {m.key for m in ITEM_METRICS} <= ids
    teams = [row for row in board["rows"] if row["kind"] == "team"]
    assert [(row["name"], row["ranks"]["jaccard"]) for row in teams] == [("Ada", 1), ("Bo", 2)]
    assert board["intervals"] == {"status": "unavailable", "reason": NOT_FOR_OUTPUTS}


@pytest.mark.parametrize("kind", ["plain", "subtask"])
def test_every_page_opens_for_every_visitor(scored_outputs, client, organiser, kind):
    task = scored_outputs(kind)
    phase = task.current_phase()
    addresses = [
        url("leaderboard", task),
        url("leaderboard", task) + "?calibrated=1",
        url("metric_detail", task, "jaccard"),
        url("metric_detail", task, "macro_f1_c"),
        url("disagreements", task),
        url("what_if", task),
        url("analysis", task),
        url("leaderboard_csv", task),
        url("leaderboard_json", task),
        url("leaderboard_tex", task),
        f"/api/tasks/{task.slug}/leaderboard",
        f"/api/tasks/{task.slug}/correlations",
        f"/api/tasks/{task.slug}",
        task.get_absolute_url(),
    ]
    run = Submission.objects.get(team__name="Ada")
    for who in (None, run.submitted_by, organiser):
        if who is not None:
            client.force_login(who)
        for address in addresses:
            response = client.get(address)
            assert response.status_code == 200, (who, address, response.status_code)
        client.logout()
    client.force_login(run.submitted_by)
    page = client.get(reverse("leaderboard:submission_detail", args=[task.slug, run.pk])).content.decode()
    assert all(f"Output “{name}”" in page for name in NAMES)
    assert NOT_FOR_OUTPUTS in client.get(url("leaderboard", task)).content.decode()
    assert phase.slug in url("analysis", task)


def test_a_bad_file_is_refused_with_its_line_column_and_code(scored_outputs, make_user, client):
    task = scored_outputs()
    user = make_user("cy")
    team_create(task=task, user=user, name="Cy")
    client.force_login(user)
    bad = outputs_file(np.where(GOLD == 1, 2, 0))
    page = client.post(
        reverse("leaderboard:submission_create", args=[task.slug]),
        {"file": SimpleUploadedFile("run.csv", bad)},
        follow=True,
    )
    shown = " ".join(str(m) for m in page.context["messages"])
    assert "run.csv, line 2: unknown label '2' in the column 'hate'; expected one of 0, 1" in shown
