"""The leaderboard as a LaTeX download: ``GET /tasks/<slug>/leaderboard.tex``.

What this proves: the download obeys the board's visibility (a hidden board is refused to a
participant and to a visitor, shown to its organiser), as the CSV and JSON exports do; its
content is the page's board -- the columns the page shows (raw, or calibrated with
``?calibrated=1``), the teams with a scored submission in the page's order (``?sort=``),
nobody without one -- built by the engine's table (booktabs rules, percentages with one
decimal, the best of each column bold with ties all bold, names escaped); and the page links
to it next to CSV and JSON, keeping the raw/calibrated switch and the sort.
"""

from __future__ import annotations

import html
import re

import pytest
from django.urls import reverse

from leaderboard.models import Phase, Task
from leaderboard.selectors.boards import leaderboard
from leaderboard.services.teams import team_create
from scoring.engine.latex import column_header, is_share, latex_escape, number_text

pytestmark = pytest.mark.django_db

# Gold: a b c a b c a a.
PREDICTIONS = {
    "Perfect": "a b c a b c a a",
    "Twin A": "a b c a a c b a",
    "Twin B": "a b c a a c b a",
    "Always A": "a a a a a a a a",
}
ODD_NAME = "R&D_#1 {50%} ~^\\"


def prediction_file(labels: str) -> bytes:
    rows = [f"{i},{label}" for i, label in enumerate(labels.split(), start=1)]
    return ("id,label\n" + "\n".join(rows) + "\n").encode()


@pytest.fixture
def tex_task(make_task, make_user, submit):
    task = make_task()
    for index, (name, labels) in enumerate({**PREDICTIONS, ODD_NAME: "b b c c b c b c"}.items()):
        user = make_user(f"member{index}")
        team_create(task=task, user=user, name=name)
        submit(task, user, prediction_file(labels))
    team_create(task=task, user=make_user("idle"), name="No Upload")
    return task


def tex_url(task: Task, query: str = "") -> str:
    """The download of the task's current phase's board."""
    return reverse("leaderboard:leaderboard_tex", args=[task.slug]) + query


def phase_tex_url(task: Task, query: str = "") -> str:
    """The same download under the phase's own address, as the board page links to it."""
    return reverse("leaderboard:leaderboard_tex", args=[task.slug, task.current_phase().slug]) + query


def body_rows(content: str) -> list[list[str]]:
    body = content.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
    return [line.removesuffix(" \\\\").split(" & ") for line in body.strip().splitlines()]


def header_cells(content: str) -> list[str]:
    return content.split("\\toprule\n", 1)[1].split("\n", 1)[0].removesuffix(" \\\\").split(" & ")


def expected_cell(column, value, best: bool) -> str:
    text = number_text(value, percent=is_share(column))
    if text is None:
        return "\\emph{undefined}"
    return f"\\textbf{{{text}}}" if best else text


def test_download_is_the_raw_board(client, tex_task):
    response = client.get(tex_url(tex_task))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/x-tex; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="toy-evaluation-leaderboard.tex"'
    content = response.content.decode()
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert content.count(rule) == 1
    board = leaderboard(phase=tex_task.current_phase(), calibrated=False)
    assert not any(column.calibrated for column in board.columns)
    assert header_cells(content) == ["Team", *(column_header(column) for column in board.columns)]
    assert f"\\begin{{tabular}}{{l{'r' * len(board.columns)}}}" in content
    rows = body_rows(content)
    assert [row[0] for row in rows] == [latex_escape(entry.name) for entry in board.scored]
    assert "No Upload" not in content
    for row, entry in zip(rows, board.scored, strict=True):
        expected = [expected_cell(c, entry.values[c.id], entry.ranks[c.id] == 1) for c in board.columns]
        assert row[1:] == expected, entry.name
    assert "Teams of Task toy (Evaluation) ranked by" in content


def test_ties_are_all_bold_and_undefined_is_written(client, tex_task):
    content = client.get(tex_url(tex_task, "?sort=recall[c]")).content.decode()
    board = leaderboard(phase=tex_task.current_phase(), calibrated=False, sort="recall[c]")
    rows = {row[0]: row[1:] for row in body_rows(content)}
    recall_c = [column.id for column in board.columns].index("recall[c]")
    mcc = [column.id for column in board.columns].index("mcc")
    assert {name for name, cells in rows.items() if cells[recall_c].startswith("\\textbf")} == {
        "Perfect",
        "Twin A",
        "Twin B",
        latex_escape(ODD_NAME),
    }
    assert rows["Twin A"] == rows["Twin B"]
    assert rows["Always A"][mcc] == "\\emph{undefined}"


def test_calibrated_columns_and_the_sort_follow_the_query(client, tex_task):
    content = client.get(tex_url(tex_task, "?calibrated=1&sort=recall[a]_c")).content.decode()
    board = leaderboard(phase=tex_task.current_phase(), calibrated=True, sort="recall[a]_c")
    assert all(column.calibrated for column in board.columns)
    assert header_cells(content)[1:] == [column_header(column) for column in board.columns]
    assert all(cell.endswith("$_c$") for cell in header_cells(content)[1:])
    assert [row[0] for row in body_rows(content)] == [latex_escape(entry.name) for entry in board.scored]
    assert body_rows(content)[0][0] in {"Always A", "Perfect"}  # recall of a = 1 for both


def test_team_names_are_escaped(client, tex_task):
    content = client.get(tex_url(tex_task)).content.decode()
    escaped = "R\\&D\\_\\#1 \\{50\\%\\} \\textasciitilde{}\\textasciicircum{}\\textbackslash{}"
    assert escaped in [row[0] for row in body_rows(content)]
    assert ODD_NAME not in content


def test_hidden_board_is_refused_to_a_participant_and_shown_to_the_organiser(
    client, make_task, make_user, organiser, submit
):
    task = make_task(visibility=Phase.Visibility.AFTER_CLOSE)
    member = make_user("member")
    team_create(task=task, user=member, name="Team One")
    submit(task, member, prediction_file(PREDICTIONS["Twin A"]))

    response = client.get(tex_url(task))
    assert response.status_code == 403
    assert "hidden until" in response.content.decode()

    client.force_login(member)
    response = client.get(tex_url(task))
    assert response.status_code == 403
    assert "\\toprule" not in response.content.decode()

    client.force_login(organiser)
    response = client.get(tex_url(task))
    assert response.status_code == 200
    assert [row[0] for row in body_rows(response.content.decode())] == ["Team One"]


def test_unknown_task_is_404_and_writes_are_refused(client, tex_task):
    assert client.get(reverse("leaderboard:leaderboard_tex", args=["no-such-task"])).status_code == 404
    assert client.post(tex_url(tex_task)).status_code == 405


def test_empty_board_downloads_an_empty_table(client, make_task):
    task = make_task()
    response = client.get(tex_url(task))
    assert response.status_code == 200
    assert body_rows(response.content.decode()) == []


@pytest.mark.parametrize(
    ("query", "expected"), [("", "?sort=macro_f1"), ("?calibrated=1", "?calibrated=1&sort=macro_f1_c")]
)
def test_the_page_links_to_the_download_with_its_switch_and_sort(client, tex_task, query, expected):
    page = client.get(reverse("leaderboard:leaderboard", args=[tex_task.slug]) + query).content.decode()
    links = [html.unescape(href) for href in re.findall(r'<a class="download" href="([^"]+)"[^>]*>LaTeX</a>', page)]
    assert links == [phase_tex_url(tex_task, expected)]
    assert client.get(links[0]).content == client.get(tex_url(tex_task, expected)).content
    csv_link = page.index(">CSV</a>")
    assert csv_link < page.index(">JSON</a>") < page.index(">LaTeX</a>")
