"""What a web process does before it takes its first request (``config/wsgi.py`` calls
:func:`prepare`, under ``runserver`` as under gunicorn, whose workers load the application before
they accept a connection): nothing a page needs is imported, compiled or warmed up in a person's
time, and on the embedded set-up the process starts the runner of its derived results.
"""

from __future__ import annotations

import gc
import importlib
from pathlib import Path

from django.conf import settings
from django.core.cache import caches
from django.template import engines
from django.template.loader import get_template
from django.utils import formats, translation
from django.utils.module_loading import import_string

from leaderboard import charts, derived

LIBRARIES = ("mpmath", "mpmath.libmp", "mpmath.ctx_iv")
"""Libraries the engine imports when a computation first needs them (a process that scores a
file may never), which results pages need: exact values of the what-if and of the suite."""


COLLECTOR_THRESHOLDS = (50_000, 20, 100)
"""When the cycle collector runs: after 50,000 new objects (Python's default: 700), its older
generations more rarely still. A page of a 10,000-team board makes hundreds of thousands of
objects that die with the request, freed as their last reference goes, and the collector's
walks of them, 10–15 % of a cold read at the default, found nothing to free."""


def prepare() -> None:
    """Import what pages import on first use, compile every template of the site, draw one figure
    of each kind (plotly loads a trace type's classes when one is first drawn), leave what that
    made out of the cycle collector's walks, and start the runner of derived results on the
    embedded set-up (:class:`leaderboard.derived.Runner`)."""
    for name in LIBRARIES:
        importlib.import_module(name)
    # What Django itself loads on a first request: the cache, the context processors, the
    # storage of messages and the sessions' serializer, the formats of the language.
    caches["default"]
    engines["django"].engine.template_context_processors  # noqa: B018
    for setting in ("MESSAGE_STORAGE", "SESSION_SERIALIZER"):
        import_string(getattr(settings, setting))
    with translation.override(settings.LANGUAGE_CODE):
        formats.get_format("DATE_FORMAT")
    for folder in settings.TEMPLATES[0]["DIRS"]:
        for path in sorted(Path(folder).rglob("*.html")):
            get_template(str(path.relative_to(folder)))
    charts.prepare()
    # What start-up made lives as long as the process: the cycle collector leaves it out from
    # here on. Else each full collection, which a request making many objects sets off (a board
    # of 10,000 teams), walks these 200,000 objects again: 95 ms, against none once frozen.
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    if settings.DERIVED_RESULTS_IN == derived.THREAD:
        derived.RUNNER.start()
