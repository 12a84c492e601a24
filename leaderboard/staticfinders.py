"""Serve plotly.js from the pinned ``plotly`` package as ``vendor/plotly/plotly.min.js``.

Pages must work offline and on a closed network, so no CDN; and the bundle is not copied into
the repository: the version pinned in requirements.txt is the one served.
"""

from __future__ import annotations

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PLOTLY_PATH = "vendor/plotly/plotly.min.js"
PACKAGE_DATA = Path(plotly.__file__).parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.storage = FileSystemStorage(location=str(PACKAGE_DATA))
        self.storage.prefix = "vendor/plotly"

    def check(self, **kwargs) -> list:
        return []

    def find(self, path: str, find_all: bool = False, **kwargs):
        if path == PLOTLY_PATH:
            match = str(PACKAGE_DATA / "plotly.min.js")
            return [match] if find_all else match
        return [] if find_all else None

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage
