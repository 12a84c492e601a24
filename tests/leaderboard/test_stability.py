"""Ranking stability on the site: per-item predictions stored with the scores, the phase's
bootstrap intervals computed in the background, and the pages that show them."""

from __future__ import annotations

import datetime as dt
import html
import json
import re

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard import derived, stability
from leaderboard.models import LOST_AFTER, Phase, PhaseStability, StoredFile, Submission
from leaderboard.services.teams import team_create
from leaderboard.uploads import stored_gold
from scoring.engine.bootstrap import bootstrap
from scoring.engine.columns import Column, paired_columns, ranking_columns
from scoring.engine.intervals_json import interval_json
from scoring.engine.items import items_confusion, pack_items, unpack_items
from scoring.engine.split import part_masks
from tests.conftest import MOSTLY_A, PERFECT
from tools import factory

SOFT = (
    b"id,a,b,c\n1,0.7,0.2,0.1\n2,0.1,0.6,0.3\n3,0.2,0.2,0.6\n4,0.5,0.25,0.25\n"
    b"5,0.3,0.4,0.3\n6,0.1,0.1,0.8\n7,0.9,0.05,0.05\n8,0.4,0.4,0.2\n"
)
SOME_WRONG = b"id,label\n1,a\n2,b\n3,a\n4,a\n5,c\n6,c\n7,b\n8,a\n"
REPLICATES = 60
SEED = 7


@pytest.fixture
def django_capture_on_commit_callbacks_executed(django_capture_on_commit_callbacks):
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture(autouse=True)
def bootstrap_settings(settings):
    settings.BOOTSTRAP_REPLICATES = REPLICATES
    settings.BOOTSTRAP_SEED = SEED
    return settings


@pytest.fixture
def teams(make_task, make_user, submit):
    """A public task whose teams uploaded: Alpha perfect, Beta mostly "a", Gamma some wrong,
    Delta the very file of Alpha."""

    def make(**options):
        task = make_task(**options)
        uploads = {"Alpha": PERFECT, "Beta": MOSTLY_A, "Gamma": SOME_WRONG, "Delta": PERFECT}
        submissions = {}
        for name, content in uploads.items():
            user = make_user(f"member-{name.lower()}")
            team_create(task=task, user=user, name=name)
            submissions[name] = submit(task, user, content)
        return task, submissions

    return make


def board_url(task, name: str = "leaderboard", *args: str) -> str:
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


def compute(task) -> PhaseStability:
    """Compute the intervals again (the uploads computed them once already)."""
    PhaseStability.objects.filter(phase=task.current_phase()).update(stamp="")
    derived.compute("intervals", task.current_phase().pk)
    return PhaseStability.objects.get(phase=task.current_phase())


# --- items ---------------------------------------------------------------------------------------


def test_hard_upload_stores_codes_that_give_its_matrix(task, make_user, submit):
    user = make_user("alice")
    team_create(task=task, user=user, name="Alpha")
    submission = submit(task, user, SOME_WRONG)
    items = submission.item_predictions()
    assert items.dtype == np.uint8 and items.shape == (8,)
    gold = stored_gold(task.current_phase()).codes
    assert items_confusion(gold, items, 3).tolist() == submission.confusion_matrix


def test_soft_upload_stores_probability_rows_that_give_its_matrix_exactly(task, make_user, submit):
    user = make_user("alice")
    team_create(task=task, user=user, name="Alpha")
    submission = submit(task, user, SOFT)
    assert submission.kind == Submission.Kind.SOFT
    items = submission.item_predictions()
    assert items.dtype == np.float64 and items.shape == (8, 3)
    gold = stored_gold(task.current_phase()).codes
    assert items_confusion(gold, items, 3).tolist() == submission.confusion_matrix


def test_items_pack_small_and_round_trip():
    codes = np.random.default_rng(0).integers(0, 3, 12_284)
    packed = pack_items(codes, 3)
    assert len(packed) < 12_284 // 2
    assert np.array_equal(unpack_items(packed), codes)


def test_a_failed_rescore_forgets_the_items(task, make_user, submit):
    user = make_user("alice")
    team_create(task=task, user=user, name="Alpha")
    submission = submit(task, user, PERFECT)
    submission.clear_scores()
    assert submission.items is None


def test_factory_rows_get_items_consistent_with_their_matrix(task):
    [team] = factory.teams_create(task=task, count=1)
    file = StoredFile.of(name="run.csv", content=b"id,label\n")
    file.save()
    matrix = np.array([[3, 1, 0], [1, 1, 0], [0, 0, 2]])  # gold counts 4, 2, 2
    [submission] = factory.scored_submissions_create(
        task=task, runs=[factory.ScoredRun(team=team, file=file, matrix=matrix, at=timezone.now())], batch_size=10
    )
    submission.refresh_from_db()
    gold = stored_gold(task.current_phase()).codes
    assert items_confusion(gold, submission.item_predictions(), 3).tolist() == matrix.tolist()


def test_factory_rows_on_a_split_phase_get_each_part_s_scores(make_task):
    task = make_task(private_percent=50)
    phase = task.current_phase()
    [team] = factory.teams_create(task=task, count=1)
    file = StoredFile.of(name="run.csv", content=b"id,label\n")
    file.save()
    matrix = np.array([[3, 1, 0], [1, 1, 0], [0, 0, 2]])
    [submission] = factory.scored_submissions_create(
        task=task, runs=[factory.ScoredRun(team=team, file=file, matrix=matrix, at=timezone.now())], batch_size=10
    )
    submission.refresh_from_db()
    gold = stored_gold(phase).codes
    masks = part_masks(len(gold), percent=50, seed=phase.split_seed_number)
    for part, mask in masks.items():
        expected = items_confusion(gold[mask], submission.item_predictions()[mask], 3)
        assert submission.part(part).confusion_matrix == expected.tolist()


# --- the background computation ------------------------------------------------------------------


def test_intervals_equal_the_engine_bootstrap_on_the_same_items_and_seed(teams):
    task, submissions = teams()
    row = compute(task)
    assert (row.replicates, row.seed) == (REPLICATES, SEED)
    phase = task.current_phase()
    labels = list(task.labels)
    order = sorted(submissions.values(), key=lambda s: s.team_id)
    expected = bootstrap(
        stored_gold(phase).codes,
        [s.item_predictions() for s in order],
        labels=labels,
        replicates=REPLICATES,
        seed=SEED,
        columns=ranking_columns(labels, calibrated=None),
        heatmap=paired_columns(labels),
    )
    for column in ranking_columns(labels, calibrated=None):
        section, key = ("calibrated", column.counterpart().id) if column.calibrated else ("raw", column.id)
        for t, submission in enumerate(order):
            cell = row.result["intervals"][section][key][str(submission.team_id)]
            index = expected.index(column)
            assert cell["score"] == interval_json(expected.scores[index, t])
            assert cell["rank"] == interval_json(expected.ranks[index, t], integral=True)
    assert row.result["spearman_intervals"] == [[interval_json(cell) for cell in r] for r in expected.rho]
    assert row.result["bootstrap"]["seed"] == SEED


def test_identical_teams_are_tied(teams):
    task, _ = teams()
    compute(task)
    intervals = stability.intervals_of(phase=task.current_phase())
    for column in ranking_columns(task.labels, calibrated=None):
        alpha, delta = intervals.interval(column, "Alpha"), intervals.interval(column, "Delta")
        assert alpha == delta
        if alpha["rank"] is not None:
            assert any({"Alpha", "Delta"} <= set(group) for group in intervals.groups(column))
    macro_f1 = Column("macro_f1")
    assert {"Alpha", "Delta"} <= set(intervals.tied_with_leader(macro_f1))


def test_submissions_scored_before_items_were_kept_get_them_from_their_file(teams):
    task, submissions = teams()
    Submission.objects.filter(pk=submissions["Beta"].pk).update(items=None)
    row = compute(task)
    assert row.result["skipped"] == {}
    beta = Submission.objects.get(pk=submissions["Beta"].pk)
    assert beta.item_predictions() is not None
    assert str(beta.team_id) in row.result["intervals"]["raw"]["macro_f1"]


def test_items_that_do_not_give_the_stored_matrix_are_left_out_and_said(teams, client):
    task, submissions = teams()
    wrong = pack_items(np.zeros(8, dtype=np.uint8), 3)
    Submission.objects.filter(pk=submissions["Gamma"].pk).update(items=wrong)
    row = compute(task)
    assert row.result["skipped"] == {str(submissions["Gamma"].team_id): stability.SKIPPED_MISMATCH}
    content = client.get(board_url(task)).content.decode()
    assert "No interval for <strong>Gamma</strong>" in content


def test_each_new_score_asks_for_the_intervals_of_its_phase(teams, monkeypatch):
    asked = []
    monkeypatch.setattr(derived, "hand_over", lambda kind, phase_id: kind == "intervals" and asked.append(phase_id))
    task, _ = teams()
    # One job at a time per phase: the first score's request is pending, the others join it.
    assert asked == [task.current_phase().pk]
    assert PhaseStability.objects.get(phase=task.current_phase()).requested_at is not None


def test_the_last_job_runs_on_the_final_scores(teams):
    task, _ = teams()  # every upload ran its job on commit, one after the other
    row = PhaseStability.objects.get(phase=task.current_phase())
    assert row.stamp == stability.inputs_digest(task.current_phase())
    assert row.requested_at is None and len(row.result["intervals"]["raw"]["macro_f1"]) == 4


def test_computing_twice_for_the_same_scores_does_nothing(teams):
    task, _ = teams()
    first = compute(task)
    assert derived.compute("intervals", task.current_phase().pk) == "current already"
    assert PhaseStability.objects.get(pk=first.pk).computed_at == first.computed_at


# --- pages ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "args"), [("leaderboard", ()), ("metric_detail", ("macro_f1",)), ("disagreements", ()), ("what_if", ())]
)
def test_reading_a_page_writes_nothing_and_starts_nothing(
    teams, client, django_capture_on_commit_callbacks, name, args
):
    task, _ = teams()
    PhaseStability.objects.all().delete()  # as if the intervals had never been computed
    before = list(PhaseStability.objects.values())
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        content = client.get(board_url(task, name, *args)).content.decode()
        client.get(f"/api/tasks/{task.slug}/leaderboard")
    assert callbacks == [] and list(PhaseStability.objects.values()) == before
    if name == "leaderboard":
        assert "The intervals are being recomputed for the latest scores" in content


def test_new_intervals_are_read_into_the_cache_before_anybody_asks(teams, client, monkeypatch):
    """The job that stores them turns them into the pages' arrays too: the board's first reader
    reads no stored result (seconds at 3,000 teams)."""
    task, _ = teams()
    stored = compute(task)
    monkeypatch.setattr(stability.IntervalsData, "of", lambda result: pytest.fail("read by a reader"))
    found = stability.intervals_of(phase=task.current_phase())
    assert found.computed_at == stored.computed_at and found.data is not None
    assert "Rank, 95%" in client.get(board_url(task)).content.decode()


def test_board_shows_the_intervals_computed_when_the_scores_landed(teams, client):
    task, _ = teams()
    content = client.get(board_url(task)).content.decode()
    assert "being recomputed" not in content
    assert "Rank, 95%" in content
    assert f"{REPLICATES} replicates (seed {SEED}) over 8 test items" in content
    assert 'class="tag tag-tied"' in content  # Delta, identical to Alpha, is tied with the leader
    assert "cannot be told apart from the leader" in content


def test_new_scores_show_the_previous_intervals_as_stale(teams, client, make_user, submit, monkeypatch):
    task, _ = teams()
    monkeypatch.setattr(derived, "hand_over", lambda kind, phase_id: None)  # a busy queue
    user = make_user("late")
    team_create(task=task, user=user, name="Late")
    submit(task, user, MOSTLY_A)
    content = client.get(board_url(task)).content.decode()
    assert "The intervals are being recomputed for the latest scores" in content
    assert "from the previous scores" in content
    assert 'class="tag tag-stale"' in content
    assert "interval-stale" in content
    assert "Computed " not in content  # never presented as current


def test_new_scores_wait_for_the_pause_between_two_computations(
    teams, client, make_user, submit, settings, django_capture_on_commit_callbacks_executed
):
    settings.BOOTSTRAP_EVERY_S = 120
    task, _ = teams()
    row = PhaseStability.objects.get(phase=task.current_phase())
    user = make_user("late")
    team_create(task=task, user=user, name="Late")
    submit(task, user, MOSTLY_A)
    assert PhaseStability.objects.get(pk=row.pk).requested_at is None  # nothing asked before the pause is over
    content = client.get(board_url(task)).content.decode()
    api = client.get(f"/api/tasks/{task.slug}/leaderboard").json()["intervals"]
    due = row.computed_at + dt.timedelta(seconds=120)
    assert f"will be computed from {due:%H:%M:%S} UTC" in content
    assert "at most every 2 minutes" in content
    assert 'class="tag tag-stale"' in content and "Computed " not in content
    assert api == {"status": stability.RECOMPUTING, "due_at": due.isoformat()}

    # The recovery sweep asks for them once the pause is over, not before.
    assert derived.sweep(now=due - dt.timedelta(seconds=1)) == 0
    PhaseStability.objects.filter(pk=row.pk).update(computed_at=row.computed_at - dt.timedelta(seconds=121))
    with django_capture_on_commit_callbacks_executed():
        assert derived.sweep() == 1
    content = client.get(board_url(task)).content.decode()
    assert "Computed " in content and "tag-stale" not in content


def test_a_lost_job_is_asked_for_again_by_the_sweep(teams, monkeypatch, django_capture_on_commit_callbacks_executed):
    task, _ = teams()
    phase = task.current_phase()
    asked = []
    monkeypatch.setattr(derived, "hand_over", lambda kind, phase_id: kind == "intervals" and asked.append(phase_id))
    PhaseStability.objects.filter(phase=phase).update(stamp="", requested_at=timezone.now() - dt.timedelta(seconds=30))
    assert derived.sweep() == 0  # a job asked for 30 s ago may still run
    PhaseStability.objects.filter(phase=phase).update(requested_at=timezone.now() - LOST_AFTER)
    with django_capture_on_commit_callbacks_executed():
        assert derived.sweep() == 1
    assert asked == [phase.pk]


def test_metric_page_shows_score_and_rank_intervals_and_groups(teams, client):
    task, _ = teams()
    compute(task)
    content = client.get(board_url(task, "metric_detail", "macro_f1")).content.decode()
    assert "macF1, 95%</th>" in content
    assert "Teams that cannot be told apart" in content
    # A resample may miss a class (8 items): even a perfect team's macro F1 then drops.
    assert '<td class="num score-interval">[0.6667, 1.0000]</td>' in content
    assert ">[1, 1]</span>" in content and ">[1, 4]</span>" in content


def test_metric_page_shows_each_team_against_the_leader_as_stored(teams, client):
    """The stored result's ``behind_leader`` (the engine's paired bootstrap with Holm's step-down)
    is what the metric page shows, team by team, and who is not significantly behind."""
    task, _ = teams()
    row = compute(task)
    response = client.get(board_url(task, "metric_detail", "accuracy"))
    rows = {r.name: r for r in response.context["rows"]}
    stored = row.result["behind_leader"]["raw"]["accuracy"]
    names = row.result["teams"]
    for team_id, cell in stored.items():
        shown = rows[names[team_id]].behind
        if cell["p_holm"] is None:
            assert shown is None
        else:
            assert shown == (cell["difference"], cell["p_holm"])
    assert {name for name, r in rows.items() if r.rank == 1} == {"Alpha", "Delta"}  # the same file: a tie
    assert [name for name, r in rows.items() if r.behind is None] in (["Alpha"], ["Delta"])  # the leader only
    expected = sorted(names[t] for t, cell in stored.items() if cell["p_holm"] is not None and cell["p_holm"] > 0.05)
    assert sorted(response.context["not_behind"]) == expected
    assert "Behind the leader</th>" in response.content.decode()
    # the board marks the same teams, under the same column, and the API gives the stored cells
    board = client.get(board_url(task, "leaderboard"), {"sort": "accuracy"}).content.decode()
    marked = re.findall(r'<th scope="row" class="col-team">([^<]*) <span class="tag tag-close"', board)
    assert expected and sorted(html.unescape(name) for name in marked) == expected
    api = client.get(f"/api/tasks/{task.slug}/leaderboard", {"sort": "accuracy"}).json()["intervals"]
    behind = api["behind_leader"]["raw"]["accuracy"]
    for team_id, cell in stored.items():
        if cell["p_holm"] is not None:
            assert behind[names[team_id]] == cell


def test_disagreements_show_rho_intervals(teams, client):
    task, _ = teams()
    compute(task)
    content = client.get(board_url(task, "disagreements")).content.decode()
    assert "95% interval" in content
    start = content.index('id="correlation-heatmap-data"')
    figure = json.loads(json.loads(content[content.index(">", start) + 1 : content.index("</script>", start)]))
    hover = json.dumps(figure["data"][0]["customdata"])
    assert "95% interval [" in hover


def test_hidden_board_shows_no_intervals_to_participants(teams, client, organiser):
    task, submissions = teams(visibility=Phase.Visibility.AFTER_CLOSE)
    compute(task)
    member = submissions["Alpha"].submitted_by
    client.force_login(member)
    for name, args in [("leaderboard", ()), ("metric_detail", ("macro_f1",)), ("disagreements", ())]:
        response = client.get(board_url(task, name, *args))
        assert response.status_code == 403
        assert "95%" not in response.content.decode()
    page = client.get(submissions["Alpha"].get_absolute_url()).content.decode()
    assert "95%" not in page and "tied with #1" not in page
    client.force_login(organiser)
    assert "Rank, 95%" in client.get(board_url(task)).content.decode()


def test_no_intervals_when_turned_off(teams, client, settings):
    settings.BOOTSTRAP_REPLICATES = 0
    task, _ = teams()
    content = client.get(board_url(task)).content.decode()
    assert "Rank, 95%" not in content and "being recomputed" not in content
    assert not PhaseStability.objects.exists()


def test_the_overall_column_has_the_stored_intervals_of_its_set(teams, client):
    """Sorted by the overall ranking over a named set, the board's rank interval of each team is
    the one the bootstrap stored for that method and set; the API gives the same."""
    task, _ = teams()
    row = compute(task)
    stored = row.result["aggregate_intervals"]["borda"]["raw"]
    names = row.result["teams"]
    response = client.get(board_url(task, "leaderboard"), {"overall": "borda", "over": "raw", "sort": "borda"})
    content = response.content.decode()
    shown = dict(
        re.findall(
            r'class="col-team">([^<]*)(?:<span[^>]*>[^<]*</span>)*</th><td class="col-interval">(.*?)</td>', content
        )
    )
    for team_id, cell in stored.items():
        if cell["rank"] is not None:
            best, worst = cell["rank"]
            assert f"best {best}, worst {worst}" in shown[names[team_id]]
    api = client.get(f"/api/tasks/{task.slug}/leaderboard").json()["intervals"]["aggregate_intervals"]
    assert {names[t]: cell for t, cell in stored.items() if cell["value"] is not None} == api["borda"]["raw"]
