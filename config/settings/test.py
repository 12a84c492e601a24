"""Tests: fast password hashing, a throw-away SQLite file unless DATABASE_URL says otherwise."""

import os
import tempfile
from pathlib import Path

from config.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests collect no static files: plain names, served from the finders (DEBUG is off in tests),
# and no STATIC_ROOT for whitenoise to look for.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not Django's default shared-cache in-memory database: tests that run requests in
    # parallel threads (the log-in throttle's) then meet SQLite's locking as a real server does
    # (one writer, others wait) instead of "database table is locked". One file per test run.
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": str(Path(tempfile.gettempdir()) / f"leaderboard-test-{os.getpid()}.sqlite3")
    }

# No bootstrap intervals unless a test turns them on with a replicate count (tests/*/
# test_stability*.py): other tests count a board's queries and read its rows. Derived results are
# computed on commit in the test's own thread, the only connection that sees a test's rows, with
# no pause between two computations unless a test sets one.
BOOTSTRAP_REPLICATES = 0
DERIVED_RESULTS_IN = "worker" if TASKS_BACKEND == "rq" else "commit"  # noqa: F405 (the scaled tests' workers: RQ)
BOOTSTRAP_EVERY_S = 0
ANALYSIS_EVERY_S = 0
BOOTSTRAP_STORE_DIR = Path(tempfile.gettempdir()) / f"leaderboard-test-bootstrap-{os.getpid()}"
BOOTSTRAP_NICENESS = 0  # a test waits for the computation: on a busy machine, niceness is its time
RESULTS_AFTER_RESPONSE_IN = "request"  # computed before the test client's next request
RESULTS_SCORES_FRESH_S = 0  # a test reads its new score at once; test_results_cache sets the window
