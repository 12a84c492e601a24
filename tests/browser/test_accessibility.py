"""Every page passes axe-core with no serious or critical violation, as a visitor, a team member
and an organiser see it; a board sorts from the keyboard.

axe-core comes bundled with axe-playwright-python and runs inside headless Chromium on the
rendered page (charts drawn, scripts run)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leaderboard.management.commands.load_demo import SLUG
from leaderboard.models import Submission
from tests.browser.demo_pages import EVALUATION, MEMBER_PAGES, ORGANISER_PAGES, PUBLIC_PAGES, new_page
from tools.processes import CHROMIUM

if not Path(CHROMIUM).exists() and os.environ.get("CI") != "true":
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
axe_module = pytest.importorskip("axe_playwright_python.sync_playwright")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


BLOCKING = {"serious", "critical"}


def violations(page, base_url: str, paths: list[str]) -> list[str]:
    """The serious and critical axe-core findings on each page, one line per rule and page."""
    axe = axe_module.Axe()
    found = []
    for path in paths:
        response = page.goto(base_url + path, wait_until="load")
        assert response is not None and response.status == 200, path
        page.wait_for_timeout(300)  # charts are drawn after load
        for violation in axe.run(page).response["violations"]:
            if violation["impact"] in BLOCKING:
                targets = [node["target"] for node in violation["nodes"][:3]]
                found.append(f"{path}: {violation['id']} ({violation['impact']}) at {targets}")
    return found


def test_public_pages_have_no_serious_accessibility_violation(chromium, demo):
    for width in (1400, 390):
        context = chromium.new_context(viewport={"width": width, "height": 900})
        assert violations(context.new_page(), demo, PUBLIC_PAGES) == []
        context.close()


def test_team_and_organiser_pages_have_no_serious_accessibility_violation(chromium, demo):
    desktop = {"viewport": {"width": 1400, "height": 1000}}
    context, page = new_page(chromium, demo, "team-a", **desktop)
    submission = Submission.objects.filter(team__name="Team A", phase__slug="evaluation", phase__task__slug=SLUG).get()
    assert violations(page, demo, [*MEMBER_PAGES, submission.get_absolute_url()]) == []
    context.close()
    context, page = new_page(chromium, demo, "organiser", **desktop)
    assert violations(page, demo, ORGANISER_PAGES) == []
    context.close()


def test_a_board_sorts_from_the_keyboard(chromium, demo):
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(demo + f"{EVALUATION}/leaderboard/")
    link = page.locator("a.sort-link").nth(1)
    target = link.get_attribute("href")
    link.focus()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url.endswith(target)
    assert page.locator("th[aria-sort]").count() == 1
    context.close()
