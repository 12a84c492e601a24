"""System checks: misconfiguration reported by ``manage.py check`` (and every command that runs
checks, ``runserver`` and ``migrate`` included) instead of a crash at import or request time.
``make serve`` runs ``check --deploy`` before it starts gunicorn."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.checks import Error, Tags, register

TASKS_BACKENDS = ("immediate", "rq")
DERIVED_RESULTS_PLACES = {"worker": "rq", "thread": "immediate", "commit": "immediate"}
"""Where derived results may be computed, and the tasks backend each goes with."""
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]"})
SECRET_KEY_MIN_LENGTH = 50


@register()
def check_tasks_backend(app_configs=None, **kwargs) -> list[Error]:
    backend = getattr(settings, "TASKS_BACKEND", "immediate")
    if backend in TASKS_BACKENDS:
        return []
    return [
        Error(
            f"TASKS_BACKEND is {backend!r}; it must be one of {', '.join(TASKS_BACKENDS)}.",
            hint="Unset it for scoring inside the upload request, or set TASKS_BACKEND=rq with REDIS_URL.",
            id="leaderboard.E001",
        )
    ]


@register()
def check_derived_results_place(app_configs=None, **kwargs) -> list[Error]:
    place, backend = getattr(settings, "DERIVED_RESULTS_IN", "thread"), getattr(settings, "TASKS_BACKEND", "immediate")
    if DERIVED_RESULTS_PLACES.get(place) == backend:
        return []
    return [
        Error(
            f"DERIVED_RESULTS_IN is {place!r} with TASKS_BACKEND {backend!r}.",
            hint="Unset DERIVED_RESULTS_IN: it is 'worker' with TASKS_BACKEND=rq and 'thread' on the embedded set-up.",
            id="leaderboard.E006",
        )
    ]


@register(Tags.database)
def check_sqlite_directory(app_configs=None, databases=None, **kwargs) -> list[Error]:
    problems = []
    for alias, database in settings.DATABASES.items():
        name = database.get("NAME")
        if database.get("ENGINE", "").endswith("sqlite3") and name and str(name) != ":memory:":
            folder = Path(name).parent
            if not folder.is_dir():
                problems.append(
                    Error(
                        f"The folder of the SQLite database {alias!r} does not exist: {folder}",
                        hint=f"Create it (mkdir -p {folder}); `make demo` does.",
                        id="leaderboard.E002",
                    )
                )
    return problems


@register(Tags.security)
def check_local_benchmark_mode(app_configs=None, **kwargs) -> list[Error]:
    if not getattr(settings, "INSECURE_HTTP_FOR_LOCAL_BENCHMARK", False):
        return []
    if settings.ALLOWED_HOSTS and LOOPBACK_HOSTS.issuperset(settings.ALLOWED_HOSTS):
        return []
    return [
        Error(
            "INSECURE_HTTP_FOR_LOCAL_BENCHMARK serves production settings over plain HTTP; it needs "
            f"ALLOWED_HOSTS limited to loopback names ({', '.join(sorted(LOOPBACK_HOSTS))}).",
            id="leaderboard.E003",
        )
    ]


@register(Tags.security, deploy=True)
def check_secret_key(app_configs=None, **kwargs) -> list[Error]:
    if len(settings.SECRET_KEY or "") >= SECRET_KEY_MIN_LENGTH:
        return []
    return [
        Error(
            f"SECRET_KEY must be a random string of at least {SECRET_KEY_MIN_LENGTH} characters.",
            hint="python3 -c 'import secrets; print(secrets.token_urlsafe(60))'",
            id="leaderboard.E004",
        )
    ]


@register()
def check_email_verification(app_configs=None, **kwargs) -> list[Error]:
    choices = getattr(settings, "EMAIL_VERIFICATION_CHOICES", ())
    value = getattr(settings, "EMAIL_VERIFICATION", None)
    if value in choices:
        return []
    return [
        Error(
            f"EMAIL_VERIFICATION is {value!r}; it must be one of {', '.join(choices)}.",
            id="leaderboard.E005",
        )
    ]
