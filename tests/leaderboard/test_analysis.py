"""What the teams got wrong together, on the site: the board's two rows that are never ranked, the
analysis page, its downloads and the API, on a plain task and on a subtask.

What this proves:

- every number the board's rows, the downloads, the API and the page show equals the
  independent computation of ``tests/scoring/analysis_oracle.py`` from the teams' labels (a
  probability file as its arg-max label), on the part of a split test set the board shows;
- the analysis follows the scores: computed by the write that scores a run, marked stale while a
  newer one is due, asked for again by the workers' sweep; a team whose items do not give its
  matrix is left out and named; no GET writes or asks for anything;
- the hardest items, which hold gold labels, are never shown to a participant or an anonymous
  visitor while a phase that uses the same gold file has not closed, on any page or download
  (the organiser's page, which shows them, is the control), and once the organisers publish them
  after the close, everyone who sees the board sees them; publishing is refused before.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import numpy as np
import pytest
from django.urls import reverse
from django.utils import timezone

from leaderboard import analysis, derived
from leaderboard.models import LOST_AFTER, Phase, PhaseAnalysis, Submission
from leaderboard.selectors.boards import columns_of
from leaderboard.services import tasks as task_service
from leaderboard.services.teams import team_create
from scoring.engine.formatting import value_text
from scoring.engine.items import pack_items
from scoring.engine.split import part_masks
from tests.scoring.analysis_oracle import column_values, expected_analysis

LABELS = ["a", "b", "c"]
N_ITEMS = 60
IDS = [f"hx7q-{i:04d}" for i in range(N_ITEMS)]
"""Item ids found nowhere on a results page but in the list of the hardest items."""


def labels_file(labels: list[str]) -> bytes:
    return ("id,label\n" + "".join(f"{i},{label}\n" for i, label in zip(IDS, labels, strict=True))).encode()


def probabilities_file(rows: list[list[int]]) -> bytes:
    """Rows of percentages, one column per label."""
    lines = "".join(f"{i}," + ",".join(f"{p / 100:.2f}" for p in row) + "\n" for i, row in zip(IDS, rows, strict=True))
    return ("id," + ",".join(LABELS) + "\n" + lines).encode()


def the_runs(seed: int = 6) -> tuple[list[str], dict[str, bytes], dict[str, list[str]]]:
    """The gold labels, each team's file and each team's labels as the analysis reads them: three
    noisy teams, one that says "b" everywhere, and one probability file whose tied rows read as
    the first label of the tie."""
    rng = np.random.default_rng(seed)
    gold = [LABELS[code] for code in rng.integers(0, 3, N_ITEMS)]

    def noisy(share: float) -> list[str]:
        return [g if rng.random() < share else LABELS[rng.integers(0, 3)] for g in gold]

    soft_rows = [[40, 40, 20] if i % 4 == 0 else rng.permutation([70, 20, 10]).tolist() for i in range(N_ITEMS)]
    hard = {"Alice": noisy(0.4), "Bob": noisy(0.3), "Carol": noisy(0.2), "Dora": ["b"] * N_ITEMS}
    files = {name: labels_file(labels) for name, labels in hard.items()}
    files["Eve"] = probabilities_file(soft_rows)
    runs = {**hard, "Eve": [LABELS[row.index(max(row))] for row in soft_rows]}
    return gold, files, runs


@pytest.fixture
def scored(make_task, make_user, submit):
    """A task (``kind``: plain or a subtask) whose open phase has a public board and five scored
    runs; returns the task, the gold labels and each team's labels."""

    def build(kind: str = "plain", **options):
        gold, files, runs = the_runs()
        task = make_task("toy", kind=kind, gold=labels_file(gold), labels=LABELS, **options)
        for index, (name, content) in enumerate(files.items()):
            user = make_user(f"member{index}")
            team_create(task=task, user=user, name=name)
            submit(task, user, content)
        return task, gold, runs

    return build


def url(name: str, task, *args: str, phase=None) -> str:
    """A results page of ``phase`` (default: the task's current phase)."""
    phase = phase or task.current_phase()
    return reverse(f"leaderboard:{name}", args=[task.slug, phase.slug, *args])


@pytest.mark.parametrize("kind", ["plain", "subtask"])
def test_every_number_equals_an_independent_computation(client, scored, kind):
    task, gold, runs = scored(kind)
    phase = task.current_phase()
    row = PhaseAnalysis.objects.get(phase=phase)
    assert row.n_teams == 5 and row.result["skipped"] == {}
    download = json.loads(client.get(url("leaderboard_json", task)).content)
    keys = list(Submission.objects.filter(phase=phase).first().metrics)
    # Kappa compares the teams first under the primary metric, in that order (ties join the earliest).
    by_primary = [entry["name"] for entry in download["rows"] if entry["kind"] == "team"]
    runs = {name: runs[name] for name in by_primary}
    expected = expected_analysis(gold, runs, keys, LABELS)
    assert sum(expected["unsolved"].values()) > 0 and expected["ties"] > 0  # the board has both
    columns = columns_of(task, calibrated=None)
    rows = {kind: column_values(expected[f"{kind}_labels"], gold, columns, LABELS) for kind in ("majority", "oracle")}
    rows = {"majority_vote": rows["majority"], "oracle": rows["oracle"]}

    found = {entry["kind"]: entry for entry in download["rows"] if entry["kind"] in rows}
    assert {kind: entry["values"] for kind, entry in found.items()} == rows
    assert all(rank is None for entry in found.values() for rank in entry["ranks"].values())
    for calibrated in (False, True):
        api = client.get(f"/api/tasks/{task.slug}/leaderboard", {"per_page": 0, "calibrated": calibrated}).json()
        shown = {column["id"] for column in api["columns"]}
        wanted = {kind: {key: value for key, value in values.items() if key in shown} for kind, values in rows.items()}
        assert {entry["kind"]: entry["values"] for entry in api["rows"] if entry["kind"] in rows} == wanted
    table = list(csv.DictReader(io.StringIO(client.get(url("leaderboard_csv", task)).content.decode())))
    for entry in table:
        if entry["kind"] in rows:
            for column, value in rows[entry["kind"]].items():
                assert (float(entry[column]) if entry[column] else None) == value, (entry["kind"], column)

    document = json.loads(client.get(url("analysis_json", task)).content)
    assert client.get(f"/api/tasks/{task.slug}/analysis").json() == document  # the API's very object
    if document:
        assert document["status"] == "current" and document["teams"] == 5
        assert document["majority_vote"]["ties"] == expected["ties"]
        assert (document["majority_vote"]["metrics"], document["majority_vote"]["calibrated"]) == expected["majority"]
        assert (document["oracle"]["metrics"], document["oracle"]["calibrated"]) == expected["oracle"]
        assert document["oracle"]["accuracy"] == expected["oracle_accuracy"]
        assert document["oracle"]["macro_recall"] == expected["oracle_macro_recall"]
        assert document["unsolved"] == expected["unsolved"]
        agreement = document["agreement"]
        assert agreement["clustering"]["order"] == agreement["teams"] == expected["order"]
        position = {team: index for index, team in enumerate(runs)}
        assert agreement["kappa"] == [
            [expected["kappa"][position[a]][position[b]] for b in expected["order"]] for a in expected["order"]
        ]
        assert agreement["clustering"]["merges"] == expected["merges"]
        assert document["hardest"] is None  # an anonymous reader, a phase still open

    page = client.get(url("analysis", task)).content.decode()
    assert value_text(expected["majority"][0]["accuracy"]) in page
    for label, count in expected["unsolved"].items():
        assert (
            f'<th scope="row">{label}</th><td class="num">{gold.count(label)}</td><td class="num">{count}</td>' in page
        )
    board = client.get(url("leaderboard", task)).content.decode()
    assert "Majority vote of the teams" in board and "Oracle (any team right)" in board
    assert value_text(rows["oracle"]["macro_f1"]) in board
    latex = client.get(url("leaderboard_tex", task), {"analysis": "1"}).content.decode().splitlines()
    vote_line = next(i for i, line in enumerate(latex) if line.startswith("Majority vote of the teams &"))
    assert latex[vote_line - 1] == r"\midrule" and latex[vote_line + 1].startswith("Oracle (any team right) &")
    assert not any(
        line.startswith("Majority vote")
        for line in client.get(url("leaderboard_tex", task)).content.decode().splitlines()
    )


def test_the_analysis_follows_the_scores(
    client, scored, make_user, submit, monkeypatch, django_capture_on_commit_callbacks
):
    task, _, _ = scored()
    phase = task.current_phase()
    before = PhaseAnalysis.objects.get(phase=phase)
    # No GET writes or asks for anything.
    for name in ("leaderboard", "analysis", "analysis_json", "leaderboard_csv"):
        assert client.get(url(name, task)).status_code == 200
    assert PhaseAnalysis.objects.get(phase=phase).computed_at == before.computed_at
    assert PhaseAnalysis.objects.get(phase=phase).requested_at is None

    # A queue that does not run: a new score leaves the rows of the old scores, marked stale.
    handed = []
    monkeypatch.setattr(derived, "hand_over", lambda kind, phase_id: kind == "analysis" and handed.append(phase_id))
    user = make_user("latecomer")
    team_create(task=task, user=user, name="Frank")
    submit(task, user, labels_file(["c"] * N_ITEMS))
    assert handed == [phase.pk]
    board = client.get(url("leaderboard", task)).content.decode()
    assert "Majority vote of the teams" in board and "from earlier scores" in board and "tag-stale" in board
    assert "is being computed" in client.get(url("analysis", task)).content.decode()
    assert json.loads(client.get(url("analysis_json", task)).content)["status"] == "recomputing"

    # The job was lost: the workers' sweep asks again once LOST_AFTER has passed.
    assert derived.sweep() == 0  # asked for a moment ago: under way
    PhaseAnalysis.objects.filter(phase=phase).update(requested_at=timezone.now() - LOST_AFTER)
    with django_capture_on_commit_callbacks(execute=True):
        assert derived.sweep() == 1
    assert handed == [phase.pk, phase.pk]
    assert derived.compute("analysis", phase.pk) == "6 teams, 0 left out"
    assert derived.compute("analysis", phase.pk) == "current already"
    board = client.get(url("leaderboard", task)).content.decode()
    assert "tag-stale" not in board and "the 6 teams' runs combined" in board


def test_a_failed_computation_keeps_the_previous_analysis_with_its_reason(
    client, scored, make_user, submit, monkeypatch
):
    task, _, _ = scored()
    phase = task.current_phase()
    before = PhaseAnalysis.objects.get(phase=phase)

    def broken(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(analysis, "analyse", broken)
    user = make_user("latecomer")
    team_create(task=task, user=user, name="Frank")
    submit(task, user, labels_file(["c"] * N_ITEMS))
    row = PhaseAnalysis.objects.get(phase=phase)
    assert row.computed_at == before.computed_at and row.result == before.result  # kept
    assert row.failure == derived.FAILED and row.requested_at is None
    page = client.get(url("analysis", task)).content.decode()
    assert "could not be computed</strong>: the computation failed" in page and "The runs of 5 teams" in page
    api = json.loads(client.get(url("analysis_json", task)).content)
    assert api["status"] == "failed" and api["failure"] == derived.FAILED
    assert derived.sweep() == 0  # not tried again on the same scores


def test_a_run_whose_items_do_not_give_its_matrix_is_left_out_and_named(client, scored):
    task, _, _ = scored("subtask")
    phase = task.current_phase()
    wrong = np.zeros(N_ITEMS, dtype=np.uint8)
    Submission.objects.filter(phase=phase, team__name="Alice").update(items=pack_items(wrong, 3))
    PhaseAnalysis.objects.filter(phase=phase).update(stamp="")
    assert derived.compute("analysis", phase.pk) == "4 teams, 1 left out"
    page = client.get(url("analysis", task)).content.decode()
    assert "<strong>Alice</strong> (its per-item predictions do not give its stored confusion matrix)" in page
    assert json.loads(client.get(url("analysis_json", task)).content)["skipped"] == {"Alice": analysis.SKIPPED_MISMATCH}


def test_fewer_than_two_teams_have_no_rows(client, make_task, make_user, submit):
    gold, files, _ = the_runs()
    task = make_task("toy", gold=labels_file(gold), labels=LABELS)
    user = make_user("only")
    team_create(task=task, user=user, name="Alone")
    submit(task, user, files["Alice"])
    assert PhaseAnalysis.objects.get(phase=task.current_phase()).n_teams == 1
    assert "Majority vote" not in client.get(url("leaderboard", task)).content.decode()
    assert "it needs two teams" in client.get(url("analysis", task)).content.decode()
    assert client.get(url("analysis_heatmap", task)).status_code == 404


# --- the hardest items ---------------------------------------------------------------------------


def result_urls(phase) -> list[str]:
    """Every results page and download of ``phase``, and the API's."""
    task = phase.task
    names = ["leaderboard", "leaderboard_csv", "leaderboard_json", "leaderboard_tex", "disagreements", "what_if"]
    names += ["disagreement_heatmap", "disagreement_rank_chart", "analysis", "analysis_json", "analysis_heatmap"]
    pages = [url(name, task, phase=phase) for name in names]
    pages += [url("leaderboard_tex", task, phase=phase) + "?analysis=1"]
    pages += [url("leaderboard", task, phase=phase) + "?calibrated=1"]
    pages += [url("metric_detail", task, "macro_f1", phase=phase), url("analysis_hardest_csv", task, phase=phase)]
    api = f"/api/tasks/{task.slug}"
    endpoints = ("leaderboard", "analysis", "correlations", "what-if")
    return [*pages, *(f"{api}/{endpoint}?phase={phase.slug}" for endpoint in endpoints), api]


def hardest_ids(phase) -> list[str]:
    return [item["id"] for item in PhaseAnalysis.objects.get(phase=phase).result["hardest"]]


def assert_no_hardest_item(client, phase, ids: list[str]) -> None:
    for address in result_urls(phase):
        response = client.get(address)
        content = b"".join(response.streaming_content) if response.streaming else response.content
        if address.endswith("hardest-items.csv"):
            assert response.status_code == 403, address
        else:
            assert response.status_code == 200, address
        leaked = [item for item in ids if item.encode() in content]
        assert not leaked, f"{address} shows {leaked}"


@pytest.mark.parametrize("kind", ["plain", "subtask"])
def test_no_hardest_item_reaches_a_participant_or_a_visitor_while_the_phase_runs(client, scored, organiser, kind):
    task, _, _ = scored(kind)
    phase = task.current_phase()
    ids = hardest_ids(phase)
    assert len(ids) >= 20
    assert_no_hardest_item(client, phase, ids)  # anonymous
    client.force_login(Submission.objects.filter(phase=phase).first().submitted_by)
    assert_no_hardest_item(client, phase, ids)  # a participant
    # The control: the organiser's page and downloads hold them.
    client.force_login(organiser)
    assert all(item in client.get(url("analysis", task)).content.decode() for item in ids[:20])
    lines = client.get(url("analysis_hardest_csv", task)).content.decode().splitlines()
    assert lines[0] == "id,gold,right,Alice,Bob,Carol,Dora,Eve" and [line.split(",")[0] for line in lines[1:]] == ids
    assert [item["id"] for item in client.get(f"/api/tasks/{task.slug}/analysis").json()["hardest"]] == ids


def test_publishing_waits_for_every_phase_that_uses_the_gold(client, scored, organiser, make_user):
    task, gold, _ = scored("subtask")
    first = task.current_phase()
    ids = hardest_ids(first)
    member = Submission.objects.filter(phase=first).first().submitted_by
    client.force_login(organiser)
    publish = reverse("leaderboard:hardest_publish", args=[task.slug, first.slug])
    refused = client.post(publish, {"publish": "1"}, follow=True).content.decode()
    assert "can be published once it has closed" in refused
    first.refresh_from_db()
    assert not first.hardest_published

    # The phase closes and a post-evaluation phase opens on the same gold file.
    now = timezone.now()
    task_service.phase_update(phase=first, settings={"closes_at": now - dt.timedelta(minutes=2)})
    second = task_service.phase_create(
        task=task,
        name="Post-evaluation",
        slug="post-evaluation",
        gold_name="gold-again.csv",
        gold_content=labels_file(gold),
        opens_at=now - dt.timedelta(minutes=1),
        closes_at=now + dt.timedelta(days=3),
    )
    assert "can be published once it has closed" in client.post(publish, {"publish": "1"}, follow=True).content.decode()
    first.refresh_from_db()
    assert not first.hardest_published

    # Published before the second phase opened (as if): hidden again while it runs.
    Phase.objects.filter(pk=first.pk).update(hardest_published=True)
    first.refresh_from_db()
    client.logout()
    assert_no_hardest_item(client, first, ids)  # anonymous
    client.force_login(member)
    assert_no_hardest_item(client, first, ids)
    Phase.objects.filter(pk=first.pk).update(hardest_published=False)

    # Once the second phase has closed, the organisers publish them, and the member sees them.
    task_service.phase_update(phase=second, settings={"closes_at": timezone.now() - dt.timedelta(seconds=1)})
    client.force_login(organiser)
    done = client.post(publish, {"publish": "1"}, follow=True).content.decode()
    assert "are shown to everyone who sees the board" in done
    client.force_login(member)
    page = client.get(reverse("leaderboard:analysis", args=[task.slug, first.slug])).content.decode()
    assert all(item in page for item in ids[:20])
    api = client.get(f"/api/tasks/{task.slug}/analysis", {"phase": first.slug}).json()
    assert [item["id"] for item in api["hardest"]] == ids
    assert client.get(reverse("leaderboard:analysis_hardest_csv", args=[task.slug, first.slug])).status_code == 200
    # Hidden again at the organisers' word.
    client.force_login(organiser)
    client.post(publish, {"publish": "0"})
    client.force_login(member)
    assert client.get(reverse("leaderboard:analysis_hardest_csv", args=[task.slug, first.slug])).status_code == 403


def test_with_a_split_test_set_the_analysis_is_of_the_part_the_board_shows(client, scored):
    task, gold, runs = scored("subtask", private_percent=40)
    phase = task.current_phase()
    public = part_masks(len(gold), percent=40, seed=phase.split_seed_number)["public"]
    shown = [i for i in range(len(gold)) if public[i]]
    download = json.loads(client.get(url("leaderboard_json", task)).content)
    assert download["phase"]["part"] == "public"
    order = [entry["name"] for entry in download["rows"] if entry["kind"] == "team"]
    keys = list(Submission.objects.filter(phase=phase).first().metrics)
    part_gold = [gold[i] for i in shown]
    expected = expected_analysis(part_gold, {name: [runs[name][i] for i in shown] for name in order}, keys, LABELS)
    found = json.loads(client.get(url("analysis_json", task)).content)
    assert (found["majority_vote"]["metrics"], found["oracle"]["metrics"]) == (
        expected["majority"][0],
        expected["oracle"][0],
    )
    assert found["unsolved"] == expected["unsolved"]
    columns = columns_of(task, calibrated=None)
    rows = {entry["kind"]: entry["values"] for entry in download["rows"] if entry["kind"] == "majority_vote"}
    assert rows["majority_vote"] == column_values(expected["majority_labels"], part_gold, columns, LABELS)
    assert PhaseAnalysis.objects.get(phase=phase).part == "public"


def test_on_workers_a_phase_s_analysis_waits_for_its_pause(
    scored, make_user, submit, monkeypatch, settings, django_capture_on_commit_callbacks
):
    task, _, _ = scored()
    phase = task.current_phase()
    settings.ANALYSIS_EVERY_S = 60
    handed = []
    monkeypatch.setattr(derived, "hand_over", lambda kind, phase_id: kind == "analysis" and handed.append(phase_id))
    user = make_user("latecomer")
    team_create(task=task, user=user, name="Frank")
    submit(task, user, labels_file(["c"] * N_ITEMS))
    assert handed == []  # computed a moment ago: the pause is not over
    assert derived.sweep() == 0
    PhaseAnalysis.objects.filter(phase=phase).update(computed_at=timezone.now() - dt.timedelta(seconds=61))
    with django_capture_on_commit_callbacks(execute=True):
        assert derived.sweep() == 1
    assert handed == [phase.pk]
