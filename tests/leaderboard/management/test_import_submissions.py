"""``manage.py import_submissions TASK DIR``: a team per file named by its stem, every file
through the upload service, refusals summarised with their reasons, reruns idempotent."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from leaderboard import errors
from leaderboard.models import Submission
from leaderboard.services.teams import team_create
from tests.conftest import MOSTLY_A, PERFECT

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]


@pytest.fixture
def run(django_capture_on_commit_callbacks):
    """The command, with scoring run on commit as outside a test's transaction."""

    def command(*args: str) -> str:
        out = io.StringIO()
        with django_capture_on_commit_callbacks(execute=True):
            call_command("import_submissions", *args, stdout=out)
        return out.getvalue()

    return command


def test_a_team_per_file_and_a_summary_of_refusals(task, make_user, tmp_path, run):
    team_create(task=task, user=make_user("carol"), name="existing")
    (tmp_path / "alpha.csv").write_bytes(PERFECT)
    (tmp_path / "beta.tsv").write_bytes(MOSTLY_A.replace(b",", b"\t"))
    (tmp_path / "existing.csv").write_bytes(MOSTLY_A)
    (tmp_path / "broken.csv").write_bytes(b"id,label\n1,z\n")
    (tmp_path / ".hidden").write_bytes(b"ignored")
    out = run(task.slug, str(tmp_path))
    assert "[" in out and "4/4" in out  # the progress bar
    assert "Imported 3, skipped 0 (already imported), refused 1." in out
    assert "broken.csv: " in out and "line" in out
    assert set(task.community.teams.values_list("name", flat=True)) == {
        "alpha",
        "beta",
        "existing",
    }  # none for the refused file
    scored = Submission.objects.filter(phase__task=task, status=Submission.Status.SCORED)
    assert sorted(scored.values_list("team__name", flat=True)) == ["alpha", "beta", "existing"]
    assert scored.get(team__name="existing").submitted_by.username == "carol"  # a real team submits as its member
    stand_in = scored.get(team__name="alpha").submitted_by
    assert not stand_in.is_active and not stand_in.has_usable_password()


def test_reruns_skip_what_was_imported(task, tmp_path, run):
    (tmp_path / "alpha.csv").write_bytes(PERFECT)
    run(task.slug, str(tmp_path))
    (tmp_path / "beta.csv").write_bytes(MOSTLY_A)
    out = run(task.slug, str(tmp_path))
    assert "Imported 1, skipped 1 (already imported), refused 0." in out
    assert Submission.objects.filter(phase__task=task).count() == 2


def test_the_task_dates_and_limits_apply(make_task, tmp_path, run):
    task = make_task(max_per_day=1)
    (tmp_path / "alpha.csv").write_bytes(PERFECT)
    run(task.slug, str(tmp_path))
    (tmp_path / "alpha.csv").write_bytes(MOSTLY_A)
    assert f"alpha.csv: {errors.DAILY_LIMIT.code}: " in run(task.slug, str(tmp_path))
    late = (task.current_phase().closes_at + dt.timedelta(hours=1)).isoformat()
    assert f"{errors.DEADLINE_PASSED.code}: " in run(task.slug, str(tmp_path), "--submitted-at", late)


def test_unknown_task_or_folder(task, tmp_path, run):
    with pytest.raises(CommandError, match="No task"):
        run("nope", str(tmp_path))
    with pytest.raises(CommandError, match="not a folder"):
        run(task.slug, str(tmp_path / "missing"))
