"""What the browser walks share: a person's browser that records every console error, page
error and failed request, and the gestures a walk needs."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

PASSWORD = "a-long-and-unusual-passphrase"


def local(moment: dt.datetime) -> str:
    """A moment as a ``datetime-local`` field takes it (the site's time zone is UTC)."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M")


class Browser:
    """One person's browser: a page that records console errors, page errors and failed
    requests, and the few gestures the walk needs."""

    def __init__(self, browser, base_url: str) -> None:
        self.base_url = base_url
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        self.page = self.context.new_page()
        self.problems: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.problems.append(f"console: {m.text}"))
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("response", lambda r: r.status >= 400 and self.problems.append(f"{r.status} for {r.url}"))

    def open(self, path: str) -> None:
        response = self.page.goto(self.base_url + path, wait_until="load")
        assert response is not None and response.status == 200, f"{path}: {response and response.status}"

    def submit(self, selector: str = "main form.stacked button[type=submit]") -> None:
        with self.page.expect_navigation(wait_until="load"):
            self.page.click(selector)

    def login(self, username: str) -> None:
        self.open("/accounts/login/")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", PASSWORD)
        self.submit("main button[type=submit]")

    def download(self, link_text: str, folder: Path, *, phase: str) -> Path:
        """Download the file behind ``link_text`` in the task page's entry of ``phase``."""
        entry = self.page.locator(".timeline > li", has=self.page.get_by_role("heading", name=phase, exact=True))
        with self.page.expect_download() as info:
            entry.get_by_role("link", name=link_text).click()
        target = folder / info.value.suggested_filename
        info.value.save_as(target)
        return target

    def text(self) -> str:
        return self.page.locator("main").inner_text()
