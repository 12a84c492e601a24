"""``GET /api/tasks/{slug}/submissions.zip``: the organisers' archive of a phase's runs, and a
team's own, by token or session.

What this proves: the organiser (and staff) get every run, or those that count, or some
teams' by name; a member gets their own team's runs only (another team named: 403), with the
scores the feedback policy shows; an anonymous caller is asked for a token (401); an unknown
team is a 400 that names it; the answer is the same archive the page streams.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]


def address(world, **query) -> str:
    return f"/api/tasks/{world.task.slug}/submissions.zip" + (
        "?" + "&".join(f"{key}={value}" for key, value in query.items()) if query else ""
    )


def index_of(response) -> list[dict[str, str]]:
    assert response.status_code == 200, response.content
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    return list(csv.DictReader(io.StringIO(archive.read("runs.csv").decode())))


@pytest.mark.parametrize("role", ["organiser", "staff"])
def test_the_organisers_get_every_run(world, role):
    rows = index_of(world.client(role).get(address(world, phase=world.phase.slug)))
    assert {row["team"] for row in rows} == {"A", "B"}
    only_b = index_of(world.client(role).get(address(world, team="b", runs="counting")))
    assert [row["run"] for row in only_b] == [str(world.submission_b.pk)]
    assert only_b[0]["macro_f1"] == repr(world.submission_b.metrics["macro_f1"])


def test_a_member_gets_the_own_teams_runs_only(world):
    client = world.client("member")
    rows = index_of(client.get(address(world)))
    assert [row["run"] for row in rows] == [str(world.submission_a.pk)]
    assert rows[0]["macro_f1"] == repr(round(world.submission_a.metrics["macro_f1"], 4))  # hidden: the page's precision
    refused = client.get(address(world, team="B"))
    assert refused.status_code == 403 and refused.json()["code"] == "RUNS_NOT_YOURS"


def test_who_is_refused_and_why(world):
    anonymous = world.client("anonymous").get(address(world))
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "RUNS_NEED_ACCOUNT"
    unknown = world.client("organiser").get(address(world, team="Nobody"))
    assert unknown.status_code == 400 and unknown.json() == {
        "code": "UNKNOWN_TEAM",
        "message": "This task has no team 'Nobody'.",
    }
    no_phase = world.client("organiser").get(address(world, phase="nope"))
    assert no_phase.status_code == 404 and no_phase.json()["code"] == "NO_SUCH_PHASE"
    bad = world.client("organiser").get(address(world, runs="some"))
    assert bad.status_code == 400 and bad.json()["code"] == "BAD_REQUEST"
