"""What only the scaled tests need: pointing worker processes at pytest's test database.

Starting, waiting for and killing the processes is :mod:`tools.processes`; generated label
files are :mod:`tools.factory` (shared with the benchmarks).
"""

from __future__ import annotations

import os
from urllib.parse import quote


def database_url(settings_dict: dict) -> str:
    """A DATABASE_URL for the database Django is connected to (for pytest: the test database)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    credentials = f"{user}:{quote(password, safe='')}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or "5432"
    return f"postgres://{credentials}{host}:{port}/{quote(settings_dict['NAME'], safe='')}"


def worker_environment(*, settings_module: str, database_url: str, redis_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "DATABASE_URL": database_url,
        "TASKS_BACKEND": "rq",
        "REDIS_URL": redis_url,
        "PYTHONUNBUFFERED": "1",
    }
