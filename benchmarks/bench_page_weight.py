"""What a first visit to each page costs: bytes over the wire and time to DOMContentLoaded.

The set-up is the demo's (``make demo``), in a temporary var directory of its own: migrate,
``load_demo``, ``collectstatic`` (hashed, compressed files), then ``manage.py runserver`` with
the development settings and DEBUG off on a free loopback port. Each page is loaded in headless
Chromium (Debian's /usr/bin/chromium, through Playwright) in a fresh browser context, so with an
empty cache, as on a first visit; the submission page as a member of its team (logged in through
the log-in form in another context, whose cookies only are carried over).

Bytes are what Chromium received for the page and everything it loaded (the DevTools protocol's
``Network.loadingFinished`` ``encodedDataLength``: compressed bodies plus headers). Time is
``domContentLoadedEventEnd`` of the navigation, which comes after the deferred scripts
(plotly.js included) have run. Every page is loaded once untimed first (the server's caches and
templates warm), then ``--runs`` times; the table shows the median and the slowest run.

With ``--teams N``, N more teams join the demo's board first, each with one scored run on its
current phase (random confusion matrices with the demo gold's class counts, written as rows
by ``tools.factory``): the pages of a board of thousands of teams, as their first visitor
meets them.

Nothing is asserted; the server, the browser and the directory are gone at the end.

    python benchmarks/bench_page_weight.py
    python benchmarks/bench_page_weight.py --teams 3000
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import platform
import shutil
import socket
import statistics
import sys
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import django
import numpy as np

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))

from tools.processes import CHROMIUM, CHROMIUM_ARGS, start_process, wait_until  # noqa: E402 (the repository goes on the path first)

BUDGET_BYTES = 1_600_000
"""No page may transfer more than 1.6 MB (decimal) on a first visit."""
BUDGET_DCL_MS = 500.0
"""Every page's DOMContentLoaded within 500 ms on loopback."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed first visits per page")
    parser.add_argument("--teams", type=int, default=0, help="teams added to the demo's board")
    return parser.parse_args(argv)


# The demo's settings, read once at set-up: the development settings with DEBUG off, SQLite and
# static files in a directory of this run's own (decided before Django is set up).
ARGS = parse_args(sys.argv[1:])
SCRATCH = Path(tempfile.mkdtemp(prefix="pageweight-"))
DEMO_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.dev",
    "DEBUG": "false",
    "LEADERBOARD_VAR_DIR": str(SCRATCH / "var"),
    "TASKS_BACKEND": "immediate",
}
for name in ("DATABASE_URL", "STATIC_ROOT", "CACHE_URL"):
    os.environ.pop(name, None)
os.environ.update(DEMO_ENV)
(SCRATCH / "var").mkdir()
django.setup()

from django.conf import settings  # noqa: E402 (Django is set up first)
from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402

from leaderboard.management.commands.load_demo import DEMO_PASSWORD, SLUG  # noqa: E402
from leaderboard.models import StoredFile, Submission, Task  # noqa: E402
from leaderboard.results_cache import results_changed  # noqa: E402
from leaderboard.uploads import stored_gold  # noqa: E402
from tools import factory  # noqa: E402

MEMBER = "team-a"
"""The demo user whose submission page is loaded (a member of Team A)."""


@dataclass(frozen=True)
class Visit:
    bytes_transferred: int
    requests: int
    first_byte_ms: float
    dcl_ms: float
    load_ms: float
    largest: tuple[str, int]


@dataclass
class Row:
    name: str
    path: str
    visits: list[Visit]


def pages() -> list[tuple[str, str, bool]]:
    """(name, path, as the team member) of every page measured."""
    submission = Submission.objects.filter(team__members__username=MEMBER).order_by("-pk").first()
    return [
        ("task list", "/", False),
        ("task page", f"/tasks/{SLUG}/", False),
        ("leaderboard, raw", f"/tasks/{SLUG}/leaderboard/", False),
        ("leaderboard, calibrated", f"/tasks/{SLUG}/leaderboard/?calibrated=1", False),
        ("metric page (macR)", f"/tasks/{SLUG}/metrics/macro_recall/", False),
        ("disagreements, Table 8 set", f"/tasks/{SLUG}/disagreements/?set=paper", False),
        ("disagreements, all metrics", f"/tasks/{SLUG}/disagreements/?set=all", False),
        ("what-if, 0.2 / 0.3 / 0.5", f"/tasks/{SLUG}/what-if/?target=0.2,0.3,0.5", False),
        (f"submission page ({MEMBER})", submission.get_absolute_url(), True),
        ("references", "/references/", False),
    ]


def more_teams(count: int) -> None:
    """``count`` more teams on the demo's board, each with one scored run on its current phase."""
    task = Task.objects.get(slug=SLUG)
    phase = task.current_phase()
    gold_counts = np.bincount(stored_gold(phase).codes, minlength=len(task.labels))
    rng = np.random.default_rng(2017)
    teams = factory.teams_create(task=task, count=count, name="Team {n:05d}")
    shared_file = StoredFile.of(name="run.csv", content=b"id,label\n")
    shared_file.save()
    at = min(timezone.now(), phase.closes_at) - dt.timedelta(hours=1)
    runs = [
        factory.ScoredRun(
            team=team, file=shared_file, matrix=factory.random_confusion_matrix(rng, gold_counts=gold_counts), at=at
        )
        for team in teams
    ]
    factory.scored_submissions_create(task=task, runs=runs, batch_size=1000, phase=phase)
    results_changed(task.pk)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def member_cookies(browser, base: str) -> dict:
    """The storage state (cookies) of the team member, logged in through the log-in form."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/accounts/login/")
    page.fill("input[name=username]", MEMBER)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_load_state("load")
    state = context.storage_state()
    context.close()
    return state


def file_name(url: str, *, page_url: str) -> str:
    return "the page's HTML" if url == page_url else url.split("?")[0].rsplit("/", 1)[-1]


def first_visit(browser, url: str, storage_state: dict | None) -> Visit:
    """Load ``url`` in a fresh context (empty cache) and measure the bytes and the times."""
    context = browser.new_context(storage_state=storage_state)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    urls: dict[str, str] = {}
    received: dict[str, int] = {}
    cdp.on("Network.requestWillBeSent", lambda event: urls.__setitem__(event["requestId"], event["request"]["url"]))
    cdp.on(
        "Network.loadingFinished",
        lambda event: received.__setitem__(event["requestId"], int(event["encodedDataLength"])),
    )
    response = page.goto(url, wait_until="load")
    assert response is not None and response.status == 200, f"{url}: {response and response.status}"
    page.wait_for_load_state("networkidle")
    timing = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return [n.responseStart, n.domContentLoadedEventEnd, n.loadEventEnd]; }"
    )
    context.close()
    largest = max(received.items(), key=lambda item: item[1], default=("", 0))
    return Visit(
        bytes_transferred=sum(received.values()),
        requests=len(received),
        first_byte_ms=float(timing[0]),
        dcl_ms=float(timing[1]),
        load_ms=float(timing[2]),
        largest=(file_name(urls.get(largest[0], ""), page_url=url), largest[1]),
    )


def kilobytes(n: int) -> str:
    return f"{n / 1000:,.0f} kB"


def table(rows: list[Row]) -> str:
    """One row per page; the verdicts hold the page's largest transfer and its median time."""
    lines = [
        "| page | requests | transferred | largest response | first byte | DOMContentLoaded median (slowest) "
        "| load median | ≤ 1.6 MB | DCL < 500 ms |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | :---: | :---: |",
    ]
    for row in rows:
        transferred = max(visit.bytes_transferred for visit in row.visits)
        dcl_ms = statistics.median(visit.dcl_ms for visit in row.visits)
        name, size = row.visits[0].largest
        lines.append(
            f"| {row.name} | {row.visits[0].requests} | {kilobytes(transferred)} | {name} ({kilobytes(size)}) "
            f"| {statistics.median(v.first_byte_ms for v in row.visits):,.0f} ms "
            f"| {dcl_ms:,.0f} ms ({max(v.dcl_ms for v in row.visits):,.0f} ms) "
            f"| {statistics.median(v.load_ms for v in row.visits):,.0f} ms "
            f"| {'met' if transferred <= BUDGET_BYTES else '**not met**'} "
            f"| {'met' if dcl_ms < BUDGET_DCL_MS else '**not met**'} |"
        )
    return "\n".join(lines)


def main(args: argparse.Namespace) -> None:
    call_command("migrate", interactive=False, verbosity=0)
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    if args.teams:
        more_teams(args.teams)
    call_command("collectstatic", interactive=False, verbosity=0)
    measured = pages()  # before Playwright's event loop, where the ORM may not run
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_process(
        name="runserver",
        args=[sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        env={**os.environ, **DEMO_ENV},
        log_dir=SCRATCH,
    )
    try:
        wait_until(lambda: answers(base + "/"), timeout_s=60, what="the demo server", interval_s=0.2)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                member = member_cookies(browser, base)
                rows = []
                for name, path, as_member in measured:
                    state = member if as_member else None
                    first_visit(browser, base + path, state)  # untimed: the server warms up
                    visits = [first_visit(browser, base + path, state) for _ in range(args.runs)]
                    rows.append(Row(name=name, path=path, visits=visits))
                chromium_version = browser.version
            finally:
                browser.close()
    finally:
        server.kill()
    brotli = "with Brotli" if importlib.util.find_spec("brotli") else "gzip only (brotli not installed)"
    print(
        f"Demo set-up (config.settings.dev, DEBUG off, runserver, {settings.STORAGES['staticfiles']['BACKEND']}, "
        f"{brotli}); headless Chromium {chromium_version}, fresh context per visit, loopback; "
        f"{args.runs} timed visits per page after one untimed; {args.teams} teams added to the demo's; "
        f"Python {platform.python_version()}, "
        f"nproc {os.cpu_count()}.\n"
    )
    print(table(rows))


if __name__ == "__main__":
    try:
        main(ARGS)
    finally:
        shutil.rmtree(SCRATCH, ignore_errors=True)
