"""Settings shared by every environment. Values that differ come from the environment.

Embedded defaults (contract): SQLite in ``var/``, the immediate tasks backend (scoring runs
inside the upload request), no services. ``DATABASE_URL`` switches to PostgreSQL and
``TASKS_BACKEND=rq`` to RQ workers on Redis (``REDIS_URL``).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("LEADERBOARD_VAR_DIR", BASE_DIR / "var"))
"""Where the embedded set-up keeps its SQLite file and the demo's sample file; ``make`` creates
it, and a system check says so if it is missing."""


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


SECRET_KEY = os.environ.get("SECRET_KEY", "dev-only-insecure-key-change-me")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "leaderboard",  # before staticfiles: its runserver (leaderboard.embedded_server) is the one manage.py runs
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # intcomma: 3,008 teams
    "django_tasks",
    "axes",
    "ninja",  # the JSON API (leaderboard/api); listed so its docs page uses its bundled Swagger UI, not a CDN
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Pages and downloads compressed for browsers that accept it (a board of 100 teams is 260 kB
    # of HTML, a tenth of that gzipped), with Django's mitigation of BREACH (random bytes in
    # each response's gzip header), but for zip archives and PNG figures, compressed already;
    # static files come compressed from whitenoise.
    "leaderboard.compression.CompressingMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "leaderboard.unavailable.DatabaseUnavailableMiddleware",  # a database that cannot be reached: 503, not 500
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "leaderboard.results_cache.ComputeAfterResponse",  # results pages a little old: recomputed after the response
    "axes.middleware.AxesMiddleware",  # last, as axes asks: turns a lock-out into its 429 page
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "leaderboard.views.notifications.header",  # unread notes and the next= of the header links
            ],
            "builtins": ["leaderboard.templatetags.leaderboard_tags"],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'leaderboard.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),  # seconds a connection is kept (0: one a request)
        # A kept connection that the server dropped (a restart, a terminated backend) is found out
        # and replaced at the start of the next request, instead of failing that request.
        conn_health_checks=True,
    )
}
ON_POSTGRESQL = DATABASES["default"]["ENGINE"].endswith("postgresql")
if ON_POSTGRESQL:
    # The parameters travel apart from the statement, bytes as bytes: an upload's file is not
    # escaped into the text of its INSERT and parsed back by the server (benchmarks/README.md,
    # where an upload's CPU goes).
    DATABASES["default"]["OPTIONS"] = {"server_side_binding": True}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # SQLite serves concurrent writers when every write transaction takes the write lock at its
    # start (no deadlock between two readers upgrading), readers never block the writer (WAL),
    # and a writer waits for the lock instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": int(os.environ.get("SQLITE_BUSY_TIMEOUT_S", "30")),  # seconds a writer waits for the lock
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TASKS_BACKEND = os.environ.get("TASKS_BACKEND", "immediate")
"""``immediate`` or ``rq``; anything else is reported by a system check (leaderboard.E001)."""
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
"""The Redis of the scoring queue, read with ``TASKS_BACKEND=rq``."""
if TASKS_BACKEND == "rq":
    # Workers: `python manage.py scoring_worker default --job-class django_tasks_rq.Job` (RQ's
    # rqworker at WORKER_NICENESS), on any number of machines that reach the same Redis and database.
    INSTALLED_APPS.append("django_rq")
    TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default"]}}
    import redis

    # One pool of connections a process: django-rq makes a client for each job handed over, which
    # would otherwise open a connection of its own (and read the library's version from its
    # metadata) every time. A web process that hands a job to a Redis that hangs waits this long,
    # not for ever; workers raise the read timeout to what their blocking reads need.
    QUEUE_POOL = redis.ConnectionPool.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=5)
    RQ_QUEUES = {
        "default": {
            **{key.upper(): QUEUE_POOL.connection_kwargs.get(key) for key in ("host", "port", "db")},
            "DEFAULT_TIMEOUT": 600,
            "REDIS_CLIENT_KWARGS": {"connection_pool": QUEUE_POOL},
        }
    }
else:
    TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}

SCORING_STUCK_AFTER_S = float(os.environ.get("SCORING_STUCK_AFTER_S", "30"))
"""A run whose scoring started this long ago and has not ended is taken for lost (a killed
worker, a dropped connection) and handed to the queue again by the recovery sweep; scoring a
file takes seconds. A run that is only slow is still scored once: the first result written wins."""
REQUEUE_AFTER_S = float(os.environ.get("REQUEUE_AFTER_S", "20"))
"""A run left queued this long whose job the queue no longer has (Redis restarted, or down when
it was uploaded) is handed to the queue again by the recovery sweep."""
RECOVERY_EVERY_S = int(os.environ.get("RECOVERY_EVERY_S", "15"))
"""How often each scoring worker runs the recovery sweep (leaderboard.services.scoring and
leaderboard.derived), and the embedded set-up's web process the sweep of derived results."""

# Ranking stability (leaderboard.stability): paired-bootstrap intervals of each phase's board,
# computed in the background once its scores change (asked for by the write that changes them).
BOOTSTRAP_REPLICATES = int(os.environ.get("BOOTSTRAP_REPLICATES", "1000"))
"""Replicates per phase; 0 turns the intervals off."""
BOOTSTRAP_SEED = int(os.environ.get("BOOTSTRAP_SEED", "1"))
"""The seed stored with every result: the CLI's ``--seed`` gives the same intervals."""
BOOTSTRAP_EVERY_S = float(os.environ.get("BOOTSTRAP_EVERY_S", "30"))
"""A phase's intervals are recomputed at most this often (from the end of the last computation),
so that during a rush, when the scores change every second, they take a bounded share of a core
beside the scoring. Meanwhile pages show the previous intervals marked stale, with when they are
due. Once the pause is over, a new score is reflected in the time one computation takes."""
BOOTSTRAP_MEMORY_MB = int(os.environ.get("BOOTSTRAP_MEMORY_MB", "4096"))
"""The address space a computation of intervals may take (it runs in a process of its own,
leaderboard.stability_job); one that needs more fails, and pages keep the previous intervals,
marked stale with the reason. Address space, not resident memory: the numerical libraries
reserve more than they touch."""
BOOTSTRAP_TIMEOUT_S = float(os.environ.get("BOOTSTRAP_TIMEOUT_S", "500"))
"""The time a computation of intervals may take before it is stopped (and the same as above):
under the queue's job timeout (600 s), so that the failure is recorded before the queue gives up."""
BOOTSTRAP_NICENESS = int(os.environ.get("BOOTSTRAP_NICENESS", "10"))
"""How much a computation of intervals lowers its CPU priority (``os.nice``): it is background
work, and yields the cores to the pages and the scoring."""
BOOTSTRAP_STORE_DIR = Path(os.environ.get("BOOTSTRAP_STORE_DIR", VAR_DIR / "bootstrap"))
"""Where each phase's replicates are kept between two computations (a cache, one directory a
phase: a new run's values are computed, the others' read). Any worker machine may have its own:
one that has none computes every team once."""
ANALYSIS_EVERY_S = float(os.environ.get("ANALYSIS_EVERY_S", "10"))
"""A phase's analysis (what its teams got wrong together: leaderboard.analysis) is computed
again at most this often (from the end of the last computation): a 3,000-team phase's takes a
core for about a second, which during a rush would run back to back beside the scoring.
Meanwhile its page and the board's two rows say they are of earlier scores."""
DERIVED_RESULTS_IN = os.environ.get("DERIVED_RESULTS_IN", "worker" if TASKS_BACKEND == "rq" else "thread")
"""Where a phase's derived results (its intervals, its analysis: leaderboard.derived) are
computed, never in a request: ``worker`` (RQ), or ``thread``, the embedded set-up's web process,
in threads of their own started with it. ``commit`` (the tests') computes them as the write that
asked commits."""

# A new score is on every results page within twice this many seconds and the time to compute
# the page (every other change at once): during a deadline rush the pages are recomputed about
# this often, after a reader's response (leaderboard.results_cache).
RESULTS_SCORES_FRESH_S = float(os.environ.get("RESULTS_SCORES_FRESH_S", "1"))
RESULTS_AFTER_RESPONSE_IN = os.environ.get("RESULTS_AFTER_RESPONSE_IN", "thread")
"""Where a results page a reader found a little old is computed once the response has been
sent: ``thread``, a thread of the web process; ``request`` (the tests'), the request's own
thread, which holds the reader's kept connection until it is done."""

UPLOADS_AT_ONCE = int(os.environ.get("UPLOADS_AT_ONCE", "1"))
"""How many uploads are validated at once, the others waiting their turn in their order of
arrival: on PostgreSQL across the site, whichever web process they reach; on SQLite in the
embedded set-up's one process (leaderboard.services.submissions.upload_turn)."""

WORKER_NICENESS = int(os.environ.get("WORKER_NICENESS", "10"))
"""How much ``manage.py scoring_worker`` lowers its CPU priority (``os.nice``) before it starts:
on shared cores, scoring yields to the web processes, so readers do not wait for uploaders."""

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out log-in before any password check
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "leaderboard:task_list"
LOGOUT_REDIRECT_URL = "leaderboard:task_list"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "leaderboard.staticfinders.PlotlyFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "leaderboard.static_storage.CompressedOnceStorage"},
}
"""Static files as ``collectstatic`` leaves them in STATIC_ROOT, in every set-up: each under a
name with its content's hash (whitenoise tells browsers to keep it for good), beside it a Brotli
and a gzip copy, whitenoise sending the variant the browser accepts: plotly.min.js is 4.8 MB as
is, 1.1 MB in Brotli, 1.5 MB gzipped. ``make demo`` and ``make serve`` collect first; with DEBUG
off and nothing collected, a page fails on its first ``{% static %}``. With DEBUG on, pages name
files plainly and whitenoise finds them through the finders as they are edited, without
collectstatic (WHITENOISE_USE_FINDERS and WHITENOISE_AUTOREFRESH follow DEBUG: whitenoise's
defaults). The tests collect nothing (test.py)."""
WHITENOISE_KEEP_ONLY_HASHED_FILES = True
"""Pages name only the hashed files; compressing the plain copies too would double the time that
collectstatic spends on Brotli (seconds for plotly.js)."""

# Uploads: prediction and gold files are stored in the database (workers on any machine can
# read them) and are refused above this size.
MAX_UPLOAD_BYTES = int(os.environ.get("MAX_UPLOAD_BYTES", str(50 * 1024 * 1024)))
"""A prediction, gold or data file (or a file inside a bundle) larger than this is refused."""
MAX_FILE_ROWS = int(os.environ.get("MAX_FILE_ROWS", "2000000"))
"""A gold or prediction file with more data lines than this is refused."""
# Task bundles (an exported task, or a CodaLab or Codabench competition bundle) are checked as
# strictly as an upload before anything is read from them (leaderboard.bundles.zips): the zip's
# size, its number of files, what they come to once expanded, each file's expansion ratio (a zip
# bomb expands a thousand times; a CSV of ids and labels under twenty) and each file's size
# (MAX_UPLOAD_BYTES, as an upload).
BUNDLE_MAX_BYTES = int(os.environ.get("BUNDLE_MAX_BYTES", str(256 * 1024 * 1024)))
"""A bundle (the zip) larger than this is refused."""
BUNDLE_MAX_FILES = int(os.environ.get("BUNDLE_MAX_FILES", "20000"))
"""A bundle holding more files than this is refused."""
BUNDLE_MAX_EXPANDED_BYTES = int(os.environ.get("BUNDLE_MAX_EXPANDED_BYTES", str(2 * 1024**3)))
"""A bundle whose files come to more than this once expanded is refused."""
BUNDLE_MAX_RATIO = int(os.environ.get("BUNDLE_MAX_RATIO", "100"))
"""A file of a bundle that expands more than this many times its compressed size is refused."""
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")
"""The reverse proxies in front of the site (addresses or networks, e.g. ``127.0.0.1,10.0.0.0/8``):
from them, and only from them, ``X-Forwarded-For`` names the client, whose address every
per-address limit counts (leaderboard.addresses). Empty: the connection's address."""

LOGIN_RATE_LIMIT = int(os.environ.get("LOGIN_RATE_LIMIT", "10"))
"""Failed log-ins allowed per user name and address; the last one locks that pair out."""
LOGIN_RATE_WINDOW = int(os.environ.get("LOGIN_RATE_WINDOW", "300"))
"""Seconds after the last counted failure until the pair may try again."""

# Log-in throttling by django-axes, for our log-in and the admin's (it listens to Django's
# log-in signals), counted in the database (PostgreSQL in the scaled set-up, shared by every
# worker). leaderboard.throttling explains the handler, which makes check and count atomic.
AXES_HANDLER = "leaderboard.throttling.ThrottleHandler"
AXES_FAILURE_LIMIT = LOGIN_RATE_LIMIT
AXES_COOLOFF_TIME = dt.timedelta(seconds=LOGIN_RATE_WINDOW)  # an int would mean hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]  # the pair: a stranger elsewhere locks out only himself
AXES_USERNAME_CALLABLE = "leaderboard.throttling.normalised_username"  # as the log-in form reads it (NFKC)
AXES_RESET_ON_SUCCESS = True
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False  # refused attempts are not counted: the end time holds
AXES_LOCKOUT_CALLABLE = "leaderboard.throttling.lockout_response"  # HTTP 429, our page, Retry-After
AXES_CLIENT_IP_CALLABLE = "leaderboard.addresses.client_address"  # behind TRUSTED_PROXIES, the client's own

# The JSON API (leaderboard/api). Requests with a token are counted per token in the cache
# (shared by every worker once CACHE_URL is set): past the limit, 429 with Retry-After. Requests
# with an unknown or revoked token are counted per address, and refused alike past theirs.
API_TOKEN_RATE_LIMIT = int(os.environ.get("API_TOKEN_RATE_LIMIT", "120"))
"""Requests one token may make in API_TOKEN_RATE_WINDOW seconds."""
API_TOKEN_RATE_WINDOW = int(os.environ.get("API_TOKEN_RATE_WINDOW", "60"))
"""The window of API_TOKEN_RATE_LIMIT, in seconds."""
API_AUTH_FAILURE_LIMIT = int(os.environ.get("API_AUTH_FAILURE_LIMIT", "20"))
"""Requests with an unknown or revoked token one address may make in API_AUTH_FAILURE_WINDOW seconds."""
API_AUTH_FAILURE_WINDOW = int(os.environ.get("API_AUTH_FAILURE_WINDOW", "300"))
"""The window of API_AUTH_FAILURE_LIMIT, in seconds."""
API_TOKENS_PER_USER = int(os.environ.get("API_TOKENS_PER_USER", "20"))
"""Active (unrevoked) tokens a person may hold at once."""

# E-mail: printed to the console by default (the embedded set-up sends nothing); SMTP as soon
# as EMAIL_HOST is set. EMAIL_TIMEOUT bounds how long a slow server can hold a worker: e-mails
# about scoring are sent by the scoring task, and a failure to send is logged, never raised.
EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "587"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)  # implicit TLS (port 465)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)  # STARTTLS (port 587); the two exclude each other
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Shared-task leaderboard <leaderboard@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
SITE_URL = os.environ.get("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
"""Where links in e-mails sent by a worker point (no request to take the host from)."""

# How many e-mails the site sends because someone asked (leaderboard.services.notifications.mail_allowed),
# so that it cannot be used to flood an inbox: per recipient and per asking address in an hour
# (password resets, addresses to confirm), and per recipient in a day (announcements).
MAIL_PER_RECIPIENT_PER_HOUR = int(os.environ.get("MAIL_PER_RECIPIENT_PER_HOUR", "5"))
"""Account e-mails (password resets, addresses to confirm) to one address in an hour."""
MAIL_PER_ADDRESS_PER_HOUR = int(os.environ.get("MAIL_PER_ADDRESS_PER_HOUR", "20"))
"""Account e-mails asked for from one client address in an hour."""
ANNOUNCEMENTS_PER_RECIPIENT_PER_DAY = int(os.environ.get("ANNOUNCEMENTS_PER_RECIPIENT_PER_DAY", "10"))
"""Announcements e-mailed to one person in a day."""

EMAIL_VERIFICATION_CHOICES = ("none", "optional", "mandatory")
EMAIL_VERIFICATION = os.environ.get("EMAIL_VERIFICATION", "optional")
"""``none``: no link is sent; ``optional`` (default): a link is sent, nothing waits for it;
``mandatory``: no upload until the address is confirmed. Another value is reported by a
system check (leaderboard.E005)."""
EMAIL_VERIFICATION_MAX_AGE = dt.timedelta(days=int(os.environ.get("EMAIL_VERIFICATION_DAYS", "3")))
"""How long a confirmation link stays valid (as long as a password-reset link by default)."""

# A session is read from the cache, and from the database only when the cache has lost it: one
# query less for every request of a logged-in person.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"

# Per-process memory by default. Set CACHE_URL (e.g. redis://host:6379/1) in the scaled
# set-up so that cached boards are shared by every gunicorn worker.
# A Redis that cannot be reached is answered as an empty cache (leaderboard.cache_backend): pages
# are then computed from the database for each request, slower but never an error.
CACHE_URL = os.environ.get("CACHE_URL")
if CACHE_URL:
    CACHES = {
        "default": {
            "BACKEND": "leaderboard.cache_backend.ResilientRedisCache",
            "LOCATION": CACHE_URL,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 2},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},  # everything else
    # One line per task state change is noise in the embedded set-up; failures still show.
    "loggers": {
        "django_tasks": {"level": os.environ.get("TASKS_LOG_LEVEL", "WARNING")},  # scoring jobs' state changes
        "axes": {"level": os.environ.get("AXES_LOG_LEVEL", "WARNING")},  # failures and lock-outs, not each check
    },
}
