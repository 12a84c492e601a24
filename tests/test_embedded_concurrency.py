"""The embedded set-up (SQLite, scoring inside the upload request, DEBUG off) under concurrent
writers: 20 parallel uploads by one team against ``manage.py runserver`` on a fresh SQLite file.

What this proves: no request fails with a server error ("database is locked"), every upload is
either stored and scored or refused with its reason (the daily limit), none is left in
"scoring", and an error page is never Django's debug page.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import GOLD, PERFECT

REPO = Path(__file__).resolve().parent.parent
UPLOADS = 20
DAILY_LIMIT = 8
PASSWORD = "a-long-test-password"

SETUP = f"""
import datetime as dt
from django.contrib.auth import get_user_model
from django.utils import timezone
from leaderboard.services.tasks import task_create
from leaderboard.services.teams import team_create
now = timezone.now()
organiser = get_user_model().objects.create_user("organiser", password={PASSWORD!r})
task = task_create(organiser=organiser, slug="race", title="Race", description="", labels=["a", "b", "c"],
    gold_name="gold.csv", gold_content={GOLD!r}, primary_metric="macro_f1", opens_at=now - dt.timedelta(days=1),
    closes_at=now + dt.timedelta(days=1), max_per_day={DAILY_LIMIT}, max_total=100)
alice = get_user_model().objects.create_user("alice", password={PASSWORD!r})
team_create(task=task, user=alice, name="Alpha")
"""

REPORT = """
from leaderboard.models import Submission
print(sorted(Submission.objects.values_list("status", flat=True)))
"""

pytestmark = [pytest.mark.slow, pytest.mark.embedded]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


class Browser:
    """One person's cookies and CSRF token against the server."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def csrf(self) -> str:
        return next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")

    def get(self, path: str) -> tuple[int, str]:
        try:
            with self.opener.open(self.base + path, timeout=60) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def post(self, path: str, body: bytes, content_type: str) -> tuple[int, str]:
        request = urllib.request.Request(
            self.base + path,
            data=body,
            headers={"Content-Type": content_type, "X-CSRFToken": self.csrf(), "Referer": self.base + path},
        )
        try:
            with self.opener.open(request, timeout=120) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def log_in(self, username: str) -> None:
        self.get("/accounts/login/")
        body = f"username={username}&password={PASSWORD}&csrfmiddlewaretoken={self.csrf()}".encode()
        status, _ = self.post("/accounts/login/", body, "application/x-www-form-urlencoded")
        assert status == 200  # followed the redirect to the task list


def multipart(token: str, content: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n{token}\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="run.csv"\r\n'
        "Content-Type: text/csv\r\n\r\n".encode()
        + content
        + b"\r\n",
        f"--{boundary}--\r\n".encode(),
    ]
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def test_twenty_parallel_uploads_on_sqlite_all_end_well(tmp_path):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DEBUG": "false",
        "LEADERBOARD_VAR_DIR": str(tmp_path),
    }
    env.pop("DATABASE_URL", None)
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput")  # as `make demo` does: with DEBUG off, pages name hashed files
    manage(env, "shell", "-c", SETUP)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180  # a loaded 2-core machine starts slowly
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        browsers = [Browser(base) for _ in range(UPLOADS)]
        browsers[0].log_in("alice")
        for browser in browsers[1:]:  # twenty tabs of one browser: one session
            for cookie in browsers[0].jar:
                browser.jar.set_cookie(cookie)

        def upload(browser: Browser) -> tuple[int, str]:
            body, content_type = multipart(browser.csrf(), PERFECT)
            return browser.post("/tasks/race/submit/", body, content_type)

        with ThreadPoolExecutor(max_workers=UPLOADS) as pool:
            outcomes = list(pool.map(upload, browsers))

        statuses = [status for status, _ in outcomes]
        if statuses != [200] * UPLOADS:  # redirects followed: no 500, no 502
            server.terminate()
            pytest.fail(f"{statuses}\n{server.communicate(timeout=30)[1].decode()[-6000:]}")
        stored = [page for _, page in outcomes if re.search(r"Submission #\d+ to the Evaluation phase is stored", page)]
        refused = [page for _, page in outcomes if "used its 8 submissions for today" in page]
        assert len(stored) == DAILY_LIMIT and len(refused) == UPLOADS - DAILY_LIMIT
        not_found_status, not_found_page = browsers[0].get("/no-such-page/")
        assert not_found_status == 404 and "Traceback" not in not_found_page and "URLconf" not in not_found_page
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert manage(env, "shell", "-c", REPORT).strip().splitlines()[-1] == str(["scored"] * DAILY_LIMIT)
