"""What every browser test shares: one headless Chromium per module (Debian's, driven by
Playwright) and the demo loaded behind the live test server."""

from __future__ import annotations

import os
import shutil

import pytest
from django.core.management import call_command

from tools.processes import CHROMIUM, CHROMIUM_ARGS

# Playwright's synchronous API runs an event loop in the test's thread; the ORM calls made by the
# tests themselves are synchronous and safe there.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="module")
def chromium():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=shutil.which(CHROMIUM) or CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def demo(live_server) -> str:
    """The demo task loaded; the live server's address."""
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    return live_server.url
