"""The disagreement page's figures as files: the heatmap and the rank chart as standalone HTML
(plotly.js inlined, nothing loaded from anywhere), with the page's visibility and its column
sets; and the page's PNG/SVG controls (drawn by charts.js, checked in tests/browser).
"""

from __future__ import annotations

import gzip
import html
import io
import json
import re
from pathlib import Path

import brotli
import plotly.offline
import pytest
from django.core.management import call_command
from django.urls import reverse

from leaderboard import charts
from leaderboard.management.commands.load_demo import SLUG
from leaderboard.models import Phase, Task
from leaderboard.pages import disagreements as disagreements_page
from leaderboard.selectors.boards import paired_columns
from leaderboard.services.teams import team_create
from tests.leaderboard.support import embedded_figure, prediction_file
from tools.processes import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.django_db

FIGURES = {
    "heatmap": ("disagreement_heatmap", "correlation-heatmap-data"),
    "rank-chart": ("disagreement_rank_chart", "rank-lines-data"),
}
"""Figure name → (URL name of its download, id of its JSON on the page)."""
TEAMS = {"Perfect": "a b c a b c a a", "Majority": "a b a a a a a a", "<script>alert(1)</script>": "b b c c b c b c"}


@pytest.fixture
def figure_task(make_task, make_user, submit):
    def make(**options) -> Task:
        task = make_task(**options)
        for index, (name, labels) in enumerate(TEAMS.items()):
            user = make_user(f"member{index}")
            team_create(task=task, user=user, name=name)
            submit(task, user, prediction_file(labels))
        return task

    return make


def download_url(task: Task, figure: str) -> str:
    """The download of the task's current phase's figure."""
    return reverse(f"leaderboard:{FIGURES[figure][0]}", args=[task.slug])


def phase_download_url(task: Task, figure: str) -> str:
    """The same download under the phase's own address, as the page links to it."""
    return reverse(f"leaderboard:{FIGURES[figure][0]}", args=[task.slug, task.current_phase().slug])


def plotted_figure(page: str) -> dict:
    """The data and layout that the standalone page hands to ``Plotly.newPlot``."""
    start = page.rindex("Plotly.newPlot(")
    decoder = json.JSONDecoder()
    position = page.index(",", start) + 1  # after the div's id
    arguments = []
    for _ in range(2):
        while page[position] in " \n,":
            position += 1
        value, position = decoder.raw_decode(page, position)
        arguments.append(value)
    return {"data": arguments[0], "layout": arguments[1]}


@pytest.mark.parametrize("figure", FIGURES)
@pytest.mark.parametrize("set_name", ["paper", "all"])
def test_download_holds_the_pages_figure_for_its_column_set(client, figure_task, figure, set_name):
    task = figure_task()
    response = client.get(download_url(task, figure), {"set": set_name})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="toy-evaluation-{figure}-{set_name}.html"'
    page = response.content.decode()
    on_page = embedded_figure(
        client.get(reverse("leaderboard:disagreements", args=[task.slug]), {"set": set_name}).content.decode(),
        FIGURES[figure][1],
    )
    assert plotted_figure(page)["data"] == on_page["data"]
    columns = paired_columns(task, paper_set=set_name == "paper")
    assert plotted_figure(page)["data"][0]["x"] == [charts.axis_label(column) for column in columns]
    heading = html.escape(disagreements_page.DISAGREEMENT_FIGURES[figure][1])
    assert f"<title>{heading} · Task toy · Evaluation</title>" in page
    by_phase = client.get(phase_download_url(task, figure), {"set": set_name}).content.decode()
    assert plotted_figure(by_phase) == plotted_figure(page)


def test_rank_chart_has_a_line_per_team_and_the_heatmap_a_row_per_column(client, figure_task):
    task = figure_task()
    rank_chart = plotted_figure(client.get(download_url(task, "rank-chart")).content.decode())
    assert {trace["name"] for trace in rank_chart["data"]} == {
        "Perfect",
        "Majority",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
    }
    heatmap = plotted_figure(client.get(download_url(task, "heatmap"), {"set": "all"}).content.decode())
    assert len(heatmap["data"][0]["z"]) == len(paired_columns(task))


def test_download_works_offline_with_plotly_inlined(client, figure_task):
    task = figure_task()
    for figure in FIGURES:
        page = client.get(download_url(task, figure)).content.decode()
        bundle = plotly.offline.get_plotlyjs()
        assert bundle in page  # the pinned package's plotly.js, the one the site serves
        scripts = re.findall(r"<script\b[^>]*>", page)
        assert scripts and all("src" not in tag for tag in scripts)
        around_the_bundle = page.replace(bundle, "")
        assert "http" not in around_the_bundle and "cdn" not in around_the_bundle.lower()
        assert not re.search(r"<link\b|@import|url\(", around_the_bundle)


def test_the_file_is_written_and_compressed_once_for_everyone_in_the_encoding_asked_for(
    client, figure_task, make_user, submit, monkeypatch
):
    task = figure_task()
    url = download_url(task, "heatmap")
    written = []
    standalone_html = charts.standalone_html
    monkeypatch.setattr(charts, "standalone_html", lambda *a, **k: written.append(1) or standalone_html(*a, **k))
    plain = client.get(url)
    assert "Content-Encoding" not in plain and plain["Vary"] == "Accept-Encoding"
    assert plotly.offline.get_plotlyjs() in plain.content.decode()
    for accepted, encoding, decompress in (
        ("gzip, deflate, br, zstd", "br", brotli.decompress),
        ("gzip, deflate", "gzip", gzip.decompress),
        ("br;q=0, gzip", "gzip", gzip.decompress),
    ):
        response = client.get(url, HTTP_ACCEPT_ENCODING=accepted)
        assert response["Content-Encoding"] == encoding
        assert decompress(response.content) == plain.content
        assert len(response.content) < len(plain.content) / 3
    assert len(written) == 3  # once for each encoding: the third asks for gzip again
    client.force_login(make_user("reader"))
    assert brotli.decompress(client.get(url, HTTP_ACCEPT_ENCODING="br").content) == plain.content
    assert len(written) == 3  # a logged-in reader gets the same file
    user = make_user("late")
    team_create(task=task, user=user, name="Late")
    submit(task, user, prediction_file("a a a a a a a a"))
    assert brotli.decompress(client.get(url, HTTP_ACCEPT_ENCODING="br").content) != plain.content
    assert len(written) == 4  # a new score, a new figure: a new file


def test_a_team_name_cannot_break_out_of_the_figure(client, figure_task):
    task = figure_task()
    page = client.get(download_url(task, "rank-chart")).content.decode()
    assert "<script>alert(1)" not in page.replace(plotly.offline.get_plotlyjs(), "")


def test_an_unknown_set_is_the_default_set(client, figure_task):
    task = figure_task()
    response = client.get(download_url(task, "heatmap"), {"set": "nonsense"})
    assert response["Content-Disposition"] == 'attachment; filename="toy-evaluation-heatmap-paper.html"'


@pytest.mark.parametrize("figure", FIGURES)
def test_hidden_board_refuses_a_participant_and_serves_the_organiser(client, figure_task, organiser, figure):
    task = figure_task(visibility=Phase.Visibility.AFTER_CLOSE)
    assert client.get(download_url(task, figure)).status_code == 403
    client.force_login(task.community.teams.get(name="Perfect").members.get())
    response = client.get(download_url(task, figure))
    assert response.status_code == 403
    assert "hidden until" in response.content.decode()
    client.force_login(organiser)
    assert client.get(download_url(task, figure)).status_code == 200


def test_only_get_and_head_and_known_tasks(client, figure_task):
    task = figure_task()
    assert client.post(download_url(task, "heatmap")).status_code == 405
    assert client.get(reverse("leaderboard:disagreement_heatmap", args=["no-such-task"])).status_code == 404


def test_page_links_each_figure_to_its_download_and_names_its_images(client, figure_task):
    task = figure_task()
    page = client.get(reverse("leaderboard:disagreements", args=[task.slug]), {"set": "all"}).content.decode()
    assert f'href="{phase_download_url(task, "heatmap")}?set=all"' in page
    assert f'href="{phase_download_url(task, "rank-chart")}?set=all"' in page
    assert 'data-filename="toy-evaluation-heatmap-all"' in page
    assert 'data-filename="toy-evaluation-rank-chart-all"' in page
    assert 'data-image-downloads="correlation-heatmap"' in page and 'data-image-downloads="rank-lines"' in page
    assert len(re.findall(r'data-download-format="svg"', page)) == 2


# --- PNG and SVG from the page, in the browser ---------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"needs Chromium at {CHROMIUM}")
def test_page_downloads_each_figure_as_png_and_svg(live_server):
    sync_api = pytest.importorskip("playwright.sync_api")
    call_command("load_demo", stdout=io.StringIO())
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(accept_downloads=True).new_page()
            page.goto(f"{live_server.url}/tasks/{SLUG}/disagreements/?set=all", wait_until="domcontentloaded")
            page.wait_for_selector("#correlation-heatmap .heatmaplayer", timeout=30_000)
            assert page.locator("#correlation-heatmap [data-title='Download plot as an SVG']").count() == 1
            for chart, stem in (("correlation-heatmap", "heatmap"), ("rank-lines", "rank-chart")):
                buttons = page.locator(f'[data-image-downloads="{chart}"]')
                buttons.wait_for(state="visible", timeout=30_000)
                for image_format in ("png", "svg"):
                    with page.expect_download(timeout=30_000) as download_info:
                        buttons.locator(f'[data-download-format="{image_format}"]').click()
                    download = download_info.value
                    assert download.suggested_filename == f"{SLUG}-evaluation-{stem}-all.{image_format}"
                    content = Path(download.path()).read_bytes()
                    assert content.startswith(b"\x89PNG" if image_format == "png" else b"<svg")
        finally:
            browser.close()
