"""Gunicorn for the scaled set-up: ``gunicorn -c config/gunicorn.py`` (or ``make serve``).

Production settings (``config.settings.prod``) unless DJANGO_SETTINGS_MODULE says otherwise;
they need SECRET_KEY and ALLOWED_HOSTS, and static files collected beforehand
(``manage.py collectstatic``): whitenoise serves them from STATIC_ROOT, so no extra server is
needed for them. Every value below can be changed from the environment:

- ``GUNICORN_BIND``: address(es), comma-separated (default ``127.0.0.1:8000``; a proxy in
  front terminates TLS and sets ``X-Forwarded-Proto``);
- ``GUNICORN_WORKERS``: worker processes (default 2 × cores + 1, at most
  ``GUNICORN_MAX_WORKERS``, default 6: each thread may keep a database connection, and 6 × 16
  stays under PostgreSQL's default ``max_connections`` of 100);
- ``GUNICORN_THREADS``: threads per worker (default 16, gunicorn's threaded worker, so that a
  reader is not queued behind the uploads waiting for their turn, ``UPLOADS_AT_ONCE``; 1 selects
  the sync worker);
- ``GUNICORN_TIMEOUT``: seconds before a stuck worker is restarted (default 60: an upload is
  validated inside its request, a few seconds for the largest allowed file);
- ``GUNICORN_ACCESS_LOG``: a file, or ``-`` for standard output (the default);
- ``FORWARDED_ALLOW_IPS``: proxies trusted for ``X-Forwarded-*`` (default ``127.0.0.1``).
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")

from scoring.engine.ids import available_cores


def default_workers() -> int:
    return min(2 * available_cores() + 1, int(os.environ.get("GUNICORN_MAX_WORKERS", "6")))


wsgi_app = "config.wsgi:application"
bind = [address.strip() for address in os.environ.get("GUNICORN_BIND", "127.0.0.1:8000").split(",") if address]
workers = int(os.environ.get("GUNICORN_WORKERS") or default_workers())
threads = int(os.environ.get("GUNICORN_THREADS", "16"))
# With threads, a cached leaderboard read need not wait behind a worker busy validating an
# upload: each process serves several requests at once.
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 30
# Recycle workers now and then, staggered, so that a slow leak cannot grow without bound.
max_requests = 5000
max_requests_jitter = 500
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = os.environ.get("GUNICORN_ACCESS_LOG", "-")
errorlog = "-"
# client, request line, status, response bytes, duration in milliseconds, user agent
access_log_format = '%(h)s "%(r)s" %(s)s %(B)s %(M)sms "%(a)s"'
if os.path.isdir("/dev/shm"):
    # the workers' heartbeat files: in memory, so a slow disk cannot make them look stuck
    worker_tmp_dir = "/dev/shm"
