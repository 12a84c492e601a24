"""The manual's screenshots, taken again from a running demo: ``make demo`` in one shell, then

    .venv/bin/python tools/screenshots.py [--url http://127.0.0.1:8000] [--only NAME ...]

Each picture is one of the demo's pages as a visitor, a team's member or the organiser sees it,
in Debian's Chromium driven by Playwright, at 1,400 px (a desktop) or 390 px (a phone), saved
as ``docs/images/NAME.png``. Pages are only visited (GET), except the preview of an import: a
bundle is uploaded to the import page, its preview taken, and the upload discarded. The demo is
left as it was.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tools.processes import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tools.tracks_bundle import tracks_v15  # noqa: E402

IMAGES = REPO / "docs" / "images"
DEMO_PASSWORD = "demo-password"
A = "/tasks/semeval-2017-task-4a"
EVALUATION = f"{A}/phases/evaluation"
DESKTOP, PHONE = 1400, 390
NEWEST_RUN = 'main a[href*="/submissions/"]'
"""On a team's page: its newest run (the evaluation phase's, in the demo)."""
TRACKS_BUNDLE = functools.partial(tracks_v15, outputs_track=("English", "B"))
"""A CodaLab bundle of four tracks side by side, one of them of three outputs."""


@dataclass(frozen=True)
class Shot:
    name: str
    path: str
    user: str | None = None
    width: int = DESKTOP
    height: int = 900
    """The picture's height at most: the top of the page, as a visitor first sees it."""
    follow: str | None = None
    """A CSS selector of a link on ``path`` to follow first: a page whose address the demo decides."""
    click: str | None = None
    """A CSS selector clicked before the picture is taken (a ``<details>`` to open)."""
    wait_for: str | None = None
    """A CSS selector that shows once the page's scripts have drawn it."""
    upload: Callable[[], bytes] | None = None
    """A bundle given on ``path`` (the import page): the picture is of its preview, discarded after."""


SHOTS = (
    # The README's two.
    Shot("leaderboard", f"{EVALUATION}/leaderboard/", height=820),
    Shot("disagreements", f"{EVALUATION}/disagreements/", height=1500),
    # Organising a task, in the order an organiser meets the pages.
    Shot("organiser-task-list", "/", user="organiser", height=520),
    Shot("task-form", "/tasks/new/", user="organiser", height=1300),
    Shot("task-page-organiser", f"{A}/", user="organiser", height=1000),
    Shot("phase-form", f"{EVALUATION}/edit/", user="organiser", height=1500),
    Shot("phase-files", f"{EVALUATION}/files/", user="organiser", height=900),
    Shot("gold-form", f"{EVALUATION}/gold/", user="organiser", height=700),
    Shot("registrations", "/tasks/semeval-2017-task-4/registrations/", user="organiser", height=700),
    Shot("organiser-submissions", f"{A}/submissions/", user="organiser", height=800),
    Shot("task-settings", f"{A}/edit/", user="organiser", height=1400),
    Shot("archive", f"{A}/archive/", user="organiser", height=1000),
    Shot("task-import", "/tasks/import/", user="organiser", click="main details summary", height=1400),
    Shot("task-import-tracks", "/tasks/import/", user="organiser", upload=TRACKS_BUNDLE, height=2100),
    # Taking part.
    Shot("task", f"{A}/", height=1500),
    Shot("signup", "/accounts/signup/?next=/tasks/semeval-2017-task-4/", height=700),
    Shot("team", f"{A}/team/", user="team-a", height=1000),
    Shot("submission", f"{A}/team/", user="team-a", follow=NEWEST_RUN, height=1500),
    Shot("phone-submission", f"{A}/team/", user="team-a", follow=NEWEST_RUN, width=PHONE, height=844),
    # Reading the results.
    Shot("leaderboard-calibrated", f"{EVALUATION}/leaderboard/?calibrated=1&sort=kappa_c", height=820),
    Shot("metric", f"{EVALUATION}/metrics/macro_recall/", height=1400),
    Shot("what-if", f"{EVALUATION}/what-if/?target=0.5,0.3,0.2&metric=accuracy", height=1100),
    Shot("analysis", f"{EVALUATION}/analysis/", height=2500),
    Shot("contrastive", "/tasks/semeval-2017-task-4b/phases/evaluation/leaderboard/", height=800),
    Shot("phone-leaderboard", f"{EVALUATION}/leaderboard/", user="team-b", width=PHONE, height=844),
    Shot("phone-disagreements", f"{EVALUATION}/disagreements/", width=PHONE, height=844),
    # The API.
    Shot("api-docs", "/api/docs", height=900, wait_for=".swagger-ui .opblock"),
)


CONTENT_HEIGHT = """(() => {
  const footer = document.querySelector("footer");
  const end = footer ? footer.getBoundingClientRect().bottom + window.scrollY : 0;
  return Math.ceil(end || document.documentElement.scrollHeight);
})()"""
"""Where the page's content ends (its footer's bottom), however tall the window."""


def log_in(page, base_url: str, user: str) -> None:
    page.goto(base_url + "/accounts/login/")
    page.fill("input[name=username]", user)
    page.fill("input[name=password]", DEMO_PASSWORD)
    with page.expect_navigation():
        page.click("main button[type=submit]")


def take(browser, base_url: str, shot: Shot) -> Path:
    viewport = {"width": shot.width, "height": 844 if shot.width == PHONE else 900}
    context = browser.new_context(viewport=viewport, device_scale_factor=1)
    page = context.new_page()
    try:
        if shot.user:
            log_in(page, base_url, shot.user)
        response = page.goto(base_url + shot.path, wait_until="networkidle")
        if response is None or response.status != 200:
            raise SystemExit(f"{shot.name}: {shot.path} answered {response and response.status}")
        if shot.upload:
            page.set_input_files(
                "input[name=bundle]",
                files=[{"name": "bundle.zip", "mimeType": "application/zip", "buffer": shot.upload()}],
            )
            with page.expect_navigation(wait_until="networkidle"):
                page.click("main form button[type=submit]")
        if shot.follow:
            with page.expect_navigation(wait_until="networkidle"):
                page.locator(shot.follow).first.click()
        if shot.wait_for:
            page.locator(shot.wait_for).first.wait_for()
        if shot.click:
            page.locator(shot.click).first.click()
        target = IMAGES / f"{shot.name}.png"
        height = min(shot.height, page.evaluate(CONTENT_HEIGHT))
        page.screenshot(path=target, full_page=True, clip={"x": 0, "y": 0, "width": shot.width, "height": height})
        if shot.upload:
            with page.expect_navigation():
                page.click("main button[value=discard]")
        return target
    finally:
        context.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the running demo (default: %(default)s)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="take only these (names as in SHOTS)")
    args = parser.parse_args(argv)
    shots = [shot for shot in SHOTS if not args.only or shot.name in args.only]
    IMAGES.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which(CHROMIUM) or CHROMIUM, args=CHROMIUM_ARGS)
        for shot in shots:
            print(take(browser, args.url.rstrip("/"), shot).relative_to(REPO))
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
