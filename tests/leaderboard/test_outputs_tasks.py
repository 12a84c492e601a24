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
  team and the organiser; the team's page shows each output's confusion matrix;
- a bad file is refused with its line and column, and a stable code in the API;
- the what-if (page and API) is of one output at a time, the visitor's choice (default the
  first): each team's matrix of that output on the part shown, re-scored at shares of that
  output's labels and ranked under that output's own suite, so that equal shares give each
  team's stored calibrated values of that output and the gold's shares its values today; an
  unknown output is named, with the task's outputs, on the page and in a 400; the chooser and
  the presets keep the output;
- the analysis of what the teams got wrong together: every number the board's two rows, the
  analysis JSON, the API, the page and the organisers' CSV show equals the plain-Python
  computation of ``tests/scoring/analysis_oracle.py`` (the vote and the oracle output by output,
  every metric of each, the exact-match oracle, the items no team got right per output and gold
  label, kappa as the exact mean of each output's, the hardest items with their labels as text),
  on a plain task, a subtask and the part of a split test set the board shows; a run whose items
  do not give one output's stored matrix is left out and named.
"""

from __future__ import annotations

import csv
import io
import json
from types import SimpleNamespace

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils.html import escape

from leaderboard import analysis, derived, errors
from leaderboard.api import problems
from leaderboard.models import PhaseAnalysis, PhaseStability, Submission, Task, Team
from leaderboard.pages.shifts import RankMove
from leaderboard.selectors.boards import columns_of
from leaderboard.services.teams import team_create
from scoring.engine.columns import ranking_columns
from scoring.engine.formatting import value_text
from scoring.engine.outputs import score_output_files
from scoring.engine.outputs_analysis import labels_text
from scoring.engine.outputs_board import score_outputs_board
from scoring.engine.registry import ITEM_METRICS, ranking_metrics
from scoring.engine.schemes import Output
from scoring.engine.split import part_masks
from tests.leaderboard.test_analysis import url
from tests.scoring.analysis_oracle import expected_outputs_analysis, outputs_report_values

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

    def build(kind: str = "plain", **options):
        task = make_task(
            "hateval",
            kind=kind,
            gold=outputs_file(GOLD),
            labels=None,
            outputs=outputs_of(),
            primary_metric="jaccard",
            **options,
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


@pytest.mark.parametrize("private_percent", [0, 50])
def test_the_intervals_are_those_of_the_command_line_on_the_same_files(
    scored_outputs, client, settings, tmp_path, private_percent
):
    """Computed on the site (a process of their own, the phase's replicates kept) and from the
    files by the engine's board, the intervals of every column are the same numbers; with a split
    test set, those of the part the board shows."""
    settings.BOOTSTRAP_REPLICATES, settings.BOOTSTRAP_SEED = 200, 3
    task = scored_outputs(private_percent=private_percent)
    phase = task.current_phase()
    derived.compute("intervals", phase.pk)
    result = PhaseStability.objects.get(phase=phase).result
    assert result["skipped"] == {}
    keep = np.ones(len(GOLD), dtype=bool)
    if private_percent:
        keep = part_masks(len(GOLD), percent=private_percent, seed=phase.split_seed_number)[phase.shown_part()]
    (tmp_path / "gold.csv").write_bytes(outputs_file(GOLD[keep]))
    files = []
    for name, rows in runs().items():
        files.append(tmp_path / f"{Team.objects.get(name=name).pk}.csv")
        files[-1].write_bytes(outputs_file(rows[keep]))
    board = score_outputs_board(tmp_path / "gold.csv", files)
    expected = board.as_json(stability=board.stability(replicates=200, seed=3))
    assert result["intervals"] == expected["intervals"] and result["behind_leader"] == expected["behind_leader"]
    assert set(result["intervals"]["raw"]) == {c.id for c in task.scheme.ranking_columns()}
    assert "exact_match" not in result["intervals"]["calibrated"]
    page = client.get(url("metric_detail", task, "jaccard")).content.decode()
    assert "95 %" in page or "interval" in page.lower()


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
        url("analysis_json", task),
        url("analysis_heatmap", task),
        url("leaderboard_tex", task) + "?analysis=1",
        f"/api/tasks/{task.slug}/analysis",
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


# --- the what-if, one output at a time -----------------------------------------------------------


def what_if_rows(client, task, **query) -> tuple[dict, list[RankMove]]:
    """The what-if page's context (asked with ``query``) and its rows (every team: one page)."""
    response = client.get(url("what_if", task), query)
    assert response.status_code == 200
    return response.context, list(response.context["rows"])


def stored(task, output: str, side: str) -> dict[str, float]:
    """Each team's stored ``side`` ("metrics": raw, or "calibrated") macro F1 of ``output``, on
    the part of the test set the board shows."""
    part = task.current_phase().shown_part()
    return {
        run.team.name: run.part(part).output_scores[output][side]["macro_f1"]
        for run in Submission.objects.filter(phase__task=task).select_related("team")
    }


@pytest.mark.parametrize(("kind", "private_percent"), [("plain", 0), ("subtask", 0), ("plain", 40)])
def test_equal_shares_of_an_output_give_its_stored_calibrated_values(scored_outputs, client, kind, private_percent):
    task = scored_outputs(kind, private_percent=private_percent)
    seen = []
    for output in NAMES:  # each output its own board: a cache key without the output would repeat the first
        context, rows = what_if_rows(client, task, output=output, target="uniform", metric="macro_f1")
        assert context["output"] == output and context["column"].id == "macro_f1"
        assert [label for label, _, _ in context["shares"]] == ["0", "1"]
        assert context["columns"] == ranking_columns(("0", "1"))  # the output's own suite, no item metric
        assert {row.team: row.value_after for row in rows} == stored(task, output, "calibrated")
        assert {row.team: row.value_before for row in rows} == stored(task, output, "metrics")
        answer = client.get(
            f"/api/tasks/{task.slug}/what-if", {"output": output, "prevalence": "uniform", "per_page": 0}
        ).json()
        assert answer["output"] == output and set(answer["target"]) == {"0", "1"}
        values = {team: cell["value"] for team, cell in answer["columns"]["macro_f1"].items()}
        assert values == stored(task, output, "calibrated")
        seen.append(values)
    assert len({tuple(sorted(values.items())) for values in seen}) == len(NAMES)


def test_the_gold_s_shares_of_an_output_change_nothing(scored_outputs, client):
    task = scored_outputs()
    context, rows = what_if_rows(client, task, output="target", target="gold", metric="macro_f1")
    assert [gold for _, _, gold in context["shares"]] == [1 - GOLD[:, 1].mean(), GOLD[:, 1].mean()]
    assert {row.team: row.value_after for row in rows} == stored(task, "target", "metrics")
    assert all(not row.shift for row in rows) and context["movers"] == []


def test_the_page_says_whose_metrics_rank_and_opens_on_the_first_output(scored_outputs, client):
    task = scored_outputs()
    context, _ = what_if_rows(client, task)
    assert context["output"] == NAMES[0] and context["column"] == context["columns"][0]  # Jaccard is no output's
    page = client.get(url("what_if", task)).content.decode()
    assert "one output at a time" in page and "that output's own metrics" in page
    assert '<abbr title="Jaccard index (mean over items)">J</abbr>' in page  # read across outputs: no what-if


def test_an_unknown_output_is_named_with_the_task_s_outputs(scored_outputs, client):
    task = scored_outputs()
    message = errors.NO_SUCH_OUTPUT.format(output="colour", outputs=", ".join(NAMES))
    response = client.get(url("what_if", task), {"output": "colour"})
    assert response.status_code == 200 and response.context["output_problem"] == message
    assert response.context["output"] == NAMES[0]
    assert f"{escape(message)} Showing the output “{NAMES[0]}” instead." in response.content.decode()
    answer = client.get(f"/api/tasks/{task.slug}/what-if", {"output": "colour"})
    assert answer.status_code == 400 and answer.json() == {"code": errors.NO_SUCH_OUTPUT.code, "message": message}


def test_the_chooser_the_form_and_the_presets_keep_the_output(scored_outputs, client):
    task = scored_outputs()
    context, _ = what_if_rows(client, task, output="target", share=["1", "3"], metric="accuracy")
    assert context["output"] == "target" and [share for _, share, _ in context["shares"]] == [0.25, 0.75]
    page = client.get(url("what_if", task), {"output": "target", "metric": "accuracy"}).content.decode()
    assert '<option value="target" selected>target</option>' in page
    assert 'href="?target=gold&amp;metric=accuracy&amp;output=target"' in page
    assert 'href="?output=aggressive&amp;metric=accuracy"' in page
    context, _ = what_if_rows(client, task, target="gold", metric="accuracy", output="target")
    assert context["output"] == "target" and not context["movers"]


def test_an_output_with_a_label_no_gold_item_has_is_said_to_have_no_what_if(make_task, client):
    gold = GOLD.copy()
    gold[:, 2] = 0  # no item is aggressive: no target can give "1" a share
    task = make_task("hateval", gold=outputs_file(gold), labels=None, outputs=outputs_of(), primary_metric="jaccard")
    response = client.get(url("what_if", task), {"output": "aggressive"})
    assert "class '1' has no gold item" in response.context["unavailable"]
    assert 'href="?output=hate"' in response.content.decode()  # the other outputs stay a click away
    answer = client.get(f"/api/tasks/{task.slug}/what-if", {"output": "aggressive"})
    assert answer.status_code == 400 and answer.json()["code"] == problems.BAD_TARGET.code
    assert client.get(f"/api/tasks/{task.slug}/what-if", {"output": "hate"}).status_code == 200


# --- what the teams got wrong together -----------------------------------------------------------


@pytest.fixture
def analysed(scored_outputs, make_user, submit):
    """The task of ``scored_outputs`` with two more teams (four: the votes tie), one of which
    says no label is present; returns the task and each team's rows."""

    def build(kind: str = "plain", **options):
        task = scored_outputs(kind, **options)
        rng = np.random.default_rng(22)
        more = {"Cy": np.where(rng.random(GOLD.shape) < 0.5, GOLD, 1 - GOLD), "Di": np.zeros_like(GOLD)}
        for name, rows in more.items():
            user = make_user(name.lower())
            team_create(task=task, user=user, name=name)
            submit(task, user, outputs_file(rows))
        return task, runs() | more

    return build


def matrix_of(rows: list[list[int]], gold: list[list[int]], output: int) -> list[list[int]]:
    """An output's 0/1 confusion matrix counted item by item (rows predicted, columns gold)."""
    return [
        [sum(1 for p, g in zip(rows, gold, strict=True) if (p[output], g[output]) == (i, j)) for j in (0, 1)]
        for i in (0, 1)
    ]


@pytest.mark.parametrize(("kind", "private_percent"), [("plain", 0), ("subtask", 0), ("plain", 40)])
def test_the_analysis_equals_an_independent_computation(analysed, client, organiser, kind, private_percent):
    task, teams = analysed(kind, private_percent=private_percent)
    phase = task.current_phase()
    row = PhaseAnalysis.objects.get(phase=phase)
    assert row.n_teams == 4 and row.result["skipped"] == {}
    shown = np.arange(len(GOLD))
    if private_percent:
        shown = np.flatnonzero(part_masks(len(GOLD), percent=private_percent, seed=phase.split_seed_number)["public"])
    gold, outputs = GOLD[shown].tolist(), list(outputs_of())
    download = json.loads(client.get(url("leaderboard_json", task)).content)
    by_primary = [entry["name"] for entry in download["rows"] if entry["kind"] == "team"]  # kappa's order
    expected = expected_outputs_analysis(gold, {name: teams[name][shown].tolist() for name in by_primary}, outputs)
    reports = {kind: outputs_report_values(gold, expected[f"{kind}_rows"], outputs) for kind in ("majority", "oracle")}

    # The board's two rows, under every column.
    columns = columns_of(task, calibrated=None)
    for kind_, (metrics, calibrated) in zip(("majority_vote", "oracle"), reports.values(), strict=True):
        scores = SimpleNamespace(metrics=metrics, calibrated=calibrated, per_class=None, calibrated_per_class=None)
        entry = next(entry for entry in download["rows"] if entry["kind"] == kind_)
        assert entry["values"] == {column.id: column.value(scores) for column in columns}

    document = json.loads(client.get(url("analysis_json", task)).content)
    assert client.get(f"/api/tasks/{task.slug}/analysis").json() == document
    assert document["status"] == "current" and document["teams"] == 4
    vote, oracle = document["majority_vote"], document["oracle"]
    assert vote["ties_per_output"] == dict(zip(NAMES, expected["ties_per_output"], strict=True)) and vote["ties"] > 0
    for found, kind_ in ((vote, "majority"), (oracle, "oracle")):
        assert (found["metrics"], found["calibrated"]) == reports[kind_]
        for index, name in enumerate(NAMES):
            assert found["outputs"][name]["confusion_matrix"] == matrix_of(expected[f"{kind_}_rows"], gold, index)
        assert set(found["would_rank"]["calibrated"]) < set(found["would_rank"]["raw"])
    assert oracle["exact_match_one_run"] == expected["exact_match_one_run"]
    assert document["unsolved"] == {
        name: dict(zip(("0", "1"), counts, strict=True))
        for name, counts in zip(NAMES, expected["unsolved"], strict=True)
    }
    agreement = document["agreement"]
    assert agreement["teams"] == expected["order"]
    position = {team: index for index, team in enumerate(by_primary)}
    assert agreement["kappa"] == [
        [expected["kappa"][position[a]][position[b]] for b in expected["order"]] for a in expected["order"]
    ]
    assert agreement["clustering"]["merges"] == expected["merges"]
    assert document["hardest"] is None  # an anonymous reader

    page = client.get(url("analysis", task)).content.decode()
    assert f"Exact-match oracle: {value_text(expected['exact_match_one_run'])}" in page
    for name, items, unsolved in zip(NAMES, expected["gold_counts"], expected["unsolved"], strict=True):
        row_html = f'<th scope="row">{name}: 1</th><td class="num">{items[1]}</td><td class="num">{unsolved[1]}</td>'
        assert row_html in page

    # The hardest items, for the organiser: the page, the CSV and the API.
    client.force_login(organiser)
    ids = [f"tw{shown[item]}" for item in expected["hardest"]]
    names = [Team.objects.get(pk=team).name for team in row.result["teams"]]
    lines = list(csv.reader(io.StringIO(client.get(url("analysis_hardest_csv", task)).content.decode())))
    assert lines[0] == ["id", "gold", "right", *names]
    for line, item in zip(lines[1:], expected["hardest"], strict=True):
        labels = [labels_text(teams[name][shown[item]].tolist(), outputs=outputs) for name in names]
        assert line == [
            f"tw{shown[item]}",
            labels_text(gold[item], outputs=outputs),
            str(expected["right"][item]),
            *labels,
        ]
    present = [sum(gold[item]) for item in expected["hardest"]]  # each hardest item's gold labels
    assert any(line[1] == "none" for line in lines[1:]) == (0 in present)
    assert any(", " in line[1] for line in lines[1:]) == any(n > 1 for n in present)
    if not private_percent:  # among every item's hardest, both kinds (a random part may lack one)
        assert 0 in present and max(present) > 1
    api = client.get(f"/api/tasks/{task.slug}/analysis").json()["hardest"]
    assert [item["id"] for item in api] == ids
    for found, item, votes in zip(api, expected["hardest"], expected["hardest_votes"], strict=True):
        assert found["gold"] == dict(zip(NAMES, map(str, gold[item]), strict=True))
        assert found["right"] == expected["right"][item]
        assert found["votes"] == {
            name: dict(zip(("0", "1"), count, strict=True)) for name, count in zip(NAMES, votes, strict=True)
        }
    page = client.get(url("analysis", task)).content.decode()
    assert all(item in page for item in ids[:20]) and '<th scope="col" class="num">aggressive</th>' in page


def test_a_run_whose_items_do_not_give_an_output_s_matrix_is_left_out_and_named(analysed, client):
    task, _ = analysed("subtask")
    phase = task.current_phase()
    run = Submission.objects.get(phase=phase, team__name="Cy")
    scores = run.output_scores
    scores["target"]["confusion_matrix"] = [[0, 0], [0, len(GOLD)]]
    Submission.objects.filter(pk=run.pk).update(output_scores=scores)
    PhaseAnalysis.objects.filter(phase=phase).update(stamp="")
    assert derived.compute("analysis", phase.pk) == "3 teams, 1 left out"
    assert json.loads(client.get(url("analysis_json", task)).content)["skipped"] == {"Cy": analysis.SKIPPED_MISMATCH}
    page = client.get(url("analysis", task)).content.decode()
    assert f"<strong>Cy</strong> ({analysis.SKIPPED_MISMATCH})" in page
