"""Every endpoint under every role, on a hidden board (results hidden until the close) and a
public one (the task closed): each cell of each table asserted, as tests/leaderboard's
permission matrix does for the pages."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from leaderboard import errors
from leaderboard.api import problems
from leaderboard.models import Phase, Submission
from tests.conftest import PERFECT
from tests.leaderboard.api.conftest import ROLES

pytestmark = pytest.mark.django_db


def by_phase(**tables: tuple) -> list:
    """(phase, role, expected) cases: one expected outcome per role of ``ROLES`` for each phase."""
    return [
        pytest.param(phase, role, outcome, id=f"{phase}-{role}")
        for phase, outcomes in tables.items()
        for role, outcome in zip(ROLES, outcomes, strict=True)
    ]


@pytest.mark.parametrize(("phase", "role", "status"), by_phase(hidden=(200,) * 5, public=(200,) * 5))
def test_task_list(world, phase, role, status):
    world.enter(phase)
    response = world.client(role).get("/api/tasks")
    assert response.status_code == status
    (task,) = response.json()
    assert task["slug"] == "toy" and task["teams"] == 2 and task["results_public"] == (phase == "public")


@pytest.mark.parametrize(
    ("phase", "role", "expected"),
    by_phase(
        hidden=((None, False, 0), ("A", False, 1), ("B", False, 1), (None, True, 0), (None, True, 0)),
        public=((None, True, 0), ("A", True, 1), ("B", True, 1), (None, True, 0), (None, True, 0)),
    ),
)
def test_task_detail_shows_what_the_task_page_shows(world, phase, role, expected):
    world.enter(phase)
    response = world.client(role).get("/api/tasks/toy")
    assert response.status_code == 200
    you = response.json()["you"]
    assert (you["team"], you["board_visible"], len(you["submissions"])) == expected
    assert you["is_organiser"] == (role in ("organiser", "staff"))


HIDDEN_BOARD = (403, 403, 403, 200, 200)


@pytest.mark.parametrize("endpoint", ["leaderboard", "correlations"])
@pytest.mark.parametrize(("phase", "role", "status"), by_phase(hidden=HIDDEN_BOARD, public=(200,) * 5))
def test_boards_obey_the_visibility_of_the_pages(world, endpoint, phase, role, status):
    world.enter(phase)
    response = world.client(role).get(f"/api/tasks/toy/{endpoint}")
    page = world.client(role, token=False).get(
        f"/tasks/toy/{'disagreements' if endpoint == 'correlations' else 'leaderboard'}/"
    )
    assert response.status_code == page.status_code == status
    body = response.json()
    if status == 403:
        assert body["code"] == problems.RESULTS_HIDDEN.code
        assert f"{world.phase.closes_at:%Y-%m-%d %H:%M} UTC" in body["message"]


def test_leaderboard_rows_are_the_json_download_rows(world):
    world.enter("public")
    client = world.client("member")
    board = client.get("/api/tasks/toy/leaderboard?sort=accuracy").json()
    download = client.get("/tasks/toy/leaderboard.json").json()
    raw_ids = [column["id"] for column in board["columns"]]
    assert board["sort"] == "accuracy" and not board["calibrated"]
    assert all(not column["calibrated"] for column in board["columns"]) and "class" in board["columns"][0]
    assert [row["name"] for row in board["rows"]][:2] == ["A", "B"]
    first = next(row for row in download["rows"] if row["name"] == "A")
    assert board["rows"][0]["values"] == {key: first["values"][key] for key in raw_ids}
    assert board["rows"][0]["ranks"]["accuracy"] == 1
    calibrated = client.get("/api/tasks/toy/leaderboard?calibrated=true").json()
    assert calibrated["calibrated"] and all(column["calibrated"] for column in calibrated["columns"])


def test_correlations_are_a_square_matrix_with_null_where_undefined(world):
    world.enter("public")
    data = world.client("anonymous").get("/api/tasks/toy/correlations?set=all").json()
    size = len(data["columns"])
    assert data["set"] == "all" and data["teams"] == 2 and size > 10
    assert len(data["rho"]) == size and all(len(row) == size for row in data["rho"])
    assert data["columns"][1]["id"] == data["columns"][0]["id"] + "_c"  # each metric beside its calibrated version
    assert data["n_teams"][0][0] == 2
    paper = world.client("anonymous").get("/api/tasks/toy/correlations").json()
    assert paper["set"] == "paper" and len(paper["columns"]) < size


@pytest.mark.parametrize(
    ("phase", "role", "expected"),
    by_phase(
        hidden=(404, "full", 404, "all", "all"),
        public=(404, "all", "all", "all", "all"),
    ),
)
def test_submission_detail_under_every_role(world, phase, role, expected):
    world.enter(phase)
    response = world.client(role).get(f"/api/submissions/{world.submission_a.pk}")
    if expected == 404:
        assert response.status_code == 404
        assert response.json()["code"] == problems.UNKNOWN_SUBMISSION.code
        return
    data = response.json()
    assert response.status_code == 200 and data["feedback"] == expected and data["status"] == "scored"
    assert data["metrics"] and data["primary"] is not None
    assert (data["confusion_matrix"] is not None) == (expected == "all")  # matrices leak the gold while hidden
    ranked = {m["column"]: m["rank"] for m in data["metrics"]}
    assert (ranked["accuracy"] == 1) == (role in ("organiser", "staff") or phase == "public")


@pytest.mark.parametrize(("role", "sees_note"), [("member", True), ("other", False), ("organiser", True)])
def test_a_runs_private_note_is_for_its_team_and_the_organisers(world, role, sees_note):
    """Once results are public another team may read a run's scores, never the team's note on it."""
    Submission.objects.filter(pk=world.submission_a.pk).update(description="our secret ensemble, seed 3")
    world.enter("public")
    data = world.client(role).get(f"/api/submissions/{world.submission_a.pk}").json()
    assert data["status"] == "scored"
    assert data["description"] == ("our secret ensemble, seed 3" if sees_note else None)


@pytest.mark.parametrize(("phase", "rounded"), [("hidden", True), ("public", False)])
def test_scores_have_the_pages_precision_while_results_are_hidden(world, phase, rounded):
    world.enter(phase)
    data = world.client("other").get(f"/api/submissions/{world.submission_b.pk}").json()
    values = [m[key] for m in data["metrics"] for key in ("raw", "calibrated") if m[key] is not None]
    assert values and all(value == round(value, 4) for value in values) == rounded


@pytest.mark.parametrize(
    ("feedback", "shows"),
    [
        (Phase.Feedback.FULL, {"metrics": True, "primary": "1.0000"}),
        (Phase.Feedback.PRIMARY, {"metrics": False, "primary": "1.00"}),
        (Phase.Feedback.VALIDATED, {"metrics": False, "primary": None}),
    ],
)
def test_a_team_sees_its_scores_as_the_feedback_policy_says(make_world, feedback, shows):
    world = make_world(feedback=feedback)
    data = world.client("member").get(f"/api/submissions/{world.submission_a.pk}").json()
    assert data["feedback"] == feedback
    assert (data["metrics"] is not None) == shows["metrics"]
    assert data["primary"] == shows["primary"]
    assert data["confusion_matrix"] is None and data["calibrated_matrix"] is None
    listed = world.client("member").get("/api/tasks/toy").json()["you"]["submissions"]
    assert listed[0]["primary"] == shows["primary"]  # the task's list agrees with the submission


def upload(client, content: bytes = PERFECT, name: str = "run.csv"):
    return client.post(
        "/api/tasks/toy/submissions", {"file": SimpleUploadedFile(name, content), "description": "api run"}
    )


@pytest.mark.parametrize(
    ("role", "status", "code"),
    [
        ("anonymous", 401, problems.TOKEN_REQUIRED.code),
        ("member", 201, None),
        ("other", 201, None),
        ("organiser", 400, errors.NO_TEAM.code),
        ("staff", 400, errors.NO_TEAM.code),
    ],
)
def test_upload_under_every_role(world, django_capture_on_commit_callbacks, role, status, code):
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(world.client(role))
    assert response.status_code == status, response.content
    body = response.json()
    if code:
        assert body["code"] == code
        return
    submission = Submission.objects.get(pk=body["id"])
    assert submission.description == "api run" and submission.submitted_by == world.users[role]
    assert body["url"].endswith(f"/api/submissions/{submission.pk}")
    assert world.client(role).get(body["url"]).json()["status"] == "scored"


def test_upload_with_the_session_alone_needs_a_token(world):
    response = upload(world.client("member", token=False))
    assert response.status_code == 401 and response.json()["code"] == problems.TOKEN_REQUIRED.code
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_bad_file_is_refused_with_the_page_message_and_code(world):
    bad = b"id,label\n1,a\n2,z\n"
    response = upload(world.client("member"), bad)
    assert response.status_code == 400
    body = response.json()
    page = world.client("member", token=False).post(
        "/tasks/toy/submit/", {"file": SimpleUploadedFile("run.csv", bad)}, follow=True
    )
    shown = [str(m) for m in page.context["messages"]]
    assert shown == ["The file was refused: " + body["message"]]
    assert body["problems"][0]["field"] == "file" and body["code"] == body["problems"][0]["code"]
    assert body["code"] == "UNKNOWN_LABEL" and "line" in body["message"]  # a stable code, not the wording


def test_an_upload_after_the_deadline_says_when_it_closed(world):
    world.enter("public")
    response = upload(world.client("member"))
    assert response.status_code == 400
    assert response.json()["message"] == errors.DEADLINE_PASSED.format(
        phase=world.phase.name, closes_at=world.phase.closes_at
    )


def test_a_missing_file_is_a_json_400(world):
    response = world.client("member").post("/api/tasks/toy/submissions", {"description": "x"})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == problems.BAD_REQUEST.code and body["problems"][0]["field"] == "file"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/api/tasks/nope", 404, problems.UNKNOWN_TASK.code),
        ("/api/tasks/nope/leaderboard", 404, problems.UNKNOWN_TASK.code),
        ("/api/submissions/999999", 404, problems.UNKNOWN_SUBMISSION.code),
        ("/api/nothing/here", 404, problems.UNKNOWN_ENDPOINT.code),
        ("/api/tasks/toy/leaderboard?sort=no_such_metric", 400, problems.UNKNOWN_COLUMN.code),
        ("/api/tasks/toy/leaderboard?calibrated=maybe", 400, problems.BAD_REQUEST.code),
        ("/api/tasks/toy/correlations?set=some", 400, problems.BAD_REQUEST.code),
        ("/api/tasks/toy/what-if?prevalence=1e-300000,0.5,0.5", 400, problems.BAD_TARGET.code),
        ("/api/tasks/toy/what-if?prevalence=1,x,1", 400, problems.BAD_TARGET.code),
    ],
)
def test_errors_are_json_with_a_message(world, path, status, code):
    world.enter("public")
    response = world.client("member").get(path)
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == code and response.json()["message"]


def test_the_openapi_schema_lists_every_endpoint(client):
    schema = client.get("/api/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/tasks",
        "/api/tasks/{slug}",
        "/api/tasks/{slug}/leaderboard",
        "/api/tasks/{slug}/correlations",
        "/api/tasks/{slug}/analysis",
        "/api/tasks/{slug}/what-if",
        "/api/tasks/{slug}/submissions",
        "/api/tasks/{slug}/submissions.zip",
        "/api/submissions/{pk}",
    }
    assert schema["components"]["securitySchemes"]["ApiAuth"]["scheme"] == "bearer"
    assert "multipart/form-data" in schema["paths"]["/api/tasks/{slug}/submissions"]["post"]["requestBody"]["content"]
    assert (
        "application/zip" in schema["paths"]["/api/tasks/{slug}/submissions.zip"]["get"]["responses"]["200"]["content"]
    )


def test_the_docs_page_loads_swagger_ui_from_our_own_static_files(client):
    html = client.get("/api/docs").content.decode()
    assert "/static/ninja/swagger-ui-bundle.js" in html and "/static/ninja/swagger-ui.css" in html
    assert "cdn" not in html.lower() and "https://" not in html
    assert '"validatorUrl": null' in html
    assert client.get("/static/ninja/swagger-ui-bundle.js").status_code == 200
