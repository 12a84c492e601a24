"""On a phone (390 px wide, a fresh browser) no page is wider than the screen: anything wider
(the board, a long table, a heatmap with many columns) scrolls sideways in a container of its
own. Tried as a visitor, a team member and an organiser see the pages, with a team name and a
file name that have no place to break, as the demo does not.

Also what a phone needs of the board: a column's formula opens on a tap, a visitor's own row is
marked, and the team search filters the rows."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from leaderboard.management.commands.load_demo import DEMO_PASSWORD, ROOT_SLUG, SLUG
from leaderboard.models import Submission, Team
from leaderboard.services.submissions import submission_create
from leaderboard.services.tasks import phase_update, task_create
from leaderboard.services.teams import team_create
from tests.browser.demo_pages import EVALUATION, MEMBER_PAGES, ORGANISER_PAGES, PUBLIC_PAGES, new_page
from tools.processes import CHROMIUM

if not Path(CHROMIUM).exists() and os.environ.get("CI") != "true":
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


PHONE_PX = 390
LONG_TEAM_NAME = "TeamB_with_a_very_long_name_and_no_spaces_0123456789abcdef"
LONG_FILE_NAME = "predictions_of_team_a_final_run_with_the_tuned_thresholds_v2.csv"
WIDER_THAN_THE_SCREEN = """() => [...document.querySelectorAll("body *")]
    .filter(e => !e.closest(".table-scroll, .chart-scroll") && e.getBoundingClientRect().right > window.innerWidth + 1)
    .slice(0, 3).map(e => e.tagName + "." + (e.className.baseVal ?? e.className))"""


@pytest.fixture
def demo(live_server):
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    team = Team.objects.get(name="Team B", task__slug=ROOT_SLUG)
    team.name = LONG_TEAM_NAME
    team.save()
    submission = Submission.objects.filter(team__name="Team A", phase__slug="evaluation", phase__task__slug=SLUG).get()
    submission.file.name = LONG_FILE_NAME
    submission.file.save(update_fields=["name"])
    return live_server.url


def phone(chromium, base_url: str, username: str | None = None):
    """A phone's browser (390 px, touch), logged in as ``username`` when given."""
    return new_page(
        chromium, base_url, username, viewport={"width": PHONE_PX, "height": 844}, has_touch=True, is_mobile=True
    )


def too_wide(page, base_url: str, paths: list[str]) -> list[str]:
    """Each page wider than the phone: its width and the first elements that stick out."""
    found = []
    for path in paths:
        response = page.goto(base_url + path, wait_until="load")
        assert response is not None and response.status == 200, path
        page.wait_for_timeout(300)  # charts are drawn after load
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE_PX:
            found.append(f"{path}: {width} px, {page.evaluate(WIDER_THAN_THE_SCREEN)}")
    return found


def test_no_page_is_wider_than_a_phone(chromium, demo):
    context, page = phone(chromium, demo)
    assert too_wide(page, demo, PUBLIC_PAGES) == []
    context.close()
    context, page = phone(chromium, demo, "team-a")
    submission = Submission.objects.filter(team__name="Team A", phase__slug="evaluation", phase__task__slug=SLUG).get()
    assert too_wide(page, demo, [*MEMBER_PAGES, submission.get_absolute_url()]) == []
    context.close()
    context, page = phone(chromium, demo, "organiser")
    assert too_wide(page, demo, [*ORGANISER_PAGES, submission.get_absolute_url()]) == []
    context.close()


def test_the_board_on_a_phone(chromium, demo):
    context, page = phone(chromium, demo, "team-a")
    page.goto(demo + f"{EVALUATION}/leaderboard/", wait_until="load")
    mine = page.locator("tr.mine")
    assert mine.count() == 1 and "Team A" in mine.locator("th").inner_text()

    info = page.locator("button.col-info").first
    box = info.bounding_box()
    assert box is not None and box["width"] >= 24 and box["height"] >= 24
    tip = page.locator(f"#{info.get_attribute('aria-describedby')}")
    assert not tip.is_visible()
    info.tap()
    assert tip.is_visible() and ":" in tip.inner_text()
    page.locator("h1").tap()
    assert not tip.is_visible()

    page.fill("#team-filter", "team h")
    with page.expect_navigation():
        page.locator(".board-search button[type=submit]").tap()
    found = page.locator("tbody:not(.my-team) tr.team-row")
    assert found.count() == 1 and "Team H" in found.locator("th").inner_text()
    assert page.locator(".paging-summary").inner_text().startswith("1 team whose name holds “team h”")
    assert page.locator("tbody.my-team tr.mine").count() == 1  # one's own team stays in sight
    with page.expect_navigation():
        page.get_by_role("link", name="Jump to my team").tap()
    assert page.evaluate("document.querySelector(':target').classList.contains('mine')")
    context.close()


def test_the_heatmap_on_a_phone_drops_cell_values_and_shows_a_tapped_one(chromium, demo):
    context, page = phone(chromium, demo)
    page.goto(demo + f"{EVALUATION}/disagreements/", wait_until="load")
    page.wait_for_function("document.querySelector('#correlation-heatmap .main-svg') !== null")
    assert page.locator("#correlation-heatmap .heatmaplayer text").count() == 0  # no value printed in a cell
    page.locator("#correlation-heatmap").scroll_into_view_if_needed()
    cells = page.locator("#correlation-heatmap .nsewdrag").bounding_box()
    assert cells is not None
    page.touchscreen.tap(cells["x"] + 5, cells["y"] + 5)
    page.wait_for_function("document.getElementById('correlation-heatmap-value').textContent.includes('ρ =')")
    assert page.locator("#correlation-heatmap g.xtick text").nth(1).text_content() == "macR cal."  # said in words
    context.close()


def test_a_split_phase_and_its_shake_up_fit_a_phone(chromium, demo):
    """A closed phase whose test set was split: its board, shake-up and task page."""
    organiser = get_user_model().objects.get(username="organiser")
    labels = ["neg", "neu", "pos"]
    rng = np.random.default_rng(3)
    gold = rng.integers(0, 3, size=200)

    def as_csv(codes) -> bytes:
        return ("id,label\n" + "".join(f"i{k},{labels[c]}\n" for k, c in enumerate(codes))).encode()

    now = timezone.now()
    task = task_create(
        organiser=organiser,
        slug="split-task",
        title="Stance with a split test set",
        description="",
        labels=labels,
        gold_name="gold.csv",
        gold_content=as_csv(gold),
        primary_metric="macro_f1",
        opens_at=now - dt.timedelta(days=2),
        closes_at=now + dt.timedelta(days=1),
        private_percent=50,
    )
    for n in range(4):
        user = get_user_model().objects.create_user(f"split{n}", password=DEMO_PASSWORD)
        team_create(task=task, user=user, name=f"A system with a long name {n}")
        wrong = rng.random(200) < 0.3 + 0.05 * n
        predicted = np.where(wrong, rng.integers(0, 3, size=200), gold)
        submission_create(task=task, user=user, name="run.csv", content=as_csv(predicted))
    phase_update(phase=task.current_phase(), settings={"closes_at": now - dt.timedelta(minutes=1)})
    phase = f"/tasks/{task.slug}/phases/evaluation"
    context, page = phone(chromium, demo)
    assert too_wide(page, demo, [f"/tasks/{task.slug}/", f"{phase}/leaderboard/", f"{phase}/shake-up/"]) == []
    context.close()
