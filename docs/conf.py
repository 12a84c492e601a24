"""The manual's Sphinx configuration: ``make docs`` builds it, strict, into var/docs/.

Pages are Markdown (MyST). A page's ``<!-- generated: NAME -->`` line is replaced, on every
build, by what ``tools/manual.py`` writes from the code (command lines, API, metrics, settings,
modules); every repository path, module, setting, demo address and command-line option a page
names is checked against the code, and a miss is a warning, which the strict build (``-W``)
turns into an error. Why Sphinx with Furo: docs/developers/manual.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import django
from sphinx.util import logging

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
django.setup()

from tools import manual  # noqa: E402  (the product, hence Django, must be set up first)

project = "Shared-task leaderboard"
author = "the shared-task leaderboard's developers"
copyright = "the shared-task leaderboard's developers"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]
suppress_warnings: list[str] = []
html_theme = "furo"
html_title = "Shared-task leaderboard"
html_static_path: list[str] = []
html_show_sourcelink = False
html_theme_options = {"navigation_with_keys": True}

log = logging.getLogger("manual")


def fill_and_check(app, docname: str, source: list[str]) -> None:
    """Check every reference the page's own text makes against the code, then write its
    generated parts (taken from the code, they need no check)."""
    for line, problem in manual.stale_references(source[0]):
        log.warning(problem, location=(docname, line))
    source[0] = manual.fill(source[0])


def setup(app) -> None:
    app.connect("source-read", fill_and_check)
