"""Every run of a phase in one download: the organisers' page and its zip, a team's own zip,
and who may read what.

What this proves: the zip holds README.txt, runs.csv and every run's exact bytes under
``<team>/<run id>-<original name>``; the index's values and ranks of the runs that count are
the board CSV's cells, character for character; "counting" and a choice of teams select as
they say; a team gets its own runs only, with its scores as the feedback policy shows them
(rounded and unranked while results are hidden, none under "validated only"); anyone else is
refused; team names that are paths (``../x``, ``a/b``) become safe, distinct folders.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import zipfile

import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard import archives
from leaderboard.models import Phase, Submission, Task
from leaderboard.pages import results as results_page
from leaderboard.selectors.runs import runs_view
from leaderboard.services.organisers import submission_disqualify
from leaderboard.services.teams import team_create
from leaderboard.zipstream import zip_stream
from tests.conftest import MOSTLY_A, PERFECT
from tests.leaderboard.support import prediction_file

pytestmark = [pytest.mark.django_db, pytest.mark.both_kinds]


def url(name: str, task: Task, phase: Phase, **query) -> str:
    address = reverse(f"leaderboard:{name}", args=[task.slug, phase.slug])
    return address + ("?" + "&".join(f"{key}={value}" for key, value in query.items()) if query else "")


def unzip(response) -> zipfile.ZipFile:
    assert response.streaming, "the archive is streamed as it is written"
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert archive.testzip() is None
    return archive


def index_of(archive: zipfile.ZipFile) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(archive.read("runs.csv").decode())))


@pytest.fixture
def contest(make_task, make_user, submit):
    """Alpha uploads twice (the second counts), Beta once, Gamma twice with its latest
    disqualified; a public board."""
    task = make_task(max_per_day=100)
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    team_create(task=task, user=alice, name="Alpha")
    team_create(task=task, user=bob, name="../Beta")
    team_create(task=task, user=carol, name="Gamma")
    runs = {
        "alpha-1": submit(task, alice, MOSTLY_A),
        "alpha-2": submit(task, alice, PERFECT, description="=HYPERLINK(evil)"),
        "beta-1": submit(task, bob, prediction_file("a b b a b c a c")),
        "gamma-1": submit(task, carol, prediction_file("c b c a b c a a")),
        "gamma-2": submit(task, carol, PERFECT),
    }
    return task, runs


def test_the_organisers_zip_holds_every_run_and_an_index_with_the_boards_numbers(client, contest, organiser):
    task, runs = contest
    phase = task.current_phase()
    submission_disqualify(submission=runs["gamma-2"], user=organiser, reason="used the test labels")
    client.force_login(organiser)
    page = client.get(url("phase_runs", task, phase))
    assert page.status_code == 200 and b"Download the zip" in page.content
    response = client.get(url("runs_download", task, phase))
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="toy-evaluation-runs.zip"'
    archive = unzip(response)
    names = archive.namelist()
    assert names[:2] == ["README.txt", "runs.csv"]
    rows = index_of(archive)
    assert [row["run"] for row in rows] == [
        str(runs[key].pk) for key in ("beta-1", "alpha-1", "alpha-2", "gamma-1", "gamma-2")
    ]
    for row in rows:
        submission = Submission.objects.get(pk=row["run"])
        assert row["file"] in names and archive.read(row["file"]) == bytes(submission.file.content)
        assert row["file"] == f"{archives.folder_name(submission.team.name)}/{submission.pk}-run.csv"
    assert rows[0]["file"].startswith("_Beta/")  # "../Beta": no way out of the archive
    by_run = {row["run"]: row for row in rows}
    assert by_run[str(runs["alpha-2"].pk)]["description"] == "'=HYPERLINK(evil)"  # spreadsheet-safe
    assert by_run[str(runs["gamma-2"].pk)]["disqualified"] == "used the test labels"
    assert [by_run[str(runs[key].pk)]["counts"] for key in runs] == ["no", "yes", "yes", "yes", "no"]
    assert by_run[str(runs["alpha-1"].pk)]["members"] == "alice"

    # The runs that count carry the board CSV's very numbers: values and ranks, every column
    # (each the shortest text of its double; the board's is written by Arrow, "1" for 1.0).
    board = list(csv.reader(io.StringIO(results_page.export(phase=phase, kind="csv").decode())))
    header, board_rows = board[0], {row[3]: row for row in board[1:] if row[1] == "team"}
    index_header = next(csv.reader(io.StringIO(archive.read("runs.csv").decode())))
    metric_columns = header[4:]
    assert index_header[len(archives.FIXED_COLUMNS) :] == metric_columns
    for row in rows:
        if row["counts"] == "yes":
            assert [number(row[column]) for column in metric_columns] == list(map(number, board_rows[row["run"]][4:]))
    uncounted = by_run[str(runs["alpha-1"].pk)]
    assert uncounted["macro_f1"] != "" and uncounted["macro_f1 rank"] == ""  # its value, no board rank
    readme = archive.read("README.txt").decode()
    assert (
        "macro_f1_c: Macro F1 (averaged F1), prevalence-calibrated" in readme
        and "counts: yes if this is the team's run" in readme
    )


def test_the_archive_travels_as_it_is_to_a_browser_that_accepts_gzip(client, contest, organiser):
    """Its entries are deflated already: gzipped again it would cost the server a core's time
    for a few bytes."""
    task, _ = contest
    client.force_login(organiser)
    response = client.get(url("runs_download", task, task.current_phase()), headers={"accept-encoding": "gzip, br"})
    assert response.status_code == 200 and "Content-Encoding" not in response
    assert unzip(response).testzip() is None


def test_counting_runs_and_chosen_teams(client, contest, organiser):
    task, runs = contest
    phase = task.current_phase()
    client.force_login(organiser)
    counting = index_of(unzip(client.get(url("runs_download", task, phase, runs="counting"))))
    assert sorted(int(row["run"]) for row in counting) == sorted(
        runs[key].pk for key in ("alpha-2", "beta-1", "gamma-2")
    )
    alpha = task.community.teams.get(name="Alpha")
    only_alpha = unzip(client.get(url("runs_download", task, phase, team=alpha.pk)))
    assert [row["team"] for row in index_of(only_alpha)] == ["Alpha", "Alpha"]
    assert client.get(url("runs_download", task, phase, team=999999)).status_code == 400


def test_a_team_gets_its_own_runs_and_nobody_else_gets_any(client, contest, make_user):
    task, runs = contest
    phase = task.current_phase()
    assert client.get(url("runs_download", task, phase)).status_code == 302  # to the log-in page
    client.force_login(make_user("stranger"))
    assert client.get(url("runs_download", task, phase)).status_code == 403
    client.force_login(runs["alpha-1"].submitted_by)
    assert client.get(url("phase_runs", task, phase)).status_code == 403  # the organisers' page
    mine = client.get(url("runs_download", task, phase))
    assert mine["Content-Disposition"] == 'attachment; filename="toy-evaluation-Alpha-runs.zip"'
    archive = unzip(mine)
    assert {row["team"] for row in index_of(archive)} == {"Alpha"}
    assert all(name.startswith(("Alpha/", "README", "runs.csv")) for name in archive.namelist())
    beta = task.community.teams.get(name="../Beta")
    assert client.get(url("runs_download", task, phase, team=beta.pk)).status_code == 403
    for page in dict.fromkeys([task, task.community.task]):  # a subtask's page and its parent's
        task_page = client.get(page.get_absolute_url()).content.decode()
        assert url("runs_download", task, phase) in task_page  # the team's link, beside its runs


def test_the_organisers_reach_every_phase_s_archive_from_the_task_pages(client, contest, organiser):
    """From the task's page (and its parent's, for a subtask) to its archive page, and from there
    to each phase's zip, which opens with every run."""
    task, runs = contest
    client.force_login(organiser)
    for page in dict.fromkeys([task, task.community.task]):
        archive_page = reverse("leaderboard:task_archive", args=[page.slug])
        assert archive_page in client.get(page.get_absolute_url()).content.decode()
        [link] = re.findall(r'href="([^"]+/runs\.zip)"', client.get(archive_page).content.decode())
        assert link == url("runs_download", task, task.current_phase())
        assert sorted(int(row["run"]) for row in index_of(unzip(client.get(link)))) == sorted(
            r.pk for r in runs.values()
        )


@pytest.mark.parametrize(
    ("feedback", "has_values"),
    [(Phase.Feedback.FULL, True), (Phase.Feedback.PRIMARY, True), (Phase.Feedback.VALIDATED, False)],
)
def test_while_results_are_hidden_a_team_reads_its_scores_as_the_policy_shows_them(
    client, make_task, make_user, submit, feedback, has_values
):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE, feedback=feedback)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    run = submit(task, alice, prediction_file("a b c a b c b a"))
    client.force_login(alice)
    archive = unzip(client.get(url("runs_download", task, task.current_phase())))
    [row] = index_of(archive)
    metric_cells = {key: value for key, value in row.items() if key not in dict(archives.FIXED_COLUMNS)}
    stored = run.metrics["macro_f1"]
    if feedback == Phase.Feedback.FULL:
        assert row["macro_f1"] == repr(round(stored, 4)) and row["macro_f1"] != repr(stored)
        assert all(value == "" for key, value in metric_cells.items() if key.endswith(" rank"))
    elif feedback == Phase.Feedback.PRIMARY:
        assert list(metric_cells) == ["macro_f1", "macro_f1 rank"]
        assert row["macro_f1"] == repr(round(stored, 2)) and row["macro_f1 rank"] == ""
    assert bool(metric_cells) == has_values
    assert "results are hidden until it closes" in archive.read("README.txt").decode()


def test_team_folders_are_safe_and_distinct():
    names = {1: "a/b", 2: "a:b", 3: "..", 4: "CON. ", 5: "Ünïcode team", 6: "A/B", 7: "runs.csv"}
    folders = archives.team_folders(names)
    assert folders == {
        1: "a_b",
        2: "a_b (team 2)",
        3: "team",
        4: "CON",
        5: "Ünïcode team",
        6: "A_B (team 6)",
        7: "runs.csv (team 7)",  # never the index's own name
    }
    assert archives.run_path("a_b", 7, "../../etc/passwd") == "a_b/7-_.._etc_passwd"  # no separator left


def test_the_archive_is_written_as_it_is_read(contest, organiser):
    """The first bytes leave before the last run is read: nothing waits for the whole archive."""
    task, _ = contest
    phase = task.current_phase()
    consumed = []

    def entries():
        for entry in archives.archive_entries(runs_view(phase=phase, user=organiser)):
            consumed.append(entry.path)
            yield entry

    stream = zip_stream(entries(), chunk_bytes=16)
    next(stream)
    assert len(consumed) < 3


def test_a_closed_phase_after_hidden_results_gives_everything_to_its_team(client, make_task, make_user, submit):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE, feedback=Phase.Feedback.VALIDATED)
    alice = make_user("alice")
    team_create(task=task, user=alice, name="Alpha")
    run = submit(task, alice, PERFECT)
    now = timezone.now()
    Phase.objects.filter(task=task).update(opens_at=now - dt.timedelta(days=3), closes_at=now - dt.timedelta(hours=1))
    client.force_login(alice)
    [row] = index_of(unzip(client.get(url("runs_download", task, task.current_phase()))))
    assert row["macro_f1"] == repr(run.metrics["macro_f1"]) and row["macro_f1 rank"] == "1"


def number(cell: str) -> float | None:
    return float(cell) if cell else None
