"""Board views: the leaderboard, its CSV and JSON exports, metric pages and the disagreements.

The toy task (tests/conftest.py) has gold ``a b c a b c a a``. Each team's predictions are
chosen so that the board shows what it must: a perfect team, a tie ("Twin A"/"Twin B"), a
team that wins on accuracy but loses on macro recall to another ("Majority" vs "Balanced"),
one below chance (negative kappa), one whose MCC is undefined (it always predicts ``a``),
and teams with no submission whose names would be formulas in a spreadsheet.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import html
import io
import json
import re

import pytest
from django.urls import reverse
from django.utils import timezone
from scipy.stats import spearmanr

from leaderboard import charts
from leaderboard.exports import csv_cell
from leaderboard.models import Phase, Submission, Task, Team
from leaderboard.selectors.boards import column_by_id, columns_of, leaderboard, rank_correlations
from leaderboard.services.teams import team_create
from scoring.engine import references
from scoring.engine.aggregate import column_sets
from tests.conftest import GOLD
from tests.leaderboard.support import embedded_figure, prediction_file, teams_upload

pytestmark = pytest.mark.django_db

PREDICTIONS = {
    "Perfect": "a b c a b c a a",
    "Majority": "a b a a a a a a",
    "Balanced": "b b c c b c b c",
    "Twin A": "a b c a a c b a",
    "Twin B": "a b c a a c b a",
    "Wrong way": "b c a b c a b b",
    "Always A": "a a a a a a a a",
}
FORMULA_NAMES = ['=HYPERLINK("http://example.invalid","x")', "@SUM(A1)", "-2+3", "+cmd"]
SCRIPT_NAME = "<script>alert(1)</script>"


@pytest.fixture
def board_task(make_task, make_user, submit):
    """A public, open task with every kind of team."""
    task = make_task()
    teams_upload(task, PREDICTIONS, make_user=make_user, submit=submit)
    for index, name in enumerate([*FORMULA_NAMES, SCRIPT_NAME]):
        team_create(task=task, user=make_user(f"idle{index}"), name=name)
    assert Submission.objects.filter(phase__task=task, status=Submission.Status.SCORED).count() == len(PREDICTIONS)
    return task


def url(name: str, task: Task, *args: str) -> str:
    """The URL of a results page of the task's current phase (the phase's slug left out)."""
    return reverse(f"leaderboard:{name}", args=[task.slug, *args])


def phase_url(name: str, task: Task, *args: str) -> str:
    """The same page under its phase's own address, as the pages link to it."""
    return reverse(f"leaderboard:{name}", args=[task.slug, task.current_phase().slug, *args])


def team_rows(content: str) -> list[tuple[str, str]]:
    """(rank under the sorted column, team name) of each ranked row, in page order."""
    rows = re.findall(
        r'<tr class="team-row"[^>]*>\s*<td class="col-rank">(.*?)</td>\s*<th scope="row" class="col-team">(.*?)</th>',
        content,
        flags=re.S,
    )
    return [(re.sub(r"<[^>]+>", "", rank).strip(), html.unescape(name)) for rank, name in rows]


def stored(task: Task, team: str, column_id: str):
    submission = Submission.objects.get(phase__task=task, team__name=team, status=Submission.Status.SCORED)
    return column_by_id(task, column_id).value(submission)


# --- who sees the board ------------------------------------------------------------------------


def test_public_board_is_visible_to_anyone(client, board_task):
    response = client.get(url("leaderboard", board_task))
    assert response.status_code == 200
    assert "Perfect" in response.content.decode()


@pytest.mark.parametrize("name", ["leaderboard", "leaderboard_csv", "disagreements"])
def test_pages_and_downloads_travel_gzipped_to_browsers_that_accept_it(client, board_task, name):
    plain = client.get(url(name, board_task))
    packed = client.get(url(name, board_task), headers={"accept-encoding": "gzip, deflate, br"})
    assert "Content-Encoding" not in plain and packed["Content-Encoding"] == "gzip"
    assert gzip.decompress(packed.content) == plain.content
    assert "Accept-Encoding" in packed["Vary"]


@pytest.mark.parametrize("name", ["leaderboard", "leaderboard_csv", "leaderboard_json", "disagreements"])
def test_hidden_board_says_until_when(client, make_task, name):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE)
    response = client.get(url(name, task))
    assert response.status_code == 403
    page = response.content.decode()
    assert "hidden until" in page
    assert f"{task.current_phase().closes_at:%Y-%m-%d %H:%M} UTC" in page


def test_hidden_board_hides_the_metric_page_too(client, make_task):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE)
    assert client.get(url("metric_detail", task, "macro_recall")).status_code == 403


def test_hidden_board_participant_is_refused_organiser_sees_it(client, make_task, make_user, organiser, submit):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE)
    member = make_user("member")
    team_create(task=task, user=member, name="Team One")
    submit(task, member, prediction_file(PREDICTIONS["Twin A"]))

    client.force_login(member)
    assert client.get(url("leaderboard", task)).status_code == 403

    client.force_login(organiser)
    response = client.get(url("leaderboard", task))
    assert response.status_code == 200
    assert "Team One" in response.content.decode()


def test_hidden_board_opens_when_the_task_closes(client, make_task):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE)
    Phase.objects.filter(task=task).update(closes_at=timezone.now() - dt.timedelta(minutes=1))
    assert client.get(url("leaderboard", task)).status_code == 200


def test_unknown_task_is_404(client):
    assert client.get(reverse("leaderboard:leaderboard", args=["no-such-task"])).status_code == 404


# --- the board ---------------------------------------------------------------------------------


def test_sort_by_a_column_with_competition_ranks_for_ties(client, board_task):
    response = client.get(url("leaderboard", board_task), {"sort": "accuracy"})
    content = response.content.decode()
    # accuracy: Perfect 1, Twins .75, Majority .625, Always A and Balanced .5, Wrong way 0
    assert team_rows(content) == [
        ("1", "Perfect"),
        ("2", "Twin A"),
        ("2", "Twin B"),
        ("4", "Majority"),
        ("5", "Always A"),
        ("5", "Balanced"),
        ("7", "Wrong way"),
    ]
    headers = re.findall(r'<th scope="col" class="metric[^"]*"\s*aria-sort="descending".*?</th>', content, re.S)
    assert len(headers) == 1
    assert phase_url("metric_detail", board_task, "accuracy") in headers[0]


def test_default_sort_is_the_primary_metric_and_its_column_is_marked(client, board_task):
    response = client.get(url("leaderboard", board_task))
    assert response.context["sort"].id == board_task.primary_metric == "macro_f1"
    content = response.content.decode()
    assert content.count('<span class="tag tag-primary">primary</span>') == 1
    ranked = [name for _, name in team_rows(content)]
    assert ranked[0] == "Perfect" and ranked[-1] == "Wrong way"


def test_undefined_values_are_shown_and_sorted_last(client, board_task):
    assert stored(board_task, "Always A", "mcc") is None
    content = client.get(url("leaderboard", board_task), {"sort": "mcc"}).content.decode()
    rows = team_rows(content)
    assert rows[-1] == ("–", "Always A")
    assert all(rank.isdigit() for rank, _ in rows[:-1])
    assert '<span class="undefined">undefined</span>' in content


def test_teams_without_a_scored_submission_are_listed_apart(client, board_task):
    content = client.get(url("leaderboard", board_task)).content.decode()
    assert content.count("no scored submission") == len(FORMULA_NAMES) + 1
    assert html.escape(FORMULA_NAMES[0]) in content


def test_calibrated_switch_shows_calibrated_columns_and_keeps_the_sort(client, board_task):
    raw = client.get(url("leaderboard", board_task), {"sort": "accuracy"}).content.decode()
    assert "?sort=accuracy_c&amp;calibrated=1" in raw  # the switch keeps the sort, calibrated

    response = client.get(url("leaderboard", board_task), {"calibrated": "1", "sort": "accuracy_c"})
    assert response.context["sort"].id == "accuracy_c"
    assert all(column.calibrated for column in response.context["columns"])
    content = response.content.decode()
    assert phase_url("metric_detail", board_task, "kappa_c") in content
    # calibrated accuracy equals macro recall (paper 000, Eq. 14-16): Balanced 2/3 beats Majority 1/2
    names = [name for _, name in team_rows(content)]
    assert names.index("Balanced") < names.index("Majority")
    assert f"{stored(board_task, 'Balanced', 'accuracy_c'):.4f}" == "0.6667"


def test_baselines_are_shown_unranked(client, board_task):
    response = client.get(url("leaderboard", board_task))
    content = response.content.decode()
    baseline_rows = re.findall(r'<tr class="baseline-row">(.*?)</tr>', content, flags=re.S)
    assert len(baseline_rows) == 3
    for row in baseline_rows:
        assert "baseline, not ranked" in row
        assert 'title="rank' not in row
    assert "Majority class (always &#x27;a&#x27;)" in content


def test_headers_link_to_the_metric_page_with_the_formula_as_tooltip(client, board_task):
    content = client.get(url("leaderboard", board_task)).content.decode()
    recall_b = column_by_id(board_task, "recall[b]")
    assert phase_url("metric_detail", board_task, "recall[b]") in content
    assert html.escape(recall_b.metric.formula_text) in content
    assert "Macro recall: (1/n) Σᵢ correct(i) / prevalence(i)" in content


def test_team_names_are_escaped_everywhere(client, board_task, submit):
    member = Team.objects.get(task=board_task, name=SCRIPT_NAME).members.get()
    submit(board_task, member, prediction_file(PREDICTIONS["Perfect"]))  # on the rank chart too
    for name in ("leaderboard", "disagreements", "metric_detail"):
        content = client.get(url(name, board_task, *(["kappa"] if name == "metric_detail" else []))).content.decode()
        assert SCRIPT_NAME not in content
        escaped = (html.escape(SCRIPT_NAME), "\\u003Cscript\\u003E", "\\u0026lt;script\\u0026gt;")  # HTML, JSON
        assert any(form in content for form in escaped), name


def test_leaderboard_needs_a_bounded_number_of_queries(client, board_task, organiser, django_assert_max_num_queries):
    """Eight queries whatever the number of teams, cache empty: task, its phases, the scores'
    stamp (an aggregate, the teams), counting submissions, teams, baselines, the organisers'
    decisions (plus session, user and the organiser check when logged in)."""
    with django_assert_max_num_queries(8):
        assert client.get(url("leaderboard", board_task)).status_code == 200
    client.force_login(organiser)
    with django_assert_max_num_queries(11):
        assert client.get(url("leaderboard", board_task), {"calibrated": "1"}).status_code == 200


# --- exports -----------------------------------------------------------------------------------


def test_csv_neutralises_formulas_but_keeps_numbers(client, board_task):
    response = client.get(url("leaderboard_csv", board_task))
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"] == 'attachment; filename="toy-evaluation-leaderboard.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    header, body = rows[0], rows[1:]
    names = [row[0] for row in body]
    for name in FORMULA_NAMES:
        assert "'" + name in names
        assert name not in names
    wrong = body[names.index("Wrong way")]
    kappa = wrong[header.index("kappa")]
    assert kappa.startswith("-")
    assert float(kappa) == pytest.approx(stored(board_task, "Wrong way", "kappa"))
    assert wrong[header.index("kappa_c")].startswith("-")
    assert "macro_recall_c rank" in header
    majority = body[names.index("Majority")]
    assert majority[header.index("accuracy rank")] == "4"
    kinds = [row[1] for row in body]
    assert kinds.count("baseline") == 3
    for row in body:
        for cell in row:
            assert not cell.startswith(("=", "+", "@")) or cell.startswith("'")


def test_every_cell_of_the_csv_reads_back_as_the_board_s_double_and_rank(client, board_task):
    """The download is written from the board's arrays by Arrow: each value the shortest text of
    the same double (``1`` for 1.0), empty where undefined; each rank an integer, empty for none."""
    board = leaderboard(phase=board_task.current_phase(), calibrated=None)
    rows = list(csv.DictReader(io.StringIO(client.get(url("leaderboard_csv", board_task)).content.decode())))
    entries = [*board.scored, *board.unscored, *board.baselines, *board.analysis]
    assert [row["team"] for row in rows] == [csv_cell(entry.name) for entry in entries]
    kinds = ["team"] * len(board.entries) + ["baseline"] * len(board.baselines) + ["majority_vote", "oracle"]
    assert [row["kind"] for row in rows] == kinds
    for row, entry in zip(rows, entries, strict=True):
        assert row["submission"] == str(entry.submission_id or "")
        for column in board.columns:
            assert (float(row[column.id]) if row[column.id] else None) == entry.values[column.id]
            assert (int(row[f"{column.id} rank"]) if row[f"{column.id} rank"] else None) == entry.ranks.get(column.id)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("plain", "plain"),
        (-0.5, -0.5),
        (3, 3),
        (None, ""),
    ],
)
def test_csv_cell(value, expected):
    assert csv_cell(value) == expected


def test_json_has_nulls_for_undefined_and_unranked(client, board_task):
    response = client.get(url("leaderboard_json", board_task))
    assert response["Content-Disposition"] == 'attachment; filename="toy-evaluation-leaderboard.json"'
    assert b"NaN" not in response.content and b"Infinity" not in response.content
    data = json.loads(response.content)
    ids = [column["id"] for column in data["columns"]]
    assert "kappa" in ids and "kappa_c" in ids and "recall[a]_c" in ids
    rows = {row["name"]: row for row in data["rows"]}
    assert rows["Always A"]["values"]["mcc"] is None
    assert rows["Always A"]["ranks"]["mcc"] is None
    assert rows["Twin A"]["ranks"]["accuracy"] == rows["Twin B"]["ranks"]["accuracy"] == 2
    idle = rows[FORMULA_NAMES[1]]
    assert idle["status"] == "no scored submission"
    assert set(idle["values"].values()) == {None}
    baselines = [row for row in data["rows"] if row["kind"] == "baseline"]
    assert len(baselines) == 3
    assert all(rank is None for row in baselines for rank in row["ranks"].values())
    assert rows["Perfect"]["values"]["accuracy"] == 1.0


# --- a metric's page ---------------------------------------------------------------------------


def test_metric_page_of_a_raw_metric(client, board_task):
    response = client.get(url("metric_detail", board_task, "macro_recall"))
    assert response.status_code == 200
    content = response.content.decode()
    metric = response.context["metric"]
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in content
    assert html.escape(metric.formula_latex) in content  # kept as the MathML annotation
    assert metric.formula_text in content
    opitz = references.get("opitz-overview")
    assert f'<a class="cite" href="/references/#opitz-overview">{opitz.short}</a>, Eq. 8' in content
    assert "c(3) = 0.3333" in content
    assert "PIV" in content and "prevalence invariance" in content
    comparison = response.context["comparison"]
    assert comparison.first.id == "macro_f1" and comparison.second.id == "macro_recall"
    assert f"over the {comparison.correlation.n_teams} teams" in content
    # Balanced climbs from 5th under macro F1 (0.444) to 4th under macro recall (0.667)
    [(_, before, after, shift)] = [move for move in comparison.movers if move[0] == "Balanced"]
    assert shift == before - after > 0
    balanced = next(row for row in response.context["rows"] if row.name == "Balanced")
    assert (balanced.primary_rank, balanced.rank, balanced.shift) == (before, after, shift)


def test_metric_page_of_a_calibrated_metric(client, board_task):
    response = client.get(url("metric_detail", board_task, "kappa_c"))
    assert response.status_code == 200
    content = response.content.decode()
    assert "prevalence-calibrated" in content
    assert "c(3) = 0.0000" in content
    assert response.context["column"].calibrated
    assert phase_url("metric_detail", board_task, "kappa") in content  # link to the raw version


def test_metric_page_of_a_per_class_column(client, board_task):
    response = client.get(url("metric_detail", board_task, "recall[b]"))
    assert response.status_code == 200
    content = response.content.decode()
    assert "Recall of class &#x27;b&#x27;" in content
    assert "not analysed" in content
    ranks = {row.name: row.rank for row in response.context["rows"]}
    assert ranks["Always A"] == ranks["Wrong way"] == 6  # neither ever predicts b right


@pytest.mark.parametrize("column", ["nonsense", "kappa_x", "macro_f1_gap", "recall[z]", "recall[b]_c_c"])
def test_metric_page_of_an_unknown_column_is_404(client, board_task, column):
    assert client.get(url("metric_detail", board_task, column)).status_code == 404


def test_labels_with_a_slash_get_pages_too(client, make_task):
    task = make_task(slug="slashes", labels=("n/a", "yes"), gold=b"id,label\n1,n/a\n2,yes\n")
    assert client.get(url("leaderboard", task)).status_code == 200
    response = client.get(url("metric_detail", task, "recall[n/a]_c"))
    assert response.status_code == 200
    assert response.context["column"].id == "recall[n/a]_c"


# --- disagreements -----------------------------------------------------------------------------


def expected_rho(task: Task, first: str, second: str) -> tuple[float, int]:
    """Spearman's rho from the stored values with scipy, over the teams defined under both."""
    pairs = [(stored(task, team, first), stored(task, team, second)) for team in PREDICTIONS]
    pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
    rho = spearmanr([x for x, _ in pairs], [y for _, y in pairs]).statistic
    return float(rho), len(pairs)


def heatmap_cell(figure: dict, task: Task, first: str, second: str) -> tuple[float | None, list]:
    trace = figure["data"][0]
    labels = trace["x"]
    i = labels.index(charts.axis_label(column_by_id(task, first)))
    j = labels.index(charts.axis_label(column_by_id(task, second)))
    return trace["z"][i][j], trace["customdata"][i][j]


def test_heatmap_of_the_papers_set_has_the_right_rho(client, board_task):
    response = client.get(url("disagreements", board_task))
    assert response.status_code == 200
    content = response.content.decode()
    figure = embedded_figure(content, "correlation-heatmap-data")
    trace = figure["data"][0]
    assert trace["type"] == "heatmap"
    assert (trace["zmin"], trace["zmax"]) == (-1.0, 1.0)
    # the paper's set, each metric beside its calibrated version: 6 metrics + 3 class recalls
    assert len(trace["x"]) == 2 * (6 + 3)
    assert trace["x"][:2] == ["macR", "macR cal."]  # calibrated said in words, not only by "_c"

    for first, second in [("macro_f1", "kappa"), ("macro_recall", "mcc"), ("mcc", "recall[a]_c")]:
        rho, n = expected_rho(board_task, first, second)
        z, hover = heatmap_cell(figure, board_task, first, second)
        assert z == pytest.approx(rho)
        assert hover[2] == f"{rho:.2f}"
        assert hover[3] == n
    assert heatmap_cell(figure, board_task, "macro_recall", "mcc")[1][3] == len(PREDICTIONS) - 1


@pytest.mark.parametrize(
    ("rho", "cell"),
    [(1.0, "1.00"), (0.9974, ">.99"), (0.994, "0.99"), (-0.9999, "<-.99"), (-1.0, "-1.00"), (None, "")],
)
def test_a_heatmap_cell_never_reads_one_for_a_rho_that_is_not(rho, cell):
    assert charts.rho_cell_text(rho) == cell


def test_heatmap_of_all_metrics_leaves_undefined_cells_blank(client, board_task):
    content = client.get(url("disagreements", board_task), {"set": "all"}).content.decode()
    figure = embedded_figure(content, "correlation-heatmap-data")
    labels = figure["data"][0]["x"]
    assert len(labels) == 2 * len(columns_of(board_task, calibrated=False))
    rho, _ = expected_rho(board_task, "accuracy", "macro_recall")
    assert heatmap_cell(figure, board_task, "accuracy", "macro_recall")[0] == pytest.approx(rho)
    z, hover = heatmap_cell(figure, board_task, "macro_dp", "accuracy")  # every team's DP is undefined
    assert z is None
    assert hover[2] == "undefined"


def test_compare_two_metrics_lists_the_swapped_pair(client, board_task):
    response = client.get(url("disagreements", board_task), {"a": "accuracy", "b": "macro_recall"})
    content = response.content.decode()
    pairs = [
        (x, y)
        for x in PREDICTIONS
        for y in PREDICTIONS
        if stored(board_task, x, "accuracy") > stored(board_task, y, "accuracy")
        and stored(board_task, x, "macro_recall") < stored(board_task, y, "macro_recall")
    ]
    assert ("Majority", "Balanced") in pairs
    assert f'<strong class="swap-count">{len(pairs)}</strong>' in content
    assert "<strong>Majority</strong> is ahead of <strong>Balanced</strong>" in content
    changes = {team: (rank_a, rank_b) for team, rank_a, rank_b, _ in response.context["comparison"].movers}
    assert changes["Majority"] == (4, 5)
    assert changes["Balanced"] == (5, 4)
    assert "▲ 1" in content and "▼ 1" in content


def test_compare_defaults_to_the_primary_and_its_most_distant_metric(client, board_task):
    response = client.get(url("disagreements", board_task))
    assert response.context["first"].id == "macro_f1"
    second = response.context["second"]
    correlations = rank_correlations(phase=board_task.current_phase())
    rhos = [
        correlations.matrix["macro_f1"][c.id].rho
        for c in response.context["columns"]
        if c.id != "macro_f1" and correlations.matrix["macro_f1"][c.id].rho is not None
    ]
    assert correlations.matrix["macro_f1"][second.id].rho == min(rhos)


def test_rank_chart_has_a_line_per_scored_team(client, board_task):
    content = client.get(url("disagreements", board_task)).content.decode()
    figure = embedded_figure(content, "rank-lines-data")
    assert len(figure["data"]) == len(PREDICTIONS)
    assert figure["layout"]["yaxis"]["autorange"] == "reversed"
    twin = next(trace for trace in figure["data"] if trace["name"] == "Twin A")
    assert twin["y"][0] == 2  # macro recall: Perfect first, the twins share second place


def test_pages_reference_nothing_outside_the_site(client, board_task):
    for name in ("leaderboard", "disagreements"):
        content = client.get(url(name, board_task)).content.decode()
        assert not re.search(r'(?:src|href)="(?:https?:)?//', content)
        assert "cdn" not in content.lower()
    content = client.get(url("disagreements", board_task)).content.decode()
    for element_id in ("correlation-heatmap-data", "rank-lines-data"):
        assert "http" not in json.dumps(embedded_figure(content, element_id))
    assert "vendor/plotly/plotly.min.js" in content


def test_empty_task_pages_render(client, make_task):
    task = make_task(slug="empty")
    for name in ("leaderboard", "disagreements", "leaderboard_csv", "leaderboard_json"):
        assert client.get(url(name, task)).status_code == 200
    assert client.get(url("metric_detail", task, "macro_recall")).status_code == 200


def test_gold_fixture_is_the_one_the_predictions_were_made_for():
    assert prediction_file("a b c a b c a a") == GOLD


# --- labels that look like column syntax ---------------------------------------------------------

ODD_LABELS = ("x]", "a[b]", "_c")


def test_labels_that_look_like_column_ids_show_their_recall_everywhere(client, make_task, make_user, submit):
    """A column names its class as a field, never inside a string parsed back: a label ending in
    ``]`` (or holding brackets, or ending in the calibrated suffix) has its recall on the board,
    on its metric page and in both exports."""
    gold = "\n".join(["id,label", "1,x]", "2,a[b]", "3,_c", "4,x]"]).encode()
    task = make_task("odd", gold=gold, labels=ODD_LABELS)
    user = make_user("odd-member")
    team_create(task=task, user=user, name="Odd")
    # x]: 1 of 2 right; a[b]: right; _c: wrong (predicted x])
    submit(task, user, "\n".join(["id,label", "1,x]", "2,a[b]", "3,x]", "4,a[b]"]).encode())
    expected = {"x]": 0.5, "a[b]": 1.0, "_c": 0.0}

    board = leaderboard(phase=task.current_phase(), calibrated=None)
    [entry] = board.scored
    for label, recall in expected.items():
        assert entry.values[f"recall[{label}]"] == pytest.approx(recall), label
        assert entry.values[f"recall[{label}]_c"] == pytest.approx(recall), label
        assert entry.ranks[f"recall[{label}]"] == 1, label

    rows = list(csv.DictReader(io.StringIO(client.get(url("leaderboard_csv", task)).content.decode())))
    team_row = next(row for row in rows if row["team"] == "Odd")
    exported = json.loads(client.get(url("leaderboard_json", task)).content)
    json_row = next(row for row in exported["rows"] if row["name"] == "Odd")
    columns = {column["id"]: column for column in exported["columns"]}
    for label, recall in expected.items():
        assert float(team_row[f"recall[{label}]"]) == pytest.approx(recall), label
        assert json_row["values"][f"recall[{label}]"] == pytest.approx(recall), label
        assert columns[f"recall[{label}]"]["class"] == label

    page = client.get(url("metric_detail", task, "recall[x]]"))
    assert page.status_code == 200
    assert "Recall of class &#x27;x]&#x27;" in page.content.decode()
    assert "0.5000" in page.content.decode()


def test_the_disagreement_page_names_each_set_s_overall_winner(client, board_task):
    """Mean rank and Borda recomputed here from the board's ranks, over the columns of each set
    that every team has a value under."""
    response = client.get(url("disagreements", board_task))
    board = leaderboard(phase=board_task.current_phase(), calibrated=None)
    scored = board.scored
    sets = column_sets(board_task.labels, primary=board_task.primary_metric)
    shown = {row.set_name: row for row in response.context["overall"]}
    assert "table8" in shown and "primary" in shown
    for name, columns in sets.items():
        usable = [c for c in columns if all(entry.ranks[c.id] is not None for entry in scored)]
        if not usable:
            assert name not in shown
            continue
        means = {e.name: sum(e.ranks[c.id] for c in usable) / len(usable) for e in scored}
        borda = {e.name: sum(sum(1 for o in scored if e.ranks[c.id] < o.ranks[c.id]) for c in usable) for e in scored}
        assert shown[name].n_columns == len(usable)
        assert sorted(shown[name].winners["mean_rank"]) == sorted(
            t for t, v in means.items() if v == min(means.values())
        )
        assert sorted(shown[name].winners["borda"]) == sorted(t for t, v in borda.items() if v == max(borda.values()))
    assert "Who wins overall?" in response.content.decode()
