"""A shared task run whole in headless Chromium, as its organiser and a newcomer would.

The organiser creates a task whose first phase is a development phase, adds an evaluation
phase and attaches a data file to each; a newcomer signs up with an e-mail address from the
task page and lands back on it, forms a team, downloads the data file and the sample
submission, uploads the sample, is told that it was scored (a note on the site and an e-mail),
and sees the counting mark and the quota. The organiser then switches the phases over; the team
uploads to the evaluation phase; the organiser disqualifies that submission with a reason, and
the evaluation board shows the reason. Every page is checked for console errors and failed
requests on the way.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.utils import timezone

from leaderboard.models import Phase, Submission, Task, TermsAcceptance
from leaderboard.services.tasks import task_create
from tests.browser.support import PASSWORD, Browser, local
from tools.processes import CHROMIUM

if not Path(CHROMIUM).exists() and os.environ.get("CI") != "true":
    pytest.skip(f"browser tests need Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


SLUG = "walk"
LABELS = ["neg", "neu", "pos"]
DEV_GOLD = b"id,label\n" + b"".join(f"d{i},{LABELS[i % 3]}\n".encode() for i in range(30))
TEST_GOLD = b"id,label\n" + b"".join(f"t{i},{LABELS[(i * 7) % 3]}\n".encode() for i in range(60))


@pytest.fixture
def people(chromium, live_server):
    get_user_model().objects.create_user("organiser", "organiser@example.org", PASSWORD)
    organiser, newcomer = Browser(chromium, live_server.url), Browser(chromium, live_server.url)
    yield organiser, newcomer
    organiser.context.close()
    newcomer.context.close()


def create_task(organiser: Browser, tmp_path: Path, now: dt.datetime) -> None:
    """The organiser hosts a task (its development phase first), adds the evaluation phase, and
    attaches the inputs to label to each."""
    organiser.login("organiser")
    organiser.open("/tasks/new/")
    gold = tmp_path / "dev-gold.csv"
    gold.write_bytes(DEV_GOLD)
    page = organiser.page
    page.fill("input[name=title]", "Walk-through sentiment")
    page.fill("input[name=slug]", SLUG)
    page.fill("textarea[name=labels]", ", ".join(LABELS))
    page.select_option("select[name=primary_metric]", "macro_recall")
    page.fill("input[name=phase_name]", "Development")
    page.fill("input[name=phase_slug]", "dev")
    page.set_input_files("input[name=gold]", str(gold))
    page.fill("input[name=opens_at]", local(now - dt.timedelta(hours=1)))
    page.fill("input[name=closes_at]", local(now + dt.timedelta(days=1)))
    page.select_option("select[name=visibility]", "public")
    organiser.submit()
    assert page.url.endswith(f"/tasks/{SLUG}/"), organiser.text()

    organiser.page.get_by_role("link", name="Add a phase").first.click()
    organiser.page.wait_for_load_state("load")
    gold = tmp_path / "test-gold.csv"
    gold.write_bytes(TEST_GOLD)
    page.fill("input[name=name]", "Evaluation")
    page.fill("input[name=slug]", "eval")
    page.set_input_files("input[name=gold]", str(gold))
    page.fill("input[name=opens_at]", local(now + dt.timedelta(days=2)))
    page.fill("input[name=closes_at]", local(now + dt.timedelta(days=9)))
    page.select_option("select[name=visibility]", "public")
    organiser.submit()
    assert "The phase “Evaluation” is added." in organiser.text()

    for phase, ids in (("dev", "d"), ("eval", "t")):
        organiser.open(f"/tasks/{SLUG}/phases/{phase}/files/")
        inputs = tmp_path / f"{phase}-inputs.csv"
        count = 30 if phase == "dev" else 60
        inputs.write_text("id\n" + "".join(f"{ids}{i}\n" for i in range(count)))
        page.fill("input[name=title]", f"{phase} inputs to label")
        page.set_input_files("input[name=file]", str(inputs))
        organiser.submit()
        assert f"{phase} inputs to label" in organiser.text()


def sign_up_and_form_a_team(newcomer: Browser) -> None:
    """From the task page: sign up (the link keeps ?next=), land back on the task, form a team."""
    newcomer.open(f"/tasks/{SLUG}/")
    newcomer.page.locator("main").get_by_role("link", name="sign up", exact=True).click()
    newcomer.page.wait_for_load_state("load")
    page = newcomer.page
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=email]", "newcomer@example.org")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    newcomer.submit()
    assert page.url.endswith(f"/tasks/{SLUG}/"), "the sign-up brings the newcomer back to the task"
    page.fill("input[name=name]", "Walkers")
    newcomer.submit("form[action$='/team/new/'] button[type=submit]")
    assert "You are in Walkers" in newcomer.text()


def test_a_shared_task_from_creation_to_a_disqualification(people, tmp_path):
    organiser, newcomer = people
    now = timezone.now()
    create_task(organiser, tmp_path, now)
    sign_up_and_form_a_team(newcomer)

    timeline = newcomer.page.locator(".timeline").inner_text().lower()  # the state tags are set in capitals
    assert "development" in timeline and "open now" in timeline
    assert "evaluation" in timeline and "to come" in timeline
    data = newcomer.download("dev inputs to label", tmp_path, phase="Development")
    assert data.read_text().splitlines()[:2] == ["id", "d0"]
    sample = newcomer.download("Sample submission, labels", tmp_path, phase="Development")
    assert sample.name == f"{SLUG}-dev-sample-labels.csv"
    assert len(sample.read_text().splitlines()) == 1 + 30
    assert {line.split(",")[1] for line in sample.read_text().splitlines()[1:]} <= set(LABELS)

    mail.outbox.clear()
    newcomer.page.set_input_files("input[name=file]", str(sample))
    newcomer.submit("form[action$='/submit/'] button[type=submit]")
    assert "/submissions/" in newcomer.page.url
    first_id = newcomer.page.url.rstrip("/").rsplit("/", 1)[1]  # not 1 after other browser tests' demos
    assert newcomer.page.locator("#submission-status").inner_text() == "scored"
    assert "Submission" in newcomer.text() and "Development phase" in newcomer.text()
    assert [message.to for message in mail.outbox] == [["newcomer@example.org"]]
    assert "Scored: submission #" in mail.outbox[0].body and "Development phase" in mail.outbox[0].body
    newcomer.open("/accounts/notifications/")
    assert "Scored: submission #" in newcomer.text()

    newcomer.open(f"/tasks/{SLUG}/")
    text = newcomer.text()
    assert f"#{first_id} counts" in newcomer.page.locator("table.table").first.inner_text().lower()
    assert "4 uploads left today" in text and "99 of 100 left in all" in text

    # The phases switch: development closes, evaluation opens.
    organiser.open(f"/tasks/{SLUG}/phases/eval/edit/")
    organiser.page.fill("input[name=opens_at]", local(now + dt.timedelta(minutes=1)))
    organiser.submit()
    assert "overlap" in organiser.text()  # the development phase still runs until tomorrow
    organiser.open(f"/tasks/{SLUG}/phases/dev/edit/")
    organiser.page.fill("input[name=closes_at]", local(now))
    organiser.submit()
    organiser.open(f"/tasks/{SLUG}/phases/eval/edit/")
    organiser.page.fill("input[name=opens_at]", local(now))
    organiser.submit()
    assert Task.objects.get(slug=SLUG).open_phase().slug == "eval"

    newcomer.open(f"/tasks/{SLUG}/")
    assert "Upload to the Evaluation phase" in newcomer.text()
    sample = newcomer.download("Sample submission, probabilities", tmp_path, phase="Evaluation")
    header, first, *_ = sample.read_text().splitlines()
    assert header == "id," + ",".join(LABELS)
    assert re.fullmatch(r"t\d+,0\.333333,0\.333333,0\.333334", first)  # ids in the sample's own order
    newcomer.page.set_input_files("input[name=file]", str(sample))
    newcomer.submit("form[action$='/submit/'] button[type=submit]")
    assert newcomer.page.locator("#submission-status").inner_text() == "scored"
    evaluation = Submission.objects.get(phase__slug="eval")
    assert evaluation.kind == Submission.Kind.SOFT

    organiser.open(f"/tasks/{SLUG}/submissions/?phase=eval")
    row = organiser.page.locator("tr", has_text=f"#{evaluation.pk}")
    row.locator("input[name=reason]").fill("uniform probabilities are not a system")
    with organiser.page.expect_navigation(wait_until="load"):
        row.get_by_role("button", name="Disqualify").click()
    assert f"Submission #{evaluation.pk} is disqualified." in organiser.text()

    newcomer.open(f"/tasks/{SLUG}/phases/eval/leaderboard/")
    assert "uniform probabilities are not a system" in newcomer.text()
    newcomer.open(f"/tasks/{SLUG}/phases/dev/leaderboard/")
    assert "Walkers" in newcomer.text()
    assert Phase.objects.filter(task__slug=SLUG).count() == 2
    assert organiser.problems == [] and newcomer.problems == []


def test_a_participant_registers_accepts_the_terms_and_is_approved(people, tmp_path):
    organiser, newcomer = people
    now = timezone.now()
    task = task_create(
        organiser=get_user_model().objects.get(username="organiser"),
        slug="gated",
        title="Gated sentiment",
        description="",
        labels=LABELS,
        gold_name="gold.csv",
        gold_content=DEV_GOLD,
        primary_metric="macro_recall",
        opens_at=now - dt.timedelta(hours=1),
        closes_at=now + dt.timedelta(days=3),
        registration=Task.Registration.APPROVAL,
        terms="The tweets are for research only.\nOne system description paper per team.",
    )
    newcomer.open(f"/tasks/{task.slug}/")
    newcomer.page.locator("main").get_by_role("link", name="sign up", exact=True).click()
    newcomer.page.wait_for_load_state("load")
    for field, value in (("username", "newcomer"), ("email", "newcomer@example.org")):
        newcomer.page.fill(f"input[name={field}]", value)
    newcomer.page.fill("input[name=password1]", PASSWORD)
    newcomer.page.fill("input[name=password2]", PASSWORD)
    newcomer.submit()
    text = newcomer.text()
    assert "Terms (version 1)" in text and "One system description paper per team." in text
    assert "Register for the task below to download its data" in text
    assert newcomer.page.locator("input[name=name]").count() == 0, "no team before approval"

    newcomer.page.check("input[name=accept_terms]")
    newcomer.submit("form[action$='/register/'] button[type=submit]")
    assert "waiting for the organisers' approval" in newcomer.text()

    organiser.login("organiser")
    organiser.open(f"/tasks/{task.slug}/registrations/")
    assert "1 waiting" in organiser.text() and "newcomer@example.org" in organiser.text()
    with organiser.page.expect_navigation(wait_until="load"):
        organiser.page.get_by_role("button", name="Approve").click()
    assert "The request of newcomer is approved." in organiser.text()

    newcomer.open(f"/tasks/{task.slug}/")
    sample = newcomer.download("Sample submission, labels", tmp_path, phase="Evaluation")
    assert len(sample.read_text().splitlines()) == 31
    newcomer.page.fill("input[name=name]", "Approved ones")
    newcomer.submit("form[action$='/team/new/'] button[type=submit]")
    assert "You are in Approved ones" in newcomer.text()
    newcomer.open("/accounts/notifications/")
    assert "is approved" in newcomer.text()
    acceptance = TermsAcceptance.objects.get(task=task)
    assert (acceptance.user.username, acceptance.version) == ("newcomer", 1)
    assert organiser.problems == [] and newcomer.problems == []
