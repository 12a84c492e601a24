"""A task divided into two subtasks, walked in headless Chromium: the organiser creates the task
and its subtasks through the pages (subtask B taking a contrastive run); a newcomer registers
once, accepting the task's terms, forms one team on subtask A's page, finds it on subtask B's,
uploads to both, marks a second run of B as contrastive, and every page names the right subtask:
the boards (B's with the contrastive run under the team, unranked), the task's page with each
subtask's leader, the CSV download, the API. No page has a console error or a failed request."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from leaderboard.models import Submission, Task
from tests.browser.support import PASSWORD, Browser, local
from tools.processes import CHROMIUM

if not Path(CHROMIUM).exists() and os.environ.get("CI") != "true":
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

A_GOLD = b"id,label\n" + b"".join(f"a{i},{('neg', 'neu', 'pos')[i % 3]}\n".encode() for i in range(30))
B_GOLD = b"id,label\n" + b"".join(f"b{i},{('neg', 'pos')[i % 2]}\n".encode() for i in range(20))


def add_subtask(
    organiser: Browser,
    tmp_path: Path,
    now: dt.datetime,
    *,
    title: str,
    slug: str,
    labels: str,
    gold: bytes,
    contrastive: int = 0,
) -> None:
    organiser.open("/tasks/t4/")
    with organiser.page.expect_navigation(wait_until="load"):
        organiser.page.get_by_role("link", name="Add a subtask").click()
    page = organiser.page
    path = tmp_path / f"{slug}-gold.csv"
    path.write_bytes(gold)
    page.fill("input[name=title]", title)
    page.fill("input[name=slug]", slug)
    page.fill("textarea[name=labels]", labels)
    page.select_option("select[name=primary_metric]", "macro_recall")
    page.set_input_files("input[name=gold]", str(path))
    page.fill("input[name=opens_at]", local(now - dt.timedelta(hours=1)))
    page.fill("input[name=closes_at]", local(now + dt.timedelta(days=2)))
    page.select_option("select[name=visibility]", "public")
    if contrastive:
        page.select_option("select[name=counting]", "chosen")
        page.fill("input[name=contrastive_runs]", str(contrastive))
    assert page.locator("input[name=terms], textarea[name=terms]").count() == 0  # the parent's
    organiser.submit()
    assert page.url.endswith(f"/tasks/{slug}/"), organiser.text()
    assert f"The subtask “{title}” of “Task 4” is created." in organiser.text()


def upload(newcomer: Browser, slug: str, content: str, tmp_path: Path, name: str, mark: str | None = None) -> int:
    newcomer.open(f"/tasks/{slug}/")
    path = tmp_path / name
    path.write_text(content)
    newcomer.page.set_input_files("input[name=file]", str(path))
    if mark:
        newcomer.page.select_option("select[name=mark]", label=mark)
    newcomer.submit("form[action$='/submit/'] button[type=submit]")
    assert "/submissions/" in newcomer.page.url, newcomer.text()
    return int(newcomer.page.url.rstrip("/").rsplit("/", 1)[1])


def test_a_task_of_two_subtasks_with_one_team_and_a_contrastive_run(chromium, live_server, tmp_path):
    get_user_model().objects.create_user("organiser", "organiser@example.org", PASSWORD)
    get_user_model().objects.create_user("newcomer", "newcomer@example.org", PASSWORD)
    organiser, newcomer = Browser(chromium, live_server.url), Browser(chromium, live_server.url)
    now = timezone.now()

    organiser.login("organiser")
    organiser.open("/tasks/new/")
    with organiser.page.expect_navigation(wait_until="load"):
        organiser.page.get_by_role("link", name="Several subtasks with one registration and one set of teams?").click()
    organiser.page.fill("input[name=title]", "Task 4")
    organiser.page.fill("input[name=slug]", "t4")
    organiser.page.fill("textarea[name=terms]", "Research use only.")
    organiser.submit()
    assert organiser.page.url.endswith("/tasks/t4/") and "No subtask yet" in organiser.text()
    add_subtask(organiser, tmp_path, now, title="Subtask A", slug="t4a", labels="neg, neu, pos", gold=A_GOLD)
    add_subtask(organiser, tmp_path, now, title="Subtask B", slug="t4b", labels="neg, pos", gold=B_GOLD, contrastive=1)

    newcomer.login("newcomer")
    newcomer.open("/tasks/t4a/")
    assert "Research use only." in newcomer.text()  # the parent's terms, on the subtask's page
    newcomer.page.check("input[name=accept_terms]")
    newcomer.submit("form[action$='/register/'] button[type=submit]")
    newcomer.open("/tasks/t4a/")
    newcomer.page.fill("input[name=name]", "Walkers")
    newcomer.submit("form[action$='/team/new/'] button[type=submit]")
    assert "You are in Walkers" in newcomer.text()
    newcomer.open("/tasks/t4b/")
    assert "You are in Walkers" in newcomer.text() and "Research use only." not in newcomer.text()

    a_run = "id,label\n" + "".join(f"a{i},{('neg', 'neu', 'pos')[i % 3]}\n" for i in range(30))
    upload(newcomer, "t4a", a_run, tmp_path, "a.csv")
    b_primary = "id,label\n" + "".join(f"b{i},{('neg', 'pos')[i % 2]}\n" for i in range(20))
    b_other = "id,label\n" + "".join(f"b{i},neg\n" for i in range(20))
    primary = upload(newcomer, "t4b", b_primary, tmp_path, "b1.csv")
    contrastive = upload(newcomer, "t4b", b_other, tmp_path, "b2.csv", mark="contrastive run 1")
    assert "Contrastive run 1 of its team" in newcomer.text()
    assert (Submission.objects.get(pk=primary).run_mark, Submission.objects.get(pk=contrastive).run_mark) == (
        "primary",
        "contrastive-1",
    )

    newcomer.open("/tasks/t4b/leaderboard/")
    assert newcomer.page.locator("nav.breadcrumbs").inner_text() == "Tasks › Task 4 › Subtask B › Evaluation"
    assert newcomer.page.locator("h1").inner_text() == "Subtask B"
    rows = newcomer.page.locator("#leaderboard-table tbody:not(.my-team) tr")
    assert rows.nth(0).locator("th").inner_text().startswith("Walkers")
    assert "contrastive run 1, not ranked" in rows.nth(1).inner_text()
    with newcomer.page.expect_download() as info:
        newcomer.page.get_by_role("link", name="CSV").click()
    table = list(csv.DictReader(io.StringIO(Path(info.value.path()).read_text())))
    assert [(row["team"], row["kind"], row["macro_recall rank"]) for row in table if row["kind"] != "baseline"] == [
        ("Walkers", "team", "1"),
        ("Walkers", "contrastive", ""),
    ]
    newcomer.open("/tasks/t4a/leaderboard/")
    assert newcomer.page.locator("nav.breadcrumbs").inner_text() == "Tasks › Task 4 › Subtask A › Evaluation"
    assert "contrastive" not in newcomer.text()

    newcomer.open("/tasks/t4/")
    subtasks = newcomer.page.locator("table.subtasks tbody tr")
    assert subtasks.count() == 2
    assert "Subtask A" in subtasks.nth(0).inner_text() and "Walkers" in subtasks.nth(0).inner_text()
    assert "Subtask B" in subtasks.nth(1).inner_text() and "Walkers" in subtasks.nth(1).inner_text()
    listed = {task["slug"]: task["parent"] for task in newcomer.page.request.get(live_server.url + "/api/tasks").json()}
    assert listed == {"t4": None, "t4a": "t4", "t4b": "t4"}
    assert Task.objects.get(slug="t4").community.teams.count() == 1
    assert organiser.problems == [] and newcomer.problems == []
    organiser.context.close()
    newcomer.context.close()
