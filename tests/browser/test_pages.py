"""Pages render in headless Chromium without console errors, and a newcomer can take part.

Drives Debian's Chromium (/usr/bin/chromium) through Playwright against the live test server,
with the demo task loaded (both its phases are closed, so the newcomer takes part in an open
task of their own). Skipped with a reason where Chromium is missing, except on CI.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from leaderboard.management.commands.load_demo import DEMO_PASSWORD, SLUG
from leaderboard.models import Submission
from leaderboard.services.submissions import submission_create
from leaderboard.services.tasks import task_create
from leaderboard.services.teams import team_create
from tools.processes import CHROMIUM

if not Path(CHROMIUM).exists() and os.environ.get("CI") != "true":
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


class Page:
    """A browser page that records console errors, uncaught exceptions and failed requests."""

    def __init__(self, browser, base_url: str) -> None:
        self.base_url = base_url
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000})
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"{r.status} for {r.url}"))

    def open(self, path: str) -> None:
        response = self.page.goto(self.base_url + path, wait_until="load")
        assert response is not None and response.status == 200, f"{path}: {response and response.status}"

    def login(self, username: str, password: str) -> None:
        self.open("/accounts/login/")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", password)
        self.page.click("main button[type=submit]")
        self.page.wait_for_load_state("load")


@pytest.fixture
def page(chromium, demo):
    page = Page(chromium, demo)
    yield page
    page.context.close()


def test_every_page_renders_without_console_errors(page):
    for path in [
        "/",
        f"/tasks/{SLUG}/",
        f"/tasks/{SLUG}/leaderboard/",
        f"/tasks/{SLUG}/leaderboard/?calibrated=1&sort=kappa_c",
        f"/tasks/{SLUG}/metrics/macro_recall/",
        f"/tasks/{SLUG}/metrics/recall[neutral]_c/",
        f"/tasks/{SLUG}/disagreements/",
        f"/tasks/{SLUG}/disagreements/?set=all&a=kappa_c&b=macro_recall",
        f"/tasks/{SLUG}/phases/development/leaderboard/",
        f"/tasks/{SLUG}/phases/development/metrics/macro_recall/",
        f"/tasks/{SLUG}/phases/development/disagreements/",
        f"/tasks/{SLUG}/phases/evaluation/leaderboard/?calibrated=1",
        "/accounts/login/",
        "/accounts/signup/",
    ]:
        page.open(path)
    page.open(f"/tasks/{SLUG}/disagreements/")
    page.page.wait_for_selector(".js-plotly-plot .heatmaplayer", timeout=20_000)
    assert page.page.locator(".js-plotly-plot").count() >= 2
    page.login("team-a", DEMO_PASSWORD)
    submission = Submission.objects.get(team__name="Team A", phase__slug="evaluation", phase__task__slug=SLUG)
    page.open(submission.get_absolute_url())
    page.page.wait_for_selector("#confusion-raw .heatmaplayer", timeout=20_000)
    page.page.wait_for_selector("#confusion-calibrated .heatmaplayer", timeout=20_000)
    assert page.problems == []


OPEN_SLUG = "open-task"
OPEN_LABELS = ["neg", "neu", "pos"]
OPEN_GOLD = b"id,label\n" + b"".join(f"item-{i},{OPEN_LABELS[(i // 2) % 3]}\n".encode() for i in range(30))
"""Gold labels in pairs, so that the sample file (cycling through the labels) gets some right, not all."""
RIVALS = 8


@pytest.fixture
def open_task(demo):
    """An open task with a public board where eight teams uploaded the gold labels (they tie first)."""
    user_model = get_user_model()
    now = timezone.now()
    task = task_create(
        organiser=user_model.objects.create_user("open-organiser", password=DEMO_PASSWORD),
        slug=OPEN_SLUG,
        title="An open task",
        description="",
        labels=OPEN_LABELS,
        gold_name="gold.csv",
        gold_content=OPEN_GOLD,
        primary_metric="macro_recall",
        opens_at=now - dt.timedelta(days=1),
        closes_at=now + dt.timedelta(days=7),
    )
    for n in range(RIVALS):
        rival = user_model.objects.create_user(f"rival-{n}", password=DEMO_PASSWORD)
        team_create(task=task, user=rival, name=f"Rival {n}")
        submission_create(task=task, user=rival, name="gold.csv", content=OPEN_GOLD)  # scored on commit
    assert Submission.objects.filter(phase__task=task, status=Submission.Status.SCORED).count() == RIVALS
    return task


def test_a_newcomer_signs_up_forms_a_team_uploads_and_is_ranked(page, open_task, tmp_path):
    sample = tmp_path / "sample-labels.csv"
    sample_url = reverse("leaderboard:sample_download", args=[OPEN_SLUG, "evaluation", "labels"])
    sample.write_bytes(page.page.request.get(page.base_url + sample_url).body())
    page.open("/accounts/signup/")
    page.page.fill("input[name=username]", "newcomer")
    page.page.fill("input[name=email]", "newcomer@example.org")
    page.page.fill("input[name=password1]", "a-long-and-unusual-passphrase")
    page.page.fill("input[name=password2]", "a-long-and-unusual-passphrase")
    page.page.click("main button[type=submit]")
    page.page.wait_for_load_state("load")
    page.open(f"/tasks/{OPEN_SLUG}/")
    page.page.fill("input[name=name]", "Newcomers")
    page.page.click("form[action$='/team/new/'] button[type=submit]")
    page.page.wait_for_load_state("load")
    assert "Newcomers" in page.page.content()
    upload_button = page.page.locator("form[action$='/submit/'] button[type=submit]").inner_text()
    assert upload_button == "Upload to the Evaluation phase and score"
    page.page.set_input_files("input[name=file]", str(sample))
    page.page.click("form[action$='/submit/'] button[type=submit]")
    page.page.wait_for_load_state("load")
    assert "/submissions/" in page.page.url
    status = page.page.locator("#submission-status").inner_text()
    assert status == "scored"
    body = page.page.content()
    assert "F1 of averages" in body and "Every metric" in body
    ranks = page.page.locator("table.table tbody tr td.num").all_inner_texts()
    assert any(text.strip() == str(RIVALS + 1) for text in ranks), "the newcomer is ranked after the eight rivals"
    page.open(f"/tasks/{OPEN_SLUG}/leaderboard/")
    assert "Newcomers" in page.page.content()
    assert page.problems == []
