"""A web process is ready before its first request (leaderboard/startup.py, run by config/wsgi.py
as runserver and gunicorn load the application): in a fresh process, reading every results page,
download and API answer after that imports no module, so no visitor waits for an import (the
first disagreement page once waited 2 s for scipy.stats, and plotly loaded a trace type's
classes on the first figure of each kind)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard.startup import COLLECTOR_THRESHOLDS

REPO = Path(__file__).resolve().parents[2]

FRESH_PROCESS = """
import os, sys, tempfile
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ["DATABASE_URL"] = "sqlite:///" + tempfile.mkdtemp() + "/pages.sqlite3"
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from django.utils import timezone
from leaderboard.services.submissions import submission_create
from leaderboard.services.tasks import task_create
from leaderboard.services.teams import team_create
users = get_user_model().objects
now = timezone.now()
gold = "id,label\\n" + "".join(f"{i},{'abc'[i % 3]}\\n" for i in range(30))
task = task_create(organiser=users.create_user("o"), slug="t", title="t", description="", labels=["a", "b", "c"],
    gold_name="g.csv", gold_content=gold.encode(), primary_metric="macro_f1",
    opens_at=now - timezone.timedelta(days=1), closes_at=now + timezone.timedelta(days=1))
for n in range(3):
    member = users.create_user(f"m{n}")
    team_create(task=task, user=member, name=f"Team {n}")
    run = "id,label\\n" + "".join(f"{i},{'abc'[(i * (n + 1)) % 3]}\\n" for i in range(30))
    submission_create(task=task, user=member, name="r.csv", content=run.encode())
import config.wsgi  # what runserver and gunicorn load before their first request
import gc
frozen, walked = gc.get_freeze_count(), len(gc.get_objects())
from django.test import Client
before = set(sys.modules)
client = Client()
phase = "/tasks/t/phases/evaluation/"
pages = ["leaderboard/", "leaderboard/?calibrated=1", "metrics/kappa/", "disagreements/", "what-if/",
         "what-if/?target=0.2,0.3,0.5", "analysis/", "analysis.json", "analysis/kappa.html", "leaderboard.csv",
         "leaderboard.json", "leaderboard.tex", "/api/tasks/t/leaderboard", "/api/tasks/t/correlations",
         "/api/tasks/t/what-if?prevalence=0.2,0.3,0.5", "/tasks/t/"]
for page in pages:
    response = client.get(page if page.startswith("/") else phase + page)
    assert response.status_code == 200, (page, response.status_code)
    if getattr(response, "streaming", False):
        b"".join(response.streaming_content)
print(gc.get_threshold())
print(frozen, walked)
print(sorted(set(sys.modules) - before))
"""


@pytest.mark.embedded
def test_a_fresh_web_process_imports_nothing_on_its_first_pages():
    found = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS], capture_output=True, text=True, cwd=REPO, check=False, timeout=300
    )
    assert found.returncode == 0, found.stderr[-3000:]
    assert found.stdout.strip().splitlines()[-1] == "[]", found.stdout[-2000:]
    # What start-up made is left out of the cycle collector's walks (a full collection of it
    # took 95 ms of a request): nearly every object of the process is frozen.
    frozen, walked = map(int, found.stdout.strip().splitlines()[-2].split())
    assert frozen > 100_000 and walked < frozen / 10, (frozen, walked)
    # and the collector runs after tens of thousands of new objects, not Python's 700
    assert found.stdout.strip().splitlines()[-3] == str(COLLECTOR_THRESHOLDS)
