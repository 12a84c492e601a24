"""WSGI entry point for gunicorn: ``gunicorn config.wsgi`` (and for ``runserver``).

Every URL's view module is imported here, once, before the first request: a threaded server
whose threads imported them side by side on their first requests could hand one thread a
module another is still initialising (pandas, which plotly and the scorer import on first use,
has met this as "partially initialized module 'pandas' has no attribute 'Series'"). Then the
process prepares the rest of what pages need and, on the embedded set-up, starts computing
derived results (:func:`leaderboard.startup.prepare`): it is ready before it takes a request.
"""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018 -- imports every view, and with them the charts and pandas

from leaderboard import startup  # noqa: E402 -- once the application (and Django) is set up

startup.prepare()
