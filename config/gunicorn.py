"""Gunicorn for the scaled set-up: ``gunicorn -c config/gunicorn.py`` (or ``make serve``).

Production settings (``config.settings.prod``) unless DJANGO_SETTINGS_MODULE says otherwise;
they need SECRET_KEY and ALLOWED_HOSTS, and static files collected beforehand
(``manage.py collectstatic``): whitenoise serves them from STATIC_ROOT, so no extra server is
needed for them. Every value below can be changed from the environment; each says what it is
where it is set.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")

from scoring.engine.ids import available_cores


def default_workers() -> int:
    """2 × cores + 1 worker processes, at most ``GUNICORN_MAX_WORKERS``."""
    # Each thread may keep a database connection: 6 workers × 16 threads stay under PostgreSQL's
    # default max_connections of 100.
    return min(2 * available_cores() + 1, int(os.environ.get("GUNICORN_MAX_WORKERS", "6")))  # the most workers


wsgi_app = "config.wsgi:application"
bind = [address.strip() for address in os.environ.get("GUNICORN_BIND", "127.0.0.1:8000").split(",") if address]
"""Address(es), comma-separated; a proxy in front terminates TLS and sets ``X-Forwarded-Proto``."""
workers = int(os.environ.get("GUNICORN_WORKERS") or default_workers())
"""Worker processes (default 2 × cores + 1, at most ``GUNICORN_MAX_WORKERS``)."""
threads = int(os.environ.get("GUNICORN_THREADS", "16"))
"""Threads per worker (gunicorn's threaded worker, so that a reader is not queued behind the
uploads waiting for their turn, ``UPLOADS_AT_ONCE``); 1 selects the sync worker."""
# With threads, a cached leaderboard read need not wait behind a worker busy validating an
# upload: each process serves several requests at once.
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
"""Seconds before a stuck worker is restarted: an upload is validated inside its request, a few
seconds for the largest allowed file."""
graceful_timeout = 30
# Recycle workers now and then, staggered, so that a slow leak cannot grow without bound.
max_requests = 5000
max_requests_jitter = 500
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
"""The proxies trusted for ``X-Forwarded-*`` headers (``X-Forwarded-Proto`` above all)."""
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
"""The access log: a file, or ``-`` for standard output."""
errorlog = "-"
# client, request line, status, response bytes, duration in milliseconds, user agent
access_log_format = '%(h)s "%(r)s" %(s)s %(B)s %(M)sms "%(a)s"'
if os.path.isdir("/dev/shm"):
    # the workers' heartbeat files: in memory, so a slow disk cannot make them look stuck
    worker_tmp_dir = "/dev/shm"
