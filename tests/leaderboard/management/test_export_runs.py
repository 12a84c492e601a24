"""``manage.py export_runs``: the same archive as the organisers' page, into a file.

What this proves: it writes a valid zip with every run (or those that count, or a team's),
the index and the README; an unknown task, phase or team is refused with its name.
"""

from __future__ import annotations

import csv
import io
import zipfile

import pytest
from django.core.management import CommandError, call_command

from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]


@pytest.fixture
def contest(make_task, make_user, submit):
    task = make_task(max_per_day=100)
    alice, bob = make_user("alice"), make_user("bob")
    team_create(task=task, user=alice, name="Alpha")
    team_create(task=task, user=bob, name="Beta")
    submit(task, alice, MOSTLY_A)
    submit(task, alice, PERFECT)
    submit(task, bob, MOSTLY_A)
    return task


def rows(path) -> list[dict[str, str]]:
    with zipfile.ZipFile(path) as archive:
        assert archive.testzip() is None and archive.namelist()[:2] == ["README.txt", "runs.csv"]
        return list(csv.DictReader(io.StringIO(archive.read("runs.csv").decode())))


def test_it_writes_the_archive(contest, tmp_path):
    out = io.StringIO()
    call_command("export_runs", contest.slug, "-o", str(tmp_path / "all.zip"), stdout=out)
    assert "Wrote" in out.getvalue()
    assert [row["team"] for row in rows(tmp_path / "all.zip")] == ["Alpha", "Alpha", "Beta"]
    call_command(
        "export_runs", contest.slug, "-o", str(tmp_path / "c.zip"), "--counting", "--team", "alpha", stdout=out
    )
    [alpha] = rows(tmp_path / "c.zip")
    assert alpha["counts"] == "yes" and alpha["macro_f1 rank"] == "1"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nope"], "No task has the slug 'nope'"),
        (["toy", "--phase", "x"], "no phase 'x'"),
        (["toy", "--team", "Z"], "no team 'Z'"),
    ],
)
def test_it_refuses_what_does_not_exist(contest, tmp_path, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("export_runs", *arguments, "-o", str(tmp_path / "x.zip"))
